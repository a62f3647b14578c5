#pragma once
// The JSON form of the engine's structs, shared by the JSON and CSV writers so that both name
// every field the same way.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvplan/report.h"

namespace kvplan {

nlohmann::ordered_json row_to_json(const Row& row);

/// The number, or JSON null when there is none (a limit not found, a figure not known).
nlohmann::ordered_json json_or_null(const std::optional<std::uint64_t>& value);
nlohmann::ordered_json report_to_json(const Report& report);

/// The cache kinds and tokens of a row in one phrase: "32 full x 32,768 tokens".
std::string describe_breakdown(const Row& row);

/// An engine profile's section of a report: JSON rows (each gains "row", its index) under
/// `json_key` with the engine's name, and human lines printed under the table.
struct EngineSection {
  std::string_view runtime;   ///< settings.runtime: "llama.cpp", "vllm"
  std::string_view json_key;  ///< the top-level object: "llamacpp", "vllm"
  std::string_view engine;    ///< the object's "engine"
  std::vector<nlohmann::ordered_json> rows;
  std::vector<std::string> lines;
};

/// The generic report of `base` plus `section`, in `format` (CSV: the rows alone).
std::string format_engine_report(const Report& base, const EngineSection& section, OutputFormat format, bool color);

}  // namespace kvplan
