#include "loaders/modelopt_modules.h"

#include <algorithm>
#include <array>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kvplan/error.h"
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

/// What follows "layers.N" in the names of a layer's router.
constexpr std::array kRouters = {std::string_view{".mlp.gate"},    std::string_view{".block_sparse_moe.gate"},
                                 std::string_view{".mixer.gate"},  std::string_view{".feed_forward.router"},
                                 std::string_view{".router"},      std::string_view{".router*"},
                                 std::string_view{".mlp.router"}};

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
  const std::string_view name = module_in_model(pattern);
  if (name == "lm_head" || name == "head") return {Excluded::head};
  if (name == "embed_tokens" || name == "embeddings" || name == "wte") return {Excluded::counted_apart};
  for (const std::string_view tower : kTowers)
    if (name.starts_with(tower)) return {Excluded::counted_apart};
  if (name.starts_with("mtp")) return {Excluded::counted_apart};
  // A norm is no weight matrix: ModelOpt never quantizes it, and kvplan prices it with the rest.
  if (name.find_first_of("*?[") == std::string_view::npos && name.ends_with("norm")) return {Excluded::counted_apart};
  std::optional<std::size_t> only;  // the layer a "layers.N.<module>" name is within
  if (const auto parsed = layer_module(name)) {
    const auto [layer, rest] = *parsed;
    if (rest == "*") {
      const std::string_view digits = name.substr(7, name.size() - 8);  // between "layers." and "*"
      return {Excluded::whole_layer, layer, false, std::string(digits)};
    }
    // Layers past the decoder's are its MTP layers, as DeepSeek's checkpoints number them.
    if (layer >= count.layers.size()) {
      if (rest.starts_with(".")) return {Excluded::counted_apart};
    } else {
      if (rest == ".*") return {Excluded::whole_layer, layer};
      if (one_of(rest, kRouters) && count.layers[layer].router) return {Excluded::counted_apart};  // kept already
      if (one_of(rest, kAttentionBlocks)) return {Excluded::attention, layer};
      // The gate alone is kept with the experts it gates: a little above, never below.
      if (one_of(rest, kSharedBlocks)) return {Excluded::shared, layer};
      if (rest.starts_with(".")) only = layer;
    }
  }
  // Anything else: modules inside layers, unless it may reach a routed expert.
  if (experts.reached_by(pattern, only)) return {Excluded::unknown};
  // Every layer's shared experts ("*.mlp.shared_expert.*"): each of their matrices matched.
  if (!only) {
    const auto all_shared = [&](std::string_view block) {
      for (const std::string_view matrix : {"gate_proj", "up_proj", "down_proj"})
        if (!wildcard_match(pattern, fmt::format("model.layers.0.mlp.{}.{}", block, matrix))) return false;
      return true;
    };
    if (all_shared("shared_expert") || all_shared("shared_experts")) return {Excluded::shared, 0, true};
  }
  return {Excluded::inside_layer};
}

/// The list under "ignore" (config.json) or "exclude_modules" (hf_quant_config.json); its errors
/// name the file the list is in.
std::vector<std::string> excluded_names(const nlohmann::json& config, const std::string& config_origin) {
  const auto list = config.contains("ignore") ? config.find("ignore") : config.find("exclude_modules");
  if (list == config.end() || list->is_null()) return {};
  const auto file = config.find(kModeloptSchemeFile);
  const bool own_file = file != config.end() && file->is_string();
  const std::string origin = own_file ? file->get<std::string>() : config_origin;
  const std::string field = fmt::format("{}.{}", own_file ? "quantization" : "quantization_config",
                                        config.contains("ignore") ? "ignore" : "exclude_modules");
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

}  // namespace

std::string_view module_in_model(std::string_view name) {
  for (const std::string_view prefix : kPrefixes)
    if (name.substr(0, prefix.size()) == prefix) return name.substr(prefix.size());
  return name;
}

std::optional<std::pair<std::size_t, std::string_view>> leading_number(std::string_view text) {
  std::size_t digits = 0;
  std::size_t number = 0;
  while (digits < text.size() && digits < 6 && text[digits] >= '0' && text[digits] <= '9')
    number = number * 10 + static_cast<std::size_t>(text[digits++] - '0');
  if (digits == 0 || digits == 6) return std::nullopt;
  return std::pair{number, text.substr(digits)};
}

std::optional<std::pair<std::size_t, std::string_view>> layer_module(std::string_view name) {
  if (!name.starts_with("layers.")) return std::nullopt;
  return leading_number(name.substr(7));
}

std::span<const std::string_view> expert_blocks() { return kExpertBlocks; }

ExcludedModules read_excluded_modules(const nlohmann::json& config, const ParamCount& count, const std::string& origin) {
  ExcludedModules exclusions;
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
            if (std::to_string(i).starts_with(classified.digits)) exclusions.whole_layers[i] = true;
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
        if (classified.layer < count.layers.size() && !count.layers[classified.layer].modules && exclusions.inside.empty())
          exclusions.inside = name;
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

}  // namespace kvplan
