// Llama and the families that kept its layout (transformers modeling_llama.py, modeling_mistral.py,
// modeling_mixtral.py, modeling_ministral3.py): per layer q, k, v, o projections, a gated MLP
// (gate, up, down) or Mixtral's routed experts, two RMSNorms; the final norm; the embedding and an
// output head unless tied.

#include "loaders/tensor_parts.h"

namespace kvplan::arch {

namespace {

/// LlamaAttention: bias=config.attention_bias on all four projections; mistral, mixtral and
/// ministral3 have none; Seed-OSS: q, k, v bias=attention_bias (default true), o_proj
/// bias=attention_out_bias; Apertus: + q/k RMSNorm over head_dim. LlamaMLP: gate, up, down,
/// bias=config.mlp_bias; Arcee and Apertus keep up and down only (ReLU^2, xIELU), and Apertus's
/// xIELU has two learned scalars (alpha_p, alpha_n) per layer. Mixtral: num_local_experts experts
/// of 3 x H x intermediate_size in every layer, router H x E. Two RMSNorms per layer.
ParamCount count(ConfigFields& fields, const Layout& layout) {
  check_attention(fields, layout);
  ParamCount count = start_count(fields, layout);
  const std::string& type = fields.model_type();
  const u64 hidden = layout.hidden;
  DenseDecoder decoder;
  decoder.layer_norms = 2 * hidden;
  const bool llama_biases = type == "llama" || type == "smollm3" || type == "arcee" || type == "apertus";
  if (llama_biases) {
    decoder.attention.qkv_bias = decoder.attention.o_bias = fields.flag("attention_bias", false);
    decoder.mlp_bias = fields.flag("mlp_bias", false);
  }
  if (type == "seed_oss") {
    decoder.attention.qkv_bias = fields.flag("attention_bias", true);
    decoder.attention.o_bias = fields.flag("attention_out_bias", false);
    decoder.mlp_bias = fields.flag("mlp_bias", false);
  }
  if (type == "apertus") {
    decoder.attention.qk_norm = 2 * layout.head_dim;
    decoder.layer_extra = 2;
  }
  decoder.gated = type != "arcee" && type != "apertus";
  decoder.intermediate = fields.positive("intermediate_size");
  Counted counted;
  if (type == "mixtral") {
    counted.experts = fields.positive("num_local_experts");
    counted.top_k = fields.has("num_experts_per_tok") ? fields.positive("num_experts_per_tok") : fields.positive("experts_per_token");
    if (counted.top_k > counted.experts) fields.fail("num_experts_per_tok", "is larger than the number of experts");
    for (const LayerPlan& layer : layout.layers)
      counted.layers.push_back(plus(moe_layer(counted.experts, counted.top_k, hidden, decoder.intermediate,
                                              product({hidden, counted.experts}, "router")),
                                    attention_params(layout, layer, decoder.attention) + 2 * hidden));
  } else {
    counted = dense_decoder(layout, decoder);
  }
  counted.final_norm = hidden;
  finish_count(count, fields, counted);
  return count;
}

/// SmolLM3Config: with use_sliding_window and a sliding_window, the NoPE layers (no_rope_layers
/// 0, by default every no_rope_layer_interval = 4th) become sliding_attention; otherwise every
/// layer is full (the standard rules).
bool default_kinds(ConfigFields& fields, Layout& layout) {
  if (fields.model_type() != "smollm3" || !fields.flag("use_sliding_window", false) || !fields.uint("sliding_window")) return false;
  const u64 interval = fields.uint_or("no_rope_layer_interval", 4);
  const std::vector<u64> rope = fields.has("no_rope_layers") ? fields.per_layer("no_rope_layers", layout.count()) : std::vector<u64>{};
  for (std::size_t i = 0; i < layout.count(); ++i) {
    const bool nope = rope.empty() ? interval != 0 && (i + 1) % interval == 0 : rope[i] == 0;
    layout.layers[i].kind = nope ? LayerKind::sliding : LayerKind::full;
  }
  return true;
}

/// SmolLM3's no_rope_layers only decide RoPE once layer_types is given: no cache effect.
void finish_layout(ConfigFields& fields, Layout&) {
  if (fields.model_type() == "smollm3") fields.ignore({"no_rope_layers", "no_rope_layer_interval"});
}

}  // namespace

const Family& family_llama() {
  static const Family family{
      .name = "llama",
      .types = {{"llama"}, {"mistral"}, {"ministral3", false, "Ministral 3 (2512): Mistral shapes, attention scaling only"},
                {"mixtral"}, {"smollm3", true}, {"arcee"}, {"apertus"}, {"seed_oss"}},
      .gguf = "llama (smollm3, arcee, apertus, seed_oss)",
      .fixtures = {"llama3.1-8b", "mistral-7b-v0.1", "mixtral-8x7b", "ministral3-3b", "smollm3-3b", "seed-oss-36b",
                   "science-expert-r1", "austral-afm-sft"},
      .rules = "num_hidden_layers layers of full attention (num_key_value_heads KV heads of head_dim, else "
               "hidden_size / num_attention_heads); sliding_window alone slides every layer (Mistral 7B v0.1). "
               "Counted: q, k, v, o (llama: + attention_bias), gated MLP (llama: + mlp_bias), 2 RMSNorms per layer; "
               "mixtral: num_local_experts experts of intermediate_size and a router in every layer. smollm3: NoPE every "
               "4th layer (no_rope_layers), sliding only with use_sliding_window; ties by default. seed_oss: q/k/v "
               "biases (attention_bias, default true), o_proj's attention_out_bias, head_dim default 128. arcee: "
               "ReLU^2 up/down MLP. apertus: xIELU up/down MLP with two learned scalars per layer, q/k RMSNorm.",
      .unverified = "arcee and apertus: tested on fine-tunes' real configs (Austral-AFM-SFT, Science-Expert-R1), "
                    "no official file was found; apertus matches Hugging Face's count of Apertus-8B-2509 exactly, "
                    "arcee is one vocabulary row above AFM-4.5B-Base's (the fine-tune's vocab_size 128,005).",
      // LlamaConfig's and MistralConfig's defaults, which a LLaVA text_config relies on (llava-1.5
      // states only vocab_size, max_position_embeddings and rms_norm_eps).
      .defaults = {{"seed_oss", "head_dim", 128},
                   {"llama", "hidden_size", 4096, true}, {"llama", "intermediate_size", 11008, true},
                   {"llama", "num_hidden_layers", 32, true}, {"llama", "num_attention_heads", 32, true},
                   {"mistral", "hidden_size", 4096, true}, {"mistral", "intermediate_size", 14336, true},
                   {"mistral", "num_hidden_layers", 32, true}, {"mistral", "num_attention_heads", 32, true},
                   {"mistral", "num_key_value_heads", 8, true}},
      .default_kinds = default_kinds,
      .finish_layout = finish_layout,
      .count = count,
  };
  return family;
}

}  // namespace kvplan::arch
