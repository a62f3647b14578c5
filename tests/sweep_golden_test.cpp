// kvplan sweep's output, byte for byte, as it was before the writer was made faster: the exit
// code, line and byte counts and a 64-bit FNV-1a hash of stdout and stderr of 288 real sweeps
// (every runtime x six models of unlike layouts x four deployments and settings x NDJSON and
// CSV, 224,988 lines), against tests/golden/sweep_checksums.txt. The file was written by
// main's binary at d38cdd1, before any of the sweep4 changes: a speed-up that changes one byte of
// any line fails here. After an intended change to the output, KVPLAN_UPDATE_GOLDEN=1 rewrites it.

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "support/run_binary.h"

using kvplan::testing::ProcessResult;
using kvplan::testing::read_file;
using kvplan::testing::run_kvplan;
using kvplan::testing::source_path;

namespace {

/// FNV-1a, 64 bits: offset basis 14695981039346656037, prime 1099511628211.
std::uint64_t fnv1a(std::string_view text) {
  std::uint64_t hash = 14695981039346656037ull;
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  return hash;
}

std::size_t lines_in(std::string_view text) {
  std::size_t lines = 0;
  for (const char c : text) lines += c == '\n' ? 1 : 0;
  return lines;
}

/// The sweeps: each runtime with each model alone (a model an engine refuses ends its own run
/// only, exit 3, and that refusal is compared too), in four settings.
std::vector<std::string> sweep_commands() {
  // Contexts: steps of 50,021 from 1 to 1M (odd, below and past every trained context) and
  // doubling 4K to 4M.
  constexpr std::string_view contexts = "1..1000000:50021,4k..4M";
  constexpr std::string_view models[] = {"qwen3-8b",         "gemma3-12b",  "qwen3-next-80b-a3b",
                                         "deepseek-v2-lite", "gpt-oss-20b", "llama3.1-70b"};
  constexpr std::string_view settings[] = {
      "--gpus 4090,h100,2xh100,4xa100-40g,h100-1g.10gb,24GiB",  // fp8 on an A100 warns; a MIG slice; a size
      "--gpus 4090,h100,2xh100 --batch 3 --budget 20GiB",       // batches, a budget
      "--gpus h100,a100-40g --used 6GiB",                       // co-tenants
      "--gpus 5090+3090,2x4090",                                // unlike cards (a layer split, or refused)
  };
  constexpr std::string_view runtimes[] = {"generic", "llama.cpp", "vllm", "sglang", "trtllm", "ollama"};
  std::vector<std::string> commands;
  for (const std::string_view runtime : runtimes)
    for (const std::string_view model : models)
      for (const std::string_view setting : settings)
        for (const std::string_view format : {"ndjson", "csv"})
          commands.push_back(fmt::format("sweep --models {} {} --ctx {} --kv-dtype all --runtime {} --format {}", model,
                                         setting, contexts, runtime, format));
  return commands;
}

}  // namespace

TEST_CASE("kvplan sweep writes the same bytes as before the fast writer", "[sweep][golden]") {
  std::string actual;
  std::size_t lines = 0;
  for (const std::string& command : sweep_commands()) {
    const ProcessResult result = run_kvplan(command);
    lines += lines_in(result.out);
    actual += fmt::format("{} {} {} {:016x} {:016x} {}\n", result.exit_code, lines_in(result.out), result.out.size(),
                          fnv1a(result.out), fnv1a(result.err), command);
  }
  const std::string path = source_path("tests/golden/sweep_checksums.txt");
  if (std::getenv("KVPLAN_UPDATE_GOLDEN")) {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  INFO("golden file " << path << " (KVPLAN_UPDATE_GOLDEN=1 rewrites it)");
  // Line by line, so that a failure names the sweep that differs.
  std::istringstream expected_lines(read_file(path));
  std::istringstream actual_lines(actual);
  std::string expected_line;
  std::string actual_line;
  std::size_t compared = 0;
  while (std::getline(expected_lines, expected_line)) {
    REQUIRE(std::getline(actual_lines, actual_line));
    CHECK(actual_line == expected_line);
    ++compared;
  }
  CHECK(!std::getline(actual_lines, actual_line));
  CHECK(compared == 288);
  CHECK(lines > 200'000);  // the grid is as large as it was meant to be
}
