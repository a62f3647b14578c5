#include "loaders/excluded_modules.h"

#include <algorithm>
#include <array>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kvplan/error.h"
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
  shared,         ///< one layer's shared experts
  everywhere,     ///< whole blocks of every layer: attention, linear attention, dense MLPs, shared experts
  projection,     ///< one projection of a layer's MLA block (or its indexer), named alone
  inside_layer,   ///< other modules within layers that are not routed experts
  unknown,        ///< anything else, the routed experts perhaps
};

/// The blocks a name keeps in every layer (Excluded::everywhere).
struct Blocks {
  bool attention = false;  ///< self_attn
  bool linear = false;     ///< linear_attn
  bool dense = false;      ///< a dense layer's MLP
  bool shared = false;     ///< the shared experts
  bool any() const { return attention || linear || dense || shared; }
};

struct Classified {
  Excluded kind = Excluded::unknown;
  std::size_t layer = 0;  ///< for whole_layer, attention and shared
  /// whole_layer written "layers.1*": fnmatch's star takes layers 10 to 19 and 100 on too, every
  /// layer whose number starts with these digits.
  std::string digits;
  Blocks blocks;  ///< for everywhere
  unsigned projection = 0;  ///< for projection: its MlaProjection bit
};

/// The projections of an MLA block (and its DSA indexer) lists name one by one, as bits.
enum MlaProjection : unsigned {
  kQ = 1, kQa = 2, kQb = 4, kKva = 8, kKvb = 16, kO = 32, kIndexer = 64,
};

/// What follows "layers.N" in each projection's name.
constexpr std::array<std::pair<std::string_view, unsigned>, 9> kMlaProjections = {{
    {".self_attn.q_proj", kQ},
    {".self_attn.q_a_proj", kQa},
    {".self_attn.q_b_proj", kQb},
    {".self_attn.kv_a_proj_with_mqa", kKva},
    {".self_attn.kv_b_proj", kKvb},
    {".self_attn.o_proj", kO},
    {".self_attn.indexer", kIndexer},
    {".self_attn.indexer*", kIndexer},
    {".self_attn.indexer.*", kIndexer},
}};

/// A name on a list as fnmatch patterns: one for a ModelOpt name, one per alternative of a
/// compressed-tensors expression. It takes a module when any of them matches.
struct ModulePattern {
  std::vector<std::string> alternatives;
  bool takes(std::string_view name) const {
    return std::any_of(alternatives.begin(), alternatives.end(),
                       [&](const std::string& pattern) { return wildcard_match(pattern, name); });
  }
  bool has_any_of(std::string_view characters) const {
    return std::any_of(alternatives.begin(), alternatives.end(),
                       [&](const std::string& pattern) { return pattern.find_first_of(characters) != std::string::npos; });
  }
};

/// What follows "layers.N" in the names of a whole attention block and of the shared experts.
constexpr std::array kAttentionBlocks = {std::string_view{".self_attn"}, std::string_view{".self_attn*"},
                                         std::string_view{".self_attn.*"}, std::string_view{".linear_attn"},
                                         std::string_view{".linear_attn*"}, std::string_view{".linear_attn.*"}};
constexpr std::array kSharedBlocks = {
    std::string_view{".mlp.shared_expert"},  std::string_view{".mlp.shared_expert*"}, std::string_view{".mlp.shared_expert.*"},
    std::string_view{".mlp.shared_experts"}, std::string_view{".mlp.shared_experts*"}, std::string_view{".mlp.shared_experts.*"},
    std::string_view{".mlp.shared_expert_gate"}};

/// The weight matrices of each block as every family kvplan counts apart names them, under layer
/// 0: a name that takes all of a block's keeps that block whole in every layer; one that takes
/// some keeps part of it.
constexpr std::array kSelfAttention = {
    std::string_view{"self_attn.q_proj"},     std::string_view{"self_attn.k_proj"},
    std::string_view{"self_attn.v_proj"},     std::string_view{"self_attn.o_proj"},
    std::string_view{"self_attn.qkv_proj"},   std::string_view{"self_attn.out_proj"},
    std::string_view{"self_attn.output_gate"}, std::string_view{"self_attn.q_a_proj"},
    std::string_view{"self_attn.q_b_proj"},   std::string_view{"self_attn.kv_a_proj_with_mqa"},
    std::string_view{"self_attn.kv_b_proj"},  std::string_view{"self_attn.indexer.wq_b"},
    std::string_view{"self_attn.indexer.wk"}, std::string_view{"self_attn.indexer.weights_proj"}};
constexpr std::array kLinearAttention = {
    std::string_view{"linear_attn.in_proj_qkvz"}, std::string_view{"linear_attn.in_proj_ba"},
    std::string_view{"linear_attn.in_proj_qkv"},  std::string_view{"linear_attn.in_proj_z"},
    std::string_view{"linear_attn.in_proj_b"},    std::string_view{"linear_attn.in_proj_a"},
    std::string_view{"linear_attn.out_proj"},     std::string_view{"linear_attn.conv1d"}};
constexpr std::array kDenseMlp = {std::string_view{"mlp.gate_proj"}, std::string_view{"mlp.up_proj"},
                                  std::string_view{"mlp.gate_up_proj"}, std::string_view{"mlp.down_proj"}};
/// Qwen's shared_expert and DeepSeek's shared_experts; the gate beside Qwen's is kept with them,
/// a little above, never below.
constexpr std::array kSharedExpert = {std::string_view{"mlp.shared_expert.gate_proj"}, std::string_view{"mlp.shared_expert.up_proj"},
                                      std::string_view{"mlp.shared_expert.down_proj"}};
constexpr std::array kSharedExperts = {std::string_view{"mlp.shared_experts.gate_proj"},
                                       std::string_view{"mlp.shared_experts.up_proj"},
                                       std::string_view{"mlp.shared_experts.down_proj"}};

template <std::size_t N>
bool one_of(std::string_view text, const std::array<std::string_view, N>& names) {
  return std::find(names.begin(), names.end(), text) != names.end();
}

/// How many of `matrices`, named in layer 0, `pattern` takes.
template <std::size_t N>
std::size_t taken(const ModulePattern& pattern, const std::array<std::string_view, N>& matrices) {
  return static_cast<std::size_t>(std::count_if(matrices.begin(), matrices.end(), [&](std::string_view matrix) {
    return pattern.takes(fmt::format("model.layers.0.{}", matrix));
  }));
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
  bool reached_by(const ModulePattern& pattern, std::optional<std::size_t> only) {
    if (pattern.has_any_of("[")) return true;
    const bool index_free = !pattern.has_any_of("0123456789?");
    for (std::size_t i = only.value_or(0); i < count_.layers.size(); ++i) {
      if (count_.layers[i].expert != 0) {
        for (const std::string& name : names_of(i))
          if (pattern.takes(name)) return true;
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

/// What `alternative` names whatever the stars at its ends take ("*lm_head", "*norm*",
/// "*vision_tower*"): the head, or a part kvplan keeps at the model dtype anyway (a norm, the
/// embeddings, a tower); nullopt for anything else.
std::optional<Excluded> named_apart(std::string_view alternative) {
  const auto in_tower = [](std::string_view name) {
    return std::any_of(kTowers.begin(), kTowers.end(), [&](std::string_view tower) { return name.starts_with(tower); });
  };
  // Whatever follows a tower's name is in the tower.
  if (in_tower(module_in_model(alternative))) return Excluded::counted_apart;
  while (alternative.starts_with('*')) alternative.remove_prefix(1);
  while (alternative.ends_with('*')) alternative.remove_suffix(1);
  if (alternative.find_first_of("*?[") != std::string_view::npos) return std::nullopt;
  const std::string_view name = module_in_model(alternative);
  if (name == "lm_head" || name.ends_with(".lm_head")) return Excluded::head;
  // A norm or a bias is no weight matrix: no scheme quantizes it, and kvplan keeps it where it
  // counts it; nor the DSA indexer's weights projection (GLM-5's lists say indexers_proj), which
  // every rule keeps.
  if (name.ends_with("norm") || name.ends_with(".bias") || name.ends_with("e_score_correction_bias") ||
      name.ends_with("indexers_proj") || name.ends_with("indexer.weights_proj") || name == "embed_tokens" ||
      name.ends_with(".embed_tokens") || in_tower(name))
    return Excluded::counted_apart;
  return std::nullopt;
}

/// named_apart for every alternative of `pattern`: the head when one of them names it.
std::optional<Excluded> all_named_apart(const ModulePattern& pattern) {
  std::optional<Excluded> result;
  for (const std::string& alternative : pattern.alternatives) {
    const std::optional<Excluded> named = named_apart(alternative);
    if (!named) return std::nullopt;
    if (!result || *named == Excluded::head) result = named;
  }
  return result;
}

/// A name that keeps whole blocks of every layer, read against the blocks' matrices: `everywhere`
/// when it takes all of some, `inside_layer` when it takes part of one (a single projection);
/// nullopt when it takes none.
std::optional<Classified> classify_blocks(const ModulePattern& pattern) {
  Classified classified{Excluded::everywhere};
  bool partial = false;
  // Whether the name takes all of `matrices`; part of them marks it partial.
  const auto whole = [&](const auto& matrices) {
    const std::size_t n = taken(pattern, matrices);
    partial = partial || (n != 0 && n != matrices.size());
    return n == matrices.size();
  };
  classified.blocks.attention = whole(kSelfAttention);
  classified.blocks.linear = whole(kLinearAttention);
  classified.blocks.dense = whole(kDenseMlp);
  const bool shared_expert = whole(kSharedExpert);
  const bool shared_experts = whole(kSharedExperts);
  classified.blocks.shared = shared_expert || shared_experts;
  if (partial) classified.kind = Excluded::inside_layer;
  if (!partial && !classified.blocks.any()) return std::nullopt;
  return classified;
}

Classified classify(const ModulePattern& pattern, const ParamCount& count, ExpertNames& experts) {
  std::optional<std::size_t> only;  // the layer a "layers.N.<module>" name is within
  if (pattern.alternatives.size() == 1) {
    // The head and embeddings as named_apart does not spell them, and the MTP layers.
    const std::string_view name = module_in_model(pattern.alternatives.front());
    if (name == "head") return {Excluded::head};
    if (name == "embeddings" || name == "wte" || name.starts_with("mtp")) return {Excluded::counted_apart};
    if (const auto parsed = layer_module(name)) {
      const auto [layer, rest] = *parsed;
      if (rest == "*") {
        const std::string_view digits = name.substr(7, name.size() - 8);  // between "layers." and "*"
        return {Excluded::whole_layer, layer, std::string(digits)};
      }
      // Layers past the decoder's are its MTP layers, as DeepSeek's checkpoints number them.
      if (layer >= count.layers.size()) {
        if (rest.starts_with(".")) return {Excluded::counted_apart};
      } else {
        if (rest == ".*") return {Excluded::whole_layer, layer};
        if (one_of(rest, kRouters) && count.layers[layer].router) return {Excluded::counted_apart};  // kept already
        if (one_of(rest, kAttentionBlocks)) return {Excluded::attention, layer};
        if (count.layers[layer].mla)
          for (const auto& [suffix, bit] : kMlaProjections)
            if (rest == suffix) {
              Classified projection{Excluded::projection, layer};
              projection.projection = bit;
              return projection;
            }
        // The gate alone is kept with the experts it gates: a little above, never below.
        if (one_of(rest, kSharedBlocks)) return {Excluded::shared, layer};
        if (rest.starts_with(".")) only = layer;
      }
    }
  }
  if (const auto named = all_named_apart(pattern)) return {*named};
  if (experts.reached_by(pattern, only)) return {Excluded::unknown};
  if (!only) {
    if (const auto blocks = classify_blocks(pattern)) return *blocks;
    // A router everywhere ("re:.*mlp.gate$"): kept already.
    for (const std::string_view router : kRouters)
      if (pattern.takes(fmt::format("model.layers.0{}", router))) return {Excluded::counted_apart};
  }
  return {Excluded::inside_layer};
}

/// The list under "ignore" (config.json) or "exclude_modules" (hf_quant_config.json), and where
/// its errors say it is: the file and the field.
struct ExcludedNames {
  std::vector<std::string> names;
  std::string origin;
  std::string field;
};

ExcludedNames excluded_names(const nlohmann::json& config, const std::string& config_origin, ModuleSyntax syntax) {
  const char* key = syntax == ModuleSyntax::transformers ? "modules_to_not_convert"
                    : config.contains("ignore")          ? "ignore"
                                                         : "exclude_modules";
  const auto list = config.find(key);
  const auto file = config.find(kModeloptSchemeFile);
  const bool own_file = file != config.end() && file->is_string();
  const std::string origin = own_file ? file->get<std::string>() : config_origin;
  const std::string field = fmt::format("{}.{}", own_file ? "quantization" : "quantization_config", key);
  if (list == config.end() || list->is_null()) return {{}, origin, field};
  if (!list->is_array()) throw Error(fmt::format("{}: field '{}': expected a list of module names", origin, field));
  if (list->size() > kMaxExcluded)
    throw Error(fmt::format("{}: field '{}': {} names, more than the {} kvplan reads", origin, field, list->size(), kMaxExcluded));
  std::vector<std::string> names;
  for (const nlohmann::json& entry : *list) {
    if (!entry.is_string() || entry.get_ref<const std::string&>().size() > kMaxPatternBytes)
      throw Error(fmt::format("{}: field '{}': expected module names of at most {} bytes", origin, field, kMaxPatternBytes));
    const std::string& name = entry.get_ref<const std::string&>();
    if (static_cast<std::size_t>(std::count(name.begin(), name.end(), '*')) > kMaxWildcards)
      throw Error(fmt::format("{}: field '{}': '{}' has more than {} wildcards (*), which no real list writes", origin,
                              field, printable(name, 60), kMaxWildcards));
    names.push_back(name);
  }
  return {std::move(names), origin, field};
}

/// A name as written in `syntax`, as fnmatch patterns; nullopt for one kvplan cannot read so
/// (a class name, an expression past regex_as_wildcards), which may reach anything.
std::optional<ModulePattern> pattern_of(const std::string& name, ModuleSyntax syntax) {
  if (syntax == ModuleSyntax::fnmatch) return ModulePattern{{name}};
  if (syntax == ModuleSyntax::compressed_tensors && name.starts_with("re:")) {
    auto alternatives = regex_as_wildcards(std::string_view(name).substr(3));
    if (!alternatives) return std::nullopt;
    return ModulePattern{std::move(*alternatives)};
  }
  // An exact module name. compressed-tensors also takes a class name ("Linear"), which no
  // module path starts with a capital for.
  if (name.empty() || name.find_first_of("*?[") != std::string::npos || (name[0] >= 'A' && name[0] <= 'Z'))
    return std::nullopt;
  // transformers' bare name: the last part of a module's (transformers takes any ending).
  if (syntax == ModuleSyntax::transformers && name.find('.') == std::string::npos) return ModulePattern{{"*." + name}};
  return ModulePattern{{name}};
}

/// One piece of an expression with no top-level '|': its alternatives, or nullopt. `end` is set
/// when it ends in '$'.
std::optional<std::vector<std::string>> sequence_as_wildcards(std::string_view regex, bool in_group, bool& end) {
  constexpr std::size_t kMaxAlternatives = 64;
  std::vector<std::string> alternatives{""};
  std::size_t i = 0;
  if (!in_group && regex.starts_with('^')) i = 1;
  while (i < regex.size()) {
    const char c = regex[i];
    std::vector<std::string> atom;
    if (c == '$' && !in_group && i + 1 == regex.size()) {
      end = true;
      ++i;
      continue;
    }
    if (c == '\\') {
      if (i + 1 == regex.size()) return std::nullopt;
      const char escaped = regex[i + 1];
      if (escaped == 'd' || escaped == 'w' || escaped == 's') {
        atom = {"?"};
      } else if (std::string_view(".-_/:()[]{}|^$+").find(escaped) != std::string_view::npos) {
        atom = {std::string(1, escaped)};
      } else {
        return std::nullopt;  // \b, \A, a literal '*' or '?' no fnmatch pattern can write
      }
      i += 2;
    } else if (c == '.') {
      atom = {"?"};
      ++i;
    } else if (c == '[') {
      const std::size_t close = regex.find(']', i + 2);  // "[]...]" holds a literal ']'
      if (close == std::string_view::npos) return std::nullopt;
      atom = {"?"};
      i = close + 1;
    } else if (c == '(') {
      if (in_group) return std::nullopt;
      const std::size_t close = regex.find(')', i);
      if (close == std::string_view::npos) return std::nullopt;
      std::string_view group = regex.substr(i + 1, close - i - 1);
      if (group.starts_with("?:")) group.remove_prefix(2);
      if (group.starts_with('?')) return std::nullopt;  // lookarounds, named groups
      std::size_t start = 0;
      while (true) {
        const std::size_t bar = group.find('|', start);
        const std::string_view part = group.substr(start, bar == std::string_view::npos ? group.size() - start : bar - start);
        bool inner_end = false;
        auto inner = sequence_as_wildcards(part, true, inner_end);
        if (!inner) return std::nullopt;
        atom.insert(atom.end(), inner->begin(), inner->end());
        if (atom.size() > kMaxAlternatives) return std::nullopt;
        if (bar == std::string_view::npos) break;
        start = bar + 1;
      }
      i = close + 1;
    } else if (std::string_view("*+?{|)$").find(c) != std::string_view::npos) {
      return std::nullopt;  // a quantifier with nothing before it, a stray '|', ')' or '$'
    } else {
      atom = {std::string(1, c)};
      ++i;
    }
    // A quantifier after the atom: any number of characters, which takes all the atom's repeats.
    if (i < regex.size() && std::string_view("*+?{").find(regex[i]) != std::string_view::npos) {
      if (regex[i] == '{') {
        const std::size_t close = regex.find('}', i);
        if (close == std::string_view::npos) return std::nullopt;
        i = close;
      }
      ++i;
      if (i < regex.size() && regex[i] == '?') ++i;  // lazy
      atom = {"*"};
    }
    std::vector<std::string> joined;
    if (alternatives.size() * atom.size() > kMaxAlternatives) return std::nullopt;
    for (const std::string& before : alternatives)
      for (const std::string& after : atom) joined.push_back(before + after);
    alternatives = std::move(joined);
  }
  return alternatives;
}

}  // namespace

std::optional<std::vector<std::string>> regex_as_wildcards(std::string_view regex) {
  std::vector<std::string> patterns;
  // Top-level alternatives, each matched from the start of the name on its own.
  std::size_t depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= regex.size(); ++i) {
    if (i < regex.size()) {
      if (regex[i] == '\\') {
        ++i;
        continue;
      }
      if (regex[i] == '(') ++depth;
      if (regex[i] == ')' && depth > 0) --depth;
      if (regex[i] != '|' || depth > 0) continue;
    }
    bool end = false;
    auto part = sequence_as_wildcards(regex.substr(start, i - start), false, end);
    if (!part) return std::nullopt;
    for (std::string& pattern : *part) {
      if (!end) pattern += '*';
      // Runs of stars are one star: wildcard_match's work grows with their number.
      pattern.erase(std::unique(pattern.begin(), pattern.end(), [](char a, char b) { return a == '*' && b == '*'; }),
                    pattern.end());
      if (static_cast<std::size_t>(std::count(pattern.begin(), pattern.end(), '*')) > kMaxWildcards) return std::nullopt;
      patterns.push_back(std::move(pattern));
    }
    if (patterns.size() > 64) return std::nullopt;
    start = i + 1;
  }
  return patterns;
}

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

ExcludedModules read_excluded_modules(const nlohmann::json& config, const ParamCount& count, const std::string& origin,
                                      ModuleSyntax syntax) {
  ExcludedModules exclusions;
  const std::size_t layers = count.layers.size();
  exclusions.whole_layers.assign(layers, false);
  exclusions.attention.assign(layers, false);
  exclusions.shared.assign(layers, false);
  exclusions.dense_mlp.assign(layers, false);
  exclusions.attention_quantized.assign(layers, 0);
  std::vector<unsigned> projections(layers, 0);  // each layer's MLA projections named one by one
  std::vector<std::string> projection_names(layers);  // the first of them, to name
  ExpertNames experts(count);
  // Keeps `kept` in layer `i` where the family counts it apart; elsewhere the layer's share of
  // it is not known, which the name says.
  const auto keep = [&](std::vector<bool>& kept, std::size_t i, const std::string& name) {
    kept[i] = true;
    if (!count.layers[i].modules && exclusions.inside.empty()) exclusions.inside = name;
  };
  const ExcludedNames list = excluded_names(config, origin, syntax);
  std::size_t patterns = 0;
  for (const std::string& name : list.names) {
    const std::optional<ModulePattern> pattern = pattern_of(name, syntax);
    // The expressions' alternatives count against the bound the names do.
    patterns += pattern ? pattern->alternatives.size() : 1;
    if (patterns > kMaxExcluded)
      throw Error(fmt::format("{}: field '{}': its names and their alternatives (a|b) make more than the {} patterns "
                              "kvplan reads",
                              list.origin, list.field, kMaxExcluded));
    const Classified classified = pattern ? classify(*pattern, count, experts) : Classified{Excluded::unknown};
    switch (classified.kind) {
      case Excluded::head: exclusions.head = true; break;
      case Excluded::counted_apart: break;
      case Excluded::whole_layer:
        if (classified.digits.empty()) {
          exclusions.whole_layers[classified.layer] = true;
        } else {
          for (std::size_t i = 0; i < layers; ++i)
            if (std::to_string(i).starts_with(classified.digits)) exclusions.whole_layers[i] = true;
        }
        break;
      case Excluded::attention: keep(exclusions.attention, classified.layer, name); break;
      case Excluded::shared: keep(exclusions.shared, classified.layer, name); break;
      case Excluded::everywhere:
        for (std::size_t i = 0; i < layers; ++i) {
          const LayerCount& layer = count.layers[i];
          if (layer.linear_attn ? classified.blocks.linear : classified.blocks.attention) keep(exclusions.attention, i, name);
          if (classified.blocks.shared && (layer.shared || (!layer.modules && layer.experts))) keep(exclusions.shared, i, name);
          if (classified.blocks.dense && layer.experts == 0) keep(exclusions.dense_mlp, i, name);
        }
        break;
      case Excluded::projection:
        projections[classified.layer] |= classified.projection;
        if (projection_names[classified.layer].empty()) projection_names[classified.layer] = name;
        break;
      case Excluded::inside_layer:
        if (exclusions.inside.empty()) exclusions.inside = name;
        break;
      case Excluded::unknown:
        if (exclusions.unknown.empty()) exclusions.unknown = name;
        break;
    }
  }
  // Projections named one by one keep a layer's attention when they hold all of q and kv (NVIDIA's
  // DeepSeek-V3.1 NVFP4 names those four and quantizes o_proj; GLM-5's names o_proj and the
  // indexer too); fewer are modules kvplan does not count apart.
  for (std::size_t i = 0; i < layers; ++i) {
    const unsigned named = projections[i];
    if (named == 0 || exclusions.attention[i]) continue;
    const bool q = (named & kQ) || ((named & kQa) && (named & kQb));
    const bool kv = (named & kKva) && (named & kKvb);
    const MlaShare& mla = *count.layers[i].mla;
    if (!q || !kv) {
      if (exclusions.inside.empty()) exclusions.inside = projection_names[i];
      continue;
    }
    exclusions.attention[i] = true;
    // The indexer's weights_proj is kept whatever the list says (LayerCount::unquantized).
    const std::uint64_t indexer = mla.indexer - std::min(mla.indexer, count.layers[i].unquantized);
    exclusions.attention_quantized[i] = ((named & kO) ? 0 : mla.o_proj) + ((named & kIndexer) ? 0 : indexer);
  }
  return exclusions;
}

namespace {

/// Which blocks of a layer a list keeps unquantized.
struct KeptBlocks {
  bool all_but_experts = false;
  bool attention = false;
  bool shared = false;
  bool dense_mlp = false;
};

bool left_quantized(Block block, const KeptBlocks& kept) {
  if (block == Block::experts) return true;
  if (kept.all_but_experts) return false;
  switch (block) {
    case Block::attention:
    case Block::mla_o_proj:
    case Block::indexer:
      return !kept.attention;
    case Block::shared:
      return !kept.shared;
    case Block::dense_mlp:
      return !kept.dense_mlp;
    case Block::experts:
      break;
  }
  return true;
}

/// Of `layer`'s recorded shapes, those in the blocks `kept` leaves quantized, when they add up to
/// exactly `params` (what the layer's counts say it quantizes); nullopt otherwise (a family that
/// records no shapes).
std::optional<std::vector<MatrixShape>> shapes_of(const LayerCount& layer, std::uint64_t params, const KeptBlocks& kept) {
  if (layer.shapes.empty()) return std::nullopt;
  std::vector<MatrixShape> taken;
  Checked sum(0, "quantized parameters");
  for (const MatrixShape& shape : layer.shapes) {
    if (!left_quantized(shape.block, kept)) continue;
    sum += (Checked(shape.rows, "quantized parameters") * shape.cols * shape.copies).value();
    taken.push_back(shape);
  }
  if (sum.value() != params) return std::nullopt;
  return taken;
}

}  // namespace

QuantizedShare quantized_share(const ParamCount& count, const ExcludedModules& excluded) {
  QuantizedShare share;
  Checked quantized(0, "quantized parameters");
  Checked shaped(0, "quantized parameters");
  Checked matrices(0, "weight matrices");
  // An empty list (a scheme without one) keeps nothing.
  const auto kept = [](const std::vector<bool>& layers, std::size_t i) { return i < layers.size() && layers[i]; };
  for (std::size_t i = 0; i < count.layers.size(); ++i) {
    const LayerCount& layer = count.layers[i];
    if (kept(excluded.whole_layers, i)) continue;
    const KeptBlocks blocks{!excluded.inside.empty(), kept(excluded.attention, i), kept(excluded.shared, i),
                            kept(excluded.dense_mlp, i)};
    std::uint64_t here = 0;
    // A kept attention with parts still quantized (o_proj, the indexer): no shapes are taken.
    bool partial = false;
    if (blocks.all_but_experts) {
      here = layer.expert;
    } else {
      Checked kept_here(layer.router, "weight size");
      kept_here += layer.vectors;
      // A kept attention holds the matrices no checkpoint quantizes (the indexer's weights_proj).
      if (blocks.attention) {
        const std::uint64_t still = i < excluded.attention_quantized.size() ? excluded.attention_quantized[i] : 0;
        kept_here += layer.attention - std::min(layer.attention, still);
        partial = still != 0;
      } else {
        kept_here += layer.unquantized;
      }
      if (blocks.shared) kept_here += layer.shared;
      // A dense layer's MLP: what is left of it beside the attention and the vectors.
      if (blocks.dense_mlp) {
        const Checked beside_mlp = Checked(layer.attention, "weight size") + layer.vectors + layer.router + layer.shared;
        kept_here += layer.params - std::min(layer.params, beside_mlp.value());
      }
      here = layer.params - std::min(layer.params, kept_here.value());
    }
    quantized += here;
    const std::optional<std::vector<MatrixShape>> shapes =
        partial ? std::nullopt : shapes_of(layer, here, blocks);
    if (!shapes) {
      matrices += (Checked(layer.experts, "weight matrices") * 3 + 16).value();
      continue;
    }
    shaped += here;
    for (const MatrixShape& shape : *shapes) matrices += shape.copies;
    share.shapes.insert(share.shapes.end(), shapes->begin(), shapes->end());
  }
  share.params = quantized.value();
  share.shaped = shaped.value();
  share.matrices = matrices.value();
  return share;
}

}  // namespace kvplan
