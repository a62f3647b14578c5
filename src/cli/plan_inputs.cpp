#include "cli/plan_inputs.h"

#include <algorithm>
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "engines/vllm/speculative.h"
#include "loaders/hf_cache.h"
#include "loaders/safetensors_names.h"
#include "cli/hf_hub_cache.h"
#include "cli/unified_flag.h"
#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "kvplan/model_loader.h"
#include "kvplan/units.h"

namespace kvplan {

ModelSpec load_model_for_cli(const std::string& model, const PlanTexts& texts) {
  ModelSpec spec = load_model(model, hf_hub_cache_from_environment());
  if (spec.architecture == "llama_eagle3")
    throw Error(fmt::format("--model {}: an EAGLE-3 draft head, not a model to serve alone; plan its target with "
                            "--runtime vllm --speculative-config '{{\"method\": \"eagle3\", \"model\": \"{}\", "
                            "\"num_speculative_tokens\": 3}}'",
                            model, model));
  return apply_weight_overrides(std::move(spec), texts, kFlagNames);
}

namespace {

/// The folder of the checkpoint `name` loads from: itself, its config.json's, or its snapshot in
/// the Hugging Face cache; nullopt for a catalog entry.
std::optional<std::filesystem::path> checkpoint_folder(const std::string& name) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path path(name);
  if (fs::is_directory(path, ec)) return path;
  if (fs::is_regular_file(path, ec)) return path.parent_path();
  const std::string hub = hf_hub_cache_from_environment();
  if (hub.empty()) return std::nullopt;
  if (const std::optional<HfCacheSnapshot> snapshot = find_hf_cache_snapshot(name, fs::path(hub))) return snapshot->folder;
  return std::nullopt;
}

}  // namespace

void load_speculative_draft(PlanRequest& request) {
  for (const EngineOption& option : request.engine_options) {
    if (option.name != "speculative-config") continue;
    const std::optional<std::string> name = vllm_speculative_draft_name(option.value);
    if (!name) continue;
    auto draft = std::make_shared<DraftModel>();
    try {
      draft->spec = load_model(*name, hf_hub_cache_from_environment());
    } catch (const Error& error) {
      // A draft that is not on this machine leaves the plan unknown, not wrong: say where to put it.
      std::error_code ec;
      if (error.code() != ExitCode::invalid_input || std::filesystem::exists(*name, ec)) throw;
      throw Error(fmt::format("{}: the draft {} is not on this machine ({}); download it and give the path of its folder "
                              "(its config.json) as the model",
                              option.shown_as, *name, error.what()),
                  ExitCode::unsupported_architecture);
    }
    // Its tensors, where its folder holds safetensors: whether it ships embeddings and a head of
    // its own decides whether the engine shares the target's.
    if (const std::optional<std::filesystem::path> folder = checkpoint_folder(*name)) {
      if (const auto names = safetensors_tensor_names(*folder)) {
        const auto holds = [&](std::string_view part) {
          return std::any_of(names->begin(), names->end(),
                             [&](const std::string& tensor) { return tensor.find(part) != std::string::npos; });
        };
        draft->stores_embeddings = holds("embed_tokens");
        draft->stores_lm_head = holds("lm_head");
      }
    }
    request.draft_model = std::move(draft);
  }
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
