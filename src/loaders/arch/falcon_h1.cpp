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

std::vector<StateTensor> state(ConfigFields& fields, const Layout&, const Dtype& dtype) {
  return mamba2_config_state(fields, dtype, dtype);
}

}  // namespace

const Family& family_falcon_h1() {
  static const Family family{
      .name = "falcon_h1",
      .types = {{"falcon_h1"}},
      .gguf = "falcon-h1",
      .fixtures = {"falcon-h1-0.5b"},
      .rules = "A parallel hybrid: every layer caches K and V and keeps a Mamba2 conv and ssm state (d_inner = "
               "mamba_d_ssm, else mamba_n_heads x mamba_d_head).",
      .state_on_every_layer = true,
      .default_kinds = default_kinds,
      .linear_state = state,
  };
  return family;
}

}  // namespace kvplan::arch
