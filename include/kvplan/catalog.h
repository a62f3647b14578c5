#pragma once
/// The built-in catalogs: model specs from models/*.json and GPUs from gpus/gpus.json, embedded
/// into the binary at build time so an installed kvplan works from any directory.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvplan/gpu.h"
#include "kvplan/model_spec.h"

#include "kvplan/export.h"

namespace kvplan {

struct ModelCatalog {
  std::vector<ModelSpec> models;

  /// By id or alias (a Hugging Face repo id works), ignoring case; nullptr when unknown.
  KVPLAN_API const ModelSpec* find(std::string_view name) const;
  /// Every id and alias, for "did you mean".
  KVPLAN_API std::vector<std::string> names() const;
};

/// Parsed once on first use from the embedded files.
KVPLAN_API const ModelCatalog& builtin_models();

/// The built-in model with this id or alias, parsing only the files that can hold the name (the
/// CLI's fast path: a plan needs one model, not the catalog); nullopt when there is none.
KVPLAN_API std::optional<ModelSpec> find_builtin_model(std::string_view name);
KVPLAN_API const GpuCatalog& builtin_gpus();

/// The built-in cards a --gpu value can mean ("2x4090", "5090+3090"), parsing only the catalog
/// entries whose names start like its parts (the CLI's fast path); as resolve_gpus against
/// builtin_gpus() otherwise, "did you mean" included.
KVPLAN_API std::vector<GpuSpec> resolve_builtin_gpus(std::string_view text, std::string_view setting = "gpu");

}  // namespace kvplan
