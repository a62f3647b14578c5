// Liquid LFM2 and LFM2-MoE (vLLM lfm2.py / lfm2_moe.py; transformers modeling_lfm2.py):
// short-convolution layers and a few attention layers.

#include <fmt/format.h>

#include "kvplan/error.h"
#include "loaders/tensor_parts.h"
#include "model/checked.h"

namespace kvplan::arch {

namespace {

/// Attention layers qkv H x (q + 2 kv) x d, out_proj, q/k layernorms d each, d = hidden / heads;
/// short-conv layers in_proj H x 3H, depthwise conv H x conv_L_cache, out_proj H x H (+ biases with
/// conv_bias); 2 norms. LFM2 MLP: width intermediate_size (block_ff_dim when given), with
/// block_auto_adjust_ff_dim 2/3 of it x block_ffn_dim_multiplier rounded up to block_multiple_of.
/// LFM2-MoE: the first num_dense_layers dense (3 x H x intermediate_size), the others a gate H x E,
/// expert bias E (use_expert_bias), E experts of 3 x H x moe_intermediate_size.
ParamCount count(ConfigFields& fields, const Layout& layout) {
  ParamCount count = start_count(fields, layout);
  const u64 hidden = layout.hidden;
  const u64 layers = layout.count();
  const u64 heads = layout.heads;
  const u64 kv_heads = fields.positive("num_key_value_heads");
  if (hidden % heads != 0) fields.fail("num_attention_heads", "does not divide hidden_size");
  const u64 head_dim = hidden / heads;
  const u64 kernel = fields.positive("conv_L_cache");
  const bool conv_bias = fields.flag("conv_bias", false);
  const bool moe = fields.model_type() == "lfm2_moe";
  u64 dense_width = 0;
  if (moe) {
    dense_width = fields.positive("intermediate_size");
  } else {
    dense_width = fields.has("block_ff_dim") ? fields.positive("block_ff_dim") : fields.positive("intermediate_size");
    if (fields.flag("block_auto_adjust_ff_dim", true)) {
      dense_width = 2 * dense_width / 3;
      const nlohmann::json* multiplier = fields.find("block_ffn_dim_multiplier");
      const double factor = multiplier && multiplier->is_number() ? multiplier->get<double>() : 1.0;
      if (multiplier == nullptr || multiplier->is_number()) {
        dense_width = static_cast<u64>(factor * static_cast<double>(dense_width));
        const u64 multiple = fields.positive_or("block_multiple_of", 256);
        dense_width = round_up_to(dense_width, multiple, "feed-forward width");
      }
    }
  }
  const u64 dense_layers = moe ? fields.uint_or("num_dense_layers", 2) : layers;
  Counted counted;
  counted.final_norm = hidden;
  u64 moe_width = 0;
  if (moe) {
    counted.experts = fields.positive("num_experts");
    counted.top_k = fields.positive("num_experts_per_tok");
    moe_width = fields.positive("moe_intermediate_size");
  }
  const u64 expert_bias = moe && fields.flag("use_expert_bias", true) ? counted.experts : 0;
  for (u64 i = 0; i < layers; ++i) {
    const std::string& block = layout.layers[i].block;
    if (block != "conv" && block != "full_attention") throw unsupported_architecture(fmt::format("layer_types[{}]", i), block);
    Sum sum;
    if (block == "full_attention") {
      sum.add(gqa_params(hidden, heads, kv_heads, head_dim, head_dim), "layer");
      sum.add(2 * head_dim, "layer");
    } else {
      sum.add(product({4, hidden, hidden}, "short conv projections"), "layer");
      sum.add(product({hidden, kernel}, "short conv"), "layer");
      if (conv_bias) sum.add(product({5, hidden}, "short conv bias"), "layer");
    }
    sum.add(product({2, hidden}, "norms"), "layer");
    LayerParams layer;
    if (i < dense_layers)
      sum.add(mlp_params(hidden, dense_width, true, false), "layer");
    else
      layer = moe_layer(counted.experts, counted.top_k, hidden, moe_width,
                        checked_add(product({hidden, counted.experts}, "router"), expert_bias, "router"));
    counted.layers.push_back(plus(layer, sum.value));
  }
  finish_count(count, fields, counted);
  return count;
}

/// LFM2 short convolution (vLLM short_conv_state_shape): (conv_L_cache - 1) x hidden at the model dtype.
std::vector<StateTensor> state(ConfigFields& fields, const Layout& layout, const Dtype& dtype) {
  const u64 kernel = fields.positive("conv_L_cache");
  fields.ignore({"conv_bias", "conv_dim", "conv_dim_out", "conv_use_xavier_init"});
  return {{"conv", (kernel - 1) * layout.hidden, &dtype, layout.hidden}};
}

}  // namespace

const Family& family_lfm2() {
  static const Family family{
      .name = "lfm2",
      .types = {{"lfm2", true}, {"lfm2_moe", true}},
      .gguf = "lfm2, lfm2moe",
      .fixtures = {"lfm2-350m", "lfm2-8b-a1b"},
      .rules = "layer_types (conv / full_attention) or full_attn_idxs (the attention layers; the rest convolve): "
               "attention layers cache K and V, conv layers keep (conv_L_cache - 1) x hidden per sequence. Counted: "
               "short-conv and attention layers, the auto-adjusted MLP width, LFM2-MoE's experts after "
               "num_dense_layers dense layers.",
      .linear_state = state,
      .count = count,
  };
  return family;
}

}  // namespace kvplan::arch
