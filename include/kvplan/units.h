#pragma once
/// Byte units and exact integer arithmetic. GiB = 2^30 and GB = 10^9, never mixed.

#include <cstdint>
#include <string>
#include <string_view>

#include "kvplan/export.h"

namespace kvplan {


inline constexpr std::uint64_t KiB = 1024;
inline constexpr std::uint64_t MiB = 1024 * KiB;
inline constexpr std::uint64_t GiB = 1024 * MiB;
inline constexpr std::uint64_t GB = 1000 * 1000 * 1000;

/// a * b, or an Error naming `what` when the product does not fit in 64 bits.
KVPLAN_API std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, std::string_view what);
/// a + b, or an Error naming `what` when the sum does not fit in 64 bits.
KVPLAN_API std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, std::string_view what);

/// Parses a token count: "32768", "32k"/"32K" (x1024), "1M" (x1048576). Rejects zero, signs,
/// fractions and values past 2^63. `flag` names the option in the error.
KVPLAN_API std::uint64_t parse_token_count(std::string_view text, std::string_view flag);

/// Parses a memory size: "24GiB", "24GB" (decimal), "80G" (= GiB), "512MiB", "1.5TiB", "1024B".
/// A number without a unit is an Error (is "24" bytes, GiB or GB?). Rejects zero and negative sizes.
KVPLAN_API std::uint64_t parse_memory_size(std::string_view text, std::string_view flag);
/// As parse_memory_size, for sizes that may be nothing at all ("0", "0GiB"), such as --overhead;
/// zero alone needs no unit.
KVPLAN_API std::uint64_t parse_memory_size_or_zero(std::string_view text, std::string_view flag);

/// Parses a whole positive number, e.g. "--batch 16".
KVPLAN_API std::uint64_t parse_positive_integer(std::string_view text, std::string_view flag);
/// As parse_positive_integer, for settings engines keep in 32 bits (-np, -tp, --block-size).
KVPLAN_API std::uint32_t parse_positive_u32(std::string_view text, std::string_view flag);

/// A fraction written as a decimal ("0.9", "1", "0.875") in millionths: 0.9 -> 900000. Used for
/// --util so the budget stays an exact integer computation.
KVPLAN_API std::uint32_t parse_fraction_millionths(std::string_view text, std::string_view flag);

/// floor(bytes x millionths / 10^6), exact.
KVPLAN_API std::uint64_t scale_by_millionths(std::uint64_t bytes, std::uint32_t millionths);

/// "23.99 GiB": two decimals, always labelled. Negative values keep their sign.
KVPLAN_API std::string format_gib(std::int64_t bytes);
/// The number alone, "23.99".
KVPLAN_API std::string format_gib_number(std::int64_t bytes);
/// "128 KiB", "1.06 KiB", "576 B": the most natural binary unit for a per-token size.
KVPLAN_API std::string format_bytes_compact(std::uint64_t bytes);
/// "131,072": digits grouped by thousands.
KVPLAN_API std::string format_thousands(std::uint64_t value);
/// "90%", "87.5%": a fraction in millionths as a percentage.
KVPLAN_API std::string format_percent(std::uint32_t millionths);

/// "8.03B", "70.55B", "494M": an approximate parameter count for humans.
KVPLAN_API std::string format_param_count(std::uint64_t params);

}  // namespace kvplan
