#include "kvplan/hf_config.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "hf_quantization.h"
#include "json_reader.h"
#include "kvplan/error.h"
#include "kvplan/param_count.h"

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
        "attn_layer", "global_", "nope",   "rope_layers", "state_size", "n_groups", "compress"};
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
  if (type == "full_attention" || type == "attention" || type == "global_attention" || type == "full" ||
      type == "global")
    return LayerKind::full;
  if (type == "sliding_attention" || type == "sliding" || type == "local_attention" || type == "local")
    return LayerKind::sliding;
  if (type == "chunked_attention") return LayerKind::chunked;
  if (type == "linear_attention" || type == "mamba" || type == "mamba2") return LayerKind::linear;
  return std::nullopt;
}

/// The kind of every layer, from whichever of the layout spellings the config uses.
std::vector<LayerKind> read_layer_kinds(HfFields& fields, const std::string& model_type, std::uint64_t layers,
                                        bool has_window) {
  std::vector<LayerKind> kinds(layers, LayerKind::full);

  if (const nlohmann::json* types = fields.find("layer_types")) {
    if (!types->is_array() || types->size() != layers)
      fields.fail("layer_types", fmt::format("expected {} layer type strings", layers));
    for (std::size_t i = 0; i < layers; ++i) {
      const nlohmann::json& entry = (*types)[i];
      const std::string type = entry.is_string() ? entry.get<std::string>() : entry.dump();
      const auto kind = kind_from_layer_type(type);
      if (!kind) throw unsupported_architecture(fmt::format("{}: layer_types[{}]", fields.origin(), i), type);
      kinds[i] = *kind;
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

/// The fixed per-sequence state of one linear layer, by family (formulas: vLLM mamba_utils.py,
/// llama.cpp llama-hparams.cpp; see engine-rules in the README).
std::vector<StateTensor> linear_state(HfFields& fields, const std::string& model_type, std::uint64_t hidden,
                                      const Dtype& dtype) {
  if (model_type == "qwen3_next" || model_type == "qwen3_5" || model_type == "qwen3_5_text" ||
      model_type == "qwen3_5_moe" || model_type == "qwen3_5_moe_text") {
    // Gated DeltaNet: conv (k - 1) x (2 Hk Dk + Hv Dv); recurrent Hv x Dv x Dk.
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
    // Mamba2: conv (d_conv - 1) x (d_inner + 2 n_groups d_state); ssm n_heads x head_dim x d_state.
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
  throw unsupported_architecture(fmt::format("{}: model_type", fields.origin()),
                                 model_type + " (linear layers of a kind kvplan cannot size)");
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

  ModelSpec spec;
  spec.id = std::string(origin);
  spec.source = std::string(origin);
  spec.architecture = read_model_type(fields);
  spec.name = display_name(fields, origin);
  const std::string& model_type = spec.architecture;

  const std::uint64_t layers = fields.required_uint("num_hidden_layers");
  if (layers == 0) fields.fail("num_hidden_layers", "must be at least 1");
  if (layers > 100'000) fields.fail("num_hidden_layers", "is implausibly large (over 100000)");
  const std::uint64_t hidden = fields.required_uint("hidden_size");
  if (hidden == 0) fields.fail("hidden_size", "must be at least 1");
  spec.attention_heads = narrow(fields, "num_attention_heads", fields.required_uint("num_attention_heads"));
  if (spec.attention_heads == 0) fields.fail("num_attention_heads", "must be at least 1");

  // num_key_value_heads: absent = multi-head attention; a list gives each layer its own.
  std::vector<std::uint64_t> kv_heads(layers, spec.attention_heads);
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
    // MLA caches one latent of kv_lora_rank + qk_rope_head_dim per token per layer.
    mla_rope = fields.required_uint("qk_rope_head_dim");
    mla_width = *kv_lora_rank + mla_rope;
    fields.ignore({"qk_nope_head_dim", "v_head_dim", "qk_head_dim"});
  } else if (const auto v = fields.uint("v_head_dim")) {
    v_head_dim = *v;
  }

  const std::vector<LayerKind> kinds = read_layer_kinds(fields, model_type, layers, window.has_value());
  const Dtype& dtype = model_dtype(fields);
  const bool any_linear = std::find(kinds.begin(), kinds.end(), LayerKind::linear) != kinds.end();
  const std::vector<StateTensor> state =
      (any_linear || model_type == "falcon_h1") ? linear_state(fields, model_type, hidden, dtype) : std::vector<StateTensor>{};

  for (std::size_t i = 0; i < layers; ++i) {
    LayerSpec layer;
    layer.kind = kinds[i];
    if (layer.kind == LayerKind::full && mla_width) layer.kind = LayerKind::mla;
    switch (layer.kind) {
      case LayerKind::full:
      case LayerKind::sliding:
      case LayerKind::chunked:
        layer.kv_heads = narrow(fields, "num_key_value_heads", kv_heads[i]);
        layer.k_head_dim = narrow(fields, "head_dim", head_dim);
        layer.v_head_dim = narrow(fields, "v_head_dim", v_head_dim);
        break;
      case LayerKind::mla:
        layer.kv_heads = 1;
        layer.k_head_dim = narrow(fields, "kv_lora_rank", mla_width);
        layer.mla_rope_dim = narrow(fields, "qk_rope_head_dim", mla_rope);
        break;
      case LayerKind::linear: layer.state = state; break;
      case LayerKind::none: break;
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

  spec.mtp_layers = narrow(fields, "num_nextn_predict_layers", fields.uint("num_nextn_predict_layers").value_or(0));
  spec.max_context = fields.uint("max_position_embeddings").value_or(0);
  fields.reject_unread_cache_fields();

  // Weights: the exact checkpoint size when the index gives it, else counted from the shapes.
  nlohmann::json counted_config = fields.text();
  if (fields.nested())
    for (const char* key : {"tie_word_embeddings", "torch_dtype", "vocab_size"})
      if (!counted_config.contains(key) && config.contains(key)) counted_config[key] = config[key];
  // The count needs every MLP and embedding shape; an index that gives the exact size makes a
  // count that cannot be done (an architecture the counter does not know) unnecessary.
  ParamCount count;
  try {
    count = count_params(counted_config);
  } catch (const Error&) {
    if (!safetensors_total_size) throw;
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
