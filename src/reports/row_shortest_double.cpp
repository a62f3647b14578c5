// nlohmann's Grisu2 (detail/conversions/to_chars.hpp, after Loitsch, "Printing Floating-Point
// Numbers Quickly and Accurately with Integers", 2010), step for step, with its boundaries, cached
// powers, rounding and formatting called from nlohmann itself. Two steps are done with other
// arithmetic that gives the same integers, so the digits cannot differ:
// - the 64 x 64-bit product (diyfp::mul: the upper 64 bits of x * y + 2^63, from four 32-bit
//   products) as one 128-bit product;
// - the integral digits (p1 div and mod 10^(n-1), n from the count of p1's digits down to 1) with
//   the power of ten a constant at each step, so that the compiler multiplies instead of dividing.
// tests/row_shortest_double_test.cpp compares the text with nlohmann's on millions of values.

#include "reports/row_shortest_double.h"

#include <cmath>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "model/wide_int.h"

namespace kvplan {

namespace {

namespace dtoa = nlohmann::detail::dtoa_impl;

/// diyfp::mul: the upper 64 bits of x.f * y.f, rounded half up (+ 2^63), exponents added + 64.
dtoa::diyfp multiply(const dtoa::diyfp& x, const dtoa::diyfp& y) {
  const u128 product = static_cast<u128>(x.f) * y.f + (static_cast<u128>(1) << 63);
  return {static_cast<std::uint64_t>(product >> 64), x.e + y.e + 64};
}

/// grisu2_digit_gen's state between its steps.
struct Digits {
  char* buffer;
  int length = 0;
  int decimal_exponent = 0;
  std::uint64_t delta = 0;
  std::uint64_t dist = 0;
  std::uint64_t p2 = 0;
  int shift = 0;  ///< -one.e: p1 and p2 are the parts above and below 2^shift
};

/// One integral digit: p1 div 10^n_after (kPow), with n_after digits left; true when the digits
/// so far are enough (rest <= delta), rounded then.
template <std::uint32_t kPow>
bool integral_digit(Digits& d, std::uint32_t& p1, int n_after) {
  const std::uint32_t digit = p1 / kPow;
  p1 %= kPow;
  d.buffer[d.length++] = static_cast<char>('0' + digit);
  const std::uint64_t rest = (std::uint64_t{p1} << d.shift) + d.p2;
  if (rest > d.delta) return false;
  d.decimal_exponent += n_after;
  dtoa::grisu2_round(d.buffer, d.length, d.dist, d.delta, rest, std::uint64_t{kPow} << d.shift);
  return true;
}

/// grisu2_digit_gen(buffer, length, decimal_exponent, M_minus, w, M_plus).
void generate_digits(Digits& d, const dtoa::diyfp& m_minus, const dtoa::diyfp& w, const dtoa::diyfp& m_plus) {
  d.delta = m_plus.f - m_minus.f;
  d.dist = m_plus.f - w.f;
  d.shift = -m_plus.e;
  const std::uint64_t one = std::uint64_t{1} << d.shift;
  auto p1 = static_cast<std::uint32_t>(m_plus.f >> d.shift);
  d.p2 = m_plus.f & (one - 1);
  std::uint32_t pow10 = 0;
  const int k = dtoa::find_largest_pow10(p1, pow10);
  // The digits of p1, from its k-th down: each case writes one and falls through to the next.
  switch (k) {
    case 10: if (integral_digit<1000000000>(d, p1, 9)) return; [[fallthrough]];
    case 9: if (integral_digit<100000000>(d, p1, 8)) return; [[fallthrough]];
    case 8: if (integral_digit<10000000>(d, p1, 7)) return; [[fallthrough]];
    case 7: if (integral_digit<1000000>(d, p1, 6)) return; [[fallthrough]];
    case 6: if (integral_digit<100000>(d, p1, 5)) return; [[fallthrough]];
    case 5: if (integral_digit<10000>(d, p1, 4)) return; [[fallthrough]];
    case 4: if (integral_digit<1000>(d, p1, 3)) return; [[fallthrough]];
    case 3: if (integral_digit<100>(d, p1, 2)) return; [[fallthrough]];
    case 2: if (integral_digit<10>(d, p1, 1)) return; [[fallthrough]];
    default: if (integral_digit<1>(d, p1, 0)) return;
  }
  // The fractional digits: p2 times ten, its part above 2^shift the digit, until the rest is
  // within delta.
  int m = 0;
  for (;;) {
    d.p2 *= 10;
    const std::uint64_t digit = d.p2 >> d.shift;
    d.p2 &= one - 1;
    d.buffer[d.length++] = static_cast<char>('0' + digit);
    ++m;
    d.delta *= 10;
    d.dist *= 10;
    if (d.p2 <= d.delta) break;
  }
  d.decimal_exponent -= m;
  dtoa::grisu2_round(d.buffer, d.length, d.dist, d.delta, d.p2, one);
}

}  // namespace

char* write_shortest_double(char* at, double value) {
  // to_chars: the sign, zero, then the digits and their layout (positional from 10^-4 up to below
  // 10^15, "1e+21" beyond).
  if (std::signbit(value)) {
    value = -value;
    *at++ = '-';
  }
  if (value == 0) {
    at[0] = '0';
    at[1] = '.';
    at[2] = '0';
    return at + 3;
  }
  // grisu2(buffer, length, decimal_exponent, value).
  const dtoa::boundaries bounds = dtoa::compute_boundaries(value);
  const dtoa::cached_power cached = dtoa::get_cached_power_for_binary_exponent(bounds.plus.e);
  const dtoa::diyfp c_minus_k(cached.f, cached.e);
  const dtoa::diyfp w = multiply(bounds.w, c_minus_k);
  const dtoa::diyfp w_minus = multiply(bounds.minus, c_minus_k);
  const dtoa::diyfp w_plus = multiply(bounds.plus, c_minus_k);
  const dtoa::diyfp m_minus(w_minus.f + 1, w_minus.e);
  const dtoa::diyfp m_plus(w_plus.f - 1, w_plus.e);
  Digits digits{at};
  digits.decimal_exponent = -cached.k;
  generate_digits(digits, m_minus, w, m_plus);
  return dtoa::format_buffer(at, digits.length, digits.decimal_exponent, -4, 15);
}

}  // namespace kvplan
