// gpt-oss (transformers modeling_gpt_oss.py): alternating sliding and full attention with biases
// and a learned sink per head, every layer a routed-expert block whose experts carry biases.

#include "loaders/tensor_parts.h"

namespace kvplan::arch {

namespace {

/// Attention q, k, v, o with biases (attention_bias, default true) and per-head sinks; experts
/// E x (H x 2I + 2I + I x H + H), router H x E + E; 2 norms per layer.
ParamCount count(ConfigFields& fields, const Layout& layout) {
  check_attention(fields, layout);
  ParamCount count = start_count(fields, layout);
  const u64 hidden = layout.hidden;
  Attention attention;
  attention.qkv_bias = attention.o_bias = fields.flag("attention_bias", true);
  attention.sinks = true;
  Counted counted;
  counted.final_norm = hidden;
  counted.experts = fields.positive("num_local_experts");
  counted.top_k = fields.has("num_experts_per_tok") ? fields.positive("num_experts_per_tok") : fields.positive("experts_per_token");
  if (counted.top_k > counted.experts) fields.fail("num_experts_per_tok", "is larger than the number of experts");
  const u64 intermediate = fields.positive("intermediate_size");
  const u64 matrices = product({3, hidden, intermediate}, "expert");
  const u64 biases = checked_add(product({2, intermediate}, "expert bias"), hidden, "expert bias");
  const u64 one = checked_add(matrices, biases, "expert");
  const u64 router = checked_add(product({hidden, counted.experts}, "router"), counted.experts, "router bias");
  for (const LayerPlan& layer : layout.layers) {
    LayerParams params;
    params.expert = product({counted.experts, matrices}, "expert parameters");
    params.experts = counted.experts;
    params.inactive = product({counted.experts - counted.top_k, one}, "inactive experts");
    params.routed = routed_experts(counted.top_k, hidden, intermediate, true);
    params.matrices_per_expert = 3;  // gate and up (fused as gate_up_proj), down
    params.params = checked_add(checked_add(product({counted.experts, one}, "experts"), router, "MoE block"),
                                attention_params(layout, layer, attention) + 2 * hidden, "layer");
    counted.layers.push_back(params);
  }
  finish_count(count, fields, counted);
  return count;
}

}  // namespace

const Family& family_gpt_oss() {
  static const Family family{
      .name = "gpt_oss",
      .types = {{"gpt_oss"}},
      .gguf = "gpt-oss",
      .fixtures = {"gpt-oss-20b", "gpt-oss-120b"},
      .rules = "layer_types alternate sliding_attention (sliding_window, 128) and full_attention; head_dim defaults "
               "to 64. Counted: attention with biases and per-head sinks, num_local_experts experts with biases in "
               "every layer (MXFP4 quantization prices only the expert matrices at 17/32 B).",
      .defaults = {{"", "head_dim", 64}},
      .count = count,
  };
  return family;
}

}  // namespace kvplan::arch
