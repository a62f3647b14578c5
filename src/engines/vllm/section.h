#pragma once
// The vLLM section of a report: what vLLM allocates for each row, per GPU, and the rules applied.
// A formatter: it prints fields of VllmResult and computes nothing.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvplan/report.h"
#include "engines/vllm/rules.h"

namespace kvplan {

struct VllmReport {
  Report base;                      ///< rows priced with vLLM's figures (see run_vllm_plan)
  std::vector<VllmResult> results;  ///< one per row of base.plan.rows
};

/// One result as JSON: the budget, the groups, the blocks and the two lines vLLM prints.
nlohmann::ordered_json vllm_result_to_json(const VllmResult& result);

/// The human lines under the table: per row, the budget, the groups, vLLM's log lines, the rules.
std::vector<std::string> vllm_lines(const VllmReport& report);

/// The whole report in `format`: the generic report of the rows plus the vLLM section (JSON:
/// settings.runtime "vllm" and a top-level "vllm" object).
std::string format_vllm_report(const VllmReport& report, OutputFormat format, bool color);

}  // namespace kvplan
