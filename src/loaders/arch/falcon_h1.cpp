// TII Falcon-H1 (transformers modeling_falcon_h1.py): attention and a Mamba2 mixer side by side in
// every layer.

#include "loaders/tensor_parts.h"

namespace kvplan::arch {

namespace {

/// Every layer attends and keeps a Mamba2 state (FalconH1Config layers_block_type "hybrid"; older
/// configs carry attn_layer_indices null).
bool default_kinds(ConfigFields& fields, Layout& layout) {
  if (fields.find("attn_layer_indices")) fields.fail("attn_layer_indices", "is not supported yet");
  for (LayerPlan& layer : layout.layers) layer.kind = LayerKind::full;
  return true;
}

/// Every layer (FalconH1DecoderLayer): a Mamba2 mixer (d_ssm = mamba_d_ssm, else mamba_n_heads x
/// mamba_d_head as the cache reader takes it; in_proj bias with mamba_proj_bias, conv bias with
/// mamba_conv_bias (default true), the gated norm only with mamba_rms_norm, out_proj bias with
/// projectors_bias), attention q, k, v, o (attention_bias) of head_dim, a gated MLP (mlp_bias),
/// input_layernorm and pre_ff_layernorm; final_layernorm; untied by default. mup_vector is a
/// non-persistent buffer and the *_multiplier fields are scalars.
ParamCount count(ConfigFields& fields, const Layout& layout) {
  check_attention(fields, layout);
  ParamCount count = start_count(fields, layout);
  const u64 hidden = layout.hidden;
  Mamba2Shape shape;
  shape.heads = fields.positive("mamba_n_heads");
  if (fields.has("mamba_d_ssm")) {
    shape.d_inner = fields.positive("mamba_d_ssm");
  } else {
    shape.d_inner = product({shape.heads, fields.positive("mamba_d_head")}, "mamba d_ssm");
    fields.note("mamba_d_ssm absent: d_ssm = mamba_n_heads x mamba_d_head");
  }
  shape.groups = fields.positive("mamba_n_groups");
  shape.state = fields.positive("mamba_d_state");
  shape.conv_kernel = fields.positive("mamba_d_conv");
  shape.proj_bias = fields.flag("mamba_proj_bias", false);
  shape.out_bias = fields.flag("projectors_bias", false);
  shape.conv_bias = fields.flag("mamba_conv_bias", true);
  shape.gated_norm = fields.flag("mamba_rms_norm", false);
  const u64 mamba = mamba2_params(hidden, shape);
  DenseDecoder decoder;
  decoder.attention.qkv_bias = decoder.attention.o_bias = fields.flag("attention_bias", false);
  decoder.intermediate = fields.positive("intermediate_size");
  decoder.mlp_bias = fields.flag("mlp_bias", false);
  decoder.layer_norms = 2 * hidden;
  decoder.layer_extra = mamba;
  Counted counted = dense_decoder(layout, decoder);
  counted.final_norm = hidden;
  finish_count(count, fields, counted);
  return count;
}

std::vector<StateTensor> state(ConfigFields& fields, const Layout&, const Dtype& dtype) {
  return mamba2_config_state(fields, dtype, dtype);
}

}  // namespace

const Family& family_falcon_h1() {
  static const Family family{
      .name = "falcon_h1",
      .types = {{"falcon_h1"}},
      .gguf = "falcon-h1",
      .fixtures = {"falcon-h1-0.5b", "falcon-h1-7b", "falcon-h1-3b"},
      .rules = "A parallel hybrid: every layer caches K and V and keeps a Mamba2 conv and ssm state (d_inner = "
               "mamba_d_ssm, else mamba_n_heads x mamba_d_head). Counted: attention, Mamba2 and a gated MLP in every "
               "layer.",
      .unverified = "No exact published count of any Falcon-H1 checkpoint was found; the 7B and 3B copies lack the "
                    "bias and norm flags (their defaults are used).",
      .state_on_every_layer = true,
      .default_kinds = default_kinds,
      .linear_state = state,
      .count = count,
  };
  return family;
}

}  // namespace kvplan::arch
