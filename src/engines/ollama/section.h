#pragma once
// The Ollama section of a report: Ollama's settings, its estimate as it logs it (msg=offload), the
// GPUs' shares and what stays in system RAM, and the llama.cpp figures. A formatter: it computes nothing.

#include <vector>

#include "engines/ollama/rules.h"
#include "reports/section.h"

namespace kvplan {

inline constexpr std::string_view kOllamaProfileEngine = "Ollama v0.2.0 - v0.33.0-rc2 (rules read at each era's tags)";

void write_ollama_section(const std::vector<const OllamaResult*>& results, EngineSection& section);

}  // namespace kvplan
