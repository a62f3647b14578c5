#pragma once
/// Hugging Face `config.json` → ModelSpec: the file users already have. Every layout that changes
/// the cache is read from the fields real configs use; a field that would change the cache and is
/// not understood is an unsupported-architecture error (exit code 3), never a guess.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "kvplan/model_spec.h"

namespace kvplan {

/// Builds the spec from a parsed config.json. `safetensors_total_size` (from
/// model.safetensors.index.json) makes the weight size exact when given.
ModelSpec model_spec_from_hf_config(const nlohmann::json& config, std::string_view origin,
                                    std::optional<std::uint64_t> safetensors_total_size = std::nullopt);

/// `path` is a config.json or a folder holding one (a checkout or snapshot); a
/// model.safetensors.index.json beside it supplies the exact weight size.
ModelSpec load_hf_model(const std::string& path);

/// True when a JSON document is a Hugging Face config rather than a kvplan spec.
bool is_hf_config(const nlohmann::json& document);

}  // namespace kvplan
