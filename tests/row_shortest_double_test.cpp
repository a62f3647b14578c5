// write_shortest_double is nlohmann's text for a double, byte for byte (the same Grisu2 with a
// 128-bit product and constant divisors): compared with nlohmann::json(value).dump() on every kind
// of double a sweep writes and millions it does not.

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "reports/row_shortest_double.h"

using kvplan::write_shortest_double;

namespace {

std::string double_text(double value) {
  char text[64];
  return {text, write_shortest_double(text, value)};
}

/// The number of values among `values()` whose text differs from nlohmann's (the first few shown).
template <typename Values>
std::size_t doubles_differing(std::size_t count, Values values) {
  std::size_t differ = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const double value = values(i);
    if (!std::isfinite(value)) continue;
    if (double_text(value) != nlohmann::json(value).dump()) {
      if (++differ <= 5) {
        INFO(value);
        CHECK(double_text(value) == nlohmann::json(value).dump());
      }
    }
  }
  return differ;
}

}  // namespace

TEST_CASE("doubles are double_text as nlohmann writes them, digit for digit", "[sweep_writer]") {
  // By hand: decode rates (docs/planning.md's sweep; Qwen3-8B at 50,000 tokens on an H100), and the
  // layouts either side of the switch to exponents (below 10^-4 and from 10^15: nlohmann's
  // kMinExp and kMaxExp).
  CHECK(double_text(57.307143233888596) == "57.307143233888596");
  CHECK(double_text(141.02727208457108) == "141.02727208457108");
  CHECK(double_text(0.0) == "0.0");
  CHECK(double_text(-0.0) == "-0.0");
  CHECK(double_text(5.0) == "5.0");
  CHECK(double_text(0.5) == "0.5");
  CHECK(double_text(1e-4) == "0.0001");
  CHECK(double_text(1e-5) == "1e-05");
  CHECK(double_text(999999999999999.9) == "999999999999999.9");
  CHECK(double_text(1e15) == "1e+15");
  CHECK(double_text(1e21) == "1e+21");
  CHECK(double_text(-2.5e-300) == "-2.5e-300");

  // Every p1 digit count and both digit loops: powers of ten and two and their neighbours, the
  // extremes, subnormals.
  std::vector<double> special;
  for (int e = -320; e <= 308; ++e) {
    const double power = std::pow(10.0, e);
    for (const double v : {power, std::nextafter(power, 0.0), std::nextafter(power, INFINITY), power * 3, power / 7})
      special.push_back(v);
  }
  for (int e = -1074; e <= 1023; ++e) special.push_back(std::ldexp(1.0, e));
  for (const double v : {std::numeric_limits<double>::max(), std::numeric_limits<double>::min(),
                         std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::epsilon()})
    special.push_back(v);
  CHECK(doubles_differing(special.size(), [&](std::size_t i) { return special[i]; }) == 0);

  // Decode rates as the core computes them: bandwidth / bytes read, over sizes of 1 GB to 1 TB
  // and bandwidths of 100 to 8,000 GB/s.
  std::mt19937_64 random(14);
  std::uniform_int_distribution<std::uint64_t> bytes(1'000'000'000ull, 1'000'000'000'000ull);
  std::uniform_int_distribution<int> bandwidth(100, 8000);
  CHECK(doubles_differing(500'000, [&](std::size_t) {
          const double step = static_cast<double>(bytes(random)) / (bandwidth(random) * 1e9);
          return 1.0 / step;
        }) == 0);
  // Any double at all: random bit patterns (NaN and infinities skipped), and uniform values.
  CHECK(doubles_differing(1'000'000, [&](std::size_t) {
          const std::uint64_t bits = random();
          double value = 0;
          std::memcpy(&value, &bits, sizeof value);
          return value;
        }) == 0);
  std::uniform_real_distribution<double> uniform(-1e6, 1e6);
  CHECK(doubles_differing(500'000, [&](std::size_t) { return uniform(random); }) == 0);
}
