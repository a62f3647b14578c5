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
