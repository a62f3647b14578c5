// IBM Granite 3 (granite, granitemoe, granitemoeshared), Granite 4.0-H (granitemoehybrid) and
// Bamba, whose Mamba2 hybrid Granite 4.0-H derives from (transformers modeling_granite.py,
// modeling_granitemoe.py, modeling_granitemoeshared.py, modeling_granitemoehybrid.py,
// modeling_bamba.py). Granite's multipliers (attention, embedding, residual, logits) are scalars.

#include <fmt/format.h>

#include "kvplan/error.h"
#include "loaders/json_reader.h"
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

/// Granite 3 dense: the Llama layout (attention_bias, mlp_bias). GraniteMoe: Llama attention,
/// block_sparse_moe.input_linear E x 2I x H (gate and up fused) and output_linear E x H x I, router
/// E x H; GraniteMoeShared adds shared_mlp input_linear 2S x H and output_linear H x S
/// (shared_intermediate_size S, 0 = none). Two RMSNorms per layer.
ParamCount dense_or_moe(ConfigFields& fields, const Layout& layout) {
  check_attention(fields, layout);
  ParamCount count = start_count(fields, layout);
  const std::string& type = fields.model_type();
  const u64 hidden = layout.hidden;
  Attention attention;
  attention.qkv_bias = attention.o_bias = fields.flag("attention_bias", false);
  const u64 intermediate = fields.positive("intermediate_size");
  Counted counted;
  if (type == "granite") {
    DenseDecoder decoder;
    decoder.attention = attention;
    decoder.intermediate = intermediate;
    decoder.mlp_bias = fields.flag("mlp_bias", false);
    decoder.layer_norms = 2 * hidden;
    counted = dense_decoder(layout, decoder);
  } else {
    counted.experts = fields.positive("num_local_experts");
    counted.top_k = fields.positive("num_experts_per_tok");
    if (counted.top_k > counted.experts) fields.fail("num_experts_per_tok", "is larger than the number of experts");
    const u64 shared = type == "granitemoeshared" ? product({3, hidden, fields.uint_or("shared_intermediate_size", 0)}, "shared_mlp") : 0;
    const u64 always = checked_add(product({hidden, counted.experts}, "router"), shared, "shared_mlp");
    for (const LayerPlan& layer : layout.layers)
      counted.layers.push_back(plus(moe_layer(counted.experts, counted.top_k, hidden, intermediate, always),
                                    attention_params(layout, layer, attention) + 2 * hidden));
  }
  counted.final_norm = hidden;
  finish_count(count, fields, counted);
  return count;
}

/// Bamba: the layers in attn_layer_indices attend, the others are Mamba2 mixers of d_inner =
/// mamba_expand x H (gated norm always, in/out_proj bias with mamba_proj_bias, conv bias with
/// mamba_conv_bias, default true); attention q, k, v, o without bias (BambaConfig hard-codes
/// attention_bias false), head_dim H / heads; every layer a gated MLP of intermediate_size and two
/// RMSNorms.
ParamCount bamba(ConfigFields& fields, const Layout& layout) {
  ParamCount count = start_count(fields, layout);
  const u64 hidden = layout.hidden;
  Mamba2Shape shape;
  shape.d_inner = product({fields.positive("mamba_expand"), hidden}, "mamba d_inner");
  shape.heads = fields.positive("mamba_n_heads");
  if (shape.d_inner % shape.heads != 0) fields.fail("mamba_n_heads", "does not divide mamba_expand x hidden_size");
  shape.groups = fields.positive("mamba_n_groups");
  shape.state = fields.positive("mamba_d_state");
  shape.conv_kernel = fields.positive("mamba_d_conv");
  shape.proj_bias = shape.out_bias = fields.flag("mamba_proj_bias", false);
  shape.conv_bias = fields.flag("mamba_conv_bias", true);
  const u64 mamba = mamba2_params(hidden, shape);
  if (layout.any(LayerKind::full)) check_attention(fields, layout);
  const u64 mlp = mlp_params(hidden, fields.positive("intermediate_size"), true, fields.flag("mlp_bias", false));
  Counted counted;
  counted.final_norm = hidden;
  for (const LayerPlan& layer : layout.layers) {
    const u64 mixer = layer.kind == LayerKind::linear ? mamba : attention_params(layout, layer, {});
    counted.layers.push_back(layer_of(mixer + mlp + 2 * hidden));
  }
  finish_count(count, fields, counted);
  return count;
}

ParamCount count(ConfigFields& fields, const Layout& layout) {
  const std::string& type = fields.model_type();
  if (type == "granitemoehybrid") return hybrid(fields, layout);
  if (type == "bamba") return bamba(fields, layout);
  return dense_or_moe(fields, layout);
}

/// Bamba: attention on the attn_layer_indices layers (none when absent), Mamba2 elsewhere.
bool default_kinds(ConfigFields& fields, Layout& layout) {
  if (fields.model_type() != "bamba") return false;
  for (LayerPlan& layer : layout.layers) {
    layer.kind = LayerKind::linear;
    layer.block = "mamba";
  }
  for (const u64 i : fields.index_list("attn_layer_indices")) {
    if (i >= layout.count()) fields.fail("attn_layer_indices", fmt::format("layer {} is past the last layer", i));
    layout.layers[i].kind = LayerKind::full;
    layout.layers[i].block = "attention";
  }
  return true;
}

/// Granite 4.0-H: the Mamba2 sizes as its config spells them. Bamba: BambaConfig's defaults for
/// what its config leaves out, and mamba_d_head "auto" = d_inner / mamba_n_heads.
std::vector<StateTensor> state(ConfigFields& fields, const Layout& layout, const Dtype& dtype) {
  if (fields.model_type() != "bamba") return mamba2_config_state(fields, dtype, dtype);
  const u64 heads = fields.positive("mamba_n_heads");
  const u64 d_inner = fields.positive("mamba_expand") * layout.hidden;
  const nlohmann::json* d_head = fields.find("mamba_d_head");
  const u64 head_dim = d_head && !d_head->is_string() ? json_to_uint(*d_head, fields.where("mamba_d_head")) : d_inner / heads;
  if (head_dim * heads != d_inner) fields.fail("mamba_d_head", "times mamba_n_heads must equal mamba_expand x hidden_size");
  const u64 d_conv = fields.positive("mamba_d_conv");
  fields.ignore({"mamba_chunk_size", "mamba_conv_bias", "mamba_proj_bias", "use_mamba_kernels"});
  return mamba2_state(d_inner, fields.positive("mamba_n_groups"), fields.positive("mamba_d_state"), heads, head_dim, d_conv, dtype,
                      state_dtype(fields, {"mamba_ssm_cache_dtype", "mamba_ssm_dtype"}, dtype));
}

}  // namespace

const Family& family_granite() {
  static const Family family{
      .name = "granite",
      .types = {{"granite"}, {"granitemoe"}, {"granitemoeshared"}, {"granitemoehybrid"}, {"bamba"}},
      .gguf = "granite, granitemoe (also granitemoeshared), granitehybrid (also bamba)",
      .fixtures = {"granite-3.3-8b-instruct", "granite-3.1-3b-a800m", "granite-4.0-h-small", "granite-4.0-h-tiny",
                   "granite-4.0-h-1b", "bamba-9b"},
      .rules = "granite, granitemoe, granitemoeshared: full attention (Llama fields). Bamba: attention on the "
               "attn_layer_indices layers, Mamba2 elsewhere (BambaConfig defaults for the sizes a config omits). "
               "Granite 4.0-H: layer_types mamba / attention; attention layers cache K and V (NoPE: "
               "position_embedding_type does not change the cache), Mamba2 layers keep a conv and an ssm state at "
               "the model dtype unless mamba_ssm_cache_dtype says otherwise. Counted: Mamba2 mixers of "
               "mamba_expand x hidden, routed experts (fused input_linear / output_linear) and the shared MLP in "
               "every layer. granitemoe: fused experts; granitemoeshared adds a shared MLP of "
               "shared_intermediate_size.",
      .unverified = "granitemoeshared: no config.json of a checkpoint was found; checked only on the granitemoe "
                    "fixture's shapes with a shared MLP added. bamba: the fixture holds 5 fields and the count rests "
                    "on BambaConfig's defaults for the rest (vocab_size, intermediate_size, KV heads, Mamba heads); "
                    "no exact published count. Granite 4.0-H Tiny / 1B: trimmed copies, no exact published count.",
      .defaults = {{"bamba", "vocab_size", 128'000}, {"bamba", "intermediate_size", 14'336}, {"bamba", "num_key_value_heads", 8},
                   {"bamba", "mamba_n_heads", 128}, {"bamba", "mamba_n_groups", 1}, {"bamba", "mamba_d_state", 256},
                   {"bamba", "mamba_d_conv", 4}, {"bamba", "mamba_expand", 2}},
      .default_kinds = default_kinds,
      .linear_state = state,
      .count = count,
  };
  return family;
}

}  // namespace kvplan::arch
