// Zhipu GLM-4 dense in transformers' own format: glm (GLM-4-9B-Chat-hf) and glm4 (GLM-4-0414),
// modeling_glm.py and modeling_glm4.py. (GLM-4.5 and later are in deepseek.cpp.)

#include "loaders/tensor_parts.h"

namespace kvplan::arch {

namespace {

/// GlmAttention: q, k, v with bias=attention_bias (default true), o_proj without; Phi3MLP's fused
/// gate_up_proj 2I x H and down_proj; input and post-attention RMSNorms, and in glm4 also
/// post_self_attn_layernorm and post_mlp_layernorm.
ParamCount count(ConfigFields& fields, const Layout& layout) {
  check_attention(fields, layout);
  ParamCount count = start_count(fields, layout);
  DenseDecoder decoder;
  decoder.attention.qkv_bias = fields.flag("attention_bias", true);
  decoder.intermediate = fields.positive("intermediate_size");
  decoder.layer_norms = (fields.model_type() == "glm4" ? 4 : 2) * layout.hidden;
  Counted counted = dense_decoder(layout, decoder);
  counted.final_norm = layout.hidden;
  finish_count(count, fields, counted);
  return count;
}

}  // namespace

const Family& family_glm() {
  static const Family family{
      .name = "glm",
      .types = {{"glm"}, {"glm4"}},
      .gguf = "chatglm (glm), glm4",
      .fixtures = {"glm-4-9b-chat-hf", "glm-v2-lora"},
      .rules = "Full attention with num_key_value_heads (GlmConfig default 2) of head_dim (default 128); "
               "partial_rotary_factor changes no cache size. Counted: q/k/v biases (attention_bias, default true), "
               "the fused gate_up MLP; glm4 has 4 norms per layer.",
      .unverified = "glm4: no official GLM-4-0414 config.json was found; tested on a fine-tune's (GLM-v2-lora, "
                    "GLM-4-32B-0414's shapes, 32.57B) and on the GLM-4-9B shapes, whose 9,400,279,040 a public note "
                    "gives as GLM-4-9B-0414's safetensors count.",
      .defaults = {{"", "head_dim", 128}, {"", "num_key_value_heads", 2}},
      .count = count,
  };
  return family;
}

}  // namespace kvplan::arch
