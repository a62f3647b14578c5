#pragma once
// An engine profile's section of a report: its own figures for every row (JSON, under a key of
// its own) and the human lines printed under the table. Written by the profile's section writer
// from the rows' details (engines/<engine>/section.cpp), printed by the formatters.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvplan {

struct EngineSection {
  std::string json_key;  ///< the top-level object: "llamacpp", "vllm"
  std::string engine;    ///< the object's "engine": which release's rules
  std::vector<nlohmann::ordered_json> rows;  ///< one per plan row
  std::vector<std::string> lines;
};

struct Plan;

/// The section the plan's profile writes, or nullopt when its engine has none (generic).
std::optional<EngineSection> engine_section(const Plan& plan);

}  // namespace kvplan
