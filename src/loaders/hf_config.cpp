#include "loaders/hf_config.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "loaders/hf_quantization.h"
#include "loaders/json_reader.h"
#include "kvplan/error.h"
#include "loaders/param_count.h"

namespace kvplan {

namespace {

/// The fields of a config.json as the loader reads them: the language model's own block
/// (`text_config` in multimodal wrappers) first, then the top level. Every key read is
/// remembered, so that afterwards a cache-relevant key nobody read can be refused.
class HfFields {
 public:
  HfFields(const nlohmann::json& root, std::string origin) : root_(root), origin_(std::move(origin)) {
    const auto text = root_.find("text_config");
    text_ = (text != root_.end() && text->is_object()) ? &*text : &root_;
  }

  const std::string& origin() const { return origin_; }
  const nlohmann::json& text() const { return *text_; }
  bool nested() const { return text_ != &root_; }

  /// The value of `key`, or nullptr when absent or null.
  const nlohmann::json* find(const std::string& key) {
    used_.insert(key);
    for (const nlohmann::json* object : {text_, &root_}) {
      const auto it = object->find(key);
      if (it != object->end() && !it->is_null()) return &*it;
    }
    return nullptr;
  }

  std::optional<std::uint64_t> uint(const std::string& key) {
    const nlohmann::json* value = find(key);
    if (!value) return std::nullopt;
    return json_to_uint(*value, fmt::format("{}: field '{}'", origin_, key));
  }

  std::uint64_t required_uint(const std::string& key) {
    const auto value = uint(key);
    if (!value) fail(key, "is missing");
    return *value;
  }

  /// The first of several spellings of one field that the config uses.
  std::uint64_t required_uint_of(std::initializer_list<const char*> keys) {
    for (const char* key : keys)
      if (const auto value = uint(key)) return *value;
    fail(*keys.begin(), "is missing");
  }

  std::optional<std::string> string(const std::string& key) {
    const nlohmann::json* value = find(key);
    if (!value) return std::nullopt;
    if (!value->is_string()) fail(key, fmt::format("expected a string, got {}", value->type_name()));
    return value->get<std::string>();
  }

  std::optional<bool> boolean(const std::string& key) {
    const nlohmann::json* value = find(key);
    if (!value) return std::nullopt;
    if (!value->is_boolean()) fail(key, fmt::format("expected true or false, got {}", value->type_name()));
    return value->get<bool>();
  }

  /// Marks keys whose values do not change the cache, so the unknown-field check passes them.
  void ignore(std::initializer_list<const char*> keys) {
    for (const char* key : keys) used_.insert(key);
  }

  [[noreturn]] void fail(const std::string& key, const std::string& message) const {
    throw Error(fmt::format("{}: field '{}': {}", origin_, key, message));
  }

  /// The first key of the language-model block that looks as if it shapes the cache (its name
  /// speaks of windows, chunks, state, sharing, layer kinds...) and that no reader used.
  void reject_unread_cache_fields() const {
    static constexpr std::array kCacheWords = {
        "window", "chunk",     "lora",   "mamba",     "ssm",    "linear_", "layer_type", "block_type",
        "pattern", "conv",     "shared_kv", "kv_shar", "hybrid", "attn_type", "attention_type", "full_attn",
        "full_attention", "swa", "nextn", "mtp",     "index",  "kv_heads", "key_value",  "head_dim",
        "attn_layer", "global_", "nope",   "rope_layers", "state_size", "n_groups", "compress",
        "sparse_attention", "k_eq_v", "kv_lora", "kda", "short_conv", "l_cache", "attention_group", "other_setting"};
    for (const auto& [key, value] : text_->items()) {
      if (used_.count(key) || value.is_null() || (value.is_boolean() && !value.get<bool>())) continue;
      if (value.is_array() && value.empty()) continue;
      std::string lower = key;
      std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      for (const char* word : kCacheWords)
        if (lower.find(word) != std::string::npos) {
          std::string shown = value.dump();
          if (shown.size() > 60) shown = shown.substr(0, 57) + "...";
          throw unsupported_architecture(fmt::format("{}: {}", origin_, key), shown);
        }
    }
  }

 private:
  const nlohmann::json& root_;
  const nlohmann::json* text_ = nullptr;
  std::string origin_;
  std::set<std::string> used_;
};

std::uint32_t narrow(HfFields& fields, const std::string& key, std::uint64_t value) {
  if (value > 0xFFFF'FFFFu) fields.fail(key, "is larger than 2^32 - 1");
  return static_cast<std::uint32_t>(value);
}

/// Spellings of `layer_types` entries across model families.
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

/// A list of layer indices (full_attn_idxs, linear_attn_config.*_layers) counted from `base`,
/// checked against the layer count.
std::vector<std::size_t> read_index_list(HfFields& fields, const std::string& key, const nlohmann::json& list,
                                         std::uint64_t layers, std::uint64_t base) {
  if (!list.is_array()) fields.fail(key, "expected a list of layer indices");
  std::vector<std::size_t> indices;
  for (const nlohmann::json& entry : list) {
    const std::uint64_t index = json_to_uint(entry, fmt::format("{}: field '{}'", fields.origin(), key));
    if (index < base || index - base >= layers)
      fields.fail(key, fmt::format("layer {} is outside 0..{} (counted from {})", index, layers - 1 + base, base));
    indices.push_back(static_cast<std::size_t>(index - base));
  }
  return indices;
}

/// Layer kinds from a list of small integers (MiMo-V2 hybrid_layer_pattern, MiniMax attn_type_list):
/// `meaning(value)` gives the kind of each value, nullopt for one kvplan does not know.
template <typename Meaning>
std::vector<LayerKind> kinds_from_int_list(HfFields& fields, const std::string& key, const nlohmann::json& list,
                                           std::uint64_t layers, Meaning meaning) {
  if (!list.is_array() || list.size() != layers) fields.fail(key, fmt::format("expected {} entries, one per layer", layers));
  std::vector<LayerKind> kinds;
  for (std::size_t i = 0; i < layers; ++i) {
    const std::optional<LayerKind> kind =
        list[i].is_number_integer() ? meaning(json_to_uint(list[i], fmt::format("{}: field '{}'", fields.origin(), key)))
                                    : std::nullopt;
    if (!kind) throw unsupported_architecture(fmt::format("{}: {}[{}]", fields.origin(), key, i), list[i].dump());
    kinds.push_back(*kind);
  }
  return kinds;
}

/// The kind of every layer, from the first of the layout spellings the config uses.
std::vector<LayerKind> primary_layer_kinds(HfFields& fields, const std::string& model_type, std::uint64_t layers,
                                           bool has_window) {
  std::vector<LayerKind> kinds(layers, LayerKind::full);

  if (const nlohmann::json* types = fields.find("layer_types")) {
    // Step-3.5/3.7 list their MTP layers' types after the model's own (45 + 3 entries); those
    // layers are priced by --mtp-layers, so the tail is left out here.
    const std::uint64_t mtp = fields.uint("num_nextn_predict_layers").value_or(0);
    if (!types->is_array() || (types->size() != layers && (mtp == 0 || types->size() != layers + mtp)))
      fields.fail("layer_types", fmt::format("expected {} layer type strings", layers));
    for (std::size_t i = 0; i < layers; ++i) {
      const nlohmann::json& entry = (*types)[i];
      const std::string type = entry.is_string() ? entry.get<std::string>() : entry.dump();
      const auto kind = kind_from_layer_type(type);
      if (!kind) throw unsupported_architecture(fmt::format("{}: layer_types[{}]", fields.origin(), i), type);
      kinds[i] = *kind;
    }
    // Qwen3.5 states the layout twice: layer_types and full_attention_interval must agree.
    if (const auto interval = fields.uint("full_attention_interval")) {
      if (*interval == 0) fields.fail("full_attention_interval", "must be at least 1");
      for (std::size_t i = 0; i < layers; ++i)
        if ((kinds[i] == LayerKind::full) != ((i + 1) % *interval == 0))
          fields.fail("full_attention_interval",
                      fmt::format("{} disagrees with layer_types at layer {} ({})", *interval, i, to_string(kinds[i])));
    }
    return kinds;
  }

  if (const auto pattern = fields.string("hybrid_override_pattern")) {
    // Nemotron-H: one character per layer. M = Mamba2, * = attention, - = MLP, E = MoE.
    if (pattern->size() != layers)
      fields.fail("hybrid_override_pattern", fmt::format("has {} characters for {} layers", pattern->size(), layers));
    for (std::size_t i = 0; i < layers; ++i) {
      switch ((*pattern)[i]) {
        case 'M': kinds[i] = LayerKind::linear; break;
        case '*': kinds[i] = LayerKind::full; break;
        case '-':
        case 'E': kinds[i] = LayerKind::none; break;
        default:
          throw unsupported_architecture(fmt::format("{}: hybrid_override_pattern[{}]", fields.origin(), i),
                                         std::string(1, (*pattern)[i]));
      }
    }
    return kinds;
  }

  if (const nlohmann::json* blocks = fields.find("layers_block_type")) {
    // Nemotron 3 Ultra / Granite (newer transformers): mamba, attention, mlp, moe per layer.
    if (!blocks->is_array() || blocks->size() != layers)
      fields.fail("layers_block_type", fmt::format("expected {} block type strings", layers));
    for (std::size_t i = 0; i < layers; ++i) {
      const nlohmann::json& entry = (*blocks)[i];
      const std::string type = entry.is_string() ? entry.get<std::string>() : entry.dump();
      if (type == "mlp" || type == "moe") kinds[i] = LayerKind::none;
      else if (const auto kind = kind_from_layer_type(type)) kinds[i] = *kind;
      else throw unsupported_architecture(fmt::format("{}: layers_block_type[{}]", fields.origin(), i), type);
    }
    return kinds;
  }

  if (const nlohmann::json* pattern = fields.find("hybrid_layer_pattern")) {
    // MiMo-V2: 0 = full attention, 1 = sliding window (MiMoV2DecoderLayer: is_swa = pattern[i] == 1).
    return kinds_from_int_list(fields, "hybrid_layer_pattern", *pattern, layers, [](std::uint64_t value) {
      return value == 0 ? std::optional(LayerKind::full) : value == 1 ? std::optional(LayerKind::sliding) : std::nullopt;
    });
  }

  if (const nlohmann::json* types = fields.find("attn_type_list")) {
    // MiniMax: 0 = lightning (linear) attention, 1 = softmax attention (MiniMaxText01DecoderLayer).
    return kinds_from_int_list(fields, "attn_type_list", *types, layers, [](std::uint64_t value) {
      return value == 0 ? std::optional(LayerKind::linear) : value == 1 ? std::optional(LayerKind::full) : std::nullopt;
    });
  }

  if (const nlohmann::json* indices = fields.find("full_attn_idxs")) {
    // LFM2 (older configs): the attention layers are listed; every other layer is a short convolution.
    std::fill(kinds.begin(), kinds.end(), LayerKind::linear);
    for (const std::size_t i : read_index_list(fields, "full_attn_idxs", *indices, layers, 0)) kinds[i] = LayerKind::full;
    return kinds;
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
      kinds[i] = LayerKind::full;
      ++seen[i];
    }
    for (const std::size_t i : read_index_list(fields, "linear_attn_config.kda_layers", list("kda_layers"), layers, 1)) {
      kinds[i] = LayerKind::linear;
      ++seen[i];
    }
    for (std::size_t i = 0; i < layers; ++i)
      if (seen[i] != 1)
        fields.fail("linear_attn_config", fmt::format("layer {} (1-based) is in {} of full_attn_layers and kda_layers",
                                                      i + 1, seen[i] == 0 ? "neither" : "both"));
    return kinds;
  }

  if (const auto period = fields.uint("attn_layer_period")) {
    // Jamba: layer i attends when i % period == offset; the others are Mamba layers.
    const std::uint64_t offset = fields.uint("attn_layer_offset").value_or(0);
    if (*period == 0) fields.fail("attn_layer_period", "must be at least 1");
    for (std::size_t i = 0; i < layers; ++i) kinds[i] = (i % *period == offset) ? LayerKind::full : LayerKind::linear;
    return kinds;
  }

  if (const auto interval = fields.uint("full_attention_interval")) {
    // Qwen3-Next: every interval-th layer is full attention, the rest Gated DeltaNet.
    if (*interval == 0) fields.fail("full_attention_interval", "must be at least 1");
    for (std::size_t i = 0; i < layers; ++i) kinds[i] = ((i + 1) % *interval == 0) ? LayerKind::full : LayerKind::linear;
    return kinds;
  }

  if (model_type == "falcon_h1") {
    // Falcon-H1 runs attention and Mamba2 side by side in every layer (attn_layer_indices null).
    if (fields.find("attn_layer_indices")) fields.fail("attn_layer_indices", "is not supported yet");
    return kinds;
  }

  if (model_type == "llama4" || model_type == "llama4_text") {
    // Llama 4: RoPE layers use chunked attention, NoPE layers (no_rope_layers[i] == 0, by default
    // every 4th) attend globally (transformers Llama4TextConfig).
    const auto chunk = fields.uint("attention_chunk_size");
    std::vector<std::uint64_t> rope(layers, 1);
    if (const nlohmann::json* list = fields.find("no_rope_layers")) {
      if (!list->is_array() || list->size() != layers) fields.fail("no_rope_layers", fmt::format("expected {} entries", layers));
      for (std::size_t i = 0; i < layers; ++i) rope[i] = json_to_uint((*list)[i], fields.origin() + ": field 'no_rope_layers'");
    } else {
      const std::uint64_t interval = fields.uint("no_rope_layer_interval").value_or(4);
      for (std::size_t i = 0; i < layers; ++i) rope[i] = interval && (i + 1) % interval == 0 ? 0 : 1;
    }
    for (std::size_t i = 0; i < layers; ++i) kinds[i] = (chunk && rope[i]) ? LayerKind::chunked : LayerKind::full;
    return kinds;
  }

  if (!has_window) return kinds;

  if (model_type == "gemma3" || model_type == "gemma3_text" || model_type == "cohere2") {
    // Every pattern-th layer is global (transformers: sliding when (i + 1) % pattern != 0).
    const std::uint64_t pattern = fields.uint("sliding_window_pattern").value_or(model_type == "cohere2" ? 4 : 6);
    for (std::size_t i = 0; i < layers; ++i)
      kinds[i] = (pattern != 0 && (i + 1) % pattern == 0) ? LayerKind::full : LayerKind::sliding;
    return kinds;
  }
  if (model_type == "gemma2") {
    // transformers Gemma2DecoderLayer: is_sliding = not bool(layer_idx % 2).
    for (std::size_t i = 0; i < layers; ++i) kinds[i] = (i % 2 == 0) ? LayerKind::sliding : LayerKind::full;
    return kinds;
  }
  if (fields.find("use_sliding_window")) {
    // Qwen2 family: the window applies only with use_sliding_window, to layers >= max_window_layers.
    if (!fields.boolean("use_sliding_window").value_or(false)) return kinds;
    const std::uint64_t first = fields.uint("max_window_layers").value_or(0);
    for (std::size_t i = first; i < layers; ++i) kinds[i] = LayerKind::sliding;
    return kinds;
  }
  // Mistral 7B v0.1, Phi-3: one window declared for every layer.
  std::fill(kinds.begin(), kinds.end(), LayerKind::sliding);
  return kinds;
}

/// The kind of every layer. Configs that state the layout twice must agree: LFM2 may give both
/// layer_types and full_attn_idxs, NemotronH both hybrid_override_pattern and layers_block_type.
std::vector<LayerKind> read_layer_kinds(HfFields& fields, const std::string& model_type, std::uint64_t layers,
                                        bool has_window) {
  const std::vector<LayerKind> kinds = primary_layer_kinds(fields, model_type, layers, has_window);
  const auto disagree = [&](const std::string& key, std::size_t layer) {
    fields.fail(key, fmt::format("disagrees with the layout read first at layer {} ({})", layer, to_string(kinds[layer])));
  };
  if (const nlohmann::json* indices = fields.find("full_attn_idxs")) {
    std::vector<bool> listed(layers, false);
    for (const std::size_t i : read_index_list(fields, "full_attn_idxs", *indices, layers, 0)) listed[i] = true;
    for (std::size_t i = 0; i < layers; ++i)
      if (listed[i] != (kinds[i] == LayerKind::full)) disagree("full_attn_idxs", i);
  }
  if (fields.find("hybrid_override_pattern")) {
    if (const nlohmann::json* blocks = fields.find("layers_block_type"); blocks && blocks->is_array() && blocks->size() == layers)
      for (std::size_t i = 0; i < layers; ++i) {
        const std::string type = (*blocks)[i].is_string() ? (*blocks)[i].get<std::string>() : (*blocks)[i].dump();
        const std::optional<LayerKind> kind =
            type == "mlp" || type == "moe" ? std::optional(LayerKind::none) : kind_from_layer_type(type);
        if (kind != kinds[i]) disagree("layers_block_type", i);
      }
  }
  return kinds;
}

/// KV sharing (Gemma 3n, Gemma 4 E-models: num_kv_shared_layers): the last N layers read the cache
/// of the last earlier layer of their own type and keep none (transformers Gemma3nTextConfig
/// kv_sharing_roles; vLLM kv_sharing_target_layer_name; llama.cpp has_kv(il) false).
void mark_kv_shared_layers(HfFields& fields, std::vector<LayerKind>& kinds) {
  const std::uint64_t shared = fields.uint("num_kv_shared_layers").value_or(0);
  if (shared == 0) return;
  if (shared >= kinds.size())
    fields.fail("num_kv_shared_layers", fmt::format("{} leaves no layer of the {} to own a cache", shared, kinds.size()));
  const std::size_t first = kinds.size() - shared;
  for (std::size_t i = first; i < kinds.size(); ++i) {
    if (kinds[i] != LayerKind::full && kinds[i] != LayerKind::sliding)
      throw unsupported_architecture(fmt::format("{}: num_kv_shared_layers", fields.origin()),
                                     fmt::format("{} (layer {} is {})", shared, i, to_string(kinds[i])));
    if (std::find(kinds.begin(), kinds.begin() + static_cast<std::ptrdiff_t>(first), kinds[i]) ==
        kinds.begin() + static_cast<std::ptrdiff_t>(first))
      fields.fail("num_kv_shared_layers",
                  fmt::format("layer {} ({}) has no earlier {} layer whose cache it could read", i, to_string(kinds[i]),
                              to_string(kinds[i])));
  }
  for (std::size_t i = first; i < kinds.size(); ++i) kinds[i] = LayerKind::shared;
}

const Dtype& model_dtype(HfFields& fields) {
  const auto text = fields.string("torch_dtype");
  const auto newer = fields.string("dtype");
  if (text) return parse_torch_dtype(*text);
  if (newer) return parse_torch_dtype(*newer);
  return parse_weight_dtype("bf16");
}

/// The dtype a recurrent state is kept in: the config's own field when it names one, else `fallback`.
const Dtype& state_dtype(HfFields& fields, std::initializer_list<const char*> keys, const Dtype& fallback) {
  for (const char* key : keys)
    if (const auto name = fields.string(key); name && *name != "auto") return parse_torch_dtype(*name);
  return fallback;
}

/// The fixed per-sequence state of one linear layer, by family. Shapes and dtypes are vLLM's
/// (vllm/model_executor/layers/mamba/mamba_utils.py, MambaStateShapeCalculator and
/// MambaStateDtypeCalculator): the conv state at the model dtype, the recurrent state at
/// mamba_ssm_cache_dtype / mamba_ssm_dtype when the config names one, else as each family says.
std::vector<StateTensor> linear_state(HfFields& fields, const std::string& model_type, std::uint64_t hidden,
                                      const Dtype& dtype) {
  if (model_type == "qwen3_next" || model_type == "qwen3_5" || model_type == "qwen3_5_text" ||
      model_type == "qwen3_5_moe" || model_type == "qwen3_5_moe_text") {
    // Gated DeltaNet (gated_delta_net_state_shape): conv (k - 1) x (2 Hk Dk + Hv Dv); recurrent Hv x Dv x Dk.
    const std::uint64_t hk = fields.required_uint("linear_num_key_heads");
    const std::uint64_t hv = fields.required_uint("linear_num_value_heads");
    const std::uint64_t dk = fields.required_uint("linear_key_head_dim");
    const std::uint64_t dv = fields.required_uint("linear_value_head_dim");
    const std::uint64_t kernel = fields.required_uint("linear_conv_kernel_dim");
    if (kernel == 0) fields.fail("linear_conv_kernel_dim", "must be at least 1");
    return {{"conv", (kernel - 1) * (2 * hk * dk + hv * dv), &dtype},
            {"recurrent", hv * dv * dk, &state_dtype(fields, {"mamba_ssm_cache_dtype", "mamba_ssm_dtype"}, dtype)}};
  }
  if (model_type == "nemotron_h" || model_type == "granitemoehybrid" || model_type == "falcon_h1" ||
      model_type == "bamba") {
    // Mamba2 (mamba2_state_shape): conv (d_conv - 1) x (d_inner + 2 n_groups d_state); ssm n_heads x head_dim x d_state.
    // Families spell the same sizes differently (NemotronH: ssm_state_size, conv_kernel, n_groups).
    const std::uint64_t heads = fields.required_uint_of({"mamba_num_heads", "mamba_n_heads"});
    const std::uint64_t head_dim = fields.required_uint_of({"mamba_head_dim", "mamba_d_head"});
    const std::uint64_t groups = fields.required_uint_of({"n_groups", "mamba_n_groups"});
    const std::uint64_t d_state = fields.required_uint_of({"ssm_state_size", "mamba_d_state"});
    const std::uint64_t d_conv = fields.required_uint_of({"conv_kernel", "mamba_d_conv"});
    fields.ignore({"expand", "mamba_expand", "mamba_chunk_size", "mamba_conv_bias", "mamba_proj_bias", "mamba_rms_norm",
                   "mamba_norm_before_gate", "mamba_use_mlp", "ssm_in_multiplier", "ssm_out_multiplier",
                   "ssm_multipliers", "mamba_hidden_act", "use_mamba_kernels", "mamba_dt_rank", "chunk_size",
                   "mamba_chunk_size", "use_conv_bias", "mamba_d_ssm"});
    const std::uint64_t d_inner = fields.uint("mamba_d_ssm").value_or(heads * head_dim);
    if (d_conv == 0) fields.fail("conv_kernel", "must be at least 1");
    // vLLM's NemotronH config keeps the SSM state in float32 unless the config says otherwise.
    const bool nemotron = model_type == "nemotron_h";
    const Dtype& ssm_fallback = nemotron ? parse_weight_dtype("fp32") : dtype;
    return {{"conv", (d_conv - 1) * (d_inner + 2 * groups * d_state), &dtype},
            {"ssm", heads * head_dim * d_state,
             &state_dtype(fields, {"mamba_ssm_cache_dtype", "mamba_ssm_dtype"}, ssm_fallback)}};
  }
  if (model_type == "jamba") {
    // Mamba (v1): d_inner = expand x hidden; conv (d_conv - 1) x d_inner; ssm d_inner x d_state.
    const std::uint64_t d_inner = fields.required_uint("mamba_expand") * hidden;
    const std::uint64_t d_conv = fields.required_uint("mamba_d_conv");
    const std::uint64_t d_state = fields.required_uint("mamba_d_state");
    fields.ignore({"mamba_dt_rank", "mamba_conv_bias", "mamba_proj_bias", "use_mamba_kernels"});
    if (d_conv == 0) fields.fail("mamba_d_conv", "must be at least 1");
    return {{"conv", (d_conv - 1) * d_inner, &dtype},
            {"ssm", d_inner * d_state, &state_dtype(fields, {"mamba_ssm_cache_dtype", "mamba_ssm_dtype"}, dtype)}};
  }
  if (model_type == "kimi_linear") {
    // Kimi Delta Attention (kda_state_shape / kda_state_dtype): conv (k - 1) x (H D + 2 H D) for
    // q, k and v at the model dtype; recurrent H x D x D in float32, which vLLM hard-codes.
    const nlohmann::json& config = *fields.find("linear_attn_config");
    std::uint64_t heads = 0, head_dim = 0, kernel = 0;
    for (const auto& [key, value] : config.items()) {
      const std::string where = fmt::format("linear_attn_config.{}", key);
      const nlohmann::json& item = value;  // clang 14 cannot capture a structured binding
      const auto number = [&] { return json_to_uint(item, fmt::format("{}: field '{}'", fields.origin(), where)); };
      if (key == "num_heads") heads = number();
      else if (key == "head_dim") head_dim = number();
      else if (key == "short_conv_kernel_size") kernel = number();
      else if (key == "full_attn_layers" || key == "kda_layers" || key == "gate_lower_bound" || key == "use_full_rank_gate")
        continue;  // the layout (read above) and the gate's shape, which the state does not depend on
      else if (!value.is_null()) {
        std::string shown = value.dump();
        if (shown.size() > 60) shown = shown.substr(0, 57) + "...";
        throw unsupported_architecture(fmt::format("{}: {}", fields.origin(), where), shown);
      }
    }
    if (heads == 0 || head_dim == 0 || kernel == 0)
      fields.fail("linear_attn_config", "needs num_heads, head_dim and short_conv_kernel_size of at least 1");
    return {{"conv", (kernel - 1) * 3 * heads * head_dim, &dtype},
            {"recurrent", heads * head_dim * head_dim, &parse_weight_dtype("fp32")}};
  }
  if (model_type == "lfm2" || model_type == "lfm2_moe") {
    // LFM2 short convolution (short_conv_state_shape): (conv_L_cache - 1) x hidden at the model dtype.
    const std::uint64_t kernel = fields.required_uint("conv_L_cache");
    if (kernel == 0) fields.fail("conv_L_cache", "must be at least 1");
    fields.ignore({"conv_bias", "conv_dim", "conv_dim_out", "conv_use_xavier_init"});
    return {{"conv", (kernel - 1) * hidden, &dtype}};
  }
  if (model_type == "minimax" || model_type == "minimax_text_01" || model_type == "minimax_m1" ||
      model_type == "minimax_m2") {
    // MiniMax lightning attention (linear_attention_state_shape): heads x head_dim x head_dim at the
    // model dtype.
    const std::uint64_t heads = fields.required_uint("num_attention_heads");
    const std::uint64_t head_dim = fields.uint("head_dim").value_or(hidden / heads);
    return {{"recurrent", heads * head_dim * head_dim, &dtype}};
  }
  throw unsupported_architecture(fmt::format("{}: model_type", fields.origin()),
                                 model_type + " (linear layers of a kind kvplan cannot size)");
}

/// The DSA lightning indexer's key width on each layer (0 = none): DeepSeek-V3.2 and GLM-5
/// (deepseek_v32, glm_moe_dsa) keep one key of index_head_dim values per token per indexed layer.
/// GLM-5.2's indexer_types marks layers "full" (own indexer) or "shared" (reuses the previous full
/// layer's top-k, no indexer); without it GlmMoeDsaConfig derives the pattern from index_topk_freq
/// and index_skip_topk_offset (defaults 1 and 2: every layer). index_head_dim defaults to 128 in
/// GlmMoeDsaConfig. DeepSeek-V4's compressed indexer is not read here (compress_ratios stays exit 3).
std::vector<std::uint32_t> read_indexer(HfFields& fields, const std::string& model_type, std::uint64_t layers) {
  const bool glm = model_type == "glm_moe_dsa";
  if (!glm && model_type != "deepseek_v32") return {};
  fields.ignore({"index_n_heads", "index_topk", "indexer_rope_interleave", "index_share_for_mtp_iteration"});
  const std::uint64_t width = glm ? fields.uint("index_head_dim").value_or(128) : fields.required_uint("index_head_dim");
  if (width == 0 || width > 0xFFFF) fields.fail("index_head_dim", "must be between 1 and 65535");
  std::vector<std::uint32_t> per_layer(layers, static_cast<std::uint32_t>(width));
  if (!glm) return per_layer;

  std::vector<bool> own(layers, true);
  const auto freq = fields.uint("index_topk_freq");
  const auto offset = fields.uint("index_skip_topk_offset");
  if (const nlohmann::json* pattern = fields.find("index_topk_pattern")) {
    const std::string text = pattern->is_string() ? pattern->get<std::string>() : std::string();
    if (text.size() != layers) fields.fail("index_topk_pattern", fmt::format("expected {} characters F or S", layers));
    for (std::size_t i = 0; i < layers; ++i) {
      if (text[i] != 'F' && text[i] != 'S')
        throw unsupported_architecture(fmt::format("{}: index_topk_pattern[{}]", fields.origin(), i), std::string(1, text[i]));
      own[i] = text[i] == 'F';
    }
  } else {
    // GlmMoeDsaConfig: full when max(i - offset + 1, 0) % freq == 0.
    const std::uint64_t every = std::max<std::uint64_t>(freq.value_or(1), 1);
    const std::uint64_t skip = offset.value_or(2);
    for (std::size_t i = 0; i < layers; ++i) own[i] = ((i + 1 > skip ? i + 1 - skip : 0) % every) == 0;
  }
  if (const nlohmann::json* types = fields.find("indexer_types")) {
    if (!types->is_array() || types->size() != layers) fields.fail("indexer_types", fmt::format("expected {} entries", layers));
    for (std::size_t i = 0; i < layers; ++i) {
      const nlohmann::json& entry = (*types)[i];
      const std::string type = entry.is_string() ? entry.get<std::string>() : entry.dump();
      if (type != "full" && type != "shared")
        throw unsupported_architecture(fmt::format("{}: indexer_types[{}]", fields.origin(), i), type);
      // When the config also gives the schedule, both must say the same.
      if ((freq || offset) && own[i] != (type == "full"))
        fields.fail("indexer_types", fmt::format("layer {} is '{}' but index_topk_freq / index_skip_topk_offset say otherwise", i, type));
      own[i] = type == "full";
    }
  }
  for (std::size_t i = 0; i < layers; ++i)
    if (!own[i]) per_layer[i] = 0;
  return per_layer;
}

/// Step-3.5/3.7's sliding layers have their own heads: attention_other_setting {attention_type
/// "sliding_attention", num_attention_groups (KV heads), head_dim, num_attention_heads}. Any
/// other attention_type, or a true_head_dim that differs from head_dim, is not understood.
void read_other_attention_setting(HfFields& fields, std::optional<std::uint64_t>& kv_heads, std::uint64_t& k,
                                  std::uint64_t& v) {
  const std::string key = "attention_other_setting";
  const nlohmann::json* other = fields.find(key);
  if (!other) return;
  if (!other->is_object()) fields.fail(key, "expected an object");
  const auto number = [&](const char* name) -> std::optional<std::uint64_t> {
    const auto it = other->find(name);
    if (it == other->end() || it->is_null()) return std::nullopt;
    return json_to_uint(*it, fmt::format("{}: field '{}.{}'", fields.origin(), key, name));
  };
  const auto type = other->find("attention_type");
  const std::string kind = type == other->end() ? "(missing)" : type->is_string() ? type->get<std::string>() : type->dump();
  if (kind != "sliding_attention")
    throw unsupported_architecture(fmt::format("{}: {}.attention_type", fields.origin(), key), kind);
  const auto groups = number("num_attention_groups");
  if (!groups) fields.fail(key + ".num_attention_groups", "is missing");
  kv_heads = *groups;
  if (const auto dim = number("head_dim")) k = v = *dim;
  if (const auto true_dim = number("true_head_dim"); true_dim && *true_dim != k)
    throw unsupported_architecture(fmt::format("{}: {}.true_head_dim", fields.origin(), key), std::to_string(*true_dim));
}

/// Multi-token-prediction layers, in each family's spelling: num_nextn_predict_layers (DeepSeek,
/// GLM, Step), mtp_num_hidden_layers (Qwen3.5), num_mtp_modules x mtp_transformer_layers (MiniMax,
/// with use_mtp). Not cached unless speculative decoding uses them (--mtp-layers).
/// NemotronH describes each MTP module's blocks (mtp_layers_block_type, or the
/// mtp_hybrid_override_pattern string); only attention blocks keep a cache, MoE and MLP blocks
/// none. A Mamba block would keep a state kvplan does not price for MTP, so it is refused.
std::uint64_t mtp_attention_blocks(HfFields& fields) {
  std::vector<std::string> blocks;
  std::string key = "mtp_layers_block_type";
  if (const nlohmann::json* list = fields.find(key)) {
    if (!list->is_array()) fields.fail(key, "must be a list of block types");
    for (const nlohmann::json& block : *list) blocks.push_back(block.is_string() ? block.get<std::string>() : block.dump());
  } else if (const auto pattern = fields.string("mtp_hybrid_override_pattern")) {
    key = "mtp_hybrid_override_pattern";
    for (const char c : *pattern)
      blocks.emplace_back(c == '*' ? "attention" : c == 'E' ? "moe" : c == '-' ? "mlp" : std::string(1, c));
  } else {
    return 1;  // every other family: an MTP layer is one transformer layer
  }
  std::uint64_t attention = 0;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    if (blocks[i] == "attention") ++attention;
    else if (blocks[i] != "moe" && blocks[i] != "mlp")
      throw unsupported_architecture(fmt::format("{}: {}[{}]", fields.origin(), key, i), blocks[i]);
  }
  return attention;
}

std::uint64_t read_mtp_layers(HfFields& fields) {
  const std::uint64_t cached_per_module = mtp_attention_blocks(fields);
  const auto nextn = fields.uint("num_nextn_predict_layers");
  const auto qwen = fields.uint("mtp_num_hidden_layers");
  const auto modules = fields.uint("num_mtp_modules");
  const std::uint64_t per_module = fields.uint("mtp_transformer_layers").value_or(1);
  const bool used = fields.boolean("use_mtp").value_or(true);
  if (nextn) return *nextn * cached_per_module;
  if (qwen) return *qwen;
  return modules && used ? *modules * per_module : 0;
}

/// The language model's vocabulary (the rows of its output head): text_config's, else the top
/// level's, else the config class default the parameter count also assumes (gemma-3-27b-it states
/// none: Gemma3TextConfig's 262,208); 0 when unknown.
std::uint64_t read_vocab_size(HfFields& fields, const std::string& model_type) {
  if (const auto vocab = fields.uint("vocab_size")) return *vocab;
  return config_field_default(model_type, "vocab_size").value_or(0);
}

/// A config without `model_type` or layer count is not something kvplan can read as a model.
std::string read_model_type(HfFields& fields) {
  const auto type = fields.string("model_type");
  if (!type) fields.fail("model_type", "is missing (is this a Hugging Face config.json?)");
  return *type;
}

std::string display_name(HfFields& fields, std::string_view origin) {
  if (const auto name = fields.string("_name_or_path"); name && !name->empty()) return *name;
  std::filesystem::path path(origin);
  if (path.filename() == "config.json" && path.has_parent_path()) return path.parent_path().filename().string();
  return path.filename().string();
}

}  // namespace

bool is_hf_config(const nlohmann::json& document) {
  return document.is_object() &&
         (document.contains("model_type") || document.contains("architectures") || document.contains("num_hidden_layers"));
}

ModelSpec model_spec_from_hf_config(const nlohmann::json& config, std::string_view origin,
                                    std::optional<std::uint64_t> safetensors_total_size) {
  if (!config.is_object()) throw Error(fmt::format("{}: expected a JSON object", origin));
  HfFields fields(config, std::string(origin));
  fields.ignore({"use_cache", "cache_implementation", "rope_local_base_freq", "chunk_size_feed_forward",
                 "sliding_window_size", "q_lora_rank", "_kvplan_fixture_note", "index_file"});
  // Fields whose names sound like the cache but that only shape weights or compute: which MLPs
  // are MoE, attention-sink biases (parameters), RoPE of the sliding layers, NoPE position
  // embeddings (Granite 4, Kimi MLA: the latent is cached the same), Gemma 3n's FFN sparsity,
  // Kimi K3's activation, Qwen3.5's MTP embedding choice.
  fields.ignore({"mlp_layer_types", "add_swa_attention_sink_bias", "add_full_attention_sink_bias", "swa_rope_theta",
                 "position_embedding_type", "mla_use_nope", "activation_sparsity_pattern", "activation_situ_linear_beta",
                 "mtp_use_dedicated_embeddings", "swa_num_attention_heads"});

  ModelSpec spec;
  spec.id = std::string(origin);
  spec.source = std::string(origin);
  spec.architecture = read_model_type(fields);
  spec.name = display_name(fields, origin);
  const std::string& model_type = spec.architecture;

  // Newer NemotronH configs (Nemotron 3 Ultra) list layers_block_type and leave num_hidden_layers
  // out: transformers takes the list's length.
  const nlohmann::json* block_list = fields.find("layers_block_type");
  const bool count_from_blocks = !fields.find("num_hidden_layers") && block_list && block_list->is_array();
  const std::uint64_t layers = count_from_blocks ? block_list->size() : fields.required_uint("num_hidden_layers");
  if (layers == 0) fields.fail(count_from_blocks ? "layers_block_type" : "num_hidden_layers", "must be at least 1");
  if (layers > kMaxLayers) fields.fail("num_hidden_layers", fmt::format("is more than kvplan reads (at most {})", kMaxLayers));
  const std::uint64_t hidden = fields.required_uint("hidden_size");
  if (hidden == 0) fields.fail("hidden_size", "must be at least 1");
  spec.attention_heads = narrow(fields, "num_attention_heads", fields.required_uint("num_attention_heads"));
  if (spec.attention_heads == 0) fields.fail("num_attention_heads", "must be at least 1");

  // num_key_value_heads: absent = multi-head attention; a list gives each layer its own. Step 3,
  // 3.5 and 3.7 call it num_attention_groups.
  std::vector<std::uint64_t> kv_heads(layers, spec.attention_heads);
  if (const auto groups = fields.uint("num_attention_groups"); groups && !fields.find("num_key_value_heads"))
    std::fill(kv_heads.begin(), kv_heads.end(), *groups);
  if (const nlohmann::json* value = fields.find("num_key_value_heads")) {
    if (value->is_array()) {
      if (value->size() != layers) fields.fail("num_key_value_heads", fmt::format("expected {} entries", layers));
      for (std::size_t i = 0; i < layers; ++i)
        kv_heads[i] = json_to_uint((*value)[i], fields.origin() + ": field 'num_key_value_heads'");
    } else {
      std::fill(kv_heads.begin(), kv_heads.end(), json_to_uint(*value, fields.origin() + ": field 'num_key_value_heads'"));
    }
  }
  // head_dim: absent or null = hidden / heads. Nemotron-H calls it attention_head_dim.
  std::uint64_t head_dim = hidden / spec.attention_heads;
  if (const auto given = fields.uint("head_dim")) head_dim = *given;
  else if (const auto nemotron = fields.uint("attention_head_dim")) head_dim = *nemotron;
  fields.ignore({"attention_head_dim"});

  const auto window = fields.uint("sliding_window");
  const auto chunk = fields.uint("attention_chunk_size");
  const auto kv_lora_rank = fields.uint("kv_lora_rank");
  std::uint64_t v_head_dim = head_dim;
  std::uint64_t mla_width = 0;
  std::uint64_t mla_rope = 0;
  if (kv_lora_rank) {
    // MLA caches one latent of kv_lora_rank + qk_rope_head_dim per token per layer; head_dim,
    // v_head_dim and qk_head_dim describe the decompressed heads, not the cache (GLM-5.1 has
    // head_dim 64 beside qk_head_dim 256).
    mla_rope = fields.required_uint("qk_rope_head_dim");
    mla_width = *kv_lora_rank + mla_rope;
    fields.ignore({"qk_nope_head_dim", "v_head_dim", "qk_head_dim"});
  } else if (const auto v = fields.uint("v_head_dim")) {
    v_head_dim = *v;
  }

  // Per-kind head shapes. Gemma 4's global (full) layers: global_head_dim for K and V, and, with
  // attention_k_eq_v, num_global_key_value_heads (K is also used as V, and engines still store
  // the V copy). MiMo-V2's sliding layers: swa_num_key_value_heads, swa_head_dim, swa_v_head_dim.
  struct Shape {
    std::optional<std::uint64_t> kv_heads;
    std::uint64_t k;
    std::uint64_t v;
  };
  Shape full_shape{std::nullopt, head_dim, v_head_dim};
  Shape sliding_shape{std::nullopt, head_dim, v_head_dim};
  if (const auto global = fields.uint("global_head_dim")) full_shape.k = full_shape.v = *global;
  const auto global_kv_heads = fields.uint("num_global_key_value_heads");
  if (fields.boolean("attention_k_eq_v").value_or(false) && global_kv_heads) full_shape.kv_heads = *global_kv_heads;
  sliding_shape.kv_heads = fields.uint("swa_num_key_value_heads");
  if (const auto swa = fields.uint("swa_head_dim")) sliding_shape.k = sliding_shape.v = *swa;
  if (const auto swa_v = fields.uint("swa_v_head_dim")) sliding_shape.v = *swa_v;
  read_other_attention_setting(fields, sliding_shape.kv_heads, sliding_shape.k, sliding_shape.v);

  std::vector<LayerKind> kinds = read_layer_kinds(fields, model_type, layers, window.has_value());
  mark_kv_shared_layers(fields, kinds);
  const Dtype& dtype = model_dtype(fields);
  const bool any_linear = std::find(kinds.begin(), kinds.end(), LayerKind::linear) != kinds.end();
  const std::vector<StateTensor> state =
      (any_linear || model_type == "falcon_h1") ? linear_state(fields, model_type, hidden, dtype) : std::vector<StateTensor>{};
  const std::vector<std::uint32_t> indexer = read_indexer(fields, model_type, layers);

  for (std::size_t i = 0; i < layers; ++i) {
    LayerSpec layer;
    layer.kind = kinds[i];
    if (layer.kind == LayerKind::full && mla_width) layer.kind = LayerKind::mla;
    switch (layer.kind) {
      case LayerKind::full:
      case LayerKind::sliding:
      case LayerKind::chunked: {
        const Shape& shape = layer.kind == LayerKind::sliding ? sliding_shape : full_shape;
        layer.kv_heads = narrow(fields, "num_key_value_heads", shape.kv_heads.value_or(kv_heads[i]));
        layer.k_head_dim = narrow(fields, "head_dim", shape.k);
        layer.v_head_dim = narrow(fields, "v_head_dim", shape.v);
        break;
      }
      case LayerKind::mla:
        layer.kv_heads = 1;
        layer.k_head_dim = narrow(fields, "kv_lora_rank", mla_width);
        layer.mla_rope_dim = narrow(fields, "qk_rope_head_dim", mla_rope);
        break;
      case LayerKind::linear: layer.state = state; break;
      case LayerKind::none:
      case LayerKind::shared: break;
    }
    if (!indexer.empty() && indexer[i]) {
      if (layer.kind != LayerKind::mla) fields.fail("index_head_dim", fmt::format("layer {} has an indexer but no MLA cache", i));
      layer.index_head_dim = indexer[i];
    }
    if (model_type == "falcon_h1") layer.state = state;  // parallel hybrid: state beside attention
    if (layer.kind == LayerKind::sliding) {
      if (!window || *window == 0) fields.fail("sliding_window", "is missing or zero for a sliding layer");
      layer.window = *window;
    }
    if (layer.kind == LayerKind::chunked) {
      if (!chunk || *chunk == 0) fields.fail("attention_chunk_size", "is missing or zero for a chunked layer");
      layer.window = *chunk;
    }
    spec.layers.push_back(std::move(layer));
  }
  fields.ignore({"use_sliding_window", "max_window_layers", "sliding_window_pattern", "attn_layer_offset",
                 "no_rope_layer_interval"});

  spec.mtp_layers = narrow(fields, "num_nextn_predict_layers", read_mtp_layers(fields));
  // Kimi Linear states its context as model_max_length only.
  spec.max_context = fields.uint("max_position_embeddings").value_or(fields.uint("model_max_length").value_or(0));
  spec.vocab_size = read_vocab_size(fields, model_type);
  fields.reject_unread_cache_fields();

  // Weights: the exact checkpoint size when the index gives it, else counted from the shapes.
  nlohmann::json counted_config = fields.text();
  if (fields.nested())
    for (const char* key : {"tie_word_embeddings", "torch_dtype", "vocab_size"})
      if (!counted_config.contains(key) && config.contains(key)) counted_config[key] = config[key];
  // The count needs every MLP and embedding shape; an index that gives the exact size makes a
  // count that cannot be done (an architecture the counter does not know) unnecessary.
  ParamCount count;
  std::string not_counted;
  try {
    count = count_params(counted_config);
  } catch (const OverflowError&) {
    throw;  // an absurd size is an error whatever else is known
  } catch (const Error& error) {
    // The exact size from the index makes a count that cannot be done unnecessary. Without it, an
    // architecture the counter does not know gives way to the user's --weights or --params; a
    // malformed field does not.
    if (!safetensors_total_size && error.code() != ExitCode::unsupported_architecture) throw;
    not_counted = error.what();
  }
  if (!not_counted.empty() && !safetensors_total_size) {
    // The cache is understood; the weights are not. Planning asks for them (estimate_weights).
    spec.params = 0;
    spec.weight_dtype = &dtype;
    spec.params_source = "not counted: " + not_counted;
    validate(spec);
    return spec;
  }
  spec.params = count.total;
  spec.active_params = count.active != count.total ? count.active : 0;
  if (safetensors_total_size) {
    const nlohmann::json* quantization = fields.find("quantization_config");
    spec.weight_dtype = count.total ? weights_from_quantization(quantization, count, dtype, fields.origin()).dtype : &dtype;
    spec.weights_bytes = *safetensors_total_size;
    spec.weights_source = fmt::format("safetensors total_size ({})", spec.weight_dtype->name);
  } else {
    const QuantizedWeights quantized =
        weights_from_quantization(fields.find("quantization_config"), count, dtype, fields.origin());
    spec.weight_dtype = quantized.dtype;
    spec.weights_bytes = quantized.bytes;
    spec.weights_source = quantized.rule;
  }
  validate(spec);
  return spec;
}

ModelSpec load_hf_model(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path config_path(path);
  if (fs::is_directory(config_path, ec)) {
    config_path /= "config.json";
    if (!fs::exists(config_path, ec))
      throw Error(fmt::format("{}: no config.json in this folder (expected a Hugging Face model folder)", path));
  }
  const std::string origin = config_path.string();
  const nlohmann::json config = parse_json_document(read_text_file(origin), origin);

  std::optional<std::uint64_t> total_size;
  const fs::path index_path = config_path.parent_path() / "model.safetensors.index.json";
  if (fs::exists(index_path, ec)) {
    const std::string index_origin = index_path.string();
    const nlohmann::json index = parse_json_document(read_text_file(index_origin), index_origin);
    JsonObjectReader reader(index, index_origin);
    if (const nlohmann::json* metadata = reader.find("metadata")) {
      JsonObjectReader meta(*metadata, index_origin + ": metadata");
      total_size = meta.optional_uint("total_size");
    }
  }
  ModelSpec spec = model_spec_from_hf_config(config, origin, total_size);
  return spec;
}

}  // namespace kvplan
