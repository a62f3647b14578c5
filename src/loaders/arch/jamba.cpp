// AI21 Jamba (transformers modeling_jamba.py): Mamba (v1) layers with an attention layer every
// attn_layer_period-th, routed experts every expert_layer_period-th.

#include "loaders/json_reader.h"
#include "loaders/tensor_parts.h"
#include "model/checked.h"

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
  // mamba1_state_shape: both split d_inner's channels over the ranks.
  return {{"conv", (d_conv - 1) * d_inner, &dtype, d_inner},
          {"ssm", d_inner * d_state, &state_dtype(fields, {"mamba_ssm_cache_dtype", "mamba_ssm_dtype"}, dtype), d_inner}};
}

/// Mamba layers (JambaMambaMixer): d_inner = mamba_expand x H, R = mamba_dt_rank ("auto" =
/// ceil(H / 16)), N = mamba_d_state: in_proj 2 d_inner x H, conv1d d_inner x mamba_d_conv (+ bias
/// with mamba_conv_bias), x_proj (R + 2N) x d_inner, dt_proj d_inner x R + bias, A_log d_inner x
/// N, D d_inner, out_proj H x d_inner (in_proj and out_proj biases with mamba_proj_bias),
/// dt_layernorm R, b_layernorm N, c_layernorm N. Attention layers q, k, v, o without bias. FFN:
/// num_experts experts of 3 x H x intermediate_size and a router E x H when i % expert_layer_period
/// == expert_layer_offset, else a dense gated MLP. input_layernorm and pre_ff_layernorm; final norm.
ParamCount count(ConfigFields& fields, const Layout& layout) {
  if (layout.any(LayerKind::full)) check_attention(fields, layout);
  ParamCount count = start_count(fields, layout);
  const u64 hidden = layout.hidden;
  const u64 d_inner = product({fields.positive("mamba_expand"), hidden}, "mamba d_inner");
  const u64 d_state = fields.positive("mamba_d_state");
  const nlohmann::json* rank = fields.find("mamba_dt_rank");
  const u64 dt_rank = rank && !rank->is_string() ? json_to_uint(*rank, fields.where("mamba_dt_rank")) : ceil_div(hidden, 16);
  const bool proj_bias = fields.flag("mamba_proj_bias", false);
  Sum mamba;
  mamba.add(product({2, d_inner, hidden}, "mamba in_proj"), "Mamba");
  mamba.add(product({d_inner, fields.positive("mamba_d_conv")}, "mamba conv1d"), "Mamba");
  if (fields.flag("mamba_conv_bias", true)) mamba.add(d_inner, "Mamba");
  mamba.add(product({dt_rank + 2 * d_state, d_inner}, "mamba x_proj"), "Mamba");
  mamba.add(checked_add(product({d_inner, dt_rank}, "mamba dt_proj"), d_inner, "mamba dt_proj"), "Mamba");
  mamba.add(product({d_inner, d_state}, "mamba A_log"), "Mamba");
  mamba.add(d_inner, "Mamba");
  mamba.add(product({hidden, d_inner}, "mamba out_proj"), "Mamba");
  if (proj_bias) mamba.add(2 * d_inner + hidden, "Mamba");
  mamba.add(dt_rank + 2 * d_state, "Mamba");  // dt, b and c layernorms
  const u64 period = fields.uint_or("expert_layer_period", 2);
  const u64 offset = fields.uint_or("expert_layer_offset", 1);
  if (period == 0) fields.fail("expert_layer_period", "must be at least 1");
  const u64 intermediate = fields.positive("intermediate_size");
  Counted counted;
  counted.final_norm = hidden;
  for (u64 i = 0; i < layout.count(); ++i) {
    const LayerPlan& layer = layout.layers[i];
    const u64 own = (layer.kind == LayerKind::linear ? mamba.value : attention_params(layout, layer, {})) + 2 * hidden;
    if (i % period == offset && fields.uint_or("num_experts", 1) > 1) {
      counted.experts = fields.positive("num_experts");
      counted.top_k = fields.positive("num_experts_per_tok");
      if (counted.top_k > counted.experts) fields.fail("num_experts_per_tok", "is larger than the number of experts");
      counted.layers.push_back(
          plus(moe_layer(counted.experts, counted.top_k, hidden, intermediate, product({hidden, counted.experts}, "router")), own));
    } else {
      counted.layers.push_back(layer_of(own + mlp_params(hidden, intermediate, true, false)));
    }
  }
  finish_count(count, fields, counted);
  return count;
}

}  // namespace

const Family& family_jamba() {
  static const Family family{
      .name = "jamba",
      .types = {{"jamba"}},
      .gguf = "jamba",
      .fixtures = {"jamba-1.5-mini"},
      .rules = "attn_layer_period / attn_layer_offset: layer i attends when i % period == offset (4 of Jamba's 32), "
               "the others are Mamba layers keeping a conv and an ssm state of mamba_expand x hidden channels. Counted: "
               "Mamba (v1) mixers with their dt/B/C layernorms, experts every expert_layer_period-th layer.",
      .linear_state = state,
      .count = count,
  };
  return family;
}

}  // namespace kvplan::arch
