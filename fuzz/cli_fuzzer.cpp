// The command line itself: the input is argv (arguments separated by NUL bytes) for run_cli, with
// string streams for stdout and stderr. Whatever the arguments, the exit code is one of the
// documented ones, and a failure (2 or 3) prints nothing on stdout and exactly one line on stderr
// starting "kvplan: error: " (README "Exit codes"); without arguments, the short usage.

#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "cli/cli.h"

using namespace kvplan;

namespace {
constexpr std::size_t kMaxArguments = 64;
}

/// Relative paths in the fuzzed arguments resolve inside an empty directory of this run.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  char directory[] = "/tmp/kvplan-fuzz-cli-XXXXXX";
  if (mkdtemp(directory) == nullptr || chdir(directory) != 0) fuzz::finding("cannot make a working directory");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> arguments{"kvplan"};
  std::string current;
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == '\0') {
      arguments.push_back(std::move(current));
      current.clear();
      if (arguments.size() > kMaxArguments) return 0;
    } else {
      current.push_back(static_cast<char>(data[i]));
    }
  }
  if (size > 0) arguments.push_back(std::move(current));
  std::vector<const char*> argv;
  for (const std::string& argument : arguments) argv.push_back(argument.c_str());
  argv.push_back(nullptr);

  std::ostringstream out;
  std::ostringstream err;
  const int code = run_cli(static_cast<int>(arguments.size()), argv.data(), out, err, Terminal{});
  // No arguments at all: the short usage on stderr and exit 2, the README's one stated exception.
  if (arguments.size() == 1) {
    fuzz::require(code == 2 && out.str().empty() && err.str().rfind("usage: kvplan", 0) == 0,
                  "kvplan without arguments does not print its usage");
    return 0;
  }
  // 5: a file the arguments name could not be written (plot -o).
  fuzz::require((code >= 0 && code <= 3) || code == 5, "undocumented exit code " + std::to_string(code));
  if (code >= 2) {
    const std::string message = err.str();
    fuzz::require(out.str().empty(), "a failure printed on stdout: " + out.str().substr(0, 200));
    fuzz::require(message.rfind("kvplan: error: ", 0) == 0, "stderr does not start with 'kvplan: error: ': " + message);
    fuzz::require(!message.empty() && message.back() == '\n' && message.find('\n') == message.size() - 1,
                  "stderr is not exactly one line: " + message);
  }
  return 0;
}
