// NVIDIA Nemotron-4 / Minitron (nemotron: transformers modeling_nemotron.py) and Nemotron-H /
// Nemotron 3 (nemotron_h, modeling_nemotron_h.py: one mixer per block, Mamba2, attention, a relu^2
// MLP or routed experts, and one norm per block).

#include <fmt/format.h>

#include "kvplan/error.h"
#include "loaders/tensor_parts.h"

namespace kvplan::arch {

namespace {

/// Blocks: Mamba2 (NemotronHMamba2Mixer: d_inner = mamba_num_heads x mamba_head_dim, in_proj and
/// out_proj biases with use_bias, conv bias with use_conv_bias, default true), attention
/// (attention_bias), MLP up + down of intermediate_size (mlp_bias), MoE n_routed_experts experts of
/// 2 x (H, or moe_latent_size) x moe_intermediate_size, router E x H + E bias, a shared expert of
/// moe_shared_expert_intermediate_size, latent projections H x L and L x H when set. One norm per block.
ParamCount nemotron_h(ConfigFields& fields, const Layout& layout) {
  ParamCount count = start_count(fields, layout);
  const u64 hidden = layout.hidden;
  const bool bias = fields.flag("mlp_bias", false);
  u64 attention = 0;
  if (layout.any(LayerKind::full)) {
    check_attention(fields, layout);
    Attention a;
    a.qkv_bias = a.o_bias = fields.flag("attention_bias", false);
    attention = attention_params(layout, *std::find_if(layout.layers.begin(), layout.layers.end(),
                                                       [](const LayerPlan& l) { return l.kind == LayerKind::full; }),
                                 a);
  }
  u64 mamba = 0;
  if (layout.any(LayerKind::linear)) {
    Mamba2Shape shape;
    shape.heads = fields.positive("mamba_num_heads");
    shape.d_inner = product({shape.heads, fields.positive("mamba_head_dim")}, "mamba d_inner");
    shape.groups = fields.positive("n_groups");
    shape.state = fields.positive("ssm_state_size");
    shape.conv_kernel = fields.positive("conv_kernel");
    shape.proj_bias = shape.out_bias = fields.flag("use_bias", false);
    shape.conv_bias = fields.flag("use_conv_bias", true);
    mamba = mamba2_params(hidden, shape);
  }
  Counted counted;
  counted.final_norm = hidden;
  u64 dense = 0;
  u64 moe_width = 0;
  u64 expert_width = hidden;
  u64 always = 0;
  for (const LayerPlan& layer : layout.layers) {
    if (layer.block == "mlp" && !dense) dense = mlp_params(hidden, fields.positive("intermediate_size"), false, bias);
    if (layer.block == "moe" && !counted.experts) {
      counted.experts = fields.positive("n_routed_experts");
      counted.top_k = fields.positive("num_experts_per_tok");
      if (counted.top_k > counted.experts) fields.fail("num_experts_per_tok", "is larger than the number of experts");
      const std::optional<u64> latent = fields.uint("moe_latent_size");
      expert_width = latent.value_or(hidden);
      moe_width = fields.positive("moe_intermediate_size");
      Sum sum;
      sum.add(product({hidden, counted.experts}, "router"), "MoE");
      sum.add(counted.experts, "MoE");  // e_score_correction_bias
      if (const u64 shared = fields.uint_or("moe_shared_expert_intermediate_size", 0); shared > 0)
        sum.add(mlp_params(hidden, shared, false, bias), "MoE");
      if (latent) {
        sum.add(product({2, hidden, *latent}, "latent projections"), "MoE");
        if (bias) sum.add(checked_add(*latent, hidden, "latent bias"), "MoE");
      }
      always = sum.value;
    }
  }
  for (std::size_t i = 0; i < layout.count(); ++i) {
    const LayerPlan& layer = layout.layers[i];
    const u64 norm = hidden;
    if (layer.block == "mamba") counted.layers.push_back(layer_of(mamba + norm));
    else if (layer.block == "attention") counted.layers.push_back(layer_of(attention + norm));
    else if (layer.block == "mlp") counted.layers.push_back(layer_of(dense + norm));
    else if (layer.block == "moe")
      counted.layers.push_back(plus(moe_layer(counted.experts, counted.top_k, expert_width, moe_width, always, 2), norm));
    else throw unsupported_architecture(fmt::format("layers_block_type[{}]", i), layer.block);
  }
  fields.note("Mamba2 d_inner = mamba_num_heads x mamba_head_dim (expand not used)");
  finish_count(count, fields, counted);
  return count;
}

/// Nemotron: q, k, v, o (attention_bias) of the given head_dim, an up / down relu^2 MLP
/// (mlp_bias), NemotronLayerNorm1P (weight and bias) as input and post-attention norms and the
/// final norm; untied by default.
ParamCount nemotron(ConfigFields& fields, const Layout& layout) {
  check_attention(fields, layout);
  ParamCount count = start_count(fields, layout);
  DenseDecoder decoder;
  decoder.attention.qkv_bias = decoder.attention.o_bias = fields.flag("attention_bias", false);
  decoder.gated = false;
  decoder.mlp_bias = fields.flag("mlp_bias", false);
  decoder.intermediate = fields.positive("intermediate_size");
  decoder.layer_norms = 4 * layout.hidden;
  Counted counted = dense_decoder(layout, decoder);
  counted.final_norm = 2 * layout.hidden;
  finish_count(count, fields, counted);
  return count;
}

ParamCount count(ConfigFields& fields, const Layout& layout) {
  if (fields.model_type() == "nemotron_h") return nemotron_h(fields, layout);
  return nemotron(fields, layout);
}

/// vLLM's NemotronH config keeps the SSM state in float32 unless the config says otherwise.
std::vector<StateTensor> state(ConfigFields& fields, const Layout&, const Dtype& dtype) {
  if (fields.model_type() != "nemotron_h") throw unsupported_architecture(fields.origin() + ": model_type", fields.model_type() + " (linear layers of a kind kvplan cannot size)");
  return mamba2_config_state(fields, dtype, parse_weight_dtype("fp32"));
}

}  // namespace

const Family& family_nemotron() {
  static const Family family{
      .name = "nemotron",
      .types = {{"nemotron"}, {"nemotron_h"}},
      .gguf = "nemotron, nemotron_h, nemotron_h_moe",
      .fixtures = {"minitron-4b-base", "nemotron3-nano", "nemotron3-ultra"},
      .rules = "nemotron: full attention of the given head_dim (not always hidden_size / heads). nemotron_h: one block per layer from hybrid_override_pattern (M Mamba2, * attention, - MLP, E MoE) or "
               "layers_block_type (whose length is the layer count when num_hidden_layers is absent); only attention "
               "blocks grow with the context, Mamba2 blocks keep a conv and an ssm state (float32 unless "
               "mamba_ssm_cache_dtype says otherwise, as vLLM does), MLP and MoE blocks nothing. MTP modules "
               "(mtp_layers_block_type / mtp_hybrid_override_pattern) cache only their attention blocks.",
      .unverified = "nemotron (Minitron-4B-Base): no exact published count was found; 4,190,509,056 is checked by "
                    "hand against the modelling code (the \"4B\" of its name).",
      .linear_state = state,
      .count = count,
  };
  return family;
}

}  // namespace kvplan::arch
