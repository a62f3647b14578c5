#pragma once
// The vLLM section of a report: what vLLM allocates for each row, per GPU, and the rules applied.
// A formatter: it prints fields of VllmResult and computes nothing.

#include <vector>

#include <nlohmann/json.hpp>

#include "engines/vllm/rules.h"
#include "reports/section.h"

namespace kvplan {

/// One result as JSON: the budget, the groups, the blocks and the two lines vLLM prints.
nlohmann::ordered_json vllm_result_to_json(const VllmResult& result);

/// The section of a plan whose rows have these results, one per row.
void write_vllm_section(const std::vector<const VllmResult*>& results, EngineSection& section);

}  // namespace kvplan
