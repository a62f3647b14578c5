#pragma once
// `--runtime ollama`: what Ollama decides and the llama.cpp it runs allocates (rules.h), with
// Ollama's own settings and environment variables.

#include "engines/core/profile.h"

namespace kvplan {

struct OllamaResult;

const EngineEntry& ollama_engine();

/// The rules' result behind a row this profile priced (Ollama's estimate as it logs it, what
/// llama.cpp allocates), for `kvplan explain`; nullptr for a row another profile priced.
const OllamaResult* ollama_result(const Row& row);

}  // namespace kvplan
