// AI21 Jamba (transformers modeling_jamba.py): Mamba (v1) layers with an attention layer every
// attn_layer_period-th, routed experts every expert_layer_period-th.

#include "loaders/tensor_parts.h"

namespace kvplan::arch {

namespace {

/// Mamba (v1): d_inner = mamba_expand x hidden; conv (mamba_d_conv - 1) x d_inner and ssm d_inner
/// x mamba_d_state, at the model dtype unless mamba_ssm_cache_dtype says otherwise.
std::vector<StateTensor> state(ConfigFields& fields, const Layout& layout, const Dtype& dtype) {
  const u64 d_inner = fields.required_uint("mamba_expand") * layout.hidden;
  const u64 d_conv = fields.required_uint("mamba_d_conv");
  const u64 d_state = fields.required_uint("mamba_d_state");
  fields.ignore({"mamba_dt_rank", "mamba_conv_bias", "mamba_proj_bias", "use_mamba_kernels"});
  if (d_conv == 0) fields.fail("mamba_d_conv", "must be at least 1");
  return {{"conv", (d_conv - 1) * d_inner, &dtype},
          {"ssm", d_inner * d_state, &state_dtype(fields, {"mamba_ssm_cache_dtype", "mamba_ssm_dtype"}, dtype)}};
}

}  // namespace

const Family& family_jamba() {
  static const Family family{
      .name = "jamba",
      .types = {{"jamba"}},
      .gguf = "jamba",
      .fixtures = {"jamba-v0.1"},
      .rules = "attn_layer_period / attn_layer_offset: layer i attends when i % period == offset (4 of Jamba's 32), "
               "the others are Mamba layers keeping a conv and an ssm state of mamba_expand x hidden channels.",
      .linear_state = state,
  };
  return family;
}

}  // namespace kvplan::arch
