#pragma once
// `--runtime vllm`: what vLLM's V1 engine allocates, per GPU (rules.h), with vLLM's own flags.

#include "engines/core/profile.h"

namespace kvplan {

const EngineEntry& vllm_engine();

}  // namespace kvplan
