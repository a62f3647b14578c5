#include "loaders/param_count.h"

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "loaders/json_reader.h"
#include "kvplan/error.h"
#include "kvplan/units.h"

// Every shape below is the one the architecture's modeling code in Hugging Face transformers
// creates (src/transformers/models/<model_type>/modeling_<model_type>.py); the comment on each
// function names the modules it counts. Norm weights are vectors of their width; biases count only
// where the module is built with bias=True.

namespace kvplan {

namespace {

using u64 = std::uint64_t;

/// The product of `factors`, or an Error naming `what` when it passes 2^64.
u64 product(std::initializer_list<u64> factors, std::string_view what) {
  u64 result = 1;
  for (const u64 factor : factors) result = checked_mul(result, factor, what);
  return result;
}

/// Running sum that names what it was adding when it overflows.
struct Sum {
  u64 value = 0;
  void add(u64 term, std::string_view what) { value = checked_add(value, term, what); }
};

enum class Family {
  llama,       // llama, mistral, ministral3, mixtral, phi3 (fused qkv/gate_up, same shapes)
  qwen2,       // qwen2, qwen2_moe: bias on q/k/v only
  qwen3,       // qwen3, qwen3_moe: q/k RMSNorm over head_dim
  qwen3_next,  // qwen3_next, qwen3_5: gated attention + Gated DeltaNet layers
  gemma,       // gemma: 2 norms per layer
  gemma2,      // gemma2: 4 norms per layer
  gemma3,      // gemma3_text: 4 norms per layer + q/k norms
  deepseek,    // deepseek_v2, deepseek_v3, deepseek_v32, kimi_k2, glm4_moe_lite: MLA + DeepSeekMoE
  glm4_moe,    // glm4_moe: GQA with q/k/v bias + DeepSeekMoE-style routing
  gpt_oss,     // gpt_oss: biases everywhere, attention sinks, experts with biases
  llama4,      // llama4_text: interleaved MoE with a shared expert
  nemotron_h,  // nemotron_h: one mixer per block (Mamba2, attention, MLP or MoE)
  // Counted layer by layer (count_layered): shapes vary per layer.
  gemma3n,     // gemma3n_text: AltUp, LAuReL, per-layer embeddings
  gemma4,      // gemma4_text: per-kind head shapes, K=V, KV-shared layers, PLE, parallel MoE block
  lfm2,        // lfm2, lfm2_moe: short-convolution and attention layers
  minimax_m2,  // minimax_m2: GQA with full-width q/k norms, MoE in every layer
  mimo_v2,     // mimo_v2_flash, mimo_v2: full and sliding layers with their own shapes, V narrower than K
  kimi_linear, // kimi_linear: MLA and Kimi Delta Attention layers, DeepSeek-style MoE
  granite_hybrid,  // granitemoehybrid: Mamba2 and attention layers, each with a MoE and a shared MLP
};

struct Architecture {
  std::string_view model_type;
  Family family;
  bool ties_by_default;  ///< the config class's default for tie_word_embeddings
  bool mixtral_moe;      ///< experts from num_local_experts x intermediate_size in every layer
};

// Defaults of tie_word_embeddings are those of each configuration_<model_type>.py.
constexpr Architecture kArchitectures[] = {
    {"llama", Family::llama, false, false},
    {"mistral", Family::llama, false, false},
    {"mixtral", Family::llama, false, true},
    {"phi3", Family::llama, false, false},
    {"ministral3", Family::llama, false, false},  // Ministral 3 (2512): Mistral shapes, attention scaling only
    {"qwen2", Family::qwen2, false, false},
    {"qwen2_moe", Family::qwen2, false, false},
    {"qwen3", Family::qwen3, false, false},
    {"qwen3_moe", Family::qwen3, false, false},
    {"qwen3_next", Family::qwen3_next, false, false},
    {"qwen3_5_text", Family::qwen3_next, false, false},
    {"qwen3_5_moe_text", Family::qwen3_next, false, false},
    {"gemma", Family::gemma, true, false},
    {"gemma2", Family::gemma2, true, false},
    {"gemma3_text", Family::gemma3, true, false},
    {"deepseek_v2", Family::deepseek, false, false},
    {"deepseek_v3", Family::deepseek, false, false},
    {"deepseek_v32", Family::deepseek, false, false},
    {"glm_moe_dsa", Family::deepseek, false, false},  // DeepseekV3Attention + DSA indexer, GLM-5
    {"kimi_k2", Family::deepseek, false, false},
    {"glm4_moe_lite", Family::deepseek, false, false},  // DeepseekV3Attention + Glm4MoeMoE
    {"glm4_moe", Family::glm4_moe, false, false},
    {"gpt_oss", Family::gpt_oss, false, true},
    {"llama4_text", Family::llama4, false, false},
    {"nemotron_h", Family::nemotron_h, false, false},
    {"gemma3n_text", Family::gemma3n, true, false},
    {"gemma4_text", Family::gemma4, true, false},
    {"lfm2", Family::lfm2, true, false},
    {"lfm2_moe", Family::lfm2, true, false},
    {"minimax_m2", Family::minimax_m2, false, false},
    {"mimo_v2_flash", Family::mimo_v2, false, false},
    {"mimo_v2", Family::mimo_v2, false, false},
    {"kimi_linear", Family::kimi_linear, false, false},
    {"granitemoehybrid", Family::granite_hybrid, false, false},
};

const Architecture& find_architecture(const std::string& model_type) {
  for (const Architecture& arch : kArchitectures)
    if (arch.model_type == model_type) return arch;
  throw unsupported_architecture("model_type", model_type);
}

/// What one layer mixes tokens with, and what its feed-forward part is.
enum class Mixer { attention, mla, gated_deltanet, mamba2, none };
enum class Ffn { dense, moe, none };

struct Layer {
  Mixer mixer = Mixer::attention;
  Ffn ffn = Ffn::dense;
  bool indexer = false;  ///< a DSA lightning indexer beside the MLA (DeepSeek-V3.2, GLM-5)
};

/// A field some official config.json files leave out, relying on their config class's default.
struct FieldDefault {
  std::string_view model_type;
  std::string_view field;
  u64 value;
};

// google/gemma-3-27b-it's text_config has no vocab_size: Gemma3TextConfig's default is 262,208.
// GlmMoeDsaConfig defaults: a trimmed GLM-5 config without the indexer fields still has an indexer.
constexpr FieldDefault kFieldDefaults[] = {
    {"gemma3_text", "vocab_size", 262'208},
    {"glm_moe_dsa", "index_n_heads", 32},
    {"glm_moe_dsa", "index_head_dim", 128},
};

void append_note(std::string& notes, const std::string& note) {
  if (!notes.empty()) notes += "; ";
  notes += note;
}

/// Reads config fields; every error names the field ("config.json: field 'hidden_size': is missing").
class Fields {
 public:
  Fields(const nlohmann::json& config, std::string& notes) : reader_(config, "config.json"), notes_(notes) {}

  void set_model_type(std::string model_type) { model_type_ = std::move(model_type); }

  u64 required(const std::string& key) {
    if (!reader_.has(key))
      if (const std::optional<u64> fallback = config_field_default(model_type_, key)) {
        append_note(notes_, fmt::format("{} absent: the {} config default {} used", key, model_type_, *fallback));
        return *fallback;
      }
    const u64 value = reader_.required_uint(key);
    if (value == 0) reader_.fail(key, "must be at least 1");
    return value;
  }
  std::optional<u64> optional(const std::string& key) { return reader_.optional_uint(key); }
  u64 optional_or(const std::string& key, u64 fallback) { return optional(key).value_or(fallback); }
  bool flag(const std::string& key, bool fallback) { return reader_.optional_bool(key).value_or(fallback); }
  bool has(const std::string& key) const { return reader_.has(key); }
  std::string string(const std::string& key) { return reader_.required_string(key); }
  std::optional<std::string> optional_string(const std::string& key) { return reader_.optional_string(key); }
  std::vector<std::string> string_list(const std::string& key) { return reader_.optional_string_list(key); }

  /// A list of layer indices (mlp_only_layers, moe_layers); absent or null is empty.
  std::set<u64> index_list(const std::string& key) {
    std::set<u64> indices;
    const nlohmann::json* list = reader_.find(key);
    if (!list) return indices;
    if (!list->is_array()) reader_.fail(key, "expected a list of layer indices");
    for (const nlohmann::json& item : *list) indices.insert(json_to_uint(item, fmt::format("config.json: field '{}'", key)));
    return indices;
  }

  /// The raw value of `key`, or nullptr when absent or null.
  const nlohmann::json* raw(const std::string& key) { return reader_.find(key); }

  /// One whole number per layer (moe_layer_freq, hybrid_layer_pattern, a per-layer intermediate_size).
  std::vector<u64> per_layer(const std::string& key, u64 layers) {
    const nlohmann::json* list = reader_.find(key);
    if (!list || !list->is_array() || list->size() != layers) fail(key, fmt::format("expected {} whole numbers", layers));
    std::vector<u64> values;
    for (const nlohmann::json& item : *list) values.push_back(json_to_uint(item, fmt::format("config.json: field '{}'", key)));
    return values;
  }

  [[noreturn]] void fail(const std::string& key, const std::string& message) const { reader_.fail(key, message); }

 private:
  JsonObjectReader reader_;
  std::string& notes_;
  std::string model_type_;
};

/// The geometry shared by all attention layers of a model.
struct AttentionShape {
  u64 heads = 0;
  u64 kv_heads = 0;
  u64 head_dim = 0;
};

/// head_dim when given; otherwise the config class's default where it has one that is not
/// hidden/heads (Gemma 256, Qwen3 128, Qwen3-Next 256, gpt-oss 64), else hidden_size / heads.
AttentionShape read_attention_shape(Fields& fields, Family family, u64 hidden, std::string& notes) {
  AttentionShape shape;
  shape.heads = fields.required("num_attention_heads");
  shape.kv_heads = fields.optional("num_key_value_heads").value_or(shape.heads);
  if (shape.kv_heads == 0) fields.fail("num_key_value_heads", "must be at least 1");
  if (const auto head_dim = fields.optional("head_dim")) {
    shape.head_dim = *head_dim;
  } else if (const auto attention_head_dim = fields.optional("attention_head_dim")) {  // older nemotron_h
    shape.head_dim = *attention_head_dim;
  } else {
    std::optional<u64> class_default;
    switch (family) {
      case Family::gemma:
      case Family::gemma2:
      case Family::gemma3:
      case Family::qwen3_next: class_default = 256; break;
      case Family::qwen3: class_default = 128; break;
      case Family::gpt_oss: class_default = 64; break;
      default: break;
    }
    if (class_default) {
      shape.head_dim = *class_default;
      append_note(notes, fmt::format("head_dim absent: the config class default {} used", *class_default));
    } else {
      if (hidden % shape.heads != 0)
        fields.fail("head_dim", "is absent and hidden_size is not a multiple of num_attention_heads");
      shape.head_dim = hidden / shape.heads;
    }
  }
  if (shape.head_dim == 0) fields.fail("head_dim", "must be at least 1");
  return shape;
}

/// q_proj, k_proj, v_proj, o_proj (phi3's fused qkv_proj has the same shape), plus what each
/// family adds: biases, q/k RMSNorm over head_dim (qwen3, gemma3, qwen3_next, glm4_moe with
/// use_qk_norm), the output gate that doubles q_proj (qwen3_next, qwen3_5 attn_output_gate) and
/// gpt-oss's per-head attention sinks. Llama 4's qk norm is an L2 norm without weights.
u64 attention_params(Fields& fields, Family family, const std::string& model_type, u64 hidden, const AttentionShape& a) {
  bool qkv_bias = false;
  bool o_bias = false;
  bool qk_norm = false;
  bool sinks = false;
  u64 q_multiplier = 1;
  switch (family) {
    case Family::llama:
      // LlamaAttention: bias=config.attention_bias on all four; mistral, mixtral and phi3 have none.
      if (model_type == "llama") qkv_bias = o_bias = fields.flag("attention_bias", false);
      break;
    case Family::qwen2:
      qkv_bias = model_type == "qwen2" ? true : fields.flag("qkv_bias", true);  // Qwen2Attention: q/k/v bias=True, o_proj none
      break;
    case Family::qwen3:
      qkv_bias = o_bias = fields.flag("attention_bias", false);
      qk_norm = true;
      break;
    case Family::qwen3_next:
      qkv_bias = o_bias = fields.flag("attention_bias", false);
      qk_norm = true;
      q_multiplier = model_type == "qwen3_next" || fields.flag("attn_output_gate", true) ? 2 : 1;
      break;
    case Family::gemma:
    case Family::gemma2:
      qkv_bias = o_bias = fields.flag("attention_bias", false);
      break;
    case Family::gemma3:
      qkv_bias = o_bias = fields.flag("attention_bias", false);
      qk_norm = true;
      break;
    case Family::glm4_moe:
      qkv_bias = fields.flag("attention_bias", false);  // Glm4MoeAttention: o_proj has no bias
      qk_norm = fields.flag("use_qk_norm", false);
      break;
    case Family::gpt_oss:
      qkv_bias = o_bias = fields.flag("attention_bias", true);
      sinks = true;
      break;
    case Family::llama4:
      qkv_bias = o_bias = fields.flag("attention_bias", false);
      break;
    case Family::nemotron_h:
      qkv_bias = o_bias = fields.flag("attention_bias", false);
      break;
    case Family::deepseek: break;  // MLA, counted by mla_params
    case Family::gemma3n:
    case Family::gemma4:
    case Family::lfm2:
    case Family::minimax_m2:
    case Family::mimo_v2:
    case Family::kimi_linear:
    case Family::granite_hybrid: break;  // counted layer by layer (count_layered)
  }
  const u64 q_width = product({a.heads, a.head_dim}, "attention q width");
  const u64 kv_width = product({a.kv_heads, a.head_dim}, "attention kv width");
  Sum sum;
  sum.add(product({hidden, q_width, q_multiplier}, "q_proj"), "attention");
  sum.add(product({2, hidden, kv_width}, "k_proj + v_proj"), "attention");
  sum.add(product({q_width, hidden}, "o_proj"), "attention");
  if (qkv_bias) {
    sum.add(product({q_width, q_multiplier}, "q_proj bias"), "attention");
    sum.add(product({2, kv_width}, "k/v bias"), "attention");
  }
  if (o_bias) sum.add(hidden, "attention");
  if (qk_norm) sum.add(product({2, a.head_dim}, "q/k norm"), "attention");
  if (sinks) sum.add(a.heads, "attention");
  return sum.value;
}

/// DeepSeek multi-head latent attention (DeepseekV2Attention / DeepseekV3Attention):
///   q_lora_rank set:  q_a_proj H x q_lora, q_a_layernorm q_lora, q_b_proj q_lora x heads*(nope+rope)
///   q_lora_rank null: q_proj H x heads*(nope+rope)
///   kv_a_proj_with_mqa H x (kv_lora + rope), kv_a_layernorm kv_lora,
///   kv_b_proj kv_lora x heads*(nope + v), o_proj heads*v x H.
/// attention_bias adds biases to q_a_proj (or q_proj), kv_a_proj_with_mqa and o_proj.
/// DeepSeek-V3.2's sparse-attention indexer (index_n_heads, index_head_dim; checkpoint names
/// self_attn.indexer.*) adds wq_b q_lora x n*d, wk H x d, k_norm (LayerNorm) weight + bias d each,
/// weights_proj H x n.
u64 mla_params(Fields& fields, u64 hidden) {
  const u64 heads = fields.required("num_attention_heads");
  const u64 kv_lora = fields.required("kv_lora_rank");
  const u64 nope = fields.required("qk_nope_head_dim");
  const u64 rope = fields.required("qk_rope_head_dim");
  const u64 v_dim = fields.required("v_head_dim");
  const std::optional<u64> q_lora = fields.optional("q_lora_rank");
  const bool bias = fields.flag("attention_bias", false);
  const u64 q_head = checked_add(nope, rope, "qk head dim");
  Sum sum;
  if (q_lora) {
    if (*q_lora == 0) fields.fail("q_lora_rank", "must be at least 1 (or null for a plain q_proj)");
    sum.add(product({hidden, *q_lora}, "q_a_proj"), "MLA");
    sum.add(*q_lora, "MLA");
    sum.add(product({*q_lora, heads, q_head}, "q_b_proj"), "MLA");
    if (bias) sum.add(*q_lora, "MLA");
  } else {
    sum.add(product({hidden, heads, q_head}, "q_proj"), "MLA");
    if (bias) sum.add(product({heads, q_head}, "q_proj bias"), "MLA");
  }
  const u64 kv_a_width = checked_add(kv_lora, rope, "kv_a width");
  sum.add(product({hidden, kv_a_width}, "kv_a_proj_with_mqa"), "MLA");
  if (bias) sum.add(kv_a_width, "MLA");
  sum.add(kv_lora, "MLA");
  sum.add(product({kv_lora, heads, checked_add(nope, v_dim, "kv_b head")}, "kv_b_proj"), "MLA");
  sum.add(product({heads, v_dim, hidden}, "o_proj"), "MLA");
  if (bias) sum.add(hidden, "MLA");
  return sum.value;
}

/// DeepSeek-V3.2's sparse-attention indexer (DeepseekV32Indexer; GLM-5's GlmMoeDsaIndexer is the
/// same module): wq_b q_lora x n*d, wk H x d, k_norm (LayerNorm) weight + bias d each, weights_proj H x n.
u64 indexer_params(Fields& fields, u64 hidden) {
  const u64 index_heads = fields.required("index_n_heads");
  const u64 index_dim = fields.required("index_head_dim");
  const std::optional<u64> q_lora = fields.optional("q_lora_rank");
  if (!q_lora) fields.fail("q_lora_rank", "is needed by the indexer (index_n_heads is set)");
  Sum sum;
  sum.add(product({*q_lora, index_heads, index_dim}, "indexer wq_b"), "MLA indexer");
  sum.add(product({hidden, index_dim}, "indexer wk"), "MLA indexer");
  sum.add(product({2, index_dim}, "indexer k_norm"), "MLA indexer");
  sum.add(product({hidden, index_heads}, "indexer weights_proj"), "MLA indexer");
  return sum.value;
}

/// Which layers carry an indexer: every layer of deepseek_v32 (when index_n_heads is set); in
/// glm_moe_dsa the "full" entries of indexer_types ("shared" layers reuse the previous full layer's
/// top-k and have no indexer, GlmMoeDsaAttention), else GlmMoeDsaConfig's schedule:
/// full when max(i - index_skip_topk_offset + 1, 0) % index_topk_freq == 0 (defaults 2 and 1).
std::vector<bool> indexed_layers(Fields& fields, const std::string& model_type, u64 layers) {
  if (model_type == "deepseek_v32") return std::vector<bool>(layers, fields.has("index_n_heads"));
  if (model_type != "glm_moe_dsa") return std::vector<bool>(layers, false);
  std::vector<bool> indexed(layers, true);
  if (const std::vector<std::string> types = fields.string_list("indexer_types"); !types.empty()) {
    if (types.size() != layers) fields.fail("indexer_types", fmt::format("has {} entries but num_hidden_layers is {}", types.size(), layers));
    for (u64 i = 0; i < layers; ++i) {
      if (types[i] != "full" && types[i] != "shared") throw unsupported_architecture(fmt::format("indexer_types[{}]", i), types[i]);
      indexed[i] = types[i] == "full";
    }
    return indexed;
  }
  if (const std::optional<std::string> pattern = fields.optional_string("index_topk_pattern")) {
    if (pattern->size() != layers) fields.fail("index_topk_pattern", fmt::format("expected {} characters F or S", layers));
    for (u64 i = 0; i < layers; ++i) indexed[i] = (*pattern)[i] == 'F';
    return indexed;
  }
  const u64 freq = std::max<u64>(fields.optional_or("index_topk_freq", 1), 1);
  const u64 offset = fields.optional_or("index_skip_topk_offset", 2);
  for (u64 i = 0; i < layers; ++i) indexed[i] = ((i + 1 > offset ? i + 1 - offset : 0) % freq) == 0;
  return indexed;
}

/// Qwen3-Next Gated DeltaNet (Qwen3NextGatedDeltaNet; Qwen3.5 splits the same projections into
/// in_proj_qkv/in_proj_z/in_proj_b/in_proj_a): key_dim = nk*dk, value_dim = nv*dv;
///   in_proj_qkvz H x (2 key_dim + 2 value_dim), in_proj_ba H x 2 nv,
///   conv1d depthwise (2 key_dim + value_dim) x kernel without bias, dt_bias nv, A_log nv,
///   norm (gated RMSNorm) dv, out_proj value_dim x H.
u64 gated_deltanet_params(Fields& fields, u64 hidden) {
  const u64 key_heads = fields.required("linear_num_key_heads");
  const u64 value_heads = fields.required("linear_num_value_heads");
  const u64 key_dim = product({key_heads, fields.required("linear_key_head_dim")}, "linear key dim");
  const u64 value_head_dim = fields.required("linear_value_head_dim");
  const u64 value_dim = product({value_heads, value_head_dim}, "linear value dim");
  const u64 kernel = fields.required("linear_conv_kernel_dim");
  const u64 conv_dim = checked_add(product({2, key_dim}, "conv dim"), value_dim, "conv dim");
  Sum sum;
  sum.add(product({hidden, checked_add(product({2, key_dim}, "qkvz"), product({2, value_dim}, "qkvz"), "qkvz")}, "in_proj_qkvz"),
          "Gated DeltaNet");
  sum.add(product({hidden, 2, value_heads}, "in_proj_ba"), "Gated DeltaNet");
  sum.add(product({conv_dim, kernel}, "conv1d"), "Gated DeltaNet");
  sum.add(product({2, value_heads}, "dt_bias + A_log"), "Gated DeltaNet");
  sum.add(value_head_dim, "Gated DeltaNet");
  sum.add(product({value_dim, hidden}, "out_proj"), "Gated DeltaNet");
  return sum.value;
}

/// Nemotron-H Mamba2 mixer (NemotronHMamba2Mixer): d_inner = mamba_num_heads x mamba_head_dim,
/// conv_dim = d_inner + 2 n_groups ssm_state_size;
///   in_proj H x (d_inner + conv_dim + heads) (+ bias with use_bias), conv1d conv_dim x kernel
///   (+ conv_dim bias with use_conv_bias, default true), dt_bias, A_log, D (heads each),
///   norm (gated RMSNorm) d_inner, out_proj d_inner x H (+ H bias with use_bias).
u64 mamba2_params(Fields& fields, u64 hidden) {
  const u64 heads = fields.required("mamba_num_heads");
  const u64 d_inner = product({heads, fields.required("mamba_head_dim")}, "mamba d_inner");
  const u64 groups = fields.required("n_groups");
  const u64 state = fields.required("ssm_state_size");
  const u64 kernel = fields.required("conv_kernel");
  const bool bias = fields.flag("use_bias", false);
  const bool conv_bias = fields.flag("use_conv_bias", true);
  const u64 conv_dim = checked_add(d_inner, product({2, groups, state}, "mamba conv dim"), "mamba conv dim");
  const u64 in_width = checked_add(checked_add(d_inner, conv_dim, "in_proj width"), heads, "in_proj width");
  Sum sum;
  sum.add(product({hidden, in_width}, "mamba in_proj"), "Mamba2");
  if (bias) sum.add(in_width, "Mamba2");
  sum.add(product({conv_dim, kernel}, "mamba conv1d"), "Mamba2");
  if (conv_bias) sum.add(conv_dim, "Mamba2");
  sum.add(product({3, heads}, "dt_bias + A_log + D"), "Mamba2");
  sum.add(d_inner, "Mamba2");
  sum.add(product({d_inner, hidden}, "mamba out_proj"), "Mamba2");
  if (bias) sum.add(hidden, "Mamba2");
  return sum.value;
}

/// A gated MLP (gate_proj, up_proj, down_proj: 3 x H x I), or the two-matrix relu^2 MLP of
/// nemotron_h (up_proj, down_proj); `bias` adds each projection's bias.
u64 mlp_params(u64 hidden, u64 intermediate, bool gated, bool bias) {
  const u64 matrices = gated ? 3 : 2;
  u64 params = product({matrices, hidden, intermediate}, "MLP");
  if (bias) {
    const u64 biases = checked_add(product({matrices - 1, intermediate}, "MLP bias"), hidden, "MLP bias");
    params = checked_add(params, biases, "MLP");
  }
  return params;
}

/// One MoE block: the routed experts and what is always active beside them.
struct MoeShape {
  u64 experts = 0;            ///< routed experts in the layer
  u64 top_k = 0;              ///< routed experts per token
  u64 expert_matrices = 0;    ///< weight matrices of one expert
  u64 expert_biases = 0;      ///< biases of one expert (gpt-oss)
  u64 always_active = 0;      ///< router, shared experts, their gates, latent projections
};

/// The MoE block of each family:
///   mixtral     experts num_local_experts x 3 H intermediate_size, router H x E
///   qwen2/3_moe experts num_experts x 3 H moe_intermediate_size, router H x E;
///               shared_expert 3 H shared_expert_intermediate_size + shared_expert_gate H (when set)
///   deepseek    experts n_routed_experts x 3 H moe_intermediate_size, router E x H (+ E
///               e_score_correction_bias with topk_method noaux_tc / glm4_moe),
///               shared experts one MLP of n_shared_experts x moe_intermediate_size
///   gpt_oss     experts E x (H x 2I + 2I + I x H + H), router H x E + E
///   llama4      experts E x 3 H intermediate_size, router H x E, shared_expert 3 H intermediate_size
///   nemotron_h  experts E x 2 x H(or moe_latent_size) x moe_intermediate_size, router E x H + E,
///               shared 2 H moe_shared_expert_intermediate_size, latent projections when set
MoeShape read_moe(Fields& fields, Family family, const Architecture& arch, u64 hidden) {
  MoeShape moe;
  if (arch.mixtral_moe) {  // mixtral, gpt_oss
    moe.experts = fields.required("num_local_experts");
    moe.top_k = fields.has("num_experts_per_tok") ? fields.required("num_experts_per_tok") : fields.required("experts_per_token");
    const u64 intermediate = fields.required("intermediate_size");
    moe.expert_matrices = product({3, hidden, intermediate}, "expert");
    moe.always_active = product({hidden, moe.experts}, "router");
    if (family == Family::gpt_oss) {
      moe.expert_biases = checked_add(product({2, intermediate}, "expert bias"), hidden, "expert bias");
      moe.always_active = checked_add(moe.always_active, moe.experts, "router bias");
    }
    return moe;
  }
  switch (family) {
    case Family::qwen2:
    case Family::qwen3:
    case Family::qwen3_next: {
      moe.experts = fields.required("num_experts");
      moe.top_k = fields.required("num_experts_per_tok");
      moe.expert_matrices = product({3, hidden, fields.required("moe_intermediate_size")}, "expert");
      moe.always_active = product({hidden, moe.experts}, "router");
      const u64 shared = fields.optional_or("shared_expert_intermediate_size", 0);
      if (shared > 0) {
        moe.always_active = checked_add(moe.always_active, product({3, hidden, shared}, "shared expert"), "shared expert");
        moe.always_active = checked_add(moe.always_active, hidden, "shared_expert_gate");
      }
      return moe;
    }
    case Family::deepseek:
    case Family::glm4_moe: {
      moe.experts = fields.required("n_routed_experts");
      moe.top_k = fields.required("num_experts_per_tok");
      const u64 intermediate = fields.required("moe_intermediate_size");
      moe.expert_matrices = product({3, hidden, intermediate}, "expert");
      moe.always_active = product({hidden, moe.experts}, "router");
      const std::string method = fields.optional_string("topk_method").value_or(
          arch.model_type == "deepseek_v2" ? "greedy" : "noaux_tc");
      if (family == Family::glm4_moe || method == "noaux_tc")
        moe.always_active = checked_add(moe.always_active, moe.experts, "e_score_correction_bias");
      const u64 shared = fields.optional_or("n_shared_experts", 0);
      if (shared > 0)
        moe.always_active =
            checked_add(moe.always_active, product({3, hidden, shared, intermediate}, "shared experts"), "shared experts");
      return moe;
    }
    case Family::llama4: {
      moe.experts = fields.required("num_local_experts");
      moe.top_k = fields.required("num_experts_per_tok");
      const u64 intermediate = fields.required("intermediate_size");
      moe.expert_matrices = product({3, hidden, intermediate}, "expert");
      moe.always_active =
          checked_add(product({hidden, moe.experts}, "router"), product({3, hidden, intermediate}, "shared expert"), "MoE");
      return moe;
    }
    case Family::nemotron_h: {
      moe.experts = fields.required("n_routed_experts");
      moe.top_k = fields.required("num_experts_per_tok");
      const bool bias = fields.flag("mlp_bias", false);
      const std::optional<u64> latent = fields.optional("moe_latent_size");
      const u64 expert_width = latent.value_or(hidden);
      moe.expert_matrices = product({2, expert_width, fields.required("moe_intermediate_size")}, "expert");
      Sum always;
      always.add(product({hidden, moe.experts}, "router"), "MoE");
      always.add(moe.experts, "MoE");  // e_score_correction_bias
      if (const u64 shared = fields.optional_or("moe_shared_expert_intermediate_size", 0); shared > 0)
        always.add(mlp_params(hidden, shared, false, bias), "MoE");
      if (latent) {
        always.add(product({2, hidden, *latent}, "latent projections"), "MoE");
        if (bias) always.add(checked_add(*latent, hidden, "latent bias"), "MoE");
      }
      moe.always_active = always.value;
      return moe;
    }
    default: break;
  }
  throw unsupported_architecture("model_type", std::string(arch.model_type) + " with experts");
}

/// Which layers are MoE, by each family's rule.
bool is_moe_layer(Fields& fields, Family family, const Architecture& arch, u64 index) {
  if (arch.mixtral_moe) return true;
  switch (family) {
    case Family::qwen2:
    case Family::qwen3:
    case Family::qwen3_next: {
      // Qwen2MoeDecoderLayer: sparse when not in mlp_only_layers, num_experts > 0 and
      // (i + 1) % decoder_sparse_step == 0.
      if (fields.optional_or("num_experts", 0) == 0) return false;
      if (fields.index_list("mlp_only_layers").count(index)) return false;
      const u64 step = fields.optional_or("decoder_sparse_step", 1);
      if (step == 0) fields.fail("decoder_sparse_step", "must be at least 1");
      return (index + 1) % step == 0;
    }
    case Family::deepseek:
    case Family::glm4_moe: {
      // Newer configs list each layer's MLP ("dense" / "sparse") in mlp_layer_types.
      if (const std::vector<std::string> types = fields.string_list("mlp_layer_types"); !types.empty()) {
        if (index >= types.size()) fields.fail("mlp_layer_types", "has fewer entries than num_hidden_layers");
        if (types[index] == "sparse") return true;
        if (types[index] == "dense") return false;
        throw unsupported_architecture(fmt::format("mlp_layer_types[{}]", index), types[index]);
      }
      // DeepseekV3DecoderLayer: MoE when n_routed_experts is set, i >= first_k_dense_replace and
      // i % moe_layer_freq == 0. Glm4MoeDecoderLayer: MoE from first_k_dense_replace (default 1) on.
      if (!fields.has("n_routed_experts")) return false;
      const bool glm = family == Family::glm4_moe || arch.model_type == "glm4_moe_lite";
      const u64 freq = glm ? 1 : fields.optional_or("moe_layer_freq", 1);
      if (freq == 0) fields.fail("moe_layer_freq", "must be at least 1");
      return index >= fields.optional_or("first_k_dense_replace", glm ? 1 : 0) && index % freq == 0;
    }
    case Family::llama4: {
      // Llama4TextConfig: moe_layers defaults to every interleave_moe_layer_step-th layer,
      // starting at step - 1.
      if (fields.has("moe_layers")) return fields.index_list("moe_layers").count(index) > 0;
      const u64 step = fields.optional_or("interleave_moe_layer_step", 1);
      if (step == 0) return false;
      return (index + 1) % step == 0;
    }
    default: return false;
  }
}

/// The mixer and FFN of every layer.
std::vector<Layer> read_layers(Fields& fields, Family family, const Architecture& arch, u64 layers) {
  std::vector<Layer> result(layers);
  if (family == Family::nemotron_h) {
    // hybrid_override_pattern: one character per block, M Mamba2, * attention, - MLP, E MoE.
    // Configs saved by newer transformers may list layers_block_type instead.
    if (!fields.has("hybrid_override_pattern") && fields.has("layers_block_type")) {
      const std::vector<std::string> types = fields.string_list("layers_block_type");
      if (types.size() != layers)
        fields.fail("layers_block_type", fmt::format("has {} entries but num_hidden_layers is {}", types.size(), layers));
      for (u64 i = 0; i < layers; ++i) {
        if (types[i] == "mamba") result[i] = {Mixer::mamba2, Ffn::none};
        else if (types[i] == "attention") result[i] = {Mixer::attention, Ffn::none};
        else if (types[i] == "mlp") result[i] = {Mixer::none, Ffn::dense};
        else if (types[i] == "moe") result[i] = {Mixer::none, Ffn::moe};
        else throw unsupported_architecture(fmt::format("layers_block_type[{}]", i), types[i]);
      }
      return result;
    }
    const std::string pattern = fields.string("hybrid_override_pattern");
    if (pattern.size() != layers)
      fields.fail("hybrid_override_pattern", fmt::format("has {} blocks but num_hidden_layers is {}", pattern.size(), layers));
    for (u64 i = 0; i < layers; ++i) {
      switch (pattern[i]) {
        case 'M': result[i] = {Mixer::mamba2, Ffn::none}; break;
        case '*': result[i] = {Mixer::attention, Ffn::none}; break;
        case '-': result[i] = {Mixer::none, Ffn::dense}; break;
        case 'E': result[i] = {Mixer::none, Ffn::moe}; break;
        default: throw unsupported_architecture("hybrid_override_pattern", std::string(1, pattern[i]));
      }
    }
    return result;
  }
  std::vector<std::string> types;
  if (family == Family::qwen3_next) {
    types = fields.string_list("layer_types");
    if (types.empty()) {
      // Qwen3NextConfig: every full_attention_interval-th layer is full attention.
      const u64 interval = fields.required("full_attention_interval");
      for (u64 i = 0; i < layers; ++i) types.push_back((i + 1) % interval == 0 ? "full_attention" : "linear_attention");
    }
    if (types.size() != layers)
      fields.fail("layer_types", fmt::format("has {} entries but num_hidden_layers is {}", types.size(), layers));
  }
  const std::vector<bool> indexed = indexed_layers(fields, std::string(arch.model_type), layers);
  for (u64 i = 0; i < layers; ++i) {
    Layer& layer = result[i];
    if (family == Family::deepseek) layer.mixer = Mixer::mla;
    layer.indexer = indexed[i];
    if (!types.empty()) {
      if (types[i] == "linear_attention") layer.mixer = Mixer::gated_deltanet;
      else if (types[i] == "full_attention") layer.mixer = Mixer::attention;
      else throw unsupported_architecture(fmt::format("layer_types[{}]", i), types[i]);
    }
    layer.ffn = is_moe_layer(fields, family, arch, i) ? Ffn::moe : Ffn::dense;
  }
  return result;
}

/// Norm weights per layer besides the final norm: 4 in Gemma 2/3 (input, post-attention,
/// pre- and post-feedforward), 1 per nemotron_h block, else 2.
u64 norms_per_layer(Family family) {
  switch (family) {
    case Family::gemma2:
    case Family::gemma3: return 4;
    case Family::nemotron_h: return 1;
    default: return 2;
  }
}

/// The intermediate size of dense (non-MoE) layers.
u64 dense_intermediate(Fields& fields, Family family) {
  if (family == Family::llama4) return fields.required("intermediate_size_mlp");
  return fields.required("intermediate_size");
}


/// One layer of the families counted layer by layer: its parameters, of them its routed-expert
/// weight matrices, and the routed-expert parameters a token does not use.
struct LayerParams {
  u64 params = 0;
  u64 expert_matrices = 0;
  u64 inactive = 0;
};

/// What count_layered adds up: each layer, the model-level tensors besides the input embedding,
/// output head and final norm (per-layer embedding tables, AltUp projections), and the MoE shape
/// for the notes.
struct Layered {
  std::vector<LayerParams> layers;
  u64 model_extra = 0;
  u64 experts = 0;
  u64 top_k = 0;
};

/// q, k, v and o projections of grouped-query attention with K width `k_dim` and V width `v_dim`
/// (o_proj reads heads x v_dim); `k_and_v` false drops k and v (Gemma 4's KV-shared layers),
/// `separate_v` false drops v alone (Gemma 4's K=V global layers).
u64 gqa_params(u64 hidden, u64 heads, u64 kv_heads, u64 k_dim, u64 v_dim, bool k_and_v = true, bool separate_v = true) {
  Sum sum;
  sum.add(product({hidden, heads, k_dim}, "q_proj"), "attention");
  if (k_and_v) {
    sum.add(product({hidden, kv_heads, k_dim}, "k_proj"), "attention");
    if (separate_v) sum.add(product({hidden, kv_heads, v_dim}, "v_proj"), "attention");
  }
  sum.add(product({heads, v_dim, hidden}, "o_proj"), "attention");
  return sum.value;
}

/// A routed-expert block: `experts` gated MLPs of width `intermediate` (3 matrices each) on
/// `width`-wide inputs, of which `top_k` run per token; `always` is what every token uses beside
/// them (router, biases, shared experts).
LayerParams moe_layer(u64 experts, u64 top_k, u64 width, u64 intermediate, u64 always) {
  const u64 one = product({3, width, intermediate}, "expert");
  LayerParams layer;
  layer.expert_matrices = product({experts, one}, "experts");
  layer.params = checked_add(layer.expert_matrices, always, "MoE block");
  layer.inactive = product({experts - top_k, one}, "inactive experts");
  return layer;
}

/// Gemma 4 (Gemma4TextDecoderLayer, transformers modeling_gemma4.py): attention q_proj, o_proj,
/// q_norm; k_proj, v_proj (none with K=V), k_norm only on layers that own their KV (the last
/// num_kv_shared_layers read an earlier layer's); global (full_attention) layers use
/// global_head_dim and, with attention_k_eq_v, num_global_key_value_heads. MLP 3 x H x I, doubled
/// in the KV-shared layers with use_double_wide_mlp; 4 norms; per-layer input gate, projection and
/// norm (hidden_size_per_layer_input); with enable_moe_block a parallel MoE block: router proj
/// H x E, scale H, per_expert_scale E, experts E x 3 x H x moe_intermediate_size, 3 norms. Model:
/// embed_tokens_per_layer V_ple x L P, per_layer_model_projection H x L P, per_layer_projection_norm P.
Layered gemma4_layers(Fields& fields, u64 hidden, u64 layers) {
  const u64 heads = fields.required("num_attention_heads");
  const u64 kv_heads = fields.required("num_key_value_heads");
  const u64 head_dim = fields.optional_or("head_dim", 256);
  const u64 global_head_dim = fields.optional_or("global_head_dim", head_dim);
  const bool k_eq_v = fields.flag("attention_k_eq_v", false);
  const u64 global_kv_heads = k_eq_v ? fields.optional_or("num_global_key_value_heads", kv_heads) : kv_heads;
  const std::vector<std::string> types = fields.string_list("layer_types");
  if (types.size() != layers) fields.fail("layer_types", fmt::format("has {} entries but num_hidden_layers is {}", types.size(), layers));
  const u64 shared = fields.optional_or("num_kv_shared_layers", 0);
  if (shared > layers) fields.fail("num_kv_shared_layers", "is larger than num_hidden_layers");
  const u64 intermediate = fields.required("intermediate_size");
  const bool double_wide = fields.flag("use_double_wide_mlp", false);
  const u64 ple = fields.optional_or("hidden_size_per_layer_input", 0);
  const bool moe = fields.flag("enable_moe_block", false);
  const bool bias = fields.flag("attention_bias", false);
  if (bias) throw unsupported_architecture("attention_bias", "true (gemma4_text)");

  Layered out;
  if (moe) {
    out.experts = fields.required("num_experts");
    out.top_k = fields.required("top_k_experts");
  }
  for (u64 i = 0; i < layers; ++i) {
    const bool full = types[i] == "full_attention";
    if (!full && types[i] != "sliding_attention") throw unsupported_architecture(fmt::format("layer_types[{}]", i), types[i]);
    const bool is_shared = i >= layers - shared;
    const u64 dim = full ? global_head_dim : head_dim;
    const u64 kv = full ? global_kv_heads : kv_heads;
    Sum sum;
    sum.add(gqa_params(hidden, heads, kv, dim, dim, !is_shared, !(full && k_eq_v)), "layer");
    sum.add(is_shared ? dim : 2 * dim, "layer");  // q_norm, k_norm (v_norm has no weight)
    const u64 width = intermediate * (double_wide && is_shared && layers - shared > 0 ? 2 : 1);
    sum.add(mlp_params(hidden, width, true, false), "layer");
    sum.add(product({4, hidden}, "norms"), "layer");
    if (ple) sum.add(checked_add(product({2, hidden, ple}, "per-layer input"), hidden, "per-layer input"), "layer");
    LayerParams layer;
    if (moe) {
      const u64 always = checked_add(product({hidden, out.experts}, "router"), hidden + out.experts + 3 * hidden, "router");
      layer = moe_layer(out.experts, out.top_k, hidden, fields.required("moe_intermediate_size"), always);
    }
    layer.params = checked_add(layer.params, sum.value, "layer");
    out.layers.push_back(layer);
  }
  if (ple) {
    const u64 vocab_ple = fields.required("vocab_size_per_layer_input");
    const u64 packed = product({layers, ple}, "per-layer embedding width");
    out.model_extra = checked_add(product({vocab_ple, packed}, "embed_tokens_per_layer"),
                                  checked_add(product({hidden, packed}, "per_layer_model_projection"), ple, "PLE"), "PLE");
  }
  return out;
}

/// Gemma 3n (Gemma3nTextDecoderLayer, transformers modeling_gemma3n.py): q, k, v, o projections
/// and q/k norms in every layer (KV-shared layers keep their weights); MLP 3 x H x I (a list gives
/// each layer its own); 4 norms; AltUp correct_output_scale H, correction_coefs n x n,
/// prediction_coefs n x n^2, modality_router H x n, router_norm H; LAuReL H x r + r x H + H;
/// per-layer input gate, projection and norm. Model: embed_tokens_per_layer, per_layer_model_projection,
/// per_layer_projection_norm, and 2 (n - 1) AltUp projections H x H.
Layered gemma3n_layers(Fields& fields, u64 hidden, u64 layers) {
  const u64 heads = fields.required("num_attention_heads");
  const u64 kv_heads = fields.required("num_key_value_heads");
  const u64 head_dim = fields.optional_or("head_dim", 256);
  const nlohmann::json* sizes = fields.raw("intermediate_size");
  const std::vector<u64> intermediate = sizes && sizes->is_array()
                                            ? fields.per_layer("intermediate_size", layers)
                                            : std::vector<u64>(layers, fields.required("intermediate_size"));
  const u64 ple = fields.optional_or("hidden_size_per_layer_input", 256);
  const u64 altup = fields.optional_or("altup_num_inputs", 4);
  const u64 laurel = fields.optional_or("laurel_rank", 64);
  if (altup == 0) fields.fail("altup_num_inputs", "must be at least 1");
  if (fields.flag("attention_bias", false)) throw unsupported_architecture("attention_bias", "true (gemma3n_text)");
  Layered out;
  for (u64 i = 0; i < layers; ++i) {
    Sum sum;
    sum.add(gqa_params(hidden, heads, kv_heads, head_dim, head_dim), "layer");
    sum.add(2 * head_dim, "layer");
    sum.add(mlp_params(hidden, intermediate[i], true, false), "layer");
    sum.add(product({4, hidden}, "norms"), "layer");
    sum.add(checked_add(product({2, hidden}, "AltUp"), altup * altup + altup * altup * altup + hidden * altup, "AltUp"), "layer");
    sum.add(checked_add(product({2, hidden, laurel}, "LAuReL"), hidden, "LAuReL"), "layer");
    sum.add(checked_add(product({2, hidden, ple}, "per-layer input"), hidden, "per-layer input"), "layer");
    out.layers.push_back({sum.value, 0, 0});
  }
  const u64 packed = product({layers, ple}, "per-layer embedding width");
  Sum extra;
  extra.add(product({fields.optional_or("vocab_size_per_layer_input", 262'144), packed}, "embed_tokens_per_layer"), "PLE");
  extra.add(product({hidden, packed}, "per_layer_model_projection"), "PLE");
  extra.add(ple, "PLE");
  extra.add(product({2, altup - 1, hidden, hidden}, "AltUp projections"), "AltUp");
  out.model_extra = extra.value;
  return out;
}

/// LFM2 (vLLM lfm2.py / lfm2_moe.py; transformers Lfm2): attention layers qkv H x (q + 2 kv) x d,
/// out_proj, q/k layernorms d each, d = hidden / heads; short-conv layers in_proj H x 3H, depthwise
/// conv H x conv_L_cache, out_proj H x H (+ biases with conv_bias); 2 norms. LFM2 MLP: width
/// intermediate_size (block_ff_dim when given), with block_auto_adjust_ff_dim 2/3 of it x
/// block_ffn_dim_multiplier rounded up to block_multiple_of. LFM2-MoE: the first num_dense_layers
/// dense (3 x H x intermediate_size), the others a gate H x E, expert bias E (use_expert_bias),
/// E experts of 3 x H x moe_intermediate_size.
Layered lfm2_layers(Fields& fields, const std::string& model_type, u64 hidden, u64 layers) {
  const u64 heads = fields.required("num_attention_heads");
  const u64 kv_heads = fields.required("num_key_value_heads");
  if (hidden % heads != 0) fields.fail("num_attention_heads", "does not divide hidden_size");
  const u64 head_dim = hidden / heads;
  const u64 kernel = fields.required("conv_L_cache");
  const bool conv_bias = fields.flag("conv_bias", false);
  std::vector<bool> attention(layers, false);
  if (const std::vector<std::string> types = fields.string_list("layer_types"); !types.empty()) {
    if (types.size() != layers) fields.fail("layer_types", fmt::format("has {} entries but num_hidden_layers is {}", types.size(), layers));
    for (u64 i = 0; i < layers; ++i) {
      if (types[i] != "conv" && types[i] != "full_attention") throw unsupported_architecture(fmt::format("layer_types[{}]", i), types[i]);
      attention[i] = types[i] == "full_attention";
    }
  } else {
    for (const u64 i : fields.index_list("full_attn_idxs")) {
      if (i >= layers) fields.fail("full_attn_idxs", fmt::format("layer {} is past the last layer", i));
      attention[i] = true;
    }
  }
  const bool moe = model_type == "lfm2_moe";
  u64 dense_width = 0;
  if (moe) {
    dense_width = fields.required("intermediate_size");
  } else {
    dense_width = fields.has("block_ff_dim") ? fields.required("block_ff_dim") : fields.required("intermediate_size");
    if (fields.flag("block_auto_adjust_ff_dim", true)) {
      dense_width = 2 * dense_width / 3;
      const nlohmann::json* multiplier = fields.raw("block_ffn_dim_multiplier");
      const double factor = multiplier && multiplier->is_number() ? multiplier->get<double>() : 1.0;
      if (multiplier == nullptr || multiplier->is_number()) {
        dense_width = static_cast<u64>(factor * static_cast<double>(dense_width));
        const u64 multiple = fields.optional_or("block_multiple_of", 256);
        if (multiple == 0) fields.fail("block_multiple_of", "must be at least 1");
        dense_width = (dense_width + multiple - 1) / multiple * multiple;
      }
    }
  }
  const u64 dense_layers = moe ? fields.optional_or("num_dense_layers", 2) : layers;
  Layered out;
  u64 moe_width = 0;
  if (moe) {
    out.experts = fields.required("num_experts");
    out.top_k = fields.required("num_experts_per_tok");
    moe_width = fields.required("moe_intermediate_size");
  }
  const u64 expert_bias = moe && fields.flag("use_expert_bias", true) ? out.experts : 0;
  for (u64 i = 0; i < layers; ++i) {
    Sum sum;
    if (attention[i]) {
      sum.add(gqa_params(hidden, heads, kv_heads, head_dim, head_dim), "layer");
      sum.add(2 * head_dim, "layer");
    } else {
      sum.add(product({4, hidden, hidden}, "short conv projections"), "layer");
      sum.add(product({hidden, kernel}, "short conv"), "layer");
      if (conv_bias) sum.add(product({5, hidden}, "short conv bias"), "layer");
    }
    sum.add(product({2, hidden}, "norms"), "layer");
    LayerParams layer;
    if (i < dense_layers) sum.add(mlp_params(hidden, dense_width, true, false), "layer");
    else layer = moe_layer(out.experts, out.top_k, hidden, moe_width, checked_add(product({hidden, out.experts}, "router"), expert_bias, "router"));
    layer.params = checked_add(layer.params, sum.value, "layer");
    out.layers.push_back(layer);
  }
  return out;
}

/// MiniMax-M2 (vLLM minimax_m2.py): qkv H x (q + 2 kv) x d (+ bias with attention_bias), o_proj,
/// q_norm over heads x d and k_norm over kv x d (use_qk_norm); every layer a MoE of
/// num_local_experts x 3 x H x intermediate_size, gate H x E, e_score_correction_bias E
/// (use_routing_bias); a shared expert of shared_intermediate_size when non-zero; 2 norms.
Layered minimax_m2_layers(Fields& fields, u64 hidden, u64 layers) {
  const u64 heads = fields.required("num_attention_heads");
  const u64 kv_heads = fields.required("num_key_value_heads");
  const u64 head_dim = fields.optional_or("head_dim", hidden / heads);
  const bool bias = fields.flag("attention_bias", false);
  if (fields.optional_or("shared_intermediate_size", 0) != 0)
    throw unsupported_architecture("shared_intermediate_size", std::to_string(fields.optional_or("shared_intermediate_size", 0)));
  Layered out;
  out.experts = fields.required("num_local_experts");
  out.top_k = fields.required("num_experts_per_tok");
  Sum attention;
  attention.add(gqa_params(hidden, heads, kv_heads, head_dim, head_dim), "attention");
  if (bias) attention.add(product({heads + 2 * kv_heads, head_dim}, "qkv bias"), "attention");
  if (fields.flag("use_qk_norm", true)) attention.add(product({heads + kv_heads, head_dim}, "q/k norm"), "attention");
  attention.add(product({2, hidden}, "norms"), "attention");
  const u64 always = checked_add(product({hidden, out.experts}, "router"),
                                 fields.flag("use_routing_bias", false) ? out.experts : 0, "router");
  for (u64 i = 0; i < layers; ++i) {
    LayerParams layer = moe_layer(out.experts, out.top_k, hidden, fields.required("intermediate_size"), always);
    layer.params = checked_add(layer.params, attention.value, "layer");
    out.layers.push_back(layer);
  }
  return out;
}

/// MiMo-V2 (vLLM mimo_v2_flash.py): full layers (hybrid_layer_pattern 0) qkv H x (heads x d +
/// kv x d + kv x v) with o_proj heads x v x H; sliding layers (1) the same with swa_num_attention_heads,
/// swa_num_key_value_heads, swa_head_dim, swa_v_head_dim and a per-head attention sink
/// (add_swa_attention_sink_bias); MoE layers (moe_layer_freq 1) gate H x E + e_score_correction_bias E
/// + E x 3 x H x moe_intermediate_size, the others a dense MLP 3 x H x intermediate_size; 2 norms.
Layered mimo_layers(Fields& fields, u64 hidden, u64 layers) {
  const std::vector<u64> pattern = fields.per_layer("hybrid_layer_pattern", layers);
  const std::vector<u64> moe = fields.per_layer("moe_layer_freq", layers);
  const bool bias = fields.flag("attention_bias", false);
  if (bias) throw unsupported_architecture("attention_bias", "true (mimo_v2)");
  const u64 heads = fields.required("num_attention_heads");
  const u64 kv_heads = fields.required("num_key_value_heads");
  const u64 head_dim = fields.required("head_dim");
  const u64 v_dim = fields.optional_or("v_head_dim", head_dim);
  const u64 swa_heads = fields.optional_or("swa_num_attention_heads", heads);
  const u64 swa_kv = fields.optional_or("swa_num_key_value_heads", kv_heads);
  const u64 swa_dim = fields.optional_or("swa_head_dim", head_dim);
  const u64 swa_v = fields.optional_or("swa_v_head_dim", swa_dim);
  const bool sinks = fields.flag("add_swa_attention_sink_bias", false);
  const bool full_sinks = fields.flag("add_full_attention_sink_bias", false);
  Layered out;
  out.experts = fields.required("n_routed_experts");
  out.top_k = fields.required("num_experts_per_tok");
  if (fields.optional_or("n_shared_experts", 0) != 0)
    throw unsupported_architecture("n_shared_experts", std::to_string(fields.optional_or("n_shared_experts", 0)));
  for (u64 i = 0; i < layers; ++i) {
    if (pattern[i] > 1) throw unsupported_architecture(fmt::format("hybrid_layer_pattern[{}]", i), std::to_string(pattern[i]));
    const bool swa = pattern[i] == 1;
    Sum sum;
    sum.add(swa ? gqa_params(hidden, swa_heads, swa_kv, swa_dim, swa_v) : gqa_params(hidden, heads, kv_heads, head_dim, v_dim), "layer");
    if (swa ? sinks : full_sinks) sum.add(swa ? swa_heads : heads, "layer");
    sum.add(product({2, hidden}, "norms"), "layer");
    LayerParams layer;
    if (moe[i]) {
      layer = moe_layer(out.experts, out.top_k, hidden, fields.required("moe_intermediate_size"),
                        checked_add(product({hidden, out.experts}, "router"), out.experts, "router"));
    } else {
      sum.add(mlp_params(hidden, fields.required("intermediate_size"), true, false), "layer");
    }
    layer.params = checked_add(layer.params, sum.value, "layer");
    out.layers.push_back(layer);
  }
  return out;
}

/// Kimi Linear (vLLM kimi_linear.py, layers/kda.py): MLA layers as DeepSeek's (mla_params); Kimi
/// Delta Attention layers q, k, v projections H x P (P = num_heads x head_dim), f_a H x d, f_b
/// d x P, dt_bias P, b_proj H x heads, q/k/v depthwise convs P x kernel each, A_log heads, g_a H x d,
/// g_b d x P, o_norm d, o_proj P x H; MoE from first_k_dense_replace (every moe_layer_freq-th):
/// gate H x E, e_score_correction_bias E, experts E x 3 x H x moe_intermediate_size, shared
/// experts one MLP of num_shared_experts x moe_intermediate_size; dense MLP 3 x H x intermediate_size.
/// Kimi K3's additions, as llama.cpp's converter (conversion/kimi_k3.py) maps its tensors:
/// use_full_rank_gate replaces g_a/g_b by one P x H gate (f_a/f_b stay low-rank);
/// mla_use_output_gate adds a heads x v_head_dim by H output gate to each MLA layer;
/// routed_expert_hidden_size R runs the routed experts in a latent space: down H x R and up R x H
/// projections (+ an R norm with latent_moe_use_norm) per MoE layer, experts E x 3 x R x I;
/// attn_res_block_size (Attention Residuals) adds 4 vectors of H per layer (attention and MLP
/// residual norm and projection) and 2 beside the layers.
Layered kimi_linear_layers(Fields& fields, u64 hidden, u64 layers) {
  const nlohmann::json* config = fields.raw("linear_attn_config");
  if (!config || !config->is_object()) fields.fail("linear_attn_config", "is missing");
  const auto number = [&](const char* key) {
    const auto it = config->find(key);
    if (it == config->end()) fields.fail(fmt::format("linear_attn_config.{}", key), "is missing");
    return json_to_uint(*it, fmt::format("config.json: field 'linear_attn_config.{}'", key));
  };
  const auto full_rank = config->find("use_full_rank_gate");
  const bool full_rank_gate = full_rank != config->end() && full_rank->is_boolean() && full_rank->get<bool>();
  const u64 heads = number("num_heads");
  const u64 dim = number("head_dim");
  const u64 kernel = number("short_conv_kernel_size");
  std::vector<bool> kda(layers, false);
  const auto kda_list = config->find("kda_layers");
  if (kda_list == config->end() || !kda_list->is_array()) fields.fail("linear_attn_config.kda_layers", "is missing");
  for (const nlohmann::json& item : *kda_list) {
    const u64 one_based = json_to_uint(item, "config.json: field 'linear_attn_config.kda_layers'");
    if (one_based == 0 || one_based > layers) fields.fail("linear_attn_config.kda_layers", "lists a layer outside 1..num_hidden_layers");
    kda[one_based - 1] = true;
  }
  const u64 projection = product({heads, dim}, "KDA projection");
  Sum kda_sum;
  kda_sum.add(product({4, hidden, projection}, "KDA q/k/v/o"), "KDA");
  kda_sum.add(product({hidden, dim}, "KDA f_a"), "KDA");
  kda_sum.add(product({dim, projection}, "KDA f_b"), "KDA");
  if (full_rank_gate) {
    kda_sum.add(product({projection, hidden}, "KDA full-rank gate"), "KDA");
  } else {
    kda_sum.add(product({hidden, dim}, "KDA g_a"), "KDA");
    kda_sum.add(product({dim, projection}, "KDA g_b"), "KDA");
  }
  kda_sum.add(projection, "KDA");  // dt_bias
  kda_sum.add(product({hidden, heads}, "KDA b_proj"), "KDA");
  kda_sum.add(product({3, projection, kernel}, "KDA convs"), "KDA");
  kda_sum.add(heads + dim, "KDA");  // A_log, o_norm
  u64 mla = mla_params(fields, hidden);
  if (fields.flag("mla_use_output_gate", false))
    mla = checked_add(mla, product({fields.required("num_attention_heads"), fields.required("v_head_dim"), hidden}, "MLA output gate"),
                      "MLA");
  const u64 residual_vectors = fields.optional_or("attn_res_block_size", 0) > 0 ? product({4, hidden}, "attention residuals") : 0;

  Layered out;
  out.experts = fields.required("num_experts");
  out.top_k = fields.required("num_experts_per_token");
  if (residual_vectors) out.model_extra = product({2, hidden}, "attention residuals");
  const u64 moe_width = fields.required("moe_intermediate_size");
  const u64 latent = fields.optional_or("routed_expert_hidden_size", 0);
  const u64 expert_width = latent > 0 ? latent : hidden;
  const u64 latent_params = latent > 0 ? checked_add(product({2, hidden, latent}, "latent projections"),
                                                     fields.flag("latent_moe_use_norm", false) ? latent : 0, "latent norm")
                                       : 0;
  const u64 shared = fields.optional_or("num_shared_experts", 0);
  const u64 first_moe = fields.optional_or("first_k_dense_replace", 0);
  const u64 freq = fields.optional_or("moe_layer_freq", 1);
  if (freq == 0) fields.fail("moe_layer_freq", "must be at least 1");
  Sum always;
  always.add(checked_add(product({hidden, out.experts}, "router"), out.experts, "router"), "MoE");
  if (shared) always.add(mlp_params(hidden, product({shared, moe_width}, "shared experts"), true, false), "MoE");
  always.add(latent_params, "MoE");
  for (u64 i = 0; i < layers; ++i) {
    Sum sum;
    sum.add(kda[i] ? kda_sum.value : mla, "layer");
    sum.add(product({2, hidden}, "norms"), "layer");
    sum.add(residual_vectors, "layer");
    LayerParams layer;
    if (i >= first_moe && i % freq == 0) layer = moe_layer(out.experts, out.top_k, expert_width, moe_width, always.value);
    else sum.add(mlp_params(hidden, fields.required("intermediate_size"), true, false), "layer");
    layer.params = checked_add(layer.params, sum.value, "layer");
    out.layers.push_back(layer);
  }
  return out;
}

/// Granite 4.0 hybrid (transformers modeling_granitemoehybrid.py): input and post-attention norms;
/// the mixer of a "mamba" layer is a Mamba2 layer with d_inner = mamba_expand x H and conv_dim =
/// d_inner + 2 mamba_n_groups mamba_d_state: in_proj H x (d_inner + conv_dim + heads) (+ bias with
/// mamba_proj_bias), depthwise conv1d conv_dim x mamba_d_conv (+ bias with mamba_conv_bias),
/// dt_bias, A_log, D (heads each), gated norm d_inner, out_proj d_inner x H (+ bias); an
/// "attention" layer has q, k, v, o of head dim H / heads (+ biases with attention_bias). Every
/// layer's FFN: with num_local_experts a router H x E (no bias), input_linear E x 2I x H and
/// output_linear E x H x I; and always shared_mlp 3 x H x shared_intermediate_size.
Layered granite_hybrid_layers(Fields& fields, u64 hidden, u64 layers) {
  const std::vector<std::string> types = fields.string_list("layer_types");
  if (types.size() != layers) fields.fail("layer_types", fmt::format("has {} entries but num_hidden_layers is {}", types.size(), layers));
  const u64 heads = fields.required("num_attention_heads");
  const u64 kv_heads = fields.optional_or("num_key_value_heads", heads);
  if (hidden % heads != 0) fields.fail("num_attention_heads", "does not divide hidden_size");
  const bool attention_bias = fields.flag("attention_bias", false);

  const u64 d_inner = product({fields.required("mamba_expand"), hidden}, "mamba d_inner");
  const u64 mamba_heads = fields.required("mamba_n_heads");
  if (const nlohmann::json* d_head = fields.raw("mamba_d_head"); d_head && d_head->is_number_unsigned() &&
                                                                  d_head->get<u64>() * mamba_heads != d_inner)
    fields.fail("mamba_d_head", "times mamba_n_heads must equal mamba_expand x hidden_size");
  const u64 conv_dim = checked_add(
      d_inner, product({2, fields.optional_or("mamba_n_groups", 1), fields.required("mamba_d_state")}, "mamba conv dim"),
      "mamba conv dim");
  const u64 in_width = checked_add(checked_add(d_inner, conv_dim, "in_proj width"), mamba_heads, "in_proj width");
  const bool proj_bias = fields.flag("mamba_proj_bias", false);
  Sum mamba;
  mamba.add(product({hidden, in_width}, "mamba in_proj"), "Mamba2");
  if (proj_bias) mamba.add(checked_add(in_width, hidden, "mamba biases"), "Mamba2");
  mamba.add(product({conv_dim, fields.required("mamba_d_conv")}, "mamba conv1d"), "Mamba2");
  if (fields.flag("mamba_conv_bias", true)) mamba.add(conv_dim, "Mamba2");
  mamba.add(product({3, mamba_heads}, "dt_bias + A_log + D"), "Mamba2");
  mamba.add(d_inner, "Mamba2");
  mamba.add(product({d_inner, hidden}, "mamba out_proj"), "Mamba2");

  const u64 head_dim = hidden / heads;
  u64 attention = gqa_params(hidden, heads, kv_heads, head_dim, head_dim);
  if (attention_bias) attention = checked_add(attention, product({2 * heads + 2 * kv_heads, head_dim}, "attention bias"), "attention");

  Layered out;
  out.experts = fields.optional_or("num_local_experts", 0);
  const u64 shared = product({3, hidden, fields.optional_or("shared_intermediate_size", 0)}, "shared_mlp");
  if (out.experts > 0) out.top_k = fields.required("num_experts_per_tok");
  for (u64 i = 0; i < layers; ++i) {
    Sum sum;
    if (types[i] == "mamba") sum.add(mamba.value, "layer");
    else if (types[i] == "attention") sum.add(attention, "layer");
    else throw unsupported_architecture(fmt::format("layer_types[{}]", i), types[i]);
    sum.add(product({2, hidden}, "norms"), "layer");
    LayerParams layer;
    if (out.experts > 0)
      layer = moe_layer(out.experts, out.top_k, hidden, fields.required("intermediate_size"),
                        checked_add(product({hidden, out.experts}, "router"), shared, "shared_mlp"));
    else sum.add(shared, "layer");
    layer.params = checked_add(layer.params, sum.value, "layer");
    out.layers.push_back(layer);
  }
  return out;
}

/// The layer-by-layer families' layers.
Layered count_layered(Fields& fields, Family family, const std::string& model_type, u64 hidden, u64 layers) {
  switch (family) {
    case Family::gemma4: return gemma4_layers(fields, hidden, layers);
    case Family::gemma3n: return gemma3n_layers(fields, hidden, layers);
    case Family::lfm2: return lfm2_layers(fields, model_type, hidden, layers);
    case Family::minimax_m2: return minimax_m2_layers(fields, hidden, layers);
    case Family::mimo_v2: return mimo_layers(fields, hidden, layers);
    case Family::kimi_linear: return kimi_linear_layers(fields, hidden, layers);
    case Family::granite_hybrid: return granite_hybrid_layers(fields, hidden, layers);
    default: break;
  }
  throw unsupported_architecture("model_type", model_type);
}

bool counted_layer_by_layer(Family family) {
  return family == Family::gemma4 || family == Family::gemma3n || family == Family::lfm2 ||
         family == Family::minimax_m2 || family == Family::mimo_v2 || family == Family::kimi_linear ||
         family == Family::granite_hybrid;
}

}  // namespace

ParamCount count_params(const nlohmann::json& config) {
  ParamCount count;
  Fields fields(config, count.notes);
  const std::string model_type = fields.string("model_type");
  const Architecture& arch = find_architecture(model_type);
  const Family family = arch.family;
  fields.set_model_type(model_type);

  const u64 hidden = fields.required("hidden_size");
  // NemotronH configs may give the layer list alone (see hf_config.cpp).
  const u64 layers = !fields.has("num_hidden_layers") && fields.has("layers_block_type")
                         ? fields.string_list("layers_block_type").size()
                         : fields.required("num_hidden_layers");
  const u64 vocab = fields.required("vocab_size");

  count.embedding = product({vocab, hidden}, "embedding");
  const std::optional<bool> tie_given = [&]() -> std::optional<bool> {
    if (!fields.has("tie_word_embeddings")) return std::nullopt;
    return fields.flag("tie_word_embeddings", arch.ties_by_default);
  }();
  const bool tied = tie_given.value_or(arch.ties_by_default);
  if (!tie_given)
    append_note(count.notes, fmt::format("tie_word_embeddings absent: {} defaults to {}", model_type, tied ? "tied" : "untied"));
  count.lm_head = tied ? 0 : count.embedding;

  if (counted_layer_by_layer(family)) {
    const Layered counted = count_layered(fields, family, model_type, hidden, layers);
    Sum total;
    Sum expert;
    Sum inactive;
    total.add(count.embedding, "total parameters");
    total.add(count.lm_head, "total parameters");
    total.add(hidden, "total parameters");  // final norm
    total.add(counted.model_extra, "total parameters");
    u64 moe_layers = 0;
    for (const LayerParams& layer : counted.layers) {
      total.add(layer.params, "total parameters");
      expert.add(layer.expert_matrices, "expert parameters");
      inactive.add(layer.inactive, "inactive experts");
      if (layer.expert_matrices) ++moe_layers;
    }
    count.total = total.value;
    count.expert = expert.value;
    count.active = count.total - inactive.value;
    if (counted.model_extra)
      append_note(count.notes, fmt::format("{} parameters of per-layer embeddings / projections beside the layers",
                                           format_thousands(counted.model_extra)));
    if (moe_layers > 0)
      append_note(count.notes, fmt::format("{} MoE layers of {} experts, {} active per token", moe_layers, counted.experts,
                                           counted.top_k));
    for (const char* tower : {"vision_config", "audio_config"})
      if (fields.has(tower)) append_note(count.notes, fmt::format("{} present: that tower is not counted", tower));
    return count;
  }

  const std::vector<Layer> kinds = read_layers(fields, family, arch, layers);
  const bool any_moe = std::any_of(kinds.begin(), kinds.end(), [](const Layer& l) { return l.ffn == Ffn::moe; });
  const bool any_dense = std::any_of(kinds.begin(), kinds.end(), [](const Layer& l) { return l.ffn == Ffn::dense; });
  const auto uses = [&](Mixer mixer) {
    return std::any_of(kinds.begin(), kinds.end(), [&](const Layer& l) { return l.mixer == mixer; });
  };

  // Each kind of part is computed once; a layer is the sum of its parts.
  const u64 attention =
      uses(Mixer::attention)
          ? attention_params(fields, family, model_type, hidden, read_attention_shape(fields, family, hidden, count.notes))
          : 0;
  const u64 mla = uses(Mixer::mla) ? mla_params(fields, hidden) : 0;
  const bool any_indexer = std::any_of(kinds.begin(), kinds.end(), [](const Layer& l) { return l.indexer; });
  const u64 indexer = any_indexer ? indexer_params(fields, hidden) : 0;
  const u64 deltanet = uses(Mixer::gated_deltanet) ? gated_deltanet_params(fields, hidden) : 0;
  const u64 mamba = uses(Mixer::mamba2) ? mamba2_params(fields, hidden) : 0;
  const bool gated_mlp = family != Family::nemotron_h;
  const bool mlp_bias = (model_type == "llama" || family == Family::nemotron_h) && fields.flag("mlp_bias", false);
  const u64 dense = any_dense ? mlp_params(hidden, dense_intermediate(fields, family), gated_mlp, mlp_bias) : 0;
  const MoeShape moe = any_moe ? read_moe(fields, family, arch, hidden) : MoeShape{};
  if (any_moe && moe.top_k > moe.experts) fields.fail("num_experts_per_tok", "is larger than the number of experts");
  const u64 one_expert = checked_add(moe.expert_matrices, moe.expert_biases, "expert");
  const u64 moe_block = checked_add(product({moe.experts, one_expert}, "experts"), moe.always_active, "MoE block");
  const u64 layer_norms = product({norms_per_layer(family), hidden}, "norms");

  const auto layer_params = [&](const Layer& layer) {
    Sum sum;
    switch (layer.mixer) {
      case Mixer::attention: sum.add(attention, "layer"); break;
      case Mixer::mla: sum.add(mla, "layer"); break;
      case Mixer::gated_deltanet: sum.add(deltanet, "layer"); break;
      case Mixer::mamba2: sum.add(mamba, "layer"); break;
      case Mixer::none: break;
    }
    if (layer.indexer) sum.add(indexer, "layer");
    if (layer.ffn == Ffn::dense) sum.add(dense, "layer");
    if (layer.ffn == Ffn::moe) sum.add(moe_block, "layer");
    sum.add(layer_norms, "layer");
    return sum.value;
  };

  Sum total;
  Sum expert;
  Sum inactive;  // routed experts a token does not use
  total.add(count.embedding, "total parameters");
  total.add(count.lm_head, "total parameters");
  total.add(hidden, "total parameters");  // final norm
  u64 moe_layers = 0;
  for (const Layer& layer : kinds) {
    total.add(layer_params(layer), "total parameters");
    if (layer.ffn == Ffn::moe) {
      ++moe_layers;
      expert.add(product({moe.experts, moe.expert_matrices}, "expert parameters"), "expert parameters");
      inactive.add(product({moe.experts - moe.top_k, one_expert}, "inactive experts"), "inactive experts");
    }
  }
  count.total = total.value;
  count.expert = expert.value;
  count.active = count.total - inactive.value;

  // Multi-token-prediction layers (DeepSeek V3, GLM-4.5; DeepSeek-V3 README_WEIGHTS.md): each is
  // one MoE decoder layer plus enorm, hnorm (H each), eh_proj (2H x H) and shared_head.norm (H),
  // DeepSeek's "unique parameters". The checkpoint also stores a copy of the embedding and of the
  // output head with each (model.layers.N.embed_tokens, model.layers.N.shared_head.head), which
  // engines load with the MTP layer, so they are counted in `mtp` too.
  if (family == Family::deepseek || family == Family::glm4_moe) {
    const u64 mtp_layers = fields.optional_or("num_nextn_predict_layers", 0);
    if (mtp_layers > 0) {
      Sum unique;
      const Mixer mixer = family == Family::deepseek ? Mixer::mla : Mixer::attention;
      unique.add(layer_params({mixer, any_moe ? Ffn::moe : Ffn::dense}), "MTP");
      unique.add(product({3, hidden}, "MTP norms"), "MTP");
      unique.add(product({2, hidden, hidden}, "MTP eh_proj"), "MTP");
      const u64 copies = product({2, count.embedding}, "MTP embedding and head");
      count.mtp = product({mtp_layers, checked_add(unique.value, copies, "MTP")}, "MTP");
      append_note(count.notes, fmt::format("{} MTP layer(s) not in total: {} unique parameters + {} of embedding/head copies each",
                                           mtp_layers, format_thousands(unique.value), format_thousands(copies)));
    }
  }
  if (family == Family::qwen3_next) {
    if (const u64 mtp_layers = fields.optional_or("mtp_num_hidden_layers", 0); mtp_layers > 0)
      append_note(count.notes, fmt::format("{} MTP layer(s) (mtp_num_hidden_layers) not counted", mtp_layers));
    else if (model_type == "qwen3_next")
      append_note(count.notes, "the checkpoint's mtp.* weights are not described by the config and not counted");
  }
  if (family == Family::nemotron_h)
    append_note(count.notes, "Mamba2 d_inner = mamba_num_heads x mamba_head_dim (expand not used)");
  for (const char* tower : {"vision_config", "audio_config"})
    if (fields.has(tower)) append_note(count.notes, fmt::format("{} present: that tower is not counted", tower));
  if (moe_layers > 0)
    append_note(count.notes, fmt::format("{} MoE layers of {} experts, {} active per token", moe_layers, moe.experts, moe.top_k));
  return count;
}

std::optional<std::uint64_t> config_field_default(std::string_view model_type, std::string_view field) {
  for (const FieldDefault& entry : kFieldDefaults)
    if (entry.model_type == model_type && entry.field == field) return entry.value;
  return std::nullopt;
}

}  // namespace kvplan
