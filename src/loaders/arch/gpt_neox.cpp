// EleutherAI GPT-NeoX / Pythia (transformers modeling_gpt_neox.py).

#include "kvplan/error.h"
#include "loaders/tensor_parts.h"

namespace kvplan::arch {

namespace {

/// embed_in; per layer input_layernorm and post_attention_layernorm (LayerNorm weight + bias),
/// attention.query_key_value 3H x H and dense H x H with bias=attention_bias (default true),
/// mlp.dense_h_to_4h H x I and dense_4h_to_h I x H with biases; final_layer_norm; embed_out
/// (untied by default). Multi-head only: GPTNeoXConfig has no KV-head field.
ParamCount count(ConfigFields& fields, const Layout& layout) {
  check_attention(fields, layout);
  ParamCount count = start_count(fields, layout);
  DenseDecoder decoder;
  decoder.attention.qkv_bias = decoder.attention.o_bias = fields.flag("attention_bias", true);
  decoder.gated = false;
  decoder.mlp_bias = true;
  decoder.intermediate = fields.positive("intermediate_size");
  decoder.layer_norms = 4 * layout.hidden;
  Counted counted = dense_decoder(layout, decoder);
  counted.final_norm = 2 * layout.hidden;
  finish_count(count, fields, counted);
  return count;
}

/// GPTNeoXConfig has no num_key_value_heads: a config that states fewer KV heads than query heads
/// is not the multi-head model the modelling code builds.
void finish_layout(ConfigFields& fields, Layout& layout) {
  for (const LayerPlan& layer : layout.layers)
    if (layer.attends() && layer.kv_heads != layout.heads)
      throw unsupported_architecture(fields.origin() + ": num_key_value_heads", std::to_string(layer.kv_heads) + " (gpt_neox is multi-head)");
}

}  // namespace

const Family& family_gpt_neox() {
  static const Family family{
      .name = "gpt_neox",
      .types = {{"gpt_neox"}},
      .gguf = "gptneox",
      .fixtures = {"pythia-6.9b-deduped"},
      .rules = "Multi-head attention on every layer (K and V of num_attention_heads x hidden_size / heads); "
               "rotary_pct and use_parallel_residual change no cache size. Counted with biases everywhere, "
               "LayerNorms with biases and an untied embed_out.",
      .finish_layout = finish_layout,
      .count = count,
  };
  return family;
}

}  // namespace kvplan::arch
