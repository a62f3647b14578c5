#include "loaders/draft_model.h"

#include <algorithm>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "kvplan/error.h"
#include "kvplan/model_loader.h"
#include "loaders/hf_cache.h"
#include "loaders/safetensors_names.h"

namespace kvplan {

namespace {

namespace fs = std::filesystem;

/// The folder the checkpoint `name` loads from: itself, its config.json's, or its snapshot in the
/// Hugging Face cache; nullopt for a catalog entry.
std::optional<fs::path> checkpoint_folder(const std::string& name, std::string_view hf_hub_cache) {
  std::error_code ec;
  const fs::path path(name);
  if (fs::is_directory(path, ec)) return path;
  if (fs::is_regular_file(path, ec)) return path.parent_path();
  if (hf_hub_cache.empty()) return std::nullopt;
  if (const std::optional<HfCacheSnapshot> snapshot = find_hf_cache_snapshot(name, fs::path(hf_hub_cache)))
    return snapshot->folder;
  return std::nullopt;
}

}  // namespace

std::shared_ptr<const DraftModel> load_draft_model(const std::string& name, std::string_view hf_hub_cache) {
  auto draft = std::make_shared<DraftModel>();
  try {
    draft->spec = load_model(name, hf_hub_cache);
  } catch (const Error& error) {
    // A draft that is not here leaves the plan unknown, not wrong: say where to put it.
    std::error_code ec;
    if (error.code() != ExitCode::invalid_input || fs::exists(name, ec)) throw;
    throw Error(fmt::format("the draft {} is not on this machine ({}); download it and give the path of its folder (its "
                            "config.json) as the model",
                            name, error.what()),
                ExitCode::unsupported_architecture);
  }
  if (const std::optional<fs::path> folder = checkpoint_folder(name, hf_hub_cache)) {
    if (const auto names = safetensors_tensor_names(*folder)) {
      const auto holds = [&](std::string_view part) {
        return std::any_of(names->begin(), names->end(),
                           [&](const std::string& tensor) { return tensor.find(part) != std::string::npos; });
      };
      draft->stores_embeddings = holds("embed_tokens");
      draft->stores_lm_head = holds("lm_head");
    }
  }
  return draft;
}

}  // namespace kvplan
