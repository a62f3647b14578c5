#pragma once
// Checked arithmetic for byte, token and block counts. Every size an engine profile or a loader
// computes goes through these (or checked_mul / checked_add of kvplan/units.h), so a value past
// 64 bits is an OverflowError (exit 2) and never a wrap. The hand-written rounding division
// `(a + b - 1) / b` wraps near 2^64 and is refused in src/ by tests/checked_arithmetic_test.cpp.

#include <cstdint>
#include <string_view>

#include "kvplan/units.h"

namespace kvplan {

/// ceil(a / b) for b > 0. Cannot overflow: it never forms a + b - 1.
constexpr std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

/// a + b, or 2^64 - 1 where the sum does not fit: for a window or limit compared with min(), where
/// "past 2^64" and "everything" mean the same.
constexpr std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

/// `a` rounded up to a multiple of `m` (m > 0), or an OverflowError naming `what`.
inline std::uint64_t round_up_to(std::uint64_t a, std::uint64_t m, std::string_view what) {
  return checked_mul(ceil_div(a, m), m, what);
}

/// A count whose + and * check for overflow, for formulas of several terms
/// (`Checked(4, "compute buffer") * ubatch * (Checked(n_vocab, ...) + n_embd)`). `what` names the
/// figure in the error and must outlive the expression (a string literal).
class Checked {
 public:
  constexpr Checked(std::uint64_t value, std::string_view what) : value_(value), what_(what) {}

  std::uint64_t value() const { return value_; }

  friend Checked operator+(Checked a, Checked b) { return {checked_add(a.value_, b.value_, a.what_), a.what_}; }
  friend Checked operator+(Checked a, std::uint64_t b) { return {checked_add(a.value_, b, a.what_), a.what_}; }
  friend Checked operator*(Checked a, Checked b) { return {checked_mul(a.value_, b.value_, a.what_), a.what_}; }
  friend Checked operator*(Checked a, std::uint64_t b) { return {checked_mul(a.value_, b, a.what_), a.what_}; }
  friend Checked operator+(std::uint64_t a, Checked b) { return b + a; }
  friend Checked operator*(std::uint64_t a, Checked b) { return b * a; }
  /// Division cannot overflow; a zero divisor is the caller's to rule out, as for integers.
  friend Checked operator/(Checked a, std::uint64_t b) { return {a.value_ / b, a.what_}; }
  friend Checked operator/(Checked a, Checked b) { return {a.value_ / b.value_, a.what_}; }
  friend bool operator<(Checked a, Checked b) { return a.value_ < b.value_; }
  Checked& operator+=(std::uint64_t b) { return *this = *this + b; }

 private:
  std::uint64_t value_;
  std::string_view what_;
};

}  // namespace kvplan
