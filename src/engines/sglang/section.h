#pragma once
// The SGLang section of a report: what SGLang allocates for each row, per GPU, its log lines and
// the rules applied. A formatter: it prints fields of SglangResult and computes nothing.

#include <vector>

#include <nlohmann/json.hpp>

#include "engines/sglang/rules.h"
#include "reports/section.h"

namespace kvplan {

/// One result as JSON: the budget, the stages, the pools and the lines SGLang prints.
nlohmann::ordered_json sglang_result_to_json(const SglangResult& result);

/// The section of a plan whose rows have these results, one per row.
void write_sglang_section(const std::vector<const SglangResult*>& results, EngineSection& section);

}  // namespace kvplan
