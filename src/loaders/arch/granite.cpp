// IBM Granite 4.0-H (transformers modeling_granitemoehybrid.py): Mamba2 and attention layers, each
// with routed experts and a shared MLP.

#include <fmt/format.h>

#include "kvplan/error.h"
#include "loaders/tensor_parts.h"

namespace kvplan::arch {

namespace {

/// Granite 4.0 hybrid: input and post-attention norms; a "mamba" layer's mixer is a Mamba2 layer
/// with d_inner = mamba_expand x H (in_proj and out_proj biases with mamba_proj_bias, conv bias with
/// mamba_conv_bias, default true); an "attention" layer has q, k, v, o of head dim H / heads
/// (+ biases with attention_bias). Every layer's FFN: with num_local_experts a router H x E (no
/// bias), input_linear E x 2I x H and output_linear E x H x I; and always shared_mlp 3 x H x
/// shared_intermediate_size.
ParamCount hybrid(ConfigFields& fields, const Layout& layout) {
  ParamCount count = start_count(fields, layout);
  const u64 hidden = layout.hidden;
  const u64 layers = layout.count();
  if (!fields.has("layer_types")) fields.fail("layer_types", fmt::format("has 0 entries but num_hidden_layers is {}", layers));
  const u64 heads = layout.heads;
  const u64 kv_heads = fields.uint_or("num_key_value_heads", heads);
  if (hidden % heads != 0) fields.fail("num_attention_heads", "does not divide hidden_size");
  const bool attention_bias = fields.flag("attention_bias", false);

  Mamba2Shape shape;
  shape.d_inner = product({fields.positive("mamba_expand"), hidden}, "mamba d_inner");
  shape.heads = fields.positive("mamba_n_heads");
  if (const nlohmann::json* d_head = fields.find("mamba_d_head");
      d_head && d_head->is_number_unsigned() && d_head->get<u64>() * shape.heads != shape.d_inner)
    fields.fail("mamba_d_head", "times mamba_n_heads must equal mamba_expand x hidden_size");
  shape.groups = fields.uint_or("mamba_n_groups", 1);
  shape.state = fields.positive("mamba_d_state");
  shape.conv_kernel = fields.positive("mamba_d_conv");
  shape.proj_bias = shape.out_bias = fields.flag("mamba_proj_bias", false);
  shape.conv_bias = fields.flag("mamba_conv_bias", true);
  const u64 mamba = mamba2_params(hidden, shape);

  const u64 head_dim = hidden / heads;
  u64 attention = gqa_params(hidden, heads, kv_heads, head_dim, head_dim);
  if (attention_bias) attention = checked_add(attention, product({2 * heads + 2 * kv_heads, head_dim}, "attention bias"), "attention");

  Counted counted;
  counted.final_norm = hidden;
  counted.experts = fields.uint_or("num_local_experts", 0);
  const u64 shared = product({3, hidden, fields.uint_or("shared_intermediate_size", 0)}, "shared_mlp");
  if (counted.experts > 0) counted.top_k = fields.positive("num_experts_per_tok");
  for (u64 i = 0; i < layers; ++i) {
    const std::string& type = layout.layers[i].block;
    Sum sum;
    if (type == "mamba") sum.add(mamba, "layer");
    else if (type == "attention") sum.add(attention, "layer");
    else throw unsupported_architecture(fmt::format("layer_types[{}]", i), type);
    sum.add(product({2, hidden}, "norms"), "layer");
    LayerParams layer;
    if (counted.experts > 0)
      layer = moe_layer(counted.experts, counted.top_k, hidden, fields.positive("intermediate_size"),
                        checked_add(product({hidden, counted.experts}, "router"), shared, "shared_mlp"));
    else
      sum.add(shared, "layer");
    counted.layers.push_back(plus(layer, sum.value));
  }
  finish_count(count, fields, counted);
  return count;
}

ParamCount count(ConfigFields& fields, const Layout& layout) {
  if (fields.model_type() == "granitemoehybrid") return hybrid(fields, layout);
  not_counted(fields);
}

std::vector<StateTensor> state(ConfigFields& fields, const Layout&, const Dtype& dtype) {
  return mamba2_config_state(fields, dtype, dtype);
}

}  // namespace

const Family& family_granite() {
  static const Family family{
      .name = "granite",
      .types = {{"granitemoehybrid"}},
      .gguf = "granitehybrid",
      .fixtures = {"granite-4.0-h-small"},
      .rules = "Granite 4.0-H: layer_types mamba / attention; attention layers cache K and V (NoPE: "
               "position_embedding_type does not change the cache), Mamba2 layers keep a conv and an ssm state at "
               "the model dtype unless mamba_ssm_cache_dtype says otherwise. Counted: Mamba2 mixers of "
               "mamba_expand x hidden, routed experts (fused input_linear / output_linear) and the shared MLP in "
               "every layer.",
      .linear_state = state,
      .count = count,
  };
  return family;
}

}  // namespace kvplan::arch
