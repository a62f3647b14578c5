#include "loaders/architecture.h"

#include <algorithm>

#include <fmt/format.h>

#include "kvplan/error.h"
#include "loaders/json_reader.h"

namespace kvplan::arch {

bool Layout::any(LayerKind kind) const {
  return std::any_of(layers.begin(), layers.end(), [&](const LayerPlan& layer) { return layer.kind == kind; });
}

const ModelType* Family::type(std::string_view model_type) const {
  for (const ModelType& entry : types)
    if (entry.name == model_type) return &entry;
  return nullptr;
}

const Family* find_family(std::string_view model_type) {
  for (const Family* family : families())
    if (family->type(model_type)) return family;
  return nullptr;
}

const Family* find_wrapper(std::string_view model_type) {
  for (const Family* family : families())
    if (std::find(family->wrappers.begin(), family->wrappers.end(), model_type) != family->wrappers.end()) return family;
  return nullptr;
}

namespace {

std::string joined(const std::vector<std::string_view>& items, std::string_view format) {
  std::string out;
  for (const std::string_view item : items) {
    if (!out.empty()) out += ", ";
    out += fmt::format(fmt::runtime(format), item);
  }
  return out;
}

}  // namespace

std::string architectures_markdown() {
  struct Row {
    std::string_view type;
    const Family* family;
    std::string what;
  };
  std::vector<Row> rows;
  for (const Family* family : families()) {
    for (const ModelType& type : family->types) {
      std::string what = family->count && !type.cache_only ? "cache, params" : "cache";
      if (!type.note.empty()) what += fmt::format(" ({})", type.note);
      rows.push_back({type.name, family, what});
    }
    for (const std::string_view wrapper : family->wrappers) {
      const auto same = std::find_if(rows.begin(), rows.end(), [&](const Row& row) { return row.type == wrapper; });
      if (same != rows.end()) same->what += "; towers and projector";
      else rows.push_back({wrapper, family, "towers and projector (a wrapper: the language model is its text_config's)"});
    }
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.type < b.type; });
  std::string out = "| model_type | family | what kvplan sizes |\n|---|---|---|\n";
  for (const Row& row : rows)
    out += fmt::format("| `{}` | [{}](#{}) | {} |\n", row.type, row.family->name, row.family->name, row.what);
  for (const Family* family : families()) {
    out += fmt::format("\n### {}\n\n", family->name);
    out += fmt::format("`src/loaders/arch/{}.cpp`, tested in `tests/arch/` on {}; llama.cpp: {}.\n\n", family->name,
                       family->fixtures.empty() ? std::string("fields given inline") : joined(family->fixtures, "`{}`"),
                       family->gguf);
    out += std::string(family->rules) + "\n";
    if (!family->unverified.empty()) out += fmt::format("\n*Unverified:* {}\n", family->unverified);
  }
  return out;
}

std::string language_model_type(ConfigFields& fields) {
  const auto type = fields.string("model_type");
  if (!type) fields.fail("model_type", "is missing (is this a Hugging Face config.json?)");
  // An EAGLE draft head states the model_type of the layers it copies (llama) and says what it is
  // only in `architectures`; its tensors are not that model's (arch/eagle3.cpp, arch/eagle.cpp).
  for (const std::string& name : fields.string_list("architectures")) {
    if (name == "LlamaForCausalLMEagle3" || name == "Eagle3LlamaForCausalLM") return "llama_eagle3";
    if (name == "LlamaForCausalLMEagle") return "llama_eagle";  // SGLang's EAGLE(-2) heads (arch/eagle.cpp)
    if (name.find("Eagle") != std::string::npos || name.find("EAGLE") != std::string::npos)
      throw unsupported_architecture(fields.where("architectures"),
                                     name + " (an EAGLE draft head of a layout kvplan does not count; it counts "
                                            "LlamaForCausalLMEagle3 and LlamaForCausalLMEagle)");
  }
  // A wrapper whose text_config states no model_type: the type its config class builds.
  if (fields.nested() && !fields.text().contains("model_type"))
    if (const Family* wrapper = find_wrapper(*type); wrapper && !wrapper->wrapper_text_type.empty())
      return std::string(wrapper->wrapper_text_type);
  return *type;
}

std::optional<LayerKind> kind_from_layer_type(const std::string& type) {
  // deepseek_sparse_attention: GlmMoeDsaConfig's re-serialized default (MLA + indexer on every layer).
  if (type == "full_attention" || type == "attention" || type == "global_attention" || type == "full" ||
      type == "global" || type == "deepseek_sparse_attention")
    return LayerKind::full;
  if (type == "sliding_attention" || type == "sliding" || type == "local_attention" || type == "local" ||
      type == "sliding_window_attention")
    return LayerKind::sliding;
  if (type == "chunked_attention") return LayerKind::chunked;
  // conv: LFM2's short-convolution layers; mamba: Granite 4 hybrid.
  if (type == "linear_attention" || type == "mamba" || type == "mamba2" || type == "conv") return LayerKind::linear;
  return std::nullopt;
}

namespace {

/// A list of layer indices (full_attn_idxs, linear_attn_config.*_layers) counted from `base`,
/// checked against the layer count.
std::vector<std::size_t> read_index_list(ConfigFields& fields, const std::string& key, const nlohmann::json& list, u64 layers,
                                         u64 base) {
  if (!list.is_array()) fields.fail(key, "expected a list of layer indices");
  std::vector<std::size_t> indices;
  for (const nlohmann::json& entry : list) {
    const u64 index = json_to_uint(entry, fields.where(key));
    if (index < base || index - base >= layers)
      fields.fail(key, fmt::format("layer {} is outside 0..{} (counted from {})", index, layers - 1 + base, base));
    indices.push_back(static_cast<std::size_t>(index - base));
  }
  return indices;
}

std::string entry_text(const nlohmann::json& entry) { return entry.is_string() ? entry.get<std::string>() : entry.dump(); }

/// Layer kinds from a list of small integers (MiMo-V2 hybrid_layer_pattern, MiniMax attn_type_list):
/// `meaning(value)` gives the kind of each value, nullopt for one kvplan does not know.
template <typename Meaning>
void kinds_from_int_list(ConfigFields& fields, const std::string& key, const nlohmann::json& list, Layout& layout,
                         Meaning meaning) {
  const u64 layers = layout.count();
  if (!list.is_array() || list.size() != layers) fields.fail(key, fmt::format("expected {} entries, one per layer", layers));
  for (std::size_t i = 0; i < layers; ++i) {
    const std::optional<LayerKind> kind =
        list[i].is_number_integer() ? meaning(json_to_uint(list[i], fields.where(key))) : std::nullopt;
    if (!kind) throw unsupported_architecture(fmt::format("{}: {}[{}]", fields.origin(), key, i), list[i].dump());
    layout.layers[i].kind = *kind;
    layout.layers[i].block = list[i].dump();
  }
}

/// Nemotron-H block names (hybrid_override_pattern characters, layers_block_type entries).
std::optional<LayerKind> kind_of_block(const std::string& type) {
  if (type == "mlp" || type == "moe") return LayerKind::none;
  return kind_from_layer_type(type);
}

std::string block_of_pattern(char c) {
  switch (c) {
    case 'M': return "mamba";
    case '*': return "attention";
    case '-': return "mlp";
    case 'E': return "moe";
    default: return std::string(1, c);
  }
}

/// The kinds from the first of the explicit layout spellings the config uses; false when it uses none.
bool explicit_kinds(ConfigFields& fields, Layout& layout) {
  const u64 layers = layout.count();
  std::vector<LayerPlan>& plan = layout.layers;

  if (const nlohmann::json* types = fields.find("layer_types")) {
    // Step-3.5/3.7 list their MTP layers' types after the model's own (45 + 3 entries); those
    // layers are priced by --mtp-layers, so the tail is left out here.
    const u64 mtp = fields.uint("num_nextn_predict_layers").value_or(0);
    if (!types->is_array() || (types->size() != layers && (mtp == 0 || types->size() != layers + mtp)))
      fields.fail("layer_types", fmt::format("expected {} layer type strings", layers));
    for (std::size_t i = 0; i < layers; ++i) {
      const std::string type = entry_text((*types)[i]);
      const auto kind = kind_from_layer_type(type);
      if (!kind) throw unsupported_architecture(fmt::format("{}: layer_types[{}]", fields.origin(), i), type);
      plan[i].kind = *kind;
      plan[i].block = type;
    }
    // Qwen3.5 states the layout twice: layer_types and full_attention_interval must agree.
    if (const auto interval = fields.uint("full_attention_interval")) {
      if (*interval == 0) fields.fail("full_attention_interval", "must be at least 1");
      for (std::size_t i = 0; i < layers; ++i)
        if ((plan[i].kind == LayerKind::full) != ((i + 1) % *interval == 0))
          fields.fail("full_attention_interval",
                      fmt::format("{} disagrees with layer_types at layer {} ({})", *interval, i, to_string(plan[i].kind)));
    }
    return true;
  }

  if (const auto pattern = fields.string("hybrid_override_pattern")) {
    // Nemotron-H: one character per layer. M = Mamba2, * = attention, - = MLP, E = MoE.
    if (pattern->size() != layers)
      fields.fail("hybrid_override_pattern", fmt::format("has {} characters for {} layers", pattern->size(), layers));
    for (std::size_t i = 0; i < layers; ++i) {
      const std::string block = block_of_pattern((*pattern)[i]);
      const auto kind = block.size() == 1 ? std::nullopt : kind_of_block(block);
      if (!kind)
        throw unsupported_architecture(fmt::format("{}: hybrid_override_pattern[{}]", fields.origin(), i), block);
      plan[i].kind = *kind;
      plan[i].block = block;
    }
    return true;
  }

  if (const nlohmann::json* blocks = fields.find("layers_block_type")) {
    // Nemotron 3 Ultra / Granite (newer transformers): mamba, attention, mlp, moe per layer.
    if (!blocks->is_array() || blocks->size() != layers)
      fields.fail("layers_block_type", fmt::format("expected {} block type strings", layers));
    for (std::size_t i = 0; i < layers; ++i) {
      const std::string type = entry_text((*blocks)[i]);
      const auto kind = kind_of_block(type);
      if (!kind) throw unsupported_architecture(fmt::format("{}: layers_block_type[{}]", fields.origin(), i), type);
      plan[i].kind = *kind;
      plan[i].block = type;
    }
    return true;
  }

  if (const nlohmann::json* pattern = fields.find("hybrid_layer_pattern")) {
    // MiMo-V2: 0 = full attention, 1 = sliding window (MiMoV2DecoderLayer: is_swa = pattern[i] == 1).
    kinds_from_int_list(fields, "hybrid_layer_pattern", *pattern, layout, [](u64 value) {
      return value == 0 ? std::optional(LayerKind::full) : value == 1 ? std::optional(LayerKind::sliding) : std::nullopt;
    });
    return true;
  }

  if (const nlohmann::json* types = fields.find("attn_type_list")) {
    // MiniMax: 0 = lightning (linear) attention, 1 = softmax attention (MiniMaxText01DecoderLayer).
    kinds_from_int_list(fields, "attn_type_list", *types, layout, [](u64 value) {
      return value == 0 ? std::optional(LayerKind::linear) : value == 1 ? std::optional(LayerKind::full) : std::nullopt;
    });
    return true;
  }

  if (const nlohmann::json* indices = fields.find("full_attn_idxs")) {
    // LFM2 (older configs): the attention layers are listed; every other layer is a short convolution.
    for (LayerPlan& layer : plan) {
      layer.kind = LayerKind::linear;
      layer.block = "conv";
    }
    for (const std::size_t i : read_index_list(fields, "full_attn_idxs", *indices, layers, 0)) {
      plan[i].kind = LayerKind::full;
      plan[i].block = "full_attention";
    }
    return true;
  }

  if (const nlohmann::json* config = fields.find("linear_attn_config")) {
    // Kimi Linear / Kimi K3: full_attn_layers and kda_layers count layers from 1 (KimiLinearConfig
    // is_kda_layer: layer_idx + 1 in kda_layers); together they must cover every layer once.
    if (!config->is_object()) fields.fail("linear_attn_config", "expected an object");
    const auto list = [&](const char* key) -> const nlohmann::json& {
      const auto it = config->find(key);
      if (it == config->end() || it->is_null()) fields.fail(fmt::format("linear_attn_config.{}", key), "is missing");
      return *it;
    };
    std::vector<int> seen(layers, 0);
    for (const std::size_t i : read_index_list(fields, "linear_attn_config.full_attn_layers", list("full_attn_layers"), layers, 1)) {
      plan[i].kind = LayerKind::full;
      plan[i].block = "full_attention";
      ++seen[i];
    }
    for (const std::size_t i : read_index_list(fields, "linear_attn_config.kda_layers", list("kda_layers"), layers, 1)) {
      plan[i].kind = LayerKind::linear;
      plan[i].block = "kda";
      ++seen[i];
    }
    for (std::size_t i = 0; i < layers; ++i)
      if (seen[i] != 1)
        fields.fail("linear_attn_config", fmt::format("layer {} (1-based) is in {} of full_attn_layers and kda_layers",
                                                      i + 1, seen[i] == 0 ? "neither" : "both"));
    return true;
  }

  if (const auto period = fields.uint("attn_layer_period")) {
    // Jamba: layer i attends when i % period == offset; the others are Mamba layers.
    const u64 offset = fields.uint("attn_layer_offset").value_or(0);
    if (*period == 0) fields.fail("attn_layer_period", "must be at least 1");
    for (std::size_t i = 0; i < layers; ++i) {
      const bool attends = i % *period == offset;
      plan[i].kind = attends ? LayerKind::full : LayerKind::linear;
      plan[i].block = attends ? "attention" : "mamba";
    }
    return true;
  }

  if (const auto interval = fields.uint("full_attention_interval")) {
    // Qwen3-Next: every interval-th layer is full attention, the rest Gated DeltaNet.
    if (*interval == 0) fields.fail("full_attention_interval", "must be at least 1");
    for (std::size_t i = 0; i < layers; ++i) {
      const bool full = (i + 1) % *interval == 0;
      plan[i].kind = full ? LayerKind::full : LayerKind::linear;
      plan[i].block = full ? "full_attention" : "linear_attention";
    }
    return true;
  }
  return false;
}

/// The standard rules when neither the config nor the family says more: sliding_window alone slides
/// every layer (Mistral 7B v0.1, Phi-3); Qwen's use_sliding_window slides the layers from
/// max_window_layers on, and only when true.
void window_kinds(ConfigFields& fields, Layout& layout) {
  if (!fields.uint("sliding_window")) return;
  if (fields.find("use_sliding_window")) {
    if (!fields.boolean("use_sliding_window").value_or(false)) return;
    const u64 first = fields.uint("max_window_layers").value_or(0);
    for (std::size_t i = first; i < layout.count(); ++i) layout.layers[i].kind = LayerKind::sliding;
    return;
  }
  for (LayerPlan& layer : layout.layers) layer.kind = LayerKind::sliding;
}

/// Configs that state the layout twice must agree: LFM2 may give both layer_types and
/// full_attn_idxs, NemotronH both hybrid_override_pattern and layers_block_type.
void check_second_statements(ConfigFields& fields, const Layout& layout) {
  const u64 layers = layout.count();
  const auto disagree = [&](const std::string& key, std::size_t layer) {
    fields.fail(key, fmt::format("disagrees with the layout read first at layer {} ({})", layer,
                                 to_string(layout.layers[layer].kind)));
  };
  if (const nlohmann::json* indices = fields.find("full_attn_idxs")) {
    std::vector<bool> listed(layers, false);
    for (const std::size_t i : read_index_list(fields, "full_attn_idxs", *indices, layers, 0)) listed[i] = true;
    for (std::size_t i = 0; i < layers; ++i)
      if (listed[i] != (layout.layers[i].kind == LayerKind::full)) disagree("full_attn_idxs", i);
  }
  if (fields.find("hybrid_override_pattern")) {
    if (const nlohmann::json* blocks = fields.find("layers_block_type"); blocks && blocks->is_array() && blocks->size() == layers)
      for (std::size_t i = 0; i < layers; ++i)
        if (kind_of_block(entry_text((*blocks)[i])) != layout.layers[i].kind) disagree("layers_block_type", i);
  }
}

/// KV sharing (Gemma 3n, Gemma 4 E-models: num_kv_shared_layers): the last N layers read the cache
/// of the last earlier layer of their own type and keep none (transformers Gemma3nTextConfig
/// kv_sharing_roles; vLLM kv_sharing_target_layer_name; llama.cpp has_kv(il) false).
void mark_kv_shared_layers(ConfigFields& fields, Layout& layout) {
  const u64 shared = fields.uint("num_kv_shared_layers").value_or(0);
  if (shared == 0) return;
  std::vector<LayerPlan>& plan = layout.layers;
  if (shared >= plan.size())
    fields.fail("num_kv_shared_layers", fmt::format("{} leaves no layer of the {} to own a cache", shared, plan.size()));
  const std::size_t first = plan.size() - shared;
  for (std::size_t i = first; i < plan.size(); ++i) {
    const LayerKind kind = plan[i].kind;
    if (kind != LayerKind::full && kind != LayerKind::sliding)
      throw unsupported_architecture(fmt::format("{}: num_kv_shared_layers", fields.origin()),
                                     fmt::format("{} (layer {} is {})", shared, i, to_string(kind)));
    const bool earlier = std::any_of(plan.begin(), plan.begin() + static_cast<std::ptrdiff_t>(first),
                                     [&](const LayerPlan& layer) { return layer.kind == kind; });
    if (!earlier)
      fields.fail("num_kv_shared_layers", fmt::format("layer {} ({}) has no earlier {} layer whose cache it could read", i,
                                                      to_string(kind), to_string(kind)));
  }
  for (std::size_t i = first; i < plan.size(); ++i) plan[i].kv_shared = true;
}

/// Step-3.5/3.7's sliding layers have their own heads: attention_other_setting {attention_type
/// "sliding_attention", num_attention_groups (KV heads), head_dim, num_attention_heads}. Any
/// other attention_type, or a true_head_dim that differs from head_dim, is not understood.
void read_other_attention_setting(ConfigFields& fields, std::optional<u64>& kv_heads, u64& k, u64& v) {
  const std::string key = "attention_other_setting";
  const nlohmann::json* other = fields.find(key);
  if (!other) return;
  if (!other->is_object()) fields.fail(key, "expected an object");
  const auto number = [&](const char* name) -> std::optional<u64> {
    const auto it = other->find(name);
    if (it == other->end() || it->is_null()) return std::nullopt;
    return json_to_uint(*it, fmt::format("{}: field '{}.{}'", fields.origin(), key, name));
  };
  const auto type = other->find("attention_type");
  const std::string kind = type == other->end() ? "(missing)" : entry_text(*type);
  if (kind != "sliding_attention")
    throw unsupported_architecture(fmt::format("{}: {}.attention_type", fields.origin(), key), kind);
  const auto groups = number("num_attention_groups");
  if (!groups) fields.fail(key + ".num_attention_groups", "is missing");
  kv_heads = *groups;
  if (const auto dim = number("head_dim")) k = v = *dim;
  if (const auto true_dim = number("true_head_dim"); true_dim && *true_dim != k)
    throw unsupported_architecture(fmt::format("{}: {}.true_head_dim", fields.origin(), key), std::to_string(*true_dim));
}

}  // namespace

Layout read_layout(ConfigFields& fields) {
  const Family* family = fields.family();
  Layout layout;

  // Newer NemotronH configs (Nemotron 3 Ultra) list layers_block_type and leave num_hidden_layers
  // out: transformers takes the list's length.
  const nlohmann::json* block_list = fields.find("layers_block_type");
  const bool count_from_blocks = !fields.has("num_hidden_layers") && block_list && block_list->is_array();
  const u64 layers = count_from_blocks ? block_list->size() : fields.required_uint("num_hidden_layers");
  if (layers == 0) fields.fail(count_from_blocks ? "layers_block_type" : "num_hidden_layers", "must be at least 1");
  if (layers > kMaxLayers) fields.fail("num_hidden_layers", fmt::format("is more than kvplan reads (at most {})", kMaxLayers));
  layout.layers.resize(layers);
  layout.hidden = fields.positive("hidden_size");
  layout.heads = fields.positive("num_attention_heads");

  // num_key_value_heads: absent = multi-head attention; a list gives each layer its own. Step 3,
  // 3.5 and 3.7 call it num_attention_groups.
  std::vector<u64> kv_heads(layers, layout.heads);
  if (const auto groups = fields.uint("num_attention_groups"); groups && !fields.has("num_key_value_heads"))
    std::fill(kv_heads.begin(), kv_heads.end(), *groups);
  if (const auto fallback = fields.has("num_key_value_heads") ? std::nullopt : fields.default_of("num_key_value_heads")) {
    fields.note(fmt::format("num_key_value_heads absent: the config class default {} used", *fallback));
    std::fill(kv_heads.begin(), kv_heads.end(), *fallback);
  }
  if (const nlohmann::json* value = fields.find("num_key_value_heads")) {
    if (value->is_array()) {
      if (value->size() != layers) fields.fail("num_key_value_heads", fmt::format("expected {} entries", layers));
      for (std::size_t i = 0; i < layers; ++i) kv_heads[i] = json_to_uint((*value)[i], fields.where("num_key_value_heads"));
    } else {
      std::fill(kv_heads.begin(), kv_heads.end(), json_to_uint(*value, fields.where("num_key_value_heads")));
    }
  }
  if (family && family->kv_heads)
    if (const auto own = family->kv_heads(fields, layout)) std::fill(kv_heads.begin(), kv_heads.end(), *own);

  // head_dim: absent or null = the config class's default where it has one (Gemma 256, Qwen3
  // 128), else hidden / heads. Nemotron-H calls it attention_head_dim.
  layout.head_dim = layout.hidden / layout.heads;
  if (const auto given = fields.uint_of({"head_dim", "attention_head_dim"})) {
    layout.head_dim = *given;
    layout.head_dim_stated = true;
  } else if (const auto fallback = fields.default_of("head_dim")) {
    fields.note(fmt::format("head_dim absent: the config class default {} used", *fallback));
    layout.head_dim = *fallback;
    layout.head_dim_stated = true;
  }
  fields.ignore({"attention_head_dim"});

  std::uint64_t v_head_dim = layout.head_dim;
  if (const auto rank = fields.uint("kv_lora_rank")) {
    // MLA caches one latent of kv_lora_rank + qk_rope_head_dim per token per layer; head_dim,
    // v_head_dim and qk_head_dim describe the decompressed heads, not the cache (GLM-5.1 has
    // head_dim 64 beside qk_head_dim 256).
    layout.mla_rank = *rank;
    layout.mla_rope = fields.required_uint("qk_rope_head_dim");
    fields.ignore({"qk_nope_head_dim", "v_head_dim", "qk_head_dim"});
  } else if (const auto v = fields.uint("v_head_dim")) {
    v_head_dim = *v;
  }

  // Per-kind head shapes. Gemma 4's global (full) layers: global_head_dim for K and V, and, with
  // attention_k_eq_v, num_global_key_value_heads (K is also used as V, and engines still store
  // the V copy). MiMo-V2's sliding layers: swa_num_key_value_heads, swa_head_dim, swa_v_head_dim.
  struct Shape {
    std::optional<u64> kv_heads;
    u64 k;
    u64 v;
  };
  Shape full_shape{std::nullopt, layout.head_dim, v_head_dim};
  Shape sliding_shape{std::nullopt, layout.head_dim, v_head_dim};
  if (const auto global = fields.uint("global_head_dim")) full_shape.k = full_shape.v = *global;
  const auto global_kv_heads = fields.uint("num_global_key_value_heads");
  if (fields.boolean("attention_k_eq_v").value_or(false) && global_kv_heads) full_shape.kv_heads = *global_kv_heads;
  sliding_shape.kv_heads = fields.uint("swa_num_key_value_heads");
  if (const auto swa = fields.uint("swa_head_dim")) sliding_shape.k = sliding_shape.v = *swa;
  if (const auto swa_v = fields.uint("swa_v_head_dim")) sliding_shape.v = *swa_v;
  read_other_attention_setting(fields, sliding_shape.kv_heads, sliding_shape.k, sliding_shape.v);

  // The kinds: an explicit spelling, else the family's default layout, else the window rules.
  if (!explicit_kinds(fields, layout) && !(family && family->default_kinds && family->default_kinds(fields, layout)))
    window_kinds(fields, layout);
  check_second_statements(fields, layout);
  mark_kv_shared_layers(fields, layout);
  layout.state_on_every_layer = family && family->state_on_every_layer;

  const u64 window = fields.uint("sliding_window").value_or(0);
  const u64 chunk = fields.uint("attention_chunk_size").value_or(0);
  for (std::size_t i = 0; i < layers; ++i) {
    LayerPlan& layer = layout.layers[i];
    if (layer.kind == LayerKind::full && layout.mla_rank) layer.kind = LayerKind::mla;
    if (layer.attends()) {
      const Shape& shape = layer.kind == LayerKind::sliding ? sliding_shape : full_shape;
      layer.kv_heads = shape.kv_heads.value_or(kv_heads[i]);
      layer.k_dim = shape.k;
      layer.v_dim = shape.v;
    }
    if (layer.kind == LayerKind::sliding) layer.window = window;
    if (layer.kind == LayerKind::chunked) layer.window = chunk;
  }
  if (family && family->finish_layout) family->finish_layout(fields, layout);
  fields.ignore({"use_sliding_window", "max_window_layers", "sliding_window_pattern", "attn_layer_offset",
                 "no_rope_layer_interval"});
  return layout;
}

}  // namespace kvplan::arch
