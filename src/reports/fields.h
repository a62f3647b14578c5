#pragma once
// The JSON form of the plan's structs, shared by the JSON and CSV writers so that both name every
// field the same way.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "kvplan/report.h"

namespace kvplan {

nlohmann::ordered_json row_to_json(const Row& row);

/// The number, or JSON null when there is none (a limit not found, a figure not known).
nlohmann::ordered_json json_or_null(const std::optional<std::uint64_t>& value);
nlohmann::ordered_json json_or_null(const std::optional<double>& value);

nlohmann::ordered_json report_to_json(const Report& report);

/// A card as every JSON document names it (plan, max, fit): id, name, memory and its basis (with
/// its source for a detected card), and how many of it.
nlohmann::ordered_json gpu_to_json(const GpuSpec& gpu, std::size_t count);

/// The cache kinds and tokens of a row in one phrase: "32 full x 32,768 tokens".
std::string describe_breakdown(const Row& row);
/// describe_breakdown(row), appended to `out`.
void append_breakdown(std::string& out, const Row& row);

}  // namespace kvplan
