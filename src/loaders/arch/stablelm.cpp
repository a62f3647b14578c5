// Stability AI StableLM 2 / StableLM-3B-4E1T (transformers modeling_stablelm.py).

#include "loaders/tensor_parts.h"

namespace kvplan::arch {

namespace {

/// q, k, v with bias=use_qkv_bias, o_proj without; qk_layernorm adds per-head LayerNorm weights
/// (heads x head_dim for q, kv heads x head_dim for k); gated MLP without bias; input_layernorm
/// (LayerNorm weight + bias) and, unless use_parallel_residual, post_attention_layernorm; a final
/// LayerNorm; untied by default.
ParamCount count(ConfigFields& fields, const Layout& layout) {
  check_attention(fields, layout);
  ParamCount count = start_count(fields, layout);
  DenseDecoder decoder;
  decoder.attention.qkv_bias = fields.flag("use_qkv_bias", false);
  if (fields.flag("qk_layernorm", false)) decoder.attention.qk_norm = (layout.heads + layout.layers.front().kv_heads) * layout.head_dim;
  decoder.intermediate = fields.positive("intermediate_size");
  decoder.layer_norms = (fields.flag("use_parallel_residual", false) ? 2 : 4) * layout.hidden;
  Counted counted = dense_decoder(layout, decoder);
  counted.final_norm = 2 * layout.hidden;
  finish_count(count, fields, counted);
  return count;
}

}  // namespace

const Family& family_stablelm() {
  static const Family family{
      .name = "stablelm",
      .types = {{"stablelm"}},
      .gguf = "stablelm",
      .fixtures = {"stablelm-2-zephyr-1.6b", "stablelm-3b"},
      .rules = "Full attention (num_key_value_heads, head_dim = hidden_size / heads); partial_rotary_factor changes no "
               "cache size. Counted: q/k/v biases (use_qkv_bias), per-head q/k LayerNorms (qk_layernorm), LayerNorms "
               "with biases (one per layer with use_parallel_residual).",
      .unverified = "StableLM-3B: no exact published count was found.",
      .count = count,
  };
  return family;
}

}  // namespace kvplan::arch
