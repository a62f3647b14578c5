// rednote dots.llm1 (transformers modeling_dots1.py): Qwen3's attention with DeepSeek-V3's routed
// and shared experts.

#include "loaders/tensor_parts.h"

namespace kvplan::arch {

namespace {

/// q, k, v, o (attention_bias) with q/k RMSNorm over head_dim; layers below first_k_dense_replace a
/// dense MLP of intermediate_size, the others a router n_routed_experts x H, its
/// e_score_correction_bias (a persistent buffer, stored in the checkpoint: counted), experts of
/// 3 x H x moe_intermediate_size and shared experts one MLP of moe_intermediate_size x
/// n_shared_experts; two RMSNorms per layer; untied by default.
ParamCount count(ConfigFields& fields, const Layout& layout) {
  check_attention(fields, layout);
  ParamCount count = start_count(fields, layout);
  const u64 hidden = layout.hidden;
  Attention attention;
  attention.qkv_bias = attention.o_bias = fields.flag("attention_bias", false);
  attention.qk_norm = 2 * layout.head_dim;
  const u64 first_moe = fields.uint_or("first_k_dense_replace", 0);
  Counted counted;
  counted.final_norm = hidden;
  u64 width = 0;
  u64 always = 0;
  if (first_moe < layout.count()) {
    counted.experts = fields.positive("n_routed_experts");
    counted.top_k = fields.positive("num_experts_per_tok");
    if (counted.top_k > counted.experts) fields.fail("num_experts_per_tok", "is larger than the number of experts");
    width = fields.positive("moe_intermediate_size");
    always = checked_add(product({hidden, counted.experts}, "router"), counted.experts, "e_score_correction_bias");
    if (const u64 shared = fields.uint_or("n_shared_experts", 0); shared > 0)
      always = checked_add(always, product({3, hidden, shared, width}, "shared experts"), "shared experts");
  }
  for (u64 i = 0; i < layout.count(); ++i) {
    const u64 own = attention_params(layout, layout.layers[i], attention) + 2 * hidden;
    if (i >= first_moe)
      counted.layers.push_back(plus(moe_layer(counted.experts, counted.top_k, hidden, width, always), own));
    else
      counted.layers.push_back(layer_of(own + mlp_params(hidden, fields.positive("intermediate_size"), true, false)));
  }
  fields.note("e_score_correction_bias counted: a buffer, not an nn.Parameter, but stored in the checkpoint");
  finish_count(count, fields, counted);
  return count;
}

}  // namespace

const Family& family_dots1() {
  static const Family family{
      .name = "dots1",
      .types = {{"dots1"}},
      .gguf = "dots1",
      .fixtures = {"dots.llm1.inst"},
      .rules = "Full attention on every layer (Qwen-style sliding-window fields, when present, follow the standard "
               "rules). Counted: q/k norms, first_k_dense_replace dense layers, routed and shared experts with the "
               "router's correction bias.",
      .unverified = "Only the names (142B total, 14B active) were found; the copy is a trimmed MLX derivative's with "
                    "its quantization block removed.",
      .count = count,
  };
  return family;
}

}  // namespace kvplan::arch
