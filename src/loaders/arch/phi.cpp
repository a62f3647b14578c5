// Microsoft Phi-3 and Phi-4 (transformers modeling_phi3.py): the Llama shapes with q, k, v fused into
// qkv_proj and gate and up into gate_up_proj, no biases.

#include "kvplan/error.h"
#include "loaders/tensor_parts.h"

namespace kvplan::arch {

namespace {

/// Phi-2 (PhiForCausalLM): q, k, v and dense with biases (always), optional q/k LayerNorms of
/// head_dim with biases (qk_layernorm), a fc1 / fc2 GELU MLP with biases, one LayerNorm (weight and
/// bias) per layer, a final LayerNorm, and an output head with a bias.
/// Phi-3 / Phi-4: qkv_proj (heads + 2 kv) x head_dim x H, o_proj, gate_up_proj 2I x H, down_proj,
/// 2 RMSNorms per layer; the same count as separate q, k, v, gate and up projections.
/// Phi-3.5-MoE (phimoe): Llama attention (attention_bias), num_local_experts experts of 3 x H x
/// intermediate_size with a router E x H in every layer, LayerNorms with biases (2 per layer and
/// the final one), lm_head bias with lm_head_bias.
ParamCount count(ConfigFields& fields, const Layout& layout) {
  check_attention(fields, layout);
  ParamCount count = start_count(fields, layout);
  const std::string& type = fields.model_type();
  const u64 hidden = layout.hidden;
  const u64 intermediate = fields.positive("intermediate_size");
  Counted counted;
  if (type == "phi") {
    DenseDecoder decoder;
    decoder.attention.qkv_bias = decoder.attention.o_bias = true;
    if (fields.flag("qk_layernorm", false)) decoder.attention.qk_norm = 4 * layout.head_dim;
    decoder.gated = false;
    decoder.mlp_bias = true;
    decoder.intermediate = intermediate;
    decoder.layer_norms = 2 * hidden;
    counted = dense_decoder(layout, decoder);
    counted.final_norm = 2 * hidden;
    counted.head_bias = fields.positive("vocab_size");
  } else if (type == "phimoe") {
    Attention attention;
    attention.qkv_bias = attention.o_bias = fields.flag("attention_bias", false);
    counted.experts = fields.positive("num_local_experts");
    counted.top_k = fields.positive("num_experts_per_tok");
    if (counted.top_k > counted.experts) fields.fail("num_experts_per_tok", "is larger than the number of experts");
    for (const LayerPlan& layer : layout.layers)
      counted.layers.push_back(plus(moe_layer(counted.experts, counted.top_k, hidden, intermediate, product({hidden, counted.experts}, "router")),
                                    attention_params(layout, layer, attention) + 4 * hidden));
    counted.final_norm = 2 * hidden;
    counted.head_bias = fields.flag("lm_head_bias", false) ? fields.positive("vocab_size") : 0;
  } else {
    DenseDecoder decoder;
    decoder.intermediate = intermediate;
    decoder.layer_norms = 2 * hidden;
    counted = dense_decoder(layout, decoder);
    counted.final_norm = hidden;
  }
  finish_count(count, fields, counted);
  return count;
}

/// Phi-4-mini's config carries full_attn_mod (full attention every N-th layer in Microsoft's own
/// code); Phi3Config does not read it. 1 (every layer) is what transformers builds; another value is refused.
void finish_layout(ConfigFields& fields, Layout&) {
  if (const auto every = fields.uint("full_attn_mod"); every && *every != 1)
    throw unsupported_architecture(fields.origin() + ": full_attn_mod", std::to_string(*every));
}

}  // namespace

const Family& family_phi() {
  static const Family family{
      .name = "phi",
      .types = {{"phi"}, {"phi3"}, {"phimoe"}},
      .gguf = "phi2, phi3, phimoe",
      .fixtures = {"phi-2", "phi3-mini", "phi3.5-mini", "phi4-mini", "phi4", "phi3.5-moe"},
      .rules = "Full attention; sliding_window on every layer when set (Phi-3-mini-4k: 2047; llama.cpp ignores it "
               "for phi3). head_dim = hidden_size / num_attention_heads; partial_rotary_factor and LongRoPE change no "
               "cache size. Counted: Phi-2's biases everywhere, its fc1/fc2 MLP, one LayerNorm per layer and the "
               "output head's bias; Phi-3/4's fused qkv_proj and gate_up_proj; Phi-3.5-MoE's experts and "
               "LayerNorms with biases (attention_bias, lm_head_bias).",
      .unverified = "Phi-3.5-MoE: the copy found lacks attention_bias and lm_head_bias (the release is believed to set "
                    "both true, 359,744 parameters more); no exact published count.",
      .finish_layout = finish_layout,
      .count = count,
  };
  return family;
}

}  // namespace kvplan::arch
