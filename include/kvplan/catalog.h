#pragma once
/// The built-in catalogs: model specs from models/*.json and GPUs from gpus/gpus.json, embedded
/// into the binary at build time so an installed kvplan works from any directory.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvplan/gpu.h"
#include "kvplan/model_spec.h"

namespace kvplan {

struct ModelCatalog {
  std::vector<ModelSpec> models;

  /// By id or alias (a Hugging Face repo id works), ignoring case; nullptr when unknown.
  const ModelSpec* find(std::string_view name) const;
  /// Every id and alias, for "did you mean".
  std::vector<std::string> names() const;
};

/// Parsed once on first use from the embedded files.
const ModelCatalog& builtin_models();

/// The built-in model with this id or alias, parsing only the files that can hold the name (the
/// CLI's fast path: a plan needs one model, not the catalog); nullopt when there is none.
std::optional<ModelSpec> find_builtin_model(std::string_view name);
const GpuCatalog& builtin_gpus();

}  // namespace kvplan
