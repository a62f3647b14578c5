// OpenBMB MiniCPM (Llama layout, scaled embeddings and residuals) and MiniCPM3 (DeepSeek-V2's
// latent attention with a dense MLP): transformers modeling_minicpm.py, modeling_minicpm3.py.

#include "kvplan/error.h"
#include "loaders/tensor_parts.h"

namespace kvplan::arch {

namespace {

/// MiniCPM: Llama's q, k, v, o (attention_bias) and gated MLP, two RMSNorms, a tied embedding by
/// default (its embed_scale is a buffer; scale_emb, scale_depth and dim_model_base are scalars).
/// MiniCPM3: DeepseekV2Attention (mla_params; v_head_dim defaults to hidden / heads) and a gated MLP.
ParamCount count(ConfigFields& fields, const Layout& layout) {
  ParamCount count = start_count(fields, layout);
  const u64 hidden = layout.hidden;
  const u64 mlp = mlp_params(hidden, fields.positive("intermediate_size"), true, false);
  Counted counted;
  counted.final_norm = hidden;
  if (fields.model_type() == "minicpm3") {
    const u64 attention = mla_params(fields, hidden, hidden / layout.heads);
    for (std::size_t i = 0; i < layout.count(); ++i) counted.layers.push_back(layer_of(attention + mlp + 2 * hidden));
  } else {
    check_attention(fields, layout);
    DenseDecoder decoder;
    decoder.attention.qkv_bias = decoder.attention.o_bias = fields.flag("attention_bias", false);
    decoder.intermediate = fields.positive("intermediate_size");
    decoder.layer_norms = 2 * hidden;
    counted.layers = dense_decoder(layout, decoder).layers;
  }
  finish_count(count, fields, counted);
  return count;
}

/// MiniCPM4's sparse_config (InfLLM v2) is not implemented by transformers and would change the cache.
void finish_layout(ConfigFields& fields, Layout&) {
  if (fields.find("sparse_config")) throw unsupported_architecture(fields.origin() + ": sparse_config", "(InfLLM v2 sparse attention)");
}

}  // namespace

const Family& family_minicpm() {
  static const Family family{
      .name = "minicpm",
      .types = {{"minicpm", true}, {"minicpm3", true}},
      .gguf = "minicpm, minicpm3",
      .fixtures = {"minicpm-2b-sft", "minicpm3-4b"},
      .rules = "minicpm: full attention, Llama fields. minicpm3: MLA, the latent of kv_lora_rank + qk_rope_head_dim "
               "per token as transformers caches it (llama.cpp expands it to full K and V per head: 40 x (96 + 64) "
               "values per token per layer for MiniCPM3-4B). sparse_config is refused. Both tie their embeddings by "
               "default.",
      .unverified = "MiniCPM3-4B: the copy is trimmed to the importer's fields (their values equal MiniCPM3Config's "
                    "defaults) and no exact published count was found.",
      .finish_layout = finish_layout,
      .count = count,
  };
  return family;
}

}  // namespace kvplan::arch
