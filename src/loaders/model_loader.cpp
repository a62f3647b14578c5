#include "kvplan/model_loader.h"

#include <filesystem>

#include <fmt/format.h>

#include "loaders/json_reader.h"
#include "kvplan/error.h"
#include "loaders/gguf_model.h"
#include "loaders/hf_cache.h"
#include "loaders/hf_config.h"
#include "loaders/known_unsized.h"
#include "loaders/ollama_tags.h"
#include "loaders/spec_json.h"
#include "model/suggest.h"

namespace kvplan {

namespace {

bool looks_like_path(std::string_view text) {
  const auto ends_with = [&](std::string_view suffix) {
    return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
  };
  return text.rfind("./", 0) == 0 || text.rfind("../", 0) == 0 || text.rfind('/', 0) == 0 || ends_with(".json") ||
         ends_with(".gguf");
}

/// A kvplan spec or a Hugging Face config.json (or the folder holding one), told apart by content.
ModelSpec load_model_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return load_hf_model(path);
  const std::string text = read_text_file(path);
  const nlohmann::json document = parse_json_document(text, path);
  if (is_hf_config(document)) return load_hf_model(path);
  return model_spec_from_json(document, path);
}

}  // namespace

ModelSpec load_model(std::string_view text, const ModelCatalog& catalog) {
  if (text.empty()) throw Error("--model: empty model name");
  if (const ModelSpec* model = catalog.find(text)) return *model;
  const std::string path(text);
  // A GGUF file (or one part of a split model): its header, read as llama.cpp reads it.
  if (is_gguf_path(path)) return load_gguf_model_spec(path);
  std::error_code ec;
  if (std::filesystem::exists(path, ec) || looks_like_path(text)) return load_model_file(path);
  // An Ollama library tag of a catalog model: the GGUF blob Ollama serves for it.
  if (looks_like_ollama_tag(text)) return load_ollama_tag(text, catalog);
  if (std::optional<std::string> hint = unsized_model_hint(text))
    throw Error(fmt::format("--model: {}: {}", text, *hint), ExitCode::unsupported_architecture);
  throw Error(fmt::format("--model: unknown model '{}'{}; or give a path to a model spec, a config.json or a model folder", text,
                          did_you_mean(text, catalog.names())));
}

ModelSpec load_model(std::string_view text) {
  if (std::optional<ModelSpec> model = find_builtin_model(text)) return std::move(*model);
  if (looks_like_ollama_tag(text) && !std::filesystem::exists(std::string(text))) return load_ollama_tag(text, builtin_models());
  return load_model(text, builtin_models());
}

ModelSpec load_model(std::string_view text, std::string_view hf_hub_cache) {
  std::error_code ec;
  if (!hf_hub_cache.empty() && looks_like_hf_repo_id(text) && !std::filesystem::exists(std::string(text), ec))
    if (const std::optional<HfCacheSnapshot> snapshot = find_hf_cache_snapshot(text, std::filesystem::path(hf_hub_cache))) {
      ModelSpec spec = load_hf_model(snapshot->folder.string());
      spec.source = fmt::format("{} (Hugging Face cache: {} revision {}, {})", spec.source, text, snapshot->revision,
                                snapshot->chosen_by);
      // The folder is named by its revision: the repository names the model unless config.json does.
      if (spec.name == snapshot->revision) spec.name = std::string(text);
      spec.id = std::string(text);
      return spec;
    }
  return load_model(text);
}

}  // namespace kvplan
