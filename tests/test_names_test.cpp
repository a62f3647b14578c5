// Test names ctest can hand to Catch: ctest runs each test case by its name, and a name that
// begins with "--" is read as a flag (or holds ";", which CMake splits on), so the test matches
// nothing and fails with "Unrecognised token". Twice now a new test was named that way.

#include <filesystem>
#include <regex>
#include <string>

#include <catch2/catch.hpp>

#include "support/run_binary.h"

TEST_CASE("every test name can be passed to Catch by ctest", "[meta]") {
  const std::regex test_case(R"re(TEST_CASE\(\s*"([^"]*)")re");
  int names = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kvplan::testing::source_path("tests"))) {
    if (entry.path().extension() != ".cpp") continue;
    const std::string text = kvplan::testing::read_file(entry.path().string());
    for (auto it = std::sregex_iterator(text.begin(), text.end(), test_case); it != std::sregex_iterator(); ++it) {
      const std::string name = (*it)[1].str();
      INFO(entry.path().filename().string() << ": " << name);
      CHECK(name.rfind("-", 0) != 0);
      CHECK(name.find(';') == std::string::npos);
      ++names;
    }
  }
  CHECK(names > 300);  // the scan found the suite, not an empty folder
}
