#pragma once
// A 128-bit unsigned integer for products of two 64-bit sizes, formed wide and checked before
// narrowing. Internal: a compiler extension (GCC and Clang), so never in the public headers.

namespace kvplan {

__extension__ typedef unsigned __int128 u128;

}  // namespace kvplan
