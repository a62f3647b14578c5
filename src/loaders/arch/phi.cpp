// Microsoft Phi-3 and Phi-4 (transformers modeling_phi3.py): the Llama shapes with q, k, v fused into
// qkv_proj and gate and up into gate_up_proj, no biases.

#include "loaders/tensor_parts.h"

namespace kvplan::arch {

namespace {

/// Phi-3: qkv_proj (heads + 2 kv) x head_dim x H, o_proj, gate_up_proj 2I x H, down_proj, 2
/// RMSNorms per layer; the same count as separate q, k, v, gate and up projections.
ParamCount count(ConfigFields& fields, const Layout& layout) {
  check_attention(fields, layout);
  ParamCount count = start_count(fields, layout);
  const u64 hidden = layout.hidden;
  const u64 mlp = mlp_params(hidden, fields.positive("intermediate_size"), true, false);
  Counted counted;
  counted.final_norm = hidden;
  for (const LayerPlan& layer : layout.layers)
    counted.layers.push_back({attention_params(layout, layer, {}) + mlp + 2 * hidden, 0, 0});
  finish_count(count, fields, counted);
  return count;
}

}  // namespace

const Family& family_phi() {
  static const Family family{
      .name = "phi",
      .types = {{"phi3"}},
      .gguf = "phi3",
      .fixtures = {"phi3-mini", "phi4"},
      .rules = "Phi-3 / Phi-4 (phi3): full attention, sliding_window on every layer when set (Phi-3-mini-4k: 2047; "
               "llama.cpp ignores it). head_dim = hidden_size / num_attention_heads; partial_rotary_factor and LongRoPE "
               "change no cache size. Counted with the fused qkv_proj and gate_up_proj.",
      .count = count,
  };
  return family;
}

}  // namespace kvplan::arch
