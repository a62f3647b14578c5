#pragma once
// The main command's flags as typed, for every command that plans (the plain command, kvplan max,
// kvplan sweep, ...): their --model, --gpu, --runtime, --ctx ... fall through to the main
// command's options, and the model and cards are resolved here, the same way for all of them.

#include <string>
#include <string_view>
#include <vector>

#include "engines/core/request_texts.h"
#include "kvplan/gpu.h"
#include "kvplan/model_spec.h"
#include "kvplan/plan.h"

namespace kvplan {

/// The CLI names every setting by its flag.
inline constexpr SettingNames kFlagNames{"--ctx",       "--batch",        "--overhead", "--util",     "--mtp-layers",
                                         "--kv-dtype",  "--weight-dtype", "--weights",  "--params",   "--runtime",
                                         "--gpu",       "--text-only"};

struct PlanInputs {
  const std::string& model;
  const std::string& gpu;
  const std::string& gpu_count;  ///< --gpus N
  const std::string& format;
  const PlanTexts& texts;
  bool unified = false;          ///< --unified
  const std::vector<GpuSpec>* detected = nullptr;  ///< --gpu auto: this machine's cards
};

/// --model as the command line reads it: the Hugging Face cache on this machine first, then the
/// catalog and files, with --weights / --params / --weight-dtype applied.
ModelSpec load_model_for_cli(const std::string& model, const PlanTexts& texts);

/// The texts a plan request is built from for `model`: a GGUF repository (org/Name-GGUF) already
/// carries its quantization in the weights, so --weight-dtype, which only confirmed it, is dropped.
PlanTexts request_texts_for(const std::string& model, PlanTexts texts);

/// The speculative-decoding draft checkpoint the engine options name (vLLM's --speculative-config
/// with method eagle3 or draft_model and a model), loaded as --model is, into request.draft_model. A draft not on
/// this machine is exit 3 with the way forward.
void load_speculative_draft(PlanRequest& request);

/// --gpu (several cards: 2x4090, 5090+3090), times --gpus N, as unified memory with --unified;
/// errors name `setting` (sweep's cards come from its --gpus list). `auto` is the `detected` cards
/// (cli/gpu_auto), where the command detects them.
std::vector<GpuSpec> resolve_gpus_for_cli(const std::string& gpu, const std::string& gpu_count, bool unified,
                                          std::string_view setting = "--gpu",
                                          const std::vector<GpuSpec>* detected = nullptr);

}  // namespace kvplan
