// Shanghai AI Lab InternLM2 / 2.5 and InternLM3 (remote code modeling_internlm2.py,
// modeling_internlm3.py).

#include "kvplan/error.h"
#include "loaders/tensor_parts.h"

namespace kvplan::arch {

namespace {

/// InternLM2: attention.wqkv (heads + 2 kv) x head_dim x H (same count as separate q, k, v) and wo,
/// both with bias=config.bias; feed_forward w1, w3, w2 without bias; attention_norm and ffn_norm.
/// InternLM3: Llama names, q/k/v bias=qkv_bias; which projections `bias` adds to (o_proj in the
/// transformers port, the MLP in the MLX port) is not settled, so a config with bias true is refused.
ParamCount count(ConfigFields& fields, const Layout& layout) {
  check_attention(fields, layout);
  ParamCount count = start_count(fields, layout);
  DenseDecoder decoder;
  if (fields.model_type() == "internlm2") {
    decoder.attention.qkv_bias = decoder.attention.o_bias = fields.flag("bias", false);
  } else {
    if (fields.flag("bias", false)) throw unsupported_architecture("bias", "true (internlm3: the projections it biases are not verified)");
    decoder.attention.qkv_bias = fields.flag("qkv_bias", false);
  }
  decoder.intermediate = fields.positive("intermediate_size");
  decoder.layer_norms = 2 * layout.hidden;
  Counted counted = dense_decoder(layout, decoder);
  counted.final_norm = layout.hidden;
  finish_count(count, fields, counted);
  return count;
}

}  // namespace

const Family& family_internlm() {
  static const Family family{
      .name = "internlm",
      .types = {{"internlm2"}, {"internlm3"}},
      .gguf = "internlm2; InternLM3 converts as llama",
      .fixtures = {"internlm2.5-7b-chat", "internlm3-8b-instruct"},
      .rules = "Full attention (num_key_value_heads, head_dim = hidden_size / num_attention_heads unless given); "
               "dynamic NTK rope scaling changes no cache size. Counted: InternLM2's fused wqkv and wo with `bias`; "
               "InternLM3's q/k/v biases (qkv_bias).",
      .unverified = "InternLM3: only the nominal 8B was found; a config with bias true is refused (the port and the "
                    "MLX version disagree on what it biases).",
      .count = count,
  };
  return family;
}

}  // namespace kvplan::arch
