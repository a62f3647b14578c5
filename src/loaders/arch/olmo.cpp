// AllenAI OLMo, OLMo 2, Olmo 3 and OLMoE (transformers modeling_olmo.py, modeling_olmo2.py,
// modeling_olmo3.py, modeling_olmoe.py).

#include "loaders/tensor_parts.h"

namespace kvplan::arch {

namespace {

/// Olmo3Config without layer_types: sliding_attention unless (i + 1) % 4 == 0.
bool default_kinds(ConfigFields& fields, Layout& layout) {
  if (fields.model_type() != "olmo3" || !fields.uint("sliding_window")) return false;
  for (std::size_t i = 0; i < layout.count(); ++i) layout.layers[i].kind = (i + 1) % 4 == 0 ? LayerKind::full : LayerKind::sliding;
  return true;
}

/// OLMo: Llama attention (attention_bias) and MLP, but OlmoLayerNorm is F.layer_norm without
/// weight or bias: no norm parameters at all. OLMo 2 / Olmo 3: q_norm over the whole q projection
/// (heads x head_dim) and k_norm over kv heads x head_dim; no input_layernorm, a
/// post_attention_layernorm and a post_feedforward_layernorm per layer. OLMoE: OLMo 2's attention
/// norms (q_norm H, k_norm kv x head_dim), num_experts experts of 3 x H x intermediate_size with a
/// router E x H in every layer, input and post-attention norms.
ParamCount count(ConfigFields& fields, const Layout& layout) {
  check_attention(fields, layout);
  ParamCount count = start_count(fields, layout);
  const std::string& type = fields.model_type();
  const u64 hidden = layout.hidden;
  Attention attention;
  attention.qkv_bias = attention.o_bias = fields.flag("attention_bias", false);
  if (type != "olmo") attention.qk_norm = (layout.heads + layout.layers.front().kv_heads) * layout.head_dim;
  const u64 norms = type == "olmo" ? 0 : 2 * hidden;
  const u64 intermediate = fields.positive("intermediate_size");
  Counted counted;
  counted.final_norm = type == "olmo" ? 0 : hidden;
  if (type == "olmoe") {
    counted.experts = fields.positive("num_experts");
    counted.top_k = fields.positive("num_experts_per_tok");
    if (counted.top_k > counted.experts) fields.fail("num_experts_per_tok", "is larger than the number of experts");
    for (const LayerPlan& layer : layout.layers)
      counted.layers.push_back(plus(moe_layer(counted.experts, counted.top_k, hidden, intermediate, product({hidden, counted.experts}, "router")),
                                    attention_params(layout, layer, attention) + norms));
  } else {
    DenseDecoder decoder;
    decoder.attention = attention;
    decoder.intermediate = intermediate;
    decoder.layer_norms = norms;
    counted.layers = dense_decoder(layout, decoder).layers;
  }
  finish_count(count, fields, counted);
  return count;
}

/// OLMo's clip_qkv clamps activations: no weights, no cache effect.
void finish_layout(ConfigFields& fields, Layout&) { fields.ignore({"clip_qkv"}); }

}  // namespace

const Family& family_olmo() {
  static const Family family{
      .name = "olmo",
      .types = {{"olmo"}, {"olmo2"}, {"olmo3"}, {"olmoe"}},
      .gguf = "olmo, olmo2 (also Olmo 3), olmoe",
      .fixtures = {"olmo-1b-hf", "olmo2-7b-instruct", "olmo3.1-32b-instruct", "olmoe-1b-7b"},
      .rules = "olmo, olmo2, olmoe: full attention. olmo3: layer_types (by default 3 sliding_attention over "
               "sliding_window : 1 full). Counted: OLMo's norms have no parameters; OLMo 2 / 3 full-width q/k norms "
               "and post-attention / post-feedforward norms; OLMoE's experts of intermediate_size in every layer.",
      .unverified = "OLMo-1B-hf: the copy found omits tie_word_embeddings; OlmoConfig's default (untied) gives "
                    "103,022,592 more than the published tied count. OLMoE's fixture is an unattributed test dict with "
                    "the checkpoint's shapes.",
      .default_kinds = default_kinds,
      .finish_layout = finish_layout,
      .count = count,
  };
  return family;
}

}  // namespace kvplan::arch
