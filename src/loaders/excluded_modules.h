#pragma once
// The lists of modules a quantized checkpoint keeps unquantized, read against kvplan's parameter
// counts: NVIDIA ModelOpt's fnmatch patterns (lm_head, model.layers.3.self_attn*) and
// compressed-tensors' names and "re:" expressions (re:.*self_attn.*). Internal to the config.json
// loader.

#include <cstddef>
#include <cstdint>
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
  std::vector<bool> dense_mlp;  ///< layers whose MLP is kept (dense layers only)
  /// Of a kept attention, what is quantized still: an MLA list naming every projection but
  /// o_proj (or the indexer) one by one keeps the rest.
  std::vector<std::uint64_t> attention_quantized;
  bool head = false;    ///< the list names the output head
  /// The first name of a module inside a layer kvplan does not count apart ("" = none).
  std::string inside;
  std::string unknown;  ///< the first name that may reach the routed experts ("" = none)
};

/// The key under which a quantization_config read from hf_quant_config.json names that file.
inline constexpr const char* kModeloptSchemeFile = "_kvplan_read_from";

/// How a list writes module names.
enum class ModuleSyntax {
  fnmatch,             ///< ModelOpt: fnmatch patterns (*, ?)
  compressed_tensors,  ///< exact names, and "re:" regular expressions matched from the start of a name
  /// transformers' modules_to_not_convert (fp8, AWQ, GPTQ): module names, a name taking what lies
  /// under it, and a name without a dot any module it is the last part of ("gate", "lm_head";
  /// transformers takes any name ending with it, output_gate too, which no such list means).
  transformers,
};

/// A compressed-tensors "re:" expression (without the prefix) as fnmatch patterns, one per
/// alternative, each matching every name the expression does and perhaps more: ".*" and "\d+"
/// read as "*", "." and a character class as "?", a group of alternatives (a|b) expanded, a
/// trailing "*" unless the expression ends in "$" (Python's re.match matches a prefix). nullopt
/// for what it cannot read so (nested groups, counted repeats, an optional atom, over 64
/// alternatives). A wider match keeps more unquantized, so a figure built on it is never lower.
std::optional<std::vector<std::string>> regex_as_wildcards(std::string_view regex);

/// What the list under "ignore" (config.json), "exclude_modules" (hf_quant_config.json) or
/// "modules_to_not_convert" keeps unquantized. An Error naming the field for a list that is not one of module names, or one
/// past the bounds a hostile file could use to make matching slow.
ExcludedModules read_excluded_modules(const nlohmann::json& config, const ParamCount& count, const std::string& origin,
                                      ModuleSyntax syntax);

/// The parameters a checkpoint quantizes: each layer's, less its router and vectors (no scheme
/// quantizes those) and what `excluded` keeps, or only its routed experts when `excluded.inside`
/// names modules kvplan does not count apart. Of them, the weight matrices of the layers whose
/// shapes the family records (LayerCount::shapes), one by one; `matrices` counts those and bounds
/// the rest: 3 per routed expert and 16 for the rest of a layer.
struct QuantizedShare {
  std::uint64_t params = 0;
  std::uint64_t matrices = 0;
  std::vector<MatrixShape> shapes;
  std::uint64_t shaped = 0;  ///< of params, the shapes' values
};
QuantizedShare quantized_share(const ParamCount& count, const ExcludedModules& excluded);

}  // namespace kvplan
