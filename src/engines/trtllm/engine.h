#pragma once
// `--runtime trtllm`: what TensorRT-LLM allocates for its paged KV cache, per GPU (rules.h), with
// trtllm-serve's own flags.

#include "engines/core/profile.h"

namespace kvplan {

struct TrtllmResult;

const EngineEntry& trtllm_engine();

/// The rules' result behind a row this profile priced (its K and V buffers, its budget), for
/// `kvplan explain`; nullptr for a row another profile priced.
const TrtllmResult* trtllm_result(const Row& row);

}  // namespace kvplan
