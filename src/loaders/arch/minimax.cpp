// MiniMax-Text-01 / M1 (lightning attention, cache only) and MiniMax-M2 (vLLM minimax_m2.py,
// minimax_text_01.py).

#include "kvplan/error.h"
#include "loaders/tensor_parts.h"

namespace kvplan::arch {

namespace {

/// MiniMax-M2: qkv H x (q + 2 kv) x d (+ bias with attention_bias), o_proj, q_norm over heads x d
/// and k_norm over kv x d (use_qk_norm); every layer a MoE of num_local_experts x 3 x H x
/// intermediate_size, gate H x E, e_score_correction_bias E (use_routing_bias); a shared expert of
/// shared_intermediate_size is not supported; 2 norms.
ParamCount count(ConfigFields& fields, const Layout& layout) {
  if (fields.model_type() != "minimax_m2") not_counted(fields);
  ParamCount count = start_count(fields, layout);
  const u64 hidden = layout.hidden;
  const u64 heads = layout.heads;
  const u64 kv_heads = fields.positive("num_key_value_heads");
  const u64 head_dim = layout.head_dim;
  const bool bias = fields.flag("attention_bias", false);
  if (fields.uint_or("shared_intermediate_size", 0) != 0)
    throw unsupported_architecture("shared_intermediate_size", std::to_string(fields.uint_or("shared_intermediate_size", 0)));
  Counted counted;
  counted.final_norm = hidden;
  counted.experts = fields.positive("num_local_experts");
  counted.top_k = fields.positive("num_experts_per_tok");
  const u64 matrices = gqa_params(hidden, heads, kv_heads, head_dim, head_dim);
  Sum vectors;  // biases and norms
  if (bias) vectors.add(product({heads + 2 * kv_heads, head_dim}, "qkv bias"), "attention");
  if (fields.flag("use_qk_norm", true)) vectors.add(product({heads + kv_heads, head_dim}, "q/k norm"), "attention");
  vectors.add(product({2, hidden}, "norms"), "attention");
  const u64 routing_bias = fields.flag("use_routing_bias", false) ? counted.experts : 0;  // a vector too
  vectors.add(routing_bias, "router");
  const u64 always = checked_add(product({hidden, counted.experts}, "router"), routing_bias, "router");
  const u64 q_width = heads * head_dim;  // no overflow: gqa_params checked its products
  const std::vector<MatrixShape> attention_shapes = {{q_width, hidden}, {kv_heads * head_dim, hidden, 2}, {hidden, q_width}};  // q, k and v, o
  for (u64 i = 0; i < layout.count(); ++i) {
    LayerParams layer = plus(moe_layer(counted.experts, counted.top_k, hidden, fields.positive("intermediate_size"), always),
                             checked_add(matrices, vectors.value - routing_bias, "attention"));
    layer.vectors = vectors.value;
    layer.modules = true;
    layer.attention = matrices;
    layer.shapes.insert(layer.shapes.end(), attention_shapes.begin(), attention_shapes.end());
    counted.layers.push_back(layer);
  }
  finish_count(count, fields, counted);
  return count;
}

/// MiniMax lightning attention (vLLM linear_attention_state_shape): heads x head_dim x head_dim at
/// the model dtype.
std::vector<StateTensor> state(ConfigFields&, const Layout& layout, const Dtype& dtype) {
  return {{"recurrent", layout.heads * layout.head_dim * layout.head_dim, &dtype, layout.heads}};
}

}  // namespace

const Family& family_minimax() {
  static const Family family{
      .name = "minimax",
      .types = {{"minimax_m2"}, {"minimax", false, "", true}, {"minimax_text_01", false, "", true}, {"minimax_m1", false, "", true}},
      .gguf = "minimax-m2, minimax-01",
      .fixtures = {"minimax-m2.7"},
      .rules = "attn_type_list: 1 = softmax attention (K and V cached), 0 = lightning attention (a heads x head_dim x "
               "head_dim state at the model dtype); MTP: num_mtp_modules x mtp_transformer_layers when use_mtp. "
               "Counted (minimax_m2 only): attention with full-width q/k norms and a routed-expert block in every layer.",
      .unverified = "minimax / minimax_text_01 / minimax_m1: the cache is sized from the layout, the parameters are not "
                    "counted (no config.json of MiniMax-Text-01 was found).",
      .linear_state = state,
      .count = count,
  };
  return family;
}

}  // namespace kvplan::arch
