#include "loaders/modelopt_quantization.h"

#include <algorithm>
#include <array>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kvplan/error.h"
#include "kvplan/units.h"
#include "model/checked.h"
#include "model/text.h"

namespace kvplan {

namespace {

// Real lists hold a few hundred names (GLM-5's 471) with at most two wildcards each; these
// bounds keep a hostile file's matching to a fraction of a second.
constexpr std::size_t kMaxExcluded = 4096;
constexpr std::size_t kMaxPatternBytes = 256;
constexpr std::size_t kMaxWildcards = 8;

/// What a name on the list leaves unquantized, as far as kvplan's counts can tell.
enum class Excluded {
  head,           ///< the output head (kept at the model dtype anyway)
  counted_apart,  ///< embeddings, a router, a norm, a tower, MTP: kept at the model dtype anyway
  whole_layer,    ///< one decoder layer, all of it
  attention,      ///< one layer's attention (or linear attention) block, whole
  shared,         ///< one layer's shared experts (or every layer's: `all`)
  inside_layer,   ///< other modules within layers that are not routed experts
  unknown,        ///< anything else, the routed experts perhaps
};

struct Classified {
  Excluded kind = Excluded::unknown;
  std::size_t layer = 0;  ///< for whole_layer, attention and shared
  bool all = false;       ///< shared: in every layer
  /// whole_layer written "layers.1*": fnmatch's star takes layers 10 to 19 and 100 on too, every
  /// layer whose number starts with these digits.
  std::string digits;
};

/// What follows "layers.N" in the names of a whole attention block and of the shared experts.
constexpr std::array kAttentionBlocks = {std::string_view{".self_attn"}, std::string_view{".self_attn*"},
                                         std::string_view{".self_attn.*"}, std::string_view{".linear_attn"},
                                         std::string_view{".linear_attn*"}, std::string_view{".linear_attn.*"}};
constexpr std::array kSharedBlocks = {
    std::string_view{".mlp.shared_expert"},  std::string_view{".mlp.shared_expert*"}, std::string_view{".mlp.shared_expert.*"},
    std::string_view{".mlp.shared_experts"}, std::string_view{".mlp.shared_experts*"}, std::string_view{".mlp.shared_experts.*"},
    std::string_view{".mlp.shared_expert_gate"}};

template <std::size_t N>
bool one_of(std::string_view text, const std::array<std::string_view, N>& names) {
  return std::find(names.begin(), names.end(), text) != names.end();
}

/// The module paths' prefixes before "layers.", longest first: Llama's "model.", a wrapper's
/// language model, Nemotron-H's "backbone.".
constexpr std::array kPrefixes = {std::string_view{"model.language_model."}, std::string_view{"language_model.model."},
                                  std::string_view{"language_model."}, std::string_view{"backbone."},
                                  std::string_view{"model."}, std::string_view{""}};

/// Module names of towers and projectors beside the language model, which kvplan prices at the
/// model dtype as parts of their own.
constexpr std::array kTowers = {std::string_view{"vision_tower"},    std::string_view{"visual"},
                                std::string_view{"vision_model"},    std::string_view{"mm_projector"},
                                std::string_view{"multi_modal_projector"}, std::string_view{"embed_vision"},
                                std::string_view{"patch_merge_mlp"}, std::string_view{"audio_tower"},
                                std::string_view{"embed_audio"}};

/// The routed experts' paths within a layer, as the families' modelling code names them.
constexpr std::array kExpertBlocks = {std::string_view{"mlp.experts"},       std::string_view{"block_sparse_moe.experts"},
                                      std::string_view{"mixer.experts"},     std::string_view{"feed_forward.experts"},
                                      std::string_view{"ffn.experts"},       std::string_view{"moe.experts"},
                                      std::string_view{"experts"}};

/// A layer's router, as its module path ends.
constexpr std::array kRouters = {std::string_view{"mlp.gate"}, std::string_view{"block_sparse_moe.gate"},
                                 std::string_view{"mixer.gate"}, std::string_view{"feed_forward.router"},
                                 std::string_view{"router"}, std::string_view{"mlp.router"}};

std::string_view without_prefix(std::string_view name) {
  for (const std::string_view prefix : kPrefixes)
    if (name.substr(0, prefix.size()) == prefix) return name.substr(prefix.size());
  return name;
}

bool starts_with(std::string_view text, std::string_view start) { return text.substr(0, start.size()) == start; }

/// "12<rest>" read as 12 and the rest; nullopt without 1 to 5 leading digits.
std::optional<std::pair<std::size_t, std::string_view>> number_and_rest(std::string_view text) {
  std::size_t digits = 0;
  std::size_t number = 0;
  while (digits < text.size() && digits < 6 && text[digits] >= '0' && text[digits] <= '9')
    number = number * 10 + static_cast<std::size_t>(text[digits++] - '0');
  if (digits == 0 || digits == 6) return std::nullopt;
  return std::pair{number, text.substr(digits)};
}

/// "layers.12.<rest>" read as 12 and ".<rest>"; nullopt when the name does not start so.
std::optional<std::pair<std::size_t, std::string_view>> layer_and_rest(std::string_view name) {
  if (!starts_with(name, "layers.")) return std::nullopt;
  return number_and_rest(name.substr(7));
}

/// The names of each MoE layer's first expert's weights under every prefix and block spelling
/// above, built once a list needs them: a name on the list that matches one may reach the routed
/// experts.
class ExpertNames {
 public:
  explicit ExpertNames(const ParamCount& count) : count_(count), names_(count.layers.size()) {}

  /// Whether `pattern` may name a routed expert's weights: in layer `only` when the pattern names
  /// one, else in any. A bracket (fnmatch's character class) is taken to reach them. Without
  /// digits or '?' a layer's number cannot change the answer, so one MoE layer speaks for all.
  bool reached_by(std::string_view pattern, std::optional<std::size_t> only) {
    if (pattern.find('[') != std::string_view::npos) return true;
    const bool index_free = pattern.find_first_of("0123456789?") == std::string_view::npos;
    for (std::size_t i = only.value_or(0); i < count_.layers.size(); ++i) {
      if (count_.layers[i].expert != 0) {
        for (const std::string& name : names_of(i))
          if (wildcard_match(pattern, name)) return true;
        if (index_free) break;
      }
      if (only) break;
    }
    return false;
  }

 private:
  const std::vector<std::string>& names_of(std::size_t layer) {
    std::vector<std::string>& names = names_[layer];
    if (names.empty())
      for (const std::string_view prefix : kPrefixes)
        for (const std::string_view block : kExpertBlocks)
          for (const std::string_view leaf : {std::string_view{"0.gate_proj"}, std::string_view{"gate_up_proj"}})
            names.push_back(fmt::format("{}layers.{}.{}.{}", prefix, layer, block, leaf));
    return names;
  }

  const ParamCount& count_;
  std::vector<std::vector<std::string>> names_;
};

Classified classify(std::string_view pattern, const ParamCount& count, ExpertNames& experts) {
  const std::string_view name = without_prefix(pattern);
  if (name == "lm_head" || name == "head") return {Excluded::head};
  if (name == "embed_tokens" || name == "embeddings" || name == "wte") return {Excluded::counted_apart};
  for (const std::string_view tower : kTowers)
    if (starts_with(name, tower)) return {Excluded::counted_apart};
  if (starts_with(name, "mtp")) return {Excluded::counted_apart};
  // A norm is no weight matrix: ModelOpt never quantizes it, and kvplan prices it with the rest.
  const std::string_view last = name.substr(name.rfind('.') + 1);
  if (name.find_first_of("*?[") == std::string_view::npos && last.size() >= 4 && last.substr(last.size() - 4) == "norm")
    return {Excluded::counted_apart};
  std::optional<std::size_t> only;  // the layer a "layers.N.<module>" name is within
  if (const auto parsed = layer_and_rest(name)) {
    const auto [layer, rest] = *parsed;
    // Layers past the decoder's are its MTP layers, as DeepSeek's checkpoints number them.
    if (rest == ".*") return {layer < count.layers.size() ? Excluded::whole_layer : Excluded::counted_apart, layer};
    if (rest == "*") {
      const std::string_view digits = name.substr(7, name.size() - 8);  // between "layers." and "*"
      return {Excluded::whole_layer, layer, false, std::string(digits)};
    }
    if (layer >= count.layers.size() && starts_with(rest, ".")) return {Excluded::counted_apart};
    if (layer < count.layers.size() && rest.find_first_of("*?[") == std::string_view::npos) {
      for (const std::string_view router : kRouters)  // kept at the model dtype already
        if (rest == fmt::format(".{}", router) && count.layers[layer].router) return {Excluded::counted_apart};
    }
    if (layer < count.layers.size() && count.layers[layer].router && rest == ".router*") return {Excluded::counted_apart};
    if (layer < count.layers.size() && one_of(rest, kAttentionBlocks)) return {Excluded::attention, layer};
    // The gate alone is kept with the experts it gates: a little above, never below.
    if (layer < count.layers.size() && one_of(rest, kSharedBlocks)) return {Excluded::shared, layer};
    if (starts_with(rest, ".")) only = layer;
  }
  // Every layer's shared experts ("*.mlp.shared_expert.*"): each of their matrices matched.
  if (!only && !experts.reached_by(pattern, std::nullopt)) {
    const auto all_shared = [&](std::string_view block) {
      for (const std::string_view matrix : {"gate_proj", "up_proj", "down_proj"})
        if (!wildcard_match(pattern, fmt::format("model.layers.0.mlp.{}.{}", block, matrix))) return false;
      return true;
    };
    if (all_shared("shared_expert") || all_shared("shared_experts")) return {Excluded::shared, 0, true};
  }
  // Anything else: modules inside layers, unless it may reach a routed expert.
  return {experts.reached_by(pattern, only) ? Excluded::unknown : Excluded::inside_layer};
}

/// The list under "ignore" (config.json) or "exclude_modules" (hf_quant_config.json).
std::vector<std::string> excluded_names(const nlohmann::json& config, const std::string& origin) {
  const auto list = config.contains("ignore") ? config.find("ignore") : config.find("exclude_modules");
  if (list == config.end() || list->is_null()) return {};
  const std::string field = fmt::format("quantization_config.{}", config.contains("ignore") ? "ignore" : "exclude_modules");
  if (!list->is_array()) throw Error(fmt::format("{}: field '{}': expected a list of module names", origin, field));
  if (list->size() > kMaxExcluded)
    throw Error(fmt::format("{}: field '{}': {} names, more than the {} kvplan reads", origin, field, list->size(), kMaxExcluded));
  std::vector<std::string> names;
  for (const nlohmann::json& entry : *list) {
    if (!entry.is_string() || entry.get_ref<const std::string&>().size() > kMaxPatternBytes)
      throw Error(fmt::format("{}: field '{}': expected module names of at most {} bytes", origin, field, kMaxPatternBytes));
    const std::string& name = entry.get_ref<const std::string&>();
    if (static_cast<std::size_t>(std::count(name.begin(), name.end(), '*')) > kMaxWildcards)
      throw Error(fmt::format("{}: field '{}': '{}' has more than {} wildcards (*), which no ModelOpt list writes", origin,
                              field, printable(name, 60), kMaxWildcards));
    names.push_back(name);
  }
  return names;
}

std::string string_or_empty(const nlohmann::json& config, const char* key) {
  const auto it = config.find(key);
  return it != config.end() && it->is_string() ? it->get<std::string>() : "";
}

/// What the list leaves unquantized, summed over its names.
struct Exclusions {
  std::vector<bool> whole_layers;
  std::vector<bool> attention;  ///< layers whose attention is kept
  std::vector<bool> shared;     ///< layers whose shared experts are kept
  bool head = false;    ///< the list names the output head
  /// The first name of a module inside a layer kvplan does not count apart ("" = none).
  std::string inside;
  std::string unknown;  ///< the first name that may reach the routed experts ("" = none)
};

Exclusions read_exclusions(const nlohmann::json& config, const ParamCount& count, const std::string& origin) {
  Exclusions exclusions;
  exclusions.whole_layers.assign(count.layers.size(), false);
  exclusions.attention.assign(count.layers.size(), false);
  exclusions.shared.assign(count.layers.size(), false);
  ExpertNames experts(count);
  for (const std::string& name : excluded_names(config, origin)) {
    const Classified classified = classify(name, count, experts);
    switch (classified.kind) {
      case Excluded::head: exclusions.head = true; break;
      case Excluded::counted_apart: break;
      case Excluded::whole_layer:
        if (classified.digits.empty()) {
          exclusions.whole_layers[classified.layer] = true;
        } else {
          for (std::size_t i = 0; i < count.layers.size(); ++i)
            if (starts_with(std::to_string(i), classified.digits)) exclusions.whole_layers[i] = true;
        }
        break;
      case Excluded::attention:
      case Excluded::shared:
        if (classified.kind == Excluded::attention)
          exclusions.attention[classified.layer] = true;
        else if (classified.all)
          exclusions.shared.assign(count.layers.size(), true);
        else
          exclusions.shared[classified.layer] = true;
        // A family that does not count these modules apart cannot keep them exactly.
        if (!count.layers[classified.layer].modules && exclusions.inside.empty()) exclusions.inside = name;
        break;
      case Excluded::inside_layer:
        if (exclusions.inside.empty()) exclusions.inside = name;
        break;
      case Excluded::unknown:
        if (exclusions.unknown.empty()) exclusions.unknown = name;
        break;
    }
  }
  return exclusions;
}

/// Every parameter at the model dtype, labelled as the upper bound it is and why.
QuantizedWeights upper_bound(const ParamCount& count, const Dtype& model_dtype, const std::string& why) {
  return {&model_dtype, weight_bytes_at(count.total, model_dtype),
          fmt::format("an upper bound: {} params x {} B ({}), because {} (--weights SIZE, the checkpoint's size, "
                      "makes it exact)",
                      billions(count.total), static_cast<double>(model_dtype.block_bytes) / model_dtype.block_elements,
                      model_dtype.name, why)};
}

/// How a MIXED_PRECISION list quantizes one layer's routed experts.
struct ExpertEntries {
  bool block = false;   ///< the whole block named NVFP4 ("layers.3.mlp.experts")
  bool other = false;   ///< some entry names another format
  std::set<std::pair<std::uint64_t, std::string>> matrices;  ///< (expert, matrix) named NVFP4
  std::set<std::string> names;  ///< the matrices' names (w1, w2, w3 or gate_proj, ...)
};

/// Whether `entry` ({"quant_algo": "NVFP4", "group_size": 16}) is the NVFP4 kvplan prices.
bool is_nvfp4(const nlohmann::json& entry) {
  if (!entry.is_object()) return false;
  const std::string algo = string_or_empty(entry, "quant_algo");
  const auto group = entry.find("group_size");
  return (algo == "NVFP4" || algo == "W4A16_NVFP4") && group != entry.end() && group->is_number_unsigned() &&
         group->get<std::uint64_t>() == 16;
}

/// Reads one quantized_layers key into `layers` when it names routed experts.
void read_expert_entry(std::string_view key, const nlohmann::json& entry, std::vector<ExpertEntries>& layers) {
  const auto parsed = layer_and_rest(without_prefix(key));
  if (!parsed || parsed->first >= layers.size()) return;
  ExpertEntries& layer = layers[parsed->first];
  for (const std::string_view block : kExpertBlocks) {
    std::string_view rest = parsed->second;
    if (!starts_with(rest, ".") || !starts_with(rest.substr(1), block)) continue;
    rest.remove_prefix(1 + block.size());
    if (rest.empty()) {
      (is_nvfp4(entry) ? layer.block : layer.other) = true;
      return;
    }
    // ".<expert>.<matrix>", an expert's matrix in NVFP4; anything else keeps the layer's experts
    // at the model dtype.
    const auto expert = starts_with(rest, ".") ? number_and_rest(rest.substr(1)) : std::nullopt;
    const std::string_view matrix = expert ? expert->second : std::string_view{};
    if (!expert || !starts_with(matrix, ".") || matrix.find('.', 1) != std::string_view::npos || !is_nvfp4(entry)) {
      layer.other = true;
      return;
    }
    layer.matrices.emplace(expert->first, std::string(matrix.substr(1)));
    layer.names.emplace(matrix.substr(1));
    return;
  }
}

/// ModelOpt's MIXED_PRECISION: a format per module in quantized_layers. kvplan prices the routed
/// experts its list names NVFP4 (every matrix of every expert of a layer, or the layer's block),
/// and everything else at the model dtype: an upper bound, since the list quantizes some of the
/// rest too (attention in FP8, shared experts, the head).
QuantizedWeights mixed_precision(const nlohmann::json& config, const ParamCount& count, const Dtype& model_dtype) {
  const auto listed = config.find("quantized_layers");
  if (listed == config.end() || !listed->is_object())
    return upper_bound(count, model_dtype, "its MIXED_PRECISION scheme lists no quantized_layers");
  std::vector<ExpertEntries> layers(count.layers.size());
  for (const auto& [key, entry] : listed->items()) read_expert_entry(key, entry, layers);
  Checked quantized(0, "quantized parameters");
  Checked matrices(0, "weight matrices");
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const LayerCount& layer = count.layers[i];
    const ExpertEntries& entries = layers[i];
    const bool every_matrix = entries.names.size() == layer.expert_matrices &&
                              entries.matrices.size() == layer.experts * layer.expert_matrices &&
                              (entries.matrices.empty() || entries.matrices.rbegin()->first < layer.experts);
    if (layer.experts == 0 || entries.other || !(entries.block || every_matrix)) continue;
    quantized += layer.expert;
    matrices += (Checked(layer.experts, "weight matrices") * layer.expert_matrices).value();
  }
  if (quantized.value() == 0)
    return upper_bound(count, model_dtype, "its MIXED_PRECISION list names no routed experts in NVFP4");
  const std::uint64_t kept = count.total - std::min(count.total, quantized.value());
  const Dtype& nvfp4 = parse_weight_dtype("nvfp4");
  const std::uint64_t bytes = (Checked(weight_bytes_at(quantized.value(), nvfp4), "weight size") +
                               checked_mul(matrices.value(), 8, "weight size") + weight_bytes_at(kept, model_dtype))
                                  .value();
  return {&nvfp4, bytes,
          fmt::format("computed (MIXED_PRECISION, NVIDIA ModelOpt): {} routed-expert params x 9/16 B (NVFP4, an fp8 "
                      "scale per 16) + 8 B of scales for each of {} expert matrices; {} other params {}, an upper bound: "
                      "quantized_layers also puts some of them (attention, shared experts, the head) in FP8 or NVFP4 "
                      "(--weights SIZE makes it exact)",
                      billions(quantized.value()), format_thousands(matrices.value()), billions(kept), model_dtype.name)};
}

}  // namespace

bool is_modelopt_quantization(const nlohmann::json& config) {
  if (!config.is_object()) return false;
  const std::string method = string_or_empty(config, "quant_method");
  if (method == "modelopt") return true;
  const auto producer = config.find("producer");
  return method.empty() && producer != config.end() && producer->is_object() &&
         string_or_empty(*producer, "name") == "modelopt";
}

nlohmann::json modelopt_config_from_hf_quant_config(const nlohmann::json& document, const std::string& origin) {
  const auto section = document.is_object() ? document.find("quantization") : document.end();
  if (!document.is_object() || section == document.end() || !section->is_object())
    throw Error(fmt::format("{}: field 'quantization': expected an object (NVIDIA ModelOpt's scheme)", origin));
  nlohmann::json config = *section;
  config["quant_method"] = "modelopt";
  if (config.contains("exclude_modules") && !config.contains("ignore")) {
    config["ignore"] = config["exclude_modules"];
    config.erase("exclude_modules");
  }
  return config;
}

QuantizedWeights modelopt_weights(const nlohmann::json& config, const ParamCount& count, const Dtype& model_dtype,
                                  const std::string& origin) {
  const std::string algo = string_or_empty(config, "quant_algo");
  const bool nvfp4 = algo == "NVFP4";
  if (algo == "MIXED_PRECISION") return mixed_precision(config, count, model_dtype);
  if (!nvfp4 && algo != "FP8")
    return upper_bound(count, model_dtype,
                       fmt::format("kvplan prices ModelOpt's NVFP4, FP8 and MIXED_PRECISION, not '{}'", printable(algo.empty() ? "(no quant_algo)" : algo, 60)));
  if (nvfp4) {
    const auto group = config.find("group_size");
    if (group != config.end() && !group->is_null() && !(group->is_number_unsigned() && group->get<std::uint64_t>() == 16))
      return upper_bound(count, model_dtype, "its NVFP4 group_size is not 16");
  }
  const Exclusions excluded = read_exclusions(config, count, origin);
  // Every export seen keeps the head and says so; a list without it is a trimmed copy, whose
  // missing names could be whole layers.
  if (!excluded.head && count.lm_head)
    return upper_bound(count, model_dtype, "its list of unquantized modules does not name the output head (lm_head), "
                                           "which ModelOpt keeps: a trimmed copy of the list?");
  if (!excluded.unknown.empty())
    return upper_bound(count, model_dtype,
                       fmt::format("ModelOpt leaves '{}' unquantized, which kvplan cannot place in its counts",
                                   printable(excluded.unknown, 80)));
  const std::string& inside = excluded.inside;
  if (!inside.empty() && count.expert == 0)
    return upper_bound(count, model_dtype,
                       fmt::format("ModelOpt leaves '{}' unquantized, and kvplan does not count a dense layer's "
                                   "modules apart",
                                   printable(inside, 80)));

  // What is quantized, and how many weight matrices it spans: each holds two fp32 scalars
  // (weight_scale_2 or weight_scale, and input_scale), a layer's attention two more with an FP8
  // KV cache. The count is a bound: 3 matrices per expert and 16 for the rest of a layer.
  Checked quantized(0, "quantized parameters");
  Checked matrices(0, "weight matrices");
  for (std::size_t i = 0; i < count.layers.size(); ++i) {
    const LayerCount& layer = count.layers[i];
    if (excluded.whole_layers[i]) continue;
    // Routers and vectors stay at the model dtype: ModelOpt's lists name the routers, and it never
    // quantizes a norm or a bias.
    const std::uint64_t kept_here = (Checked(layer.router, "weight size") + layer.vectors +
                                     (excluded.attention[i] ? layer.attention : 0) + (excluded.shared[i] ? layer.shared : 0))
                                        .value();
    quantized += inside.empty() ? layer.params - std::min(layer.params, kept_here) : layer.expert;
    matrices += (Checked(layer.experts, "weight matrices") * 3 + 16).value();
  }
  const std::uint64_t kept = count.total - std::min(count.total, quantized.value());
  const Dtype& dtype = parse_weight_dtype(nvfp4 ? "nvfp4" : "fp8");
  const std::uint64_t bytes = (Checked(weight_bytes_at(quantized.value(), dtype), "weight size") +
                               checked_mul(matrices.value(), 8, "weight size") + weight_bytes_at(kept, model_dtype))
                                  .value();
  const std::string what = inside.empty() ? "params" : "routed-expert params";
  std::string rule = fmt::format(
      "computed ({}, NVIDIA ModelOpt): {} {} x {} + at most 8 B of scales for each of {} weight matrices; {} other "
      "params {}",
      algo, billions(quantized.value()), what, nvfp4 ? "9/16 B (an fp8 scale per 16)" : "1 B",
      format_thousands(matrices.value()), billions(kept), model_dtype.name);
  if (!inside.empty())
    rule += fmt::format(", an upper bound: ModelOpt also leaves '{}' and others like it unquantized, which kvplan does "
                        "not count apart (--weights SIZE makes it exact)",
                        printable(inside, 80));
  return {&dtype, bytes, rule};
}

const Dtype* modelopt_kv_dtype(const nlohmann::json& config) {
  const std::string algo = string_or_empty(config, "kv_cache_quant_algo");
  if (algo == "FP8") return &parse_kv_dtype("fp8", parse_weight_dtype("bf16"));
  if (algo == "NVFP4") return &parse_kv_dtype("nvfp4", parse_weight_dtype("bf16"));
  const auto scheme = config.find("kv_cache_scheme");
  if (scheme == config.end()) return nullptr;
  const bool fp8 = (scheme->is_string() && scheme->get<std::string>() == "FP8") ||
                   (scheme->is_object() && scheme->value("num_bits", nlohmann::json()) == 8 &&
                    scheme->value("type", nlohmann::json()) == "float");
  return fp8 ? &parse_kv_dtype("fp8", parse_weight_dtype("bf16")) : nullptr;
}

}  // namespace kvplan
