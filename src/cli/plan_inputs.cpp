#include "cli/plan_inputs.h"

#include <fmt/format.h>

#include "cli/hf_hub_cache.h"
#include "cli/unified_flag.h"
#include "engines/core/gguf_repo.h"
#include "engines/core/profile.h"
#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "kvplan/units.h"
#include "loaders/draft_model.h"

namespace kvplan {

ModelSpec load_model_for_cli(const std::string& model, const PlanTexts& texts) {
  // A repository of GGUF files (llama-server -hf's org/Name-GGUF[:QUANT]) is the catalog model at
  // that quantization, which --weight-dtype may name or confirm.
  ModelSpec spec = load_model_or_gguf_repo(model, hf_hub_cache_from_environment(), texts.weight_dtype);
  if (spec.architecture == "llama_eagle3")
    throw Error(fmt::format("--model {}: an EAGLE-3 draft head, not a model to serve alone; plan its target with "
                            "--runtime vllm --speculative-config '{{\"method\": \"eagle3\", \"model\": \"{}\", "
                            "\"num_speculative_tokens\": 3}}'",
                            model, model));
  if (spec.architecture == "llama_eagle")
    throw Error(fmt::format("--model {}: an EAGLE draft head for SGLang, not a model to serve alone; plan its target "
                            "with --runtime sglang --speculative-algorithm EAGLE --speculative-draft-model-path {}",
                            model, model));
  return apply_weight_overrides(std::move(spec), texts, kFlagNames);
}

PlanTexts request_texts_for(const std::string& model, PlanTexts texts) {
  if (parse_gguf_repo(model)) texts.weight_dtype.clear();
  return texts;
}

void load_speculative_draft(PlanRequest& request) {
  if (const std::optional<std::string> name = draft_checkpoint_named(request))
    request.draft_model = load_draft_model(*name, hf_hub_cache_from_environment());
}

std::vector<GpuSpec> resolve_gpus_for_cli(const std::string& gpu, const std::string& gpu_count, bool unified,
                                          std::string_view setting, const std::vector<GpuSpec>* detected) {
  if (gpu == "auto") {
    if (detected == nullptr) throw Error(std::string(setting) + ": 'auto' plans the main command and kvplan max; name the cards here");
    if (!gpu_count.empty()) throw Error("--gpus: --gpu auto counts this machine's cards itself");
    if (unified) throw Error("--unified: --gpu auto reads a Mac's unified memory itself");
    return *detected;
  }
  std::vector<GpuSpec> gpus = resolve_builtin_gpus(gpu, setting);
  if (!gpu_count.empty()) {
    // --gpus N: N of the card --gpu names.
    if (gpus.size() != 1) throw Error("--gpus: give one card with --gpu (or write --gpu 4xh100)");
    const std::uint64_t count = parse_positive_integer(gpu_count, "--gpus");
    if (count > 4096) throw Error("--gpus: more than 4096 GPUs");
    gpus = std::vector<GpuSpec>(static_cast<std::size_t>(count), gpus.front());  // not assign(): its value may not alias the vector
  }
  return unified ? unified_memory_gpus(std::move(gpus)) : gpus;
}

}  // namespace kvplan
