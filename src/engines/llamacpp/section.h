#pragma once
// The llama.cpp section of a report: what llama.cpp allocates for each row, and the rules applied.
// A formatter: it prints fields of LlamaCppResult and computes nothing.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engines/llamacpp/rules.h"
#include "kvplan/report.h"

namespace kvplan {

/// The llama.cpp build the profile follows.
inline constexpr std::string_view kLlamaCppProfileEngine = "llama.cpp v0.4.0 (as bundled in node-llama-cpp 3.21.1)";

struct LlamaCppReport {
  Report base;                          ///< rows priced with llama.cpp's figures (see run_llamacpp_plan)
  std::vector<LlamaCppResult> results;  ///< one per row of base.plan.rows
};

/// One result as JSON: the context, every cache, the buffers and the rules (README, JSON output).
nlohmann::ordered_json llamacpp_result_to_json(const LlamaCppResult& result);

/// The human lines under the table: per row, each cache and buffer, then the rules applied.
std::vector<std::string> llamacpp_lines(const LlamaCppReport& report);

/// The whole report in `format`: the generic report of the rows plus the llama.cpp section
/// (JSON: settings.runtime "llama.cpp" and a top-level "llamacpp" object).
std::string format_llamacpp_report(const LlamaCppReport& report, OutputFormat format, bool color);

}  // namespace kvplan
