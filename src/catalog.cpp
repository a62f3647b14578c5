#include "kvplan/catalog.h"

#include <algorithm>
#include <cctype>

#include "embedded_files.h"
#include "kvplan/spec_json.h"

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

const GpuCatalog& builtin_gpus() {
  static const GpuCatalog catalog = parse_gpu_catalog(embedded::gpu_catalog(), "gpus/gpus.json");
  return catalog;
}

}  // namespace kvplan
