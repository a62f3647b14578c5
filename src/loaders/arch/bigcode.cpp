// BigCode StarCoder (gpt_bigcode: GPT-2 spellings, multi-query attention, learned positions) and
// StarCoder2 (starcoder2): transformers modeling_gpt_bigcode.py, modeling_starcoder2.py.

#include "loaders/tensor_parts.h"

namespace kvplan::arch {

namespace {

/// GPTBigCodeConfig: num_key_value_heads = 1 if multi_query (default true) else n_head.
std::optional<u64> kv_heads(ConfigFields& fields, const Layout& layout) {
  if (fields.model_type() != "gpt_bigcode") return std::nullopt;
  return fields.flag("multi_query", true) ? 1 : layout.heads;
}

/// gpt_bigcode: wte, wpe (n_positions x H); per layer ln_1 and ln_2 (LayerNorm weight + bias),
/// attn.c_attn H x (H + 2 kv_dim) + bias (kv_dim = head_dim with multi_query, else H), c_proj
/// H x H + bias, mlp.c_fc H x I + bias and c_proj I x H + bias (I = n_inner, default 4 H); ln_f;
/// lm_head tied by default. starcoder2: q, k, v, o and the c_fc / c_proj MLP with bias=use_bias
/// (default true), two LayerNorms with biases per layer and a final one; tied by default.
ParamCount count(ConfigFields& fields, const Layout& layout) {
  check_attention(fields, layout);
  ParamCount count = start_count(fields, layout);
  const u64 hidden = layout.hidden;
  Counted counted;
  DenseDecoder decoder;
  decoder.gated = false;
  decoder.layer_norms = 4 * hidden;
  if (fields.model_type() == "gpt_bigcode") {
    decoder.attention.qkv_bias = decoder.attention.o_bias = true;
    decoder.mlp_bias = true;
    decoder.intermediate = fields.has("intermediate_size") ? fields.positive("intermediate_size") : 4 * hidden;
    counted = dense_decoder(layout, decoder);
    counted.model_extra = product({fields.positive("max_position_embeddings"), hidden}, "wpe");
    counted.extra_note = "learned position embeddings (wpe)";
  } else {
    const bool bias = fields.flag("use_bias", true);
    decoder.attention.qkv_bias = decoder.attention.o_bias = bias;
    decoder.mlp_bias = bias;
    decoder.intermediate = fields.positive("intermediate_size");
    counted = dense_decoder(layout, decoder);
  }
  counted.final_norm = 2 * hidden;
  finish_count(count, fields, counted);
  return count;
}

}  // namespace

const Family& family_bigcode() {
  static const Family family{
      .name = "bigcode",
      .types = {{"gpt_bigcode", true}, {"starcoder2", true}},
      .gguf = "starcoder, starcoder2",
      .fixtures = {"santacoder", "starcoder", "starcoder2-7b"},
      .rules = "gpt_bigcode: GPT-2 spellings (n_embd, n_layer, n_head, n_positions, n_inner); multi_query (default "
               "true) caches one K/V head, else n_head; the context is n_positions (learned positions). starcoder2: "
               "num_key_value_heads (default 2), sliding_window on every layer when set (llama.cpp ignores it). "
               "Counted with biases, two-matrix GELU MLPs, LayerNorms with biases; tied by default.",
      .unverified = "starcoder2 and SantaCoder: no exact published count was found (StarCoder2-7B's 7,173,923,840 "
                    "assumes the tied default, which the copy does not state).",
      .spellings = {{"hidden_size", "n_embd"}, {"num_hidden_layers", "n_layer"}, {"num_attention_heads", "n_head"},
                    {"max_position_embeddings", "n_positions"}, {"intermediate_size", "n_inner"}},
      .defaults = {{"starcoder2", "num_key_value_heads", 2}},
      .kv_heads = kv_heads,
      .count = count,
  };
  return family;
}

}  // namespace kvplan::arch
