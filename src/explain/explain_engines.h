#pragma once
// One explanation per engine kvplan compares against: the settings the log recovered become the
// engine profile's request, and each component of its plan is set beside the log's figure.

#include <vector>

#include "explain/explanation.h"
#include "kvplan/gpu.h"
#include "kvplan/model_spec.h"

namespace kvplan {

void explain_vllm(const logs::EngineLog& log, const ModelSpec& model, const std::vector<GpuSpec>& gpus, Explanation& out);
void explain_sglang(const logs::EngineLog& log, const ModelSpec& model, const std::vector<GpuSpec>& gpus, Explanation& out);
void explain_trtllm(const logs::EngineLog& log, const ModelSpec& model, const std::vector<GpuSpec>& gpus, Explanation& out);
void explain_llamacpp(const logs::EngineLog& log, const ModelSpec& model, const std::vector<GpuSpec>& gpus,
                      Explanation& out);
void explain_ollama(const logs::EngineLog& log, const ModelSpec& model, const std::vector<GpuSpec>& gpus, Explanation& out);
/// Ollama's cards: --gpu, else the free memory its offload line printed (memory.available), else
/// the card the log names.
std::vector<GpuSpec> ollama_log_gpus(const ExplainInputs& inputs, const logs::EngineLog& log, Explanation& out);

}  // namespace kvplan
