// Llama and the families that kept its layout (transformers modeling_llama.py, modeling_mistral.py,
// modeling_mixtral.py, modeling_ministral3.py): per layer q, k, v, o projections, a gated MLP
// (gate, up, down) or Mixtral's routed experts, two RMSNorms; the final norm; the embedding and an
// output head unless tied.

#include "loaders/tensor_parts.h"

namespace kvplan::arch {

namespace {

/// LlamaAttention: bias=config.attention_bias on all four projections; mistral, mixtral and
/// ministral3 have none. LlamaMLP: bias=config.mlp_bias. Mixtral: num_local_experts experts of
/// 3 x H x intermediate_size in every layer, router H x E.
ParamCount count(ConfigFields& fields, const Layout& layout) {
  check_attention(fields, layout);
  ParamCount count = start_count(fields, layout);
  const std::string& type = fields.model_type();
  const u64 hidden = layout.hidden;
  Attention attention;
  if (type == "llama") attention.qkv_bias = attention.o_bias = fields.flag("attention_bias", false);
  const bool mlp_bias = type == "llama" && fields.flag("mlp_bias", false);
  const u64 intermediate = fields.positive("intermediate_size");
  Counted counted;
  counted.final_norm = hidden;
  if (type == "mixtral") {
    counted.experts = fields.positive("num_local_experts");
    counted.top_k = fields.has("num_experts_per_tok") ? fields.positive("num_experts_per_tok") : fields.positive("experts_per_token");
    if (counted.top_k > counted.experts) fields.fail("num_experts_per_tok", "is larger than the number of experts");
  }
  for (const LayerPlan& layer : layout.layers) {
    const u64 own = attention_params(layout, layer, attention) + 2 * hidden;
    if (counted.experts)
      counted.layers.push_back(
          plus(moe_layer(counted.experts, counted.top_k, hidden, intermediate, product({hidden, counted.experts}, "router")), own));
    else
      counted.layers.push_back({checked_add(own, mlp_params(hidden, intermediate, true, mlp_bias), "layer"), 0, 0});
  }
  finish_count(count, fields, counted);
  return count;
}

}  // namespace

const Family& family_llama() {
  static const Family family{
      .name = "llama",
      .types = {{"llama"}, {"mistral"}, {"ministral3", false, "Ministral 3 (2512): Mistral shapes, attention scaling only"},
                {"mixtral"}},
      .gguf = "llama",
      .fixtures = {"llama3.1-8b", "mistral-7b-v0.1", "mixtral-8x7b", "ministral3-3b"},
      .rules = "num_hidden_layers layers of full attention (num_key_value_heads KV heads of head_dim, else "
               "hidden_size / num_attention_heads); sliding_window alone slides every layer (Mistral 7B v0.1). "
               "Counted: q, k, v, o (llama: + attention_bias), gated MLP (llama: + mlp_bias), 2 RMSNorms per layer; "
               "mixtral: num_local_experts experts of intermediate_size and a router in every layer.",
      .count = count,
  };
  return family;
}

}  // namespace kvplan::arch
