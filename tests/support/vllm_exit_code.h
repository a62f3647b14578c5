#pragma once
// The exit code plan_vllm ends with for a model, a card and settings: 0 when it plans, else the
// code of the Error it throws (2 where vLLM refuses, 3 where the profile does not model it).

#include "engines/vllm/rules.h"
#include "kvplan/error.h"

namespace kvplan::testing {

inline int vllm_plan_exit_code(const ModelSpec& model, const GpuSpec& gpu, const VllmSettings& settings) {
  try {
    plan_vllm(model, gpu, settings);
  } catch (const Error& e) {
    return static_cast<int>(e.code());
  }
  return 0;
}

}  // namespace kvplan::testing
