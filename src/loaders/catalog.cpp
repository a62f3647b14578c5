#include "kvplan/catalog.h"

#include <algorithm>
#include <cctype>

#include "loaders/embedded_files.h"
#include "loaders/spec_json.h"

namespace kvplan {

namespace {

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

const ModelSpec* ModelCatalog::find(std::string_view name) const {
  for (const ModelSpec& model : models) {
    if (same_name(model.id, name)) return &model;
    for (const std::string& alias : model.aliases)
      if (same_name(alias, name)) return &model;
  }
  return nullptr;
}

std::vector<std::string> ModelCatalog::names() const {
  std::vector<std::string> out;
  for (const ModelSpec& model : models) {
    out.push_back(model.id);
    out.insert(out.end(), model.aliases.begin(), model.aliases.end());
  }
  return out;
}

const ModelCatalog& builtin_models() {
  static const ModelCatalog catalog = [] {
    ModelCatalog out;
    for (const embedded::File& file : embedded::model_files()) out.models.push_back(parse_model_spec(file.text, file.name));
    std::sort(out.models.begin(), out.models.end(),
              [](const ModelSpec& a, const ModelSpec& b) { return a.id < b.id; });
    return out;
  }();
  return catalog;
}

std::optional<ModelSpec> find_builtin_model(std::string_view name) {
  if (name.empty()) return std::nullopt;
  const auto same_char = [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  };
  for (const embedded::File& file : embedded::model_files()) {
    // A file can only match when the name stands in it as a JSON string ("id" or an alias).
    const std::string quoted = "\"" + std::string(name) + "\"";
    if (std::search(file.text.begin(), file.text.end(), quoted.begin(), quoted.end(), same_char) == file.text.end())
      continue;
    ModelSpec spec = parse_model_spec(file.text, file.name);
    ModelCatalog one;
    one.models.push_back(std::move(spec));
    if (one.find(name)) return std::move(one.models.front());
  }
  return std::nullopt;
}

const GpuCatalog& builtin_gpus() {
  static const GpuCatalog catalog = parse_gpu_catalog(embedded::gpu_catalog(), "gpus/gpus.json");
  return catalog;
}

}  // namespace kvplan
