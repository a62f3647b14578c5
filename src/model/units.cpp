#include "kvplan/units.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "kvplan/error.h"
#include "model/text.h"
#include "model/text_append.h"
#include "model/wide_int.h"

namespace kvplan {

std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, std::string_view what) {
  std::uint64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product))
    throw OverflowError(fmt::format("{} overflows 64 bits ({} x {})", what, a, b));
  return product;
}

std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, std::string_view what) {
  std::uint64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum))
    throw OverflowError(fmt::format("{} overflows 64 bits ({} + {})", what, a, b));
  return sum;
}

namespace {

/// A non-negative decimal split into its integer digits and fraction digits, e.g. "1.5" -> 1, "5".
/// Kept as digits so that scaling by a unit stays exact integer arithmetic.
struct Decimal {
  std::uint64_t whole = 0;
  std::string fraction;  // digits after the point, possibly empty
};

/// Parses [digits][.digits]; returns false on anything else (signs, exponents, empty).
bool parse_decimal(std::string_view text, Decimal& out, std::string_view flag) {
  std::size_t i = 0;
  bool any_digit = false;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
    const unsigned digit = static_cast<unsigned>(text[i] - '0');
    if (__builtin_mul_overflow(out.whole, 10, &out.whole) || __builtin_add_overflow(out.whole, digit, &out.whole))
      throw Error(fmt::format("{}: '{}' is too large", flag, text));
    any_digit = true;
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
      out.fraction.push_back(text[i]);
      any_digit = true;
    }
  }
  return any_digit && i == text.size();
}

/// floor(decimal x multiplier), exact.
std::uint64_t scale_decimal(const Decimal& value, std::uint64_t multiplier, std::string_view what) {
  std::uint64_t result = 0;
  if (__builtin_mul_overflow(value.whole, multiplier, &result)) throw Error(fmt::format("{}: value is too large", what));
  // The fraction contributes floor(0.f1f2... x multiplier); multiplier <= 2^50 and at most 12
  // digits are honoured, so the 128-bit intermediate cannot overflow.
  u128 numerator = 0;
  u128 denominator = 1;
  for (std::size_t i = 0; i < value.fraction.size() && i < 12; ++i) {
    numerator = numerator * 10 + static_cast<unsigned>(value.fraction[i] - '0');
    denominator *= 10;
  }
  const auto part = static_cast<std::uint64_t>(numerator * multiplier / denominator);
  if (__builtin_add_overflow(result, part, &result)) throw Error(fmt::format("{}: value is too large", what));
  return result;
}

std::uint64_t suffix_multiplier_tokens(std::string_view suffix) {
  if (suffix.empty()) return 1;
  if (suffix == "k" || suffix == "K") return 1024;
  if (suffix == "m" || suffix == "M") return 1024 * 1024;
  return 0;
}

std::uint64_t suffix_multiplier_memory(std::string_view suffix) {
  const std::string unit = ascii_lower(suffix);
  if (unit.empty() || unit == "b") return 1;
  if (unit == "kib" || unit == "k") return KiB;
  if (unit == "mib" || unit == "m") return MiB;
  if (unit == "gib" || unit == "g") return GiB;  // a bare G means GiB: it is how GPUs are spoken of
  if (unit == "tib" || unit == "t") return 1024 * GiB;
  if (unit == "kb") return 1000;
  if (unit == "mb") return 1000 * 1000;
  if (unit == "gb") return GB;
  if (unit == "tb") return 1000 * GB;
  return 0;
}

/// Splits "32k" into "32" and "k" at the first character that is not part of a decimal number.
std::pair<std::string_view, std::string_view> split_number_suffix(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  return {text.substr(0, i), trim(text.substr(i))};
}

}  // namespace

std::uint64_t parse_token_count(std::string_view text, std::string_view flag) {
  const std::string_view value = trim(text);
  const auto [number, suffix] = split_number_suffix(value);
  const std::uint64_t multiplier = suffix_multiplier_tokens(suffix);
  Decimal decimal;
  if (multiplier == 0 || !parse_decimal(number, decimal, flag))
    throw Error(fmt::format("{}: '{}' is not a token count (examples: 32768, 32k, 1M)", flag, text));
  const std::uint64_t tokens = scale_decimal(decimal, multiplier, flag);
  if (decimal.fraction.find_first_not_of('0') != std::string::npos && multiplier == 1)
    throw Error(fmt::format("{}: '{}' is not a whole number of tokens", flag, text));
  if (tokens == 0) throw Error(fmt::format("{}: must be at least 1 token, got '{}'", flag, text));
  if (tokens > (std::uint64_t{1} << 63))
    throw Error(fmt::format("{}: '{}' is too large (the limit is 2^63 tokens)", flag, text));
  return tokens;
}

std::uint64_t parse_memory_size_or_zero(std::string_view text, std::string_view flag) {
  const std::string_view value = trim(text);
  const auto [number, suffix] = split_number_suffix(value);
  const std::uint64_t multiplier = suffix_multiplier_memory(suffix);
  Decimal decimal;
  if (multiplier == 0 || !parse_decimal(number, decimal, flag))
    throw Error(fmt::format("{}: '{}' is not a memory size (examples: 24GiB, 24GB, 80G)", flag, text));
  // A size says its unit: a bare "24" could be bytes, GiB or GB, and each guess is wrong for
  // someone. Zero is zero in every unit.
  const bool zero = decimal.whole == 0 && decimal.fraction.find_first_not_of('0') == std::string::npos;
  if (suffix.empty() && !zero)
    throw Error(fmt::format("{}: '{}' has no unit: write {}GiB (x 2^30 bytes), {}GB (x 10^9) or {}B (bytes)", flag, text,
                            value, value, value));
  return scale_decimal(decimal, multiplier, flag);
}

std::uint64_t parse_memory_size(std::string_view text, std::string_view flag) {
  const std::uint64_t bytes = parse_memory_size_or_zero(text, flag);
  if (bytes == 0) throw Error(fmt::format("{}: memory size must be more than zero, got '{}'", flag, text));
  return bytes;
}

std::uint64_t parse_positive_integer(std::string_view text, std::string_view flag) {
  const std::string_view value = trim(text);
  Decimal decimal;
  if (!parse_decimal(value, decimal, flag) || !decimal.fraction.empty() || value.find('.') != std::string_view::npos)
    throw Error(fmt::format("{}: '{}' is not a whole number", flag, text));
  if (decimal.whole == 0) throw Error(fmt::format("{}: must be at least 1, got '{}'", flag, text));
  return decimal.whole;
}

std::uint32_t parse_positive_u32(std::string_view text, std::string_view flag) {
  const std::uint64_t value = parse_positive_integer(text, flag);
  if (value > std::numeric_limits<std::uint32_t>::max()) throw Error(fmt::format("{}: {} is too large", flag, text));
  return static_cast<std::uint32_t>(value);
}

std::uint32_t parse_fraction_millionths(std::string_view text, std::string_view flag) {
  const std::string_view value = trim(text);
  Decimal decimal;
  if (!parse_decimal(value, decimal, flag))
    throw Error(fmt::format("{}: '{}' is not a fraction between 0 and 1 (example: 0.9)", flag, text));
  const std::uint64_t millionths = scale_decimal(decimal, 1'000'000, flag);
  // Digits past the sixth are dropped by the scaling, so "1.0000001" is checked on its digits.
  const bool above_one =
      decimal.whole > 1 || (decimal.whole == 1 && decimal.fraction.find_first_not_of('0') != std::string::npos);
  if (millionths == 0 || millionths > 1'000'000 || above_one)
    throw Error(fmt::format("{}: must be more than 0 and at most 1, got '{}'", flag, text));
  return static_cast<std::uint32_t>(millionths);
}

std::uint64_t scale_by_millionths(std::uint64_t bytes, std::uint32_t millionths) {
  const u128 product = static_cast<u128>(bytes) * millionths;
  return static_cast<std::uint64_t>(product / 1'000'000);
}

namespace {

/// "00" to "99", for two digits at a time.
constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/// `value`'s digits written to end at `end`, two at a time from the last; returns their start.
char* digits_ending_at(char* end, std::uint64_t value) {
  char* start = end;
  while (value >= 100) {
    start -= 2;
    std::memcpy(start, kDigitPairs + static_cast<std::size_t>(value % 100) * 2, 2);
    value /= 100;
  }
  if (value >= 10) {
    start -= 2;
    std::memcpy(start, kDigitPairs + static_cast<std::size_t>(value) * 2, 2);
  } else {
    *--start = static_cast<char>('0' + value);
  }
  return start;
}

}  // namespace

char* write_decimal(char* at, std::uint64_t value) {
  // The digits end at byte 20 of 40 (a uint64 has at most 20), so the 20 bytes copied from their
  // first stay within the buffer: a copy of fixed size, inlined, where one of the digits' own
  // length was a library call (a sweep writes five of these a row).
  std::array<char, 40> buffer;  // not zeroed: the bytes after the digits are copied, then written over
  char* const end = buffer.data() + 20;
  const char* const start = digits_ending_at(end, value);
  std::memcpy(at, start, 20);
  return at + (end - start);
}

void append_decimal(std::string& out, std::uint64_t value) {
  const fmt::format_int digits(value);
  out.append(digits.data(), digits.size());
}

char* write_gib_number(char* at, std::int64_t bytes) {
  // Rounded to the nearest hundredth of a GiB in integer arithmetic, so the printed figure never
  // depends on floating-point formatting.
  const bool negative = bytes < 0;
  const u128 magnitude = negative ? static_cast<u128>(-(bytes + 1)) + 1
                                               : static_cast<u128>(bytes);
  // GiB is 2^30: the division is a shift, in 64 bits for any size below 2^56 bytes.
  const u128 hundredths = magnitude < (u128{1} << 56)
                              ? u128{(static_cast<std::uint64_t>(magnitude) * 100 + GiB / 2) >> 30}
                              : (magnitude * 100 + GiB / 2) / GiB;
  // Below 2^64 hundredths (any size a sweep prints), divided in 64 bits: a 128-bit division is a
  // library call.
  const bool narrow = hundredths <= UINT64_MAX;
  const auto whole = narrow ? static_cast<std::uint64_t>(hundredths) / 100 : static_cast<std::uint64_t>(hundredths / 100);
  const auto cents = narrow ? static_cast<unsigned>(static_cast<std::uint64_t>(hundredths) % 100)
                            : static_cast<unsigned>(hundredths % 100);
  if (negative && hundredths != 0) *at++ = '-';
  at = write_decimal(at, whole);
  *at++ = '.';
  *at++ = static_cast<char>('0' + cents / 10);
  *at++ = static_cast<char>('0' + cents % 10);
  return at;
}

void append_gib_number(std::string& out, std::int64_t bytes) {
  // Written into a small buffer and appended once: a sweep writes three of these a row.
  std::array<char, 32> text;
  out.append(text.data(), static_cast<std::size_t>(write_gib_number(text.data(), bytes) - text.data()));
}


void append_gib(std::string& out, std::int64_t bytes) {
  append_gib_number(out, bytes);
  out += " GiB";
}

char* write_thousands(char* at, std::uint64_t value) {
  // The first group (1 to 3 digits), then a comma and three digits at a time: a sweep past the
  // trained context writes two of these a row, and a remainder per digit cost a sixth of its
  // settling.
  std::array<char, 20> digits;
  const char* const from = digits_ending_at(digits.data() + digits.size(), value);
  const auto count = static_cast<std::size_t>(digits.data() + digits.size() - from);
  const std::size_t first = count % 3 == 0 ? 3 : count % 3;
  for (std::size_t i = 0; i < first; ++i) *at++ = from[i];
  for (std::size_t i = first; i < count; i += 3) {
    *at = ',';
    std::memcpy(at + 1, from + i, 3);
    at += 4;
  }
  return at;
}

void append_thousands(std::string& out, std::uint64_t value) {
  std::array<char, 32> text;  // 20 digits and 6 commas at most; appended once
  out.append(text.data(), static_cast<std::size_t>(write_thousands(text.data(), value) - text.data()));
}

std::string format_gib_number(std::int64_t bytes) {
  std::string out;
  append_gib_number(out, bytes);
  return out;
}

std::string format_gib(std::int64_t bytes) {
  std::string out;
  append_gib(out, bytes);
  return out;
}

std::string format_bytes_compact(std::uint64_t bytes) {
  struct Unit {
    std::uint64_t size;
    const char* name;
  };
  for (const Unit unit : {Unit{GiB, "GiB"}, Unit{MiB, "MiB"}, Unit{KiB, "KiB"}}) {
    if (bytes < unit.size) continue;
    if (bytes % unit.size == 0) return fmt::format("{} {}", bytes / unit.size, unit.name);
    const std::uint64_t hundredths = (bytes * 100 + unit.size / 2) / unit.size;
    return fmt::format("{}.{:02} {}", hundredths / 100, hundredths % 100, unit.name);
  }
  return fmt::format("{} B", bytes);
}

std::string format_thousands(std::uint64_t value) {
  std::string out;
  append_thousands(out, value);
  return out;
}

std::string format_param_count(std::uint64_t params) {
  // Thresholds sit where rounding would carry into the next unit ("999.9M" prints as "1.00B").
  if (params >= 999'995'000'000) return fmt::format("{:.2f}T", static_cast<double>(params) / 1e12);
  if (params >= 999'500'000) return fmt::format("{:.2f}B", static_cast<double>(params) / 1e9);
  if (params >= 1'000'000) return fmt::format("{:.0f}M", static_cast<double>(params) / 1e6);
  return std::to_string(params);
}

std::string format_percent(std::uint32_t millionths) {
  if (millionths % 10'000 == 0) return fmt::format("{}%", millionths / 10'000);
  return fmt::format("{}%", static_cast<double>(millionths) / 10'000.0);
}

}  // namespace kvplan
