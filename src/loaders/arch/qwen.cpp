// Qwen2, Qwen3, Qwen3-Next and Qwen3.5 (transformers modeling_qwen2.py, modeling_qwen2_moe.py,
// modeling_qwen3.py, modeling_qwen3_moe.py, modeling_qwen3_next.py, modeling_qwen3_5.py).

#include <fmt/format.h>

#include "kvplan/error.h"
#include "loaders/tensor_parts.h"

namespace kvplan::arch {

namespace {

bool is_next(const std::string& type) { return type.rfind("qwen3_next", 0) == 0 || type.rfind("qwen3_5", 0) == 0; }

/// Qwen2MoeDecoderLayer: sparse when not in mlp_only_layers, num_experts > 0 and
/// (i + 1) % decoder_sparse_step == 0.
bool is_moe_layer(ConfigFields& fields, u64 index) {
  if (fields.uint_or("num_experts", 0) == 0) return false;
  if (fields.index_list("mlp_only_layers").count(index)) return false;
  const u64 step = fields.uint_or("decoder_sparse_step", 1);
  if (step == 0) fields.fail("decoder_sparse_step", "must be at least 1");
  return (index + 1) % step == 0;
}

/// Attention: qwen2 q/k/v bias=True (qwen2_moe: qkv_bias), o_proj none; qwen3 attention_bias on all
/// four and q/k RMSNorm over head_dim; Qwen3-Next/3.5 add the output gate that doubles q_proj
/// (attn_output_gate). Gated DeltaNet layers: gated_deltanet_params. MoE: num_experts experts of
/// 3 x H x moe_intermediate_size, router H x E, a shared expert of shared_expert_intermediate_size
/// with its gate H when set. 2 RMSNorms per layer.
ParamCount count(ConfigFields& fields, const Layout& layout) {
  const std::string& type = fields.model_type();
  const u64 hidden = layout.hidden;
  const bool next = is_next(type);
  if (next && !fields.has("layer_types")) fields.positive("full_attention_interval");
  ParamCount count = start_count(fields, layout);
  Attention attention;
  if (type == "qwen2" || type == "qwen2_moe") {
    attention.qkv_bias = type == "qwen2" ? true : fields.flag("qkv_bias", true);
  } else {
    attention.qkv_bias = attention.o_bias = fields.flag("attention_bias", false);
    attention.qk_norm = 2 * layout.head_dim;
    if (next) attention.q_multiplier = type == "qwen3_next" || fields.flag("attn_output_gate", true) ? 2 : 1;
  }
  check_attention(fields, layout);
  const u64 deltanet = layout.any(LayerKind::linear) ? gated_deltanet_params(fields, hidden) : 0;

  Counted counted;
  counted.final_norm = hidden;
  u64 moe_always = 0;
  u64 moe_width = 0;
  if (fields.uint_or("num_experts", 0) > 0) {
    counted.experts = fields.positive("num_experts");
    counted.top_k = fields.positive("num_experts_per_tok");
    if (counted.top_k > counted.experts) fields.fail("num_experts_per_tok", "is larger than the number of experts");
    moe_width = fields.positive("moe_intermediate_size");
    moe_always = product({hidden, counted.experts}, "router");
    if (const u64 shared = fields.uint_or("shared_expert_intermediate_size", 0); shared > 0)
      moe_always = checked_add(checked_add(moe_always, product({3, hidden, shared}, "shared expert"), "shared expert"), hidden,
                               "shared_expert_gate");
  }
  for (u64 i = 0; i < layout.count(); ++i) {
    const LayerPlan& layer = layout.layers[i];
    u64 own = 2 * hidden;
    if (layer.kind == LayerKind::linear) {
      if (layer.block != "linear_attention") throw unsupported_architecture(fmt::format("layer_types[{}]", i), layer.block);
      own = checked_add(own, deltanet, "layer");
    } else if (layer.attends()) {
      own = checked_add(own, attention_params(layout, layer, attention), "layer");
    } else {
      throw unsupported_architecture(fmt::format("layer_types[{}]", i), layer.block.empty() ? std::string(to_string(layer.kind)) : layer.block);
    }
    if (is_moe_layer(fields, i))
      counted.layers.push_back(plus(moe_layer(counted.experts, counted.top_k, hidden, moe_width, moe_always), own));
    else
      counted.layers.push_back({checked_add(own, mlp_params(hidden, fields.positive("intermediate_size"), true, false), "layer"), 0, 0});
  }
  if (next) {
    if (const u64 mtp = fields.uint_or("mtp_num_hidden_layers", 0); mtp > 0)
      fields.note(fmt::format("{} MTP layer(s) (mtp_num_hidden_layers) not counted", mtp));
    else if (type == "qwen3_next")
      fields.note("the checkpoint's mtp.* weights are not described by the config and not counted");
  }
  finish_count(count, fields, counted);
  return count;
}

/// Gated DeltaNet (vLLM gated_delta_net_state_shape): conv (k - 1) x (2 Hk Dk + Hv Dv) at the model
/// dtype; recurrent Hv x Dv x Dk at mamba_ssm_cache_dtype / mamba_ssm_dtype when the config names one.
std::vector<StateTensor> state(ConfigFields& fields, const Layout&, const Dtype& dtype) {
  const u64 hk = fields.required_uint("linear_num_key_heads");
  const u64 hv = fields.required_uint("linear_num_value_heads");
  const u64 dk = fields.required_uint("linear_key_head_dim");
  const u64 dv = fields.required_uint("linear_value_head_dim");
  const u64 kernel = fields.required_uint("linear_conv_kernel_dim");
  if (kernel == 0) fields.fail("linear_conv_kernel_dim", "must be at least 1");
  return {{"conv", (kernel - 1) * (2 * hk * dk + hv * dv), &dtype},
          {"recurrent", hv * dv * dk, &state_dtype(fields, {"mamba_ssm_cache_dtype", "mamba_ssm_dtype"}, dtype)}};
}

}  // namespace

const Family& family_qwen() {
  static const Family family{
      .name = "qwen",
      .types = {{"qwen2"}, {"qwen2_moe"}, {"qwen3"}, {"qwen3_moe"}, {"qwen3_next"}, {"qwen3_5_text"}, {"qwen3_5_moe_text"},
                {"qwen3_5", false, "Qwen3.5 without a text_config"}, {"qwen3_5_moe", false, "Qwen3.5-MoE without a text_config"}},
      .gguf = "qwen2, qwen2moe, qwen3, qwen3moe, qwen3next, qwen35, qwen35moe",
      .fixtures = {"qwen2.5-7b", "qwen3-8b", "qwen3-30b-a3b", "qwen3-next-80b-a3b", "qwen3.6-27b", "qwen3.5-35b-a3b"},
      .rules = "Full attention, or sliding from max_window_layers on when use_sliding_window is true. Qwen3-Next / "
               "Qwen3.5: layer_types (or every full_attention_interval-th layer full), the others Gated DeltaNet with a "
               "conv and a recurrent state (mamba_ssm_dtype when given); head_dim defaults 128 (qwen3) and 256 "
               "(Qwen3-Next, 3.5). MoE layers per mlp_only_layers and decoder_sparse_step, with a gated shared "
               "expert; MTP layers (mtp_num_hidden_layers) are not counted.",
      .defaults = {{"qwen3", "head_dim", 128}, {"qwen3_moe", "head_dim", 128}, {"qwen3_next", "head_dim", 256},
                   {"qwen3_5_text", "head_dim", 256}, {"qwen3_5_moe_text", "head_dim", 256}, {"qwen3_5", "head_dim", 256},
                   {"qwen3_5_moe", "head_dim", 256}},
      .linear_state = state,
      .count = count,
  };
  return family;
}

}  // namespace kvplan::arch
