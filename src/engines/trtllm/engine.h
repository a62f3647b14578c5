#pragma once
// `--runtime trtllm`: what TensorRT-LLM allocates for its paged KV cache, per GPU (rules.h), with
// trtllm-serve's own flags.

#include "engines/core/profile.h"

namespace kvplan {

const EngineEntry& trtllm_engine();

}  // namespace kvplan
