#pragma once
// The llama.cpp section of a report: what llama.cpp allocates for each row, and the rules applied.
// A formatter: it prints fields of LlamaCppResult and computes nothing.

#include <vector>

#include <nlohmann/json.hpp>

#include "engines/llamacpp/rules.h"
#include "reports/section.h"

namespace kvplan {

/// The llama.cpp build the profile follows.
inline constexpr std::string_view kLlamaCppProfileEngine = "llama.cpp v0.4.0 (as bundled in node-llama-cpp 3.21.1)";

/// One result as JSON: the context, every cache, the buffers and the rules (docs/engines/llamacpp.md).
nlohmann::ordered_json llamacpp_result_to_json(const LlamaCppResult& result);

/// The section of a plan whose rows have these results, one per row.
void write_llamacpp_section(const std::vector<const LlamaCppResult*>& results, EngineSection& section);

}  // namespace kvplan
