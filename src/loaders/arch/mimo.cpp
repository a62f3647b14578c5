// Xiaomi MiMo-V2 (vLLM mimo_v2_flash.py): full and sliding layers with their own head shapes, V
// narrower than K, routed experts.

#include <fmt/format.h>

#include "kvplan/error.h"
#include "loaders/tensor_parts.h"

namespace kvplan::arch {

namespace {

/// Full layers (hybrid_layer_pattern 0) qkv H x (heads x d + kv x d + kv x v) with o_proj heads x v
/// x H; sliding layers (1) the same with swa_num_attention_heads, swa_num_key_value_heads,
/// swa_head_dim, swa_v_head_dim and a per-head attention sink (add_swa_attention_sink_bias); MoE
/// layers (moe_layer_freq 1) gate H x E + e_score_correction_bias E + E x 3 x H x
/// moe_intermediate_size, the others a dense MLP 3 x H x intermediate_size; 2 norms.
ParamCount count(ConfigFields& fields, const Layout& layout) {
  ParamCount count = start_count(fields, layout);
  const u64 hidden = layout.hidden;
  const u64 layers = layout.count();
  const std::vector<u64> pattern = fields.per_layer("hybrid_layer_pattern", layers);
  const std::vector<u64> moe = fields.per_layer("moe_layer_freq", layers);
  if (fields.flag("attention_bias", false)) throw unsupported_architecture("attention_bias", "true (mimo_v2)");
  const u64 heads = layout.heads;
  const u64 kv_heads = fields.positive("num_key_value_heads");
  const u64 head_dim = fields.positive("head_dim");
  const u64 v_dim = fields.uint_or("v_head_dim", head_dim);
  const u64 swa_heads = fields.uint_or("swa_num_attention_heads", heads);
  const u64 swa_kv = fields.uint_or("swa_num_key_value_heads", kv_heads);
  const u64 swa_dim = fields.uint_or("swa_head_dim", head_dim);
  const u64 swa_v = fields.uint_or("swa_v_head_dim", swa_dim);
  const bool sinks = fields.flag("add_swa_attention_sink_bias", false);
  const bool full_sinks = fields.flag("add_full_attention_sink_bias", false);
  Counted counted;
  counted.final_norm = hidden;
  counted.experts = fields.positive("n_routed_experts");
  counted.top_k = fields.positive("num_experts_per_tok");
  if (fields.uint_or("n_shared_experts", 0) != 0)
    throw unsupported_architecture("n_shared_experts", std::to_string(fields.uint_or("n_shared_experts", 0)));
  for (u64 i = 0; i < layers; ++i) {
    if (pattern[i] > 1) throw unsupported_architecture(fmt::format("hybrid_layer_pattern[{}]", i), std::to_string(pattern[i]));
    const bool swa = pattern[i] == 1;
    Sum sum;
    sum.add(swa ? gqa_params(hidden, swa_heads, swa_kv, swa_dim, swa_v) : gqa_params(hidden, heads, kv_heads, head_dim, v_dim), "layer");
    if (swa ? sinks : full_sinks) sum.add(swa ? swa_heads : heads, "layer");
    sum.add(product({2, hidden}, "norms"), "layer");
    LayerParams layer;
    if (moe[i])
      layer = moe_layer(counted.experts, counted.top_k, hidden, fields.positive("moe_intermediate_size"),
                        checked_add(product({hidden, counted.experts}, "router"), counted.experts, "router"));
    else
      sum.add(mlp_params(hidden, fields.positive("intermediate_size"), true, false), "layer");
    counted.layers.push_back(plus(layer, sum.value));
  }
  finish_count(count, fields, counted);
  return count;
}

}  // namespace

const Family& family_mimo() {
  static const Family family{
      .name = "mimo",
      .types = {{"mimo_v2_flash"}, {"mimo_v2"}},
      .gguf = "mimo2",
      .fixtures = {"mimo-v2-flash", "mimo-v2.5"},
      .rules = "hybrid_layer_pattern: 0 = full attention (num_key_value_heads, head_dim K, v_head_dim V), 1 = sliding "
               "window with swa_num_key_value_heads, swa_head_dim and swa_v_head_dim. Counted: both attention shapes, "
               "per-head sinks on the sliding layers, routed experts per moe_layer_freq.",
      .count = count,
  };
  return family;
}

}  // namespace kvplan::arch
