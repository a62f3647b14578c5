#pragma once
// Figures written onto the end of a string, for text built once per row of a sweep (a million
// times a second): the same characters as kvplan/units.h's format_* functions, without a string
// of their own for each figure. Those functions are written with these.

#include <cstdint>
#include <string>

namespace kvplan {

/// format_gib_number(bytes) written at `at` (room for 32), returns the end: for text built in a
/// buffer of its own.
char* write_gib_number(char* at, std::int64_t bytes);
/// The decimal digits of `value` written at `at` (room for 20, all of which it may overwrite),
/// returns the end.
char* write_decimal(char* at, std::uint64_t value);
/// format_thousands(value) written at `at` (room for 26), returns the end: "131,072".
char* write_thousands(char* at, std::uint64_t value);

/// The decimal digits of `value`.
void append_decimal(std::string& out, std::uint64_t value);
/// format_gib_number(bytes): "23.99".
void append_gib_number(std::string& out, std::int64_t bytes);
/// format_gib(bytes): "23.99 GiB".
void append_gib(std::string& out, std::int64_t bytes);
/// format_thousands(value): "131,072".
void append_thousands(std::string& out, std::uint64_t value);

}  // namespace kvplan
