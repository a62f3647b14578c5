#pragma once
// A double's text as nlohmann::json::dump() writes it, byte for byte, by the same algorithm
// (Grisu2, the very steps of nlohmann's detail::to_chars) with cheaper arithmetic: a sweep writes
// one such double a row, and nlohmann's digit loop divides by a power of ten that is not a
// constant (a hardware division a digit).

namespace kvplan {

/// nlohmann::detail::to_chars(at, at + 64, value)'s text written at `at` (room for 64), for a
/// finite `value`; returns the end.
char* write_shortest_double(char* at, double value);

}  // namespace kvplan
