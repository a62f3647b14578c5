#include "support/run_binary.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

namespace kvplan::testing {

void check_refused(const ProcessResult& result, const std::string& expected, int code) {
  CHECK(result.exit_code == code);
  CHECK(result.out.empty());
  CHECK(result.err.rfind("kvplan: error: ", 0) == 0);
  CHECK(std::count(result.err.begin(), result.err.end(), '\n') == 1);
  CHECK_THAT(result.err, Catch::Contains(expected));
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string source_path(const std::string& relative) { return std::string(KVPLAN_SOURCE_DIR) + "/" + relative; }

ProcessResult run_kvplan(const std::string& arguments, const std::string& environment) {
  char err_path[] = "/tmp/kvplan-test-stderr-XXXXXX";
  const int fd = mkstemp(err_path);
  if (fd >= 0) close(fd);
  // No Hugging Face cache of the machine's: a test that wants one says so in `environment`.
  const std::string command = "env -u NO_COLOR -u HF_HOME HF_HUB_CACHE=/nonexistent/kvplan-test-hub " + environment + " '" + KVPLAN_BINARY + "' " + arguments + " 2>" +
                              err_path + " </dev/null";
  ProcessResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.err = read_file(err_path);
  std::remove(err_path);
  return result;
}

}  // namespace kvplan::testing
