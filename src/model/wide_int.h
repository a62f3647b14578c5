#pragma once
// A 128-bit unsigned integer for products of two 64-bit sizes, formed wide and checked before
// narrowing. Internal: a compiler extension (GCC and Clang), so never in the public headers.

namespace kvplan {

__extension__ typedef unsigned __int128 u128;
/// Signed, for differences of 64-bit sizes (headroom that may be negative).
__extension__ typedef __int128 i128;

/// a / b rounded up, without the `a + b - 1` that can wrap.
constexpr u128 ceil_div_wide(u128 a, u128 b) { return a / b + (a % b != 0 ? 1 : 0); }

}  // namespace kvplan
