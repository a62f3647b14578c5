// Sizes are computed with checked arithmetic (src/model/checked.h, checked_mul / checked_add):
// the helpers themselves, and a scan of src/ that refuses the hand-written rounding forms that
// wrapped near 2^64 (issue #11: `(a + b - 1) / b` in five engines and loaders, `(x + 255) / 256`).

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include <catch2/catch.hpp>

#include "kvplan/error.h"
#include "model/checked.h"
#include "support/run_binary.h"

using kvplan::Checked;
using kvplan::OverflowError;

TEST_CASE("checked helpers: exact below 2^64, an OverflowError past it, never a wrap", "[checked]") {
  constexpr std::uint64_t max = UINT64_MAX;
  CHECK(kvplan::ceil_div(max, 2) == (std::uint64_t{1} << 63));  // (2^64 - 1 + 1) / 2 wrapped to 0
  CHECK(kvplan::ceil_div(0, 7) == 0);
  CHECK(kvplan::ceil_div(14, 7) == 2);
  CHECK(kvplan::ceil_div(15, 7) == 3);
  CHECK(kvplan::round_up_to(1000, 256, "x") == 1024);
  CHECK_THROWS_AS(kvplan::round_up_to(max - 10, 256, "context size"), OverflowError);
  CHECK(kvplan::saturating_add(max - 1, 5) == max);
  CHECK(kvplan::saturating_add(3, 4) == 7);
  CHECK((Checked(4, "x") * 5 + 6).value() == 26);
  CHECK((3 * Checked(1, "x") + 2).value() == 5);
  CHECK_THROWS_AS(Checked(std::uint64_t{1} << 32, "compute buffer") * (std::uint64_t{1} << 32), OverflowError);
  CHECK_THROWS_AS(Checked(max, "compute buffer") + 1, OverflowError);
  CHECK_THROWS_WITH(Checked(max, "compute buffer") + 1, Catch::Contains("compute buffer overflows 64 bits"));
}

TEST_CASE("no hand-written rounding division or padding in src/: ceil_div and round_up_to", "[checked]") {
  // `(a + b - 1) / b`, `(x + 255) / 256`: the sum wraps for a near 2^64.
  const std::regex rounding(R"(\+\s*[A-Za-z_0-9.>()-]+\s*-\s*1\s*\)\s*/|\+\s*\d+\s*\)\s*/\s*\d+)");
  std::string found;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(kvplan::testing::source_path("src"))) {
    const std::string ext = entry.path().extension().string();
    if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".h")) continue;
    std::ifstream in(entry.path());
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      const std::size_t comment = line.find("//");
      const std::string code = comment == std::string::npos ? line : line.substr(0, comment);
      if (std::regex_search(code, rounding)) found += entry.path().string() + ":" + std::to_string(number) + ": " + line + "\n";
    }
  }
  INFO(found);
  CHECK(found.empty());
}
