#pragma once
// The TensorRT-LLM section of a report: what it allocates for each row, per GPU, its log lines and
// the rules applied. A formatter: it prints fields of TrtllmResult and computes nothing.

#include <vector>

#include <nlohmann/json.hpp>

#include "engines/trtllm/rules.h"
#include "reports/section.h"

namespace kvplan {

/// One result as JSON: the budget, the stages, the windows and the lines TensorRT-LLM prints.
nlohmann::ordered_json trtllm_result_to_json(const TrtllmResult& result);

/// The section of a plan whose rows have these results, one per row.
void write_trtllm_section(const std::vector<const TrtllmResult*>& results, EngineSection& section);

}  // namespace kvplan
