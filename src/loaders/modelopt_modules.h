#pragma once
// The module names NVIDIA ModelOpt writes (lm_head, model.layers.3.self_attn*, its exclude lists'
// fnmatch patterns) read against kvplan's parameter counts: which of them a list keeps
// unquantized. Internal to the config.json loader.

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "loaders/param_count.h"

namespace kvplan {

/// `name` without the path to the language model before "layers." ("model.", "backbone.",
/// "model.language_model.", "language_model.model.", ...).
std::string_view module_in_model(std::string_view name);

/// "12<rest>" read as 12 and the rest; nullopt without 1 to 5 leading digits.
std::optional<std::pair<std::size_t, std::string_view>> leading_number(std::string_view text);

/// "layers.12<rest>" read as 12 and <rest>; nullopt when the name does not start so.
std::optional<std::pair<std::size_t, std::string_view>> layer_module(std::string_view name);

/// The routed experts' paths within a layer, as the families' modelling code names them
/// ("mlp.experts", "block_sparse_moe.experts", ...).
std::span<const std::string_view> expert_blocks();

/// What the list leaves unquantized, summed over its names.
struct ExcludedModules {
  std::vector<bool> whole_layers;
  std::vector<bool> attention;  ///< layers whose attention is kept
  std::vector<bool> shared;     ///< layers whose shared experts are kept
  bool head = false;    ///< the list names the output head
  /// The first name of a module inside a layer kvplan does not count apart ("" = none).
  std::string inside;
  std::string unknown;  ///< the first name that may reach the routed experts ("" = none)
};

/// The key under which a quantization_config read from hf_quant_config.json names that file.
inline constexpr const char* kModeloptSchemeFile = "_kvplan_read_from";

/// What the list under "ignore" (config.json) or "exclude_modules" (hf_quant_config.json) keeps
/// unquantized. An Error naming the field for a list that is not one of module names, or one
/// past the bounds a hostile file could use to make matching slow.
ExcludedModules read_excluded_modules(const nlohmann::json& config, const ParamCount& count, const std::string& origin);

}  // namespace kvplan
