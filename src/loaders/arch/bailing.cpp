// inclusionAI Ling (bailing_moe; remote code modeling_bailing_moe.py, as mlx-lm and llama.cpp port it).

#include <algorithm>

#include "kvplan/error.h"
#include "loaders/tensor_parts.h"

namespace kvplan::arch {

namespace {

/// word_embeddings; per layer attention.query_key_value (heads + 2 kv) x head_dim x H (+ bias with
/// use_qkv_bias), attention.dense H x heads x head_dim (+ bias with use_bias), query/key layernorms
/// over head_dim with use_qk_norm; layers from first_k_dense_replace a router num_experts x H
/// (+ E expert bias with moe_router_enable_expert_bias), experts of 3 x H x moe_intermediate_size
/// and shared experts one MLP of moe_intermediate_size x num_shared_experts, the others a dense MLP
/// of intermediate_size; two RMSNorms; untied. BailingMoeV2 (Ling 2.0) shares the model_type with
/// another layout and is refused.
ParamCount count(ConfigFields& fields, const Layout& layout) {
  const std::vector<std::string> architectures = fields.string_list("architectures");
  if (std::find(architectures.begin(), architectures.end(), "BailingMoeV2ForCausalLM") != architectures.end())
    throw unsupported_architecture("architectures", "BailingMoeV2ForCausalLM (Ling 2.0's layout)");
  check_attention(fields, layout);
  ParamCount count = start_count(fields, layout);
  const u64 hidden = layout.hidden;
  Attention attention;
  attention.qkv_bias = fields.flag("use_qkv_bias", false);
  attention.o_bias = fields.flag("use_bias", false);
  if (fields.flag("use_qk_norm", false)) attention.qk_norm = 2 * layout.head_dim;
  const u64 first_moe = fields.uint_or("first_k_dense_replace", 0);
  Counted counted;
  counted.final_norm = hidden;
  u64 width = 0;
  u64 always = 0;
  if (first_moe < layout.count()) {
    counted.experts = fields.positive("num_experts");
    counted.top_k = fields.positive("num_experts_per_tok");
    if (counted.top_k > counted.experts) fields.fail("num_experts_per_tok", "is larger than the number of experts");
    width = fields.positive("moe_intermediate_size");
    always = product({hidden, counted.experts}, "router");
    if (fields.flag("moe_router_enable_expert_bias", false)) always = checked_add(always, counted.experts, "expert bias");
    if (const u64 shared = fields.uint_or("num_shared_experts", 0); shared > 0)
      always = checked_add(always, product({3, hidden, shared, width}, "shared experts"), "shared experts");
  }
  for (std::size_t i = 0; i < layout.layers.size(); ++i) {
    const u64 own = attention_params(layout, layout.layers[i], attention) + 2 * hidden;
    if (i >= first_moe)
      counted.layers.push_back(plus(moe_layer(counted.experts, counted.top_k, hidden, width, always), own));
    else
      counted.layers.push_back(layer_of(own + mlp_params(hidden, fields.positive("intermediate_size"), true, false)));
  }
  finish_count(count, fields, counted);
  return count;
}

}  // namespace

const Family& family_bailing() {
  static const Family family{
      .name = "bailing",
      .types = {{"bailing_moe"}},
      .gguf = "bailingmoe (Ling 2.0: bailingmoe2)",
      .fixtures = {"ling-lite-1.5"},
      .rules = "Full attention on every layer (head_dim = hidden_size / heads). Counted: the fused query_key_value, "
               "routed and shared experts from first_k_dense_replace on. BailingMoeV2ForCausalLM configs (Ling 2.0, "
               "same model_type) are refused.",
      .unverified = "Only the model card's 16.8B total / 2.75B active was found.",
      .count = count,
  };
  return family;
}

}  // namespace kvplan::arch
