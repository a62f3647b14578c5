// TII Falcon (transformers modeling_falcon.py): the old decoder (Falcon-7B: multi-query, parallel
// attention and MLP under one LayerNorm) and the new one (Falcon-40B/180B: grouped KV heads, two
// LayerNorms), with the legacy remote-code spellings (model_type RefinedWebModel / RefinedWeb,
// n_layer, n_head, n_head_kv, n_embed).

#include "loaders/tensor_parts.h"

namespace kvplan::arch {

namespace {

/// new_decoder_architecture (RefinedWeb implies it): num_kv_heads (legacy n_head_kv; absent =
/// num_attention_heads); else multi_query (default true): one KV head; else num_attention_heads.
/// The modelling code ignores num_kv_heads unless new_decoder_architecture.
bool new_decoder(ConfigFields& fields) {
  return fields.flag("new_decoder_architecture", fields.model_type() == "RefinedWeb");
}

std::optional<u64> kv_heads(ConfigFields& fields, const Layout& layout) {
  const bool multi_query = fields.flag("multi_query", true);
  const std::optional<u64> grouped = fields.uint("num_kv_heads");
  if (new_decoder(fields)) return grouped.value_or(layout.heads);
  return multi_query ? 1 : layout.heads;
}

/// word_embeddings; per layer query_key_value [(heads + 2 kv) x head_dim, H], dense H x H, MLP
/// dense_h_to_4h [F, H] and dense_4h_to_h [H, F] (F = ffn_hidden_size, default 4 H), all with
/// bias=config.bias; LayerNorms (weight + bias): input_layernorm + post_attention_layernorm without
/// parallel_attn, ln_attn + ln_mlp with parallel_attn and num_ln_in_parallel_attn 2 (its default
/// with the new decoder), else input_layernorm alone; ln_f; lm_head tied by default. ALiBi slopes
/// are not parameters.
ParamCount count(ConfigFields& fields, const Layout& layout) {
  check_attention(fields, layout);
  ParamCount count = start_count(fields, layout);
  const u64 hidden = layout.hidden;
  const bool bias = fields.flag("bias", false);
  const bool parallel = fields.flag("parallel_attn", true);
  const u64 parallel_norms = fields.uint_or("num_ln_in_parallel_attn", new_decoder(fields) ? 2 : 1);
  DenseDecoder decoder;
  decoder.attention.qkv_bias = decoder.attention.o_bias = bias;
  decoder.gated = false;
  decoder.mlp_bias = bias;
  decoder.intermediate = fields.has("ffn_hidden_size") ? fields.positive("ffn_hidden_size") : 4 * hidden;
  decoder.layer_norms = (!parallel || parallel_norms == 2 ? 4 : 2) * hidden;
  Counted counted = dense_decoder(layout, decoder);
  counted.final_norm = 2 * hidden;
  finish_count(count, fields, counted);
  return count;
}

/// ALiBi, the parallel block and the rotary base change no cache size.
void finish_layout(ConfigFields& fields, Layout&) { fields.ignore({"alibi", "parallel_attn"}); }

}  // namespace

const Family& family_falcon() {
  static const Family family{
      .name = "falcon",
      .types = {{"falcon", true}, {"RefinedWebModel", true, "legacy remote code (Falcon-7B)"},
                {"RefinedWeb", true, "legacy remote code (Falcon-40B), the new decoder"}},
      .gguf = "falcon",
      .fixtures = {"falcon-40b-instruct", "falcon-40b-refinedweb"},
      .rules = "KV heads: num_kv_heads (n_head_kv) with new_decoder_architecture (implied by RefinedWeb), else one "
               "with multi_query (default true), else num_attention_heads; head_dim = hidden_size / heads; the "
               "legacy n_layer / n_head / n_embed spellings read as the standard fields. Counted: fused "
               "query_key_value, biases with `bias`, 4 H MLPs (ffn_hidden_size), one or two LayerNorms per layer "
               "by parallel_attn and num_ln_in_parallel_attn; tied by default.",
      .unverified = "Falcon-7B and 40B: only the nominal sizes were found; the counter's non-parallel branch is checked "
                    "exactly on Falcon-RW-1B's published count (keras-hub), with its dimensions given inline.",
      .spellings = {{"num_hidden_layers", "n_layer"}, {"num_attention_heads", "n_head"}, {"hidden_size", "n_embed"},
                    {"num_kv_heads", "n_head_kv"}},
      .kv_heads = kv_heads,
      .finish_layout = finish_layout,
      .count = count,
  };
  return family;
}

}  // namespace kvplan::arch
