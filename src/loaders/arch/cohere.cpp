// Cohere Command R / Aya (cohere) and Command R7B / A (cohere2): transformers modeling_cohere.py,
// modeling_cohere2.py. A parallel block (attention and MLP read the same normed input), one
// LayerNorm without bias per layer, tied embeddings by default.

#include "loaders/tensor_parts.h"

namespace kvplan::arch {

namespace {

/// Cohere2Config without layer_types: layer i slides unless (i + 1) % sliding_window_pattern == 0
/// (default 4); the full layers use no RoPE, which does not change their cache.
bool default_kinds(ConfigFields& fields, Layout& layout) {
  if (fields.model_type() != "cohere2" || !fields.uint("sliding_window")) return false;
  const u64 pattern = fields.uint("sliding_window_pattern").value_or(4);
  for (std::size_t i = 0; i < layout.count(); ++i)
    layout.layers[i].kind = (pattern != 0 && (i + 1) % pattern == 0) ? LayerKind::full : LayerKind::sliding;
  return true;
}

/// q, k, v, o (bias=attention_bias); cohere's use_qk_norm adds q_norm [heads, head_dim] and k_norm
/// [kv heads, head_dim] (CohereLayerNorm weights); gated MLP without bias; one input_layernorm
/// (weight only) per layer; final norm.
ParamCount count(ConfigFields& fields, const Layout& layout) {
  check_attention(fields, layout);
  ParamCount count = start_count(fields, layout);
  DenseDecoder decoder;
  decoder.attention.qkv_bias = decoder.attention.o_bias = fields.flag("attention_bias", false);
  if (fields.model_type() == "cohere" && fields.flag("use_qk_norm", false))
    decoder.attention.qk_norm = (layout.heads + layout.layers.front().kv_heads) * layout.head_dim;
  decoder.intermediate = fields.positive("intermediate_size");
  decoder.layer_norms = layout.hidden;
  Counted counted = dense_decoder(layout, decoder);
  counted.final_norm = layout.hidden;
  finish_count(count, fields, counted);
  return count;
}

}  // namespace

const Family& family_cohere() {
  static const Family family{
      .name = "cohere",
      .types = {{"cohere", true}, {"cohere2", true}},
      .gguf = "command-r, cohere2",
      .fixtures = {"command-r-v01", "aya-23-8b", "command-r7b", "command-r7b-abliterated"},
      .rules = "cohere: full attention on every layer. cohere2: layer_types, else every sliding_window_pattern-th "
               "(default 4) layer full and the rest sliding over sliding_window (the full layers use no RoPE). "
               "Counted: parallel attention + gated MLP blocks with one weight-only LayerNorm, cohere's optional "
               "2-D q/k norms (use_qk_norm); the output head is tied unless stated.",
      .unverified = "No exact published count of Command R v01 or R7B themselves: the counter is checked exactly on "
                    "the Aya Expanse 8B figure, whose tensors are the Aya-23-8B / Command R7B shapes.",
      .default_kinds = default_kinds,
      .count = count,
  };
  return family;
}

}  // namespace kvplan::arch
