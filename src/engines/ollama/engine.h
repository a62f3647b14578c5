#pragma once
// `--runtime ollama`: what Ollama decides and the llama.cpp it runs allocates (rules.h), with
// Ollama's own settings and environment variables.

#include "engines/core/profile.h"

namespace kvplan {

const EngineEntry& ollama_engine();

}  // namespace kvplan
