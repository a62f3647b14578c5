// Colour decisions need a terminal, which a piped test cannot have: run_cli is called in-process
// with the terminal described.

#include <sstream>

#include <catch2/catch.hpp>

#include "cli/cli.h"

namespace {

std::string run_with(const kvplan::Terminal& terminal, bool no_color_flag) {
  std::vector<const char*> argv{"kvplan", "--model", "llama3.1-8b", "--ctx", "32k,128k", "--gpu", "4090", "--kv-dtype", "fp16"};
  if (no_color_flag) argv.push_back("--no-color");
  std::ostringstream out;
  std::ostringstream err;
  REQUIRE(kvplan::run_cli(static_cast<int>(argv.size()), argv.data(), out, err, terminal) == 0);
  return out.str();
}

}  // namespace

TEST_CASE("verdicts are coloured on a terminal only") {
  const std::string coloured = run_with({true, false}, false);
  CHECK_THAT(coloured, Catch::Contains("\x1b[32m✅ fits") && Catch::Contains("\x1b[31m❌ no fit"));
  CHECK(run_with({true, true}, false).find('\x1b') == std::string::npos);   // NO_COLOR set
  CHECK(run_with({true, false}, true).find('\x1b') == std::string::npos);   // --no-color
  CHECK(run_with({false, false}, false).find('\x1b') == std::string::npos); // a pipe
}

TEST_CASE("on a 100-column terminal no line is wider than 100 columns") {
  // The vLLM profile prints the longest lines (its budget rule and rules applied).
  std::vector<const char*> argv{"kvplan", "--runtime", "vllm", "--model", "qwen3-8b", "--gpu", "h100", "--no-color"};
  std::ostringstream out;
  std::ostringstream err;
  kvplan::Terminal terminal{true, false, 100};
  REQUIRE(kvplan::run_cli(static_cast<int>(argv.size()), argv.data(), out, err, terminal) == 0);
  std::istringstream lines(out.str());
  std::string line;
  std::size_t longest = 0;
  while (std::getline(lines, line)) {
    std::size_t columns = 0;  // code points; the verdict emoji count two
    for (std::size_t i = 0; i < line.size(); ++i)
      if ((static_cast<unsigned char>(line[i]) & 0xC0) != 0x80) ++columns;
    if (line.find("\u2705") != std::string::npos || line.find("\u274C") != std::string::npos ||
        line.find("\u26D4") != std::string::npos)
      ++columns;
    INFO(line);
    CHECK(columns <= 100);
    longest = std::max(longest, columns);
  }
  CHECK(longest > 90);  // long lines were there, and were wrapped
  // A pipe is not wrapped: the same run with no terminal has longer lines.
  std::ostringstream piped;
  REQUIRE(kvplan::run_cli(static_cast<int>(argv.size()), argv.data(), piped, err, kvplan::Terminal{}) == 0);
  CHECK(piped.str().size() < out.str().size() + 200);
  CHECK(piped.str() != out.str());
}
