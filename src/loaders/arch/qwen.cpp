// Qwen2, Qwen3, Qwen3-Next and Qwen3.5 (transformers modeling_qwen2.py, modeling_qwen2_moe.py,
// modeling_qwen3.py, modeling_qwen3_moe.py, modeling_qwen3_next.py, modeling_qwen3_5.py).

#include <algorithm>
#include <numeric>

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
  const u64 step = fields.positive_or("decoder_sparse_step", 1);
  return (index + 1) % step == 0;
}

/// Multi-token prediction (Qwen3-Next, Qwen3.5: vLLM qwen3_next_mtp.py and qwen3_5_mtp.py,
/// Qwen3NextMultiTokenPredictor): each MTP layer is one full-attention decoder layer as the model's
/// (the MoE of layer index 0, its prefix mtp.layers.0), and the module has once fc (2H -> H, no
/// bias) and three RMSNorms (pre_fc_norm_hidden, pre_fc_norm_embedding, norm): the 19 mtp.*
/// tensors of a Qwen3.5-MoE checkpoint. The embedding and head are the model's (none stored with
/// it). Quantized checkpoints keep them in bf16 (the NVFP4 Qwen3.6-35B-A3B does): all priced
/// unquantized. fc is a plain nn.Linear in SGLang, whole on every rank. Here `layers` MTP layers of
/// `layer` parameters each.
void count_mtp(ConfigFields& fields, u64 layers, u64 layer, u64 hidden, ParamCount& count) {
  const u64 fc = product({2, hidden, hidden}, "MTP fc");
  count.mtp = checked_add(product({layers, layer}, "MTP"), checked_add(fc, 3 * hidden, "MTP"), "MTP");
  count.mtp_unquantized = count.mtp;
  count.mtp_replicated = fc;
  fields.note(fmt::format("{} MTP layer(s) not in total: {} parameters with fc and its norms", layers,
                          format_thousands(count.mtp)));
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
  if (type == "qwen2" || type == "qwen2_moe" || type == "qwen2_vl" || type == "qwen2_5_vl") {
    attention.qkv_bias = type == "qwen2_moe" ? fields.flag("qkv_bias", true) : true;
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
  u64 moe_shared = 0;  // of moe_always, the shared expert and its gate
  std::vector<MatrixShape> shared_shapes;
  // A MoE type without its expert count would be counted as dense: refused instead.
  if (type.find("_moe") != std::string::npos) fields.required_uint("num_experts");
  if (fields.uint_or("num_experts", 0) > 0) {
    counted.experts = fields.positive("num_experts");
    counted.top_k = fields.positive("num_experts_per_tok");
    if (counted.top_k > counted.experts) fields.fail("num_experts_per_tok", "is larger than the number of experts");
    moe_width = fields.positive("moe_intermediate_size");
    moe_always = product({hidden, counted.experts}, "router");
    if (const u64 shared = fields.uint_or("shared_expert_intermediate_size", 0); shared > 0) {
      moe_shared = checked_add(product({3, hidden, shared}, "shared expert"), hidden, "shared_expert_gate");
      add_mlp_shapes(shared_shapes, hidden, shared, true, Block::shared);
      shared_shapes.push_back({1, hidden, 1, Block::shared});  // shared_expert_gate
      moe_always = checked_add(moe_always, moe_shared, "shared expert");
    }
  }
  // A decoder layer's own parameters and its MLP, the MoE block where layer `index` has one.
  const auto with_mlp = [&](u64 own, u64 index) -> LayerParams {
    if (is_moe_layer(fields, index)) {
      LayerParams layer = plus(moe_layer(counted.experts, counted.top_k, hidden, moe_width, moe_always), own);
      layer.shapes.insert(layer.shapes.end(), shared_shapes.begin(), shared_shapes.end());
      return layer;
    }
    const u64 width = fields.positive("intermediate_size");
    LayerParams layer = layer_of(checked_add(own, mlp_params(hidden, width, true, false), "layer"));
    add_mlp_shapes(layer.shapes, hidden, width, true, Block::dense_mlp);
    return layer;
  };
  for (u64 i = 0; i < layout.count(); ++i) {
    const LayerPlan& layer = layout.layers[i];
    u64 vectors = 2 * hidden;  // the two RMSNorms
    u64 mixer = 0;      // the attention's matrices, or the linear attention whole
    std::vector<MatrixShape> mixer_shapes;  // the attention's; a Gated DeltaNet's are not recorded
    if (layer.kind == LayerKind::linear) {
      if (layer.block != "linear_attention") throw unsupported_architecture(fmt::format("layer_types[{}]", i), layer.block);
      mixer = deltanet;
    } else if (layer.attends()) {
      const u64 norms = attention_vectors(layout, layer, attention);
      mixer = attention_params(layout, layer, attention, &mixer_shapes) - norms;
      vectors = checked_add(vectors, norms, "layer");
    } else {
      throw unsupported_architecture(fmt::format("layer_types[{}]", i), layer.block.empty() ? std::string(to_string(layer.kind)) : layer.block);
    }
    LayerParams params = with_mlp(checked_add(vectors, mixer, "layer"), i);
    params.vectors = vectors;
    params.modules = true;
    params.attention = mixer;
    params.shared = params.expert ? moe_shared : 0;
    params.linear_attn = layer.kind == LayerKind::linear;
    params.shapes.insert(params.shapes.end(), mixer_shapes.begin(), mixer_shapes.end());
    counted.layers.push_back(params);
  }
  // Qwen3-Next's config states no count: its checkpoint's mtp.* layer (which vLLM and SGLang build
  // as getattr(config, "num_nextn_predict_layers", 1)) is neither cached nor counted, as the GGUF
  // llama.cpp converts leaves it out.
  if (const u64 mtp = next ? fields.uint_or("mtp_num_hidden_layers", 0) : 0; mtp > 0) {
    const auto full = std::find_if(layout.layers.begin(), layout.layers.end(),
                                   [](const LayerPlan& layer) { return layer.kind == LayerKind::full; });
    if (full == layout.layers.end()) fields.fail("layer_types", "has no full-attention layer for the MTP layer to copy");
    const u64 own = checked_add(2 * hidden, attention_params(layout, *full, attention), "MTP layer");
    count_mtp(fields, mtp, with_mlp(own, 0).params, hidden, count);  // mtp.layers.0: layer index 0's MLP
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
  // Tensor parallelism splits the key and value heads (both must divide).
  return {{"conv", (kernel - 1) * (2 * hk * dk + hv * dv), &dtype, std::gcd(hk, hv)},
          {"recurrent", hv * dv * dk, &state_dtype(fields, {"mamba_ssm_cache_dtype", "mamba_ssm_dtype"}, dtype), hv}};
}

/// The vision towers of Qwen2-VL (Qwen2VisionTransformer), Qwen2.5-VL and Qwen3-VL, and their mergers.
///   qwen2_vl: patch_embed Conv3d e x C x t x p x p (no bias); per block LayerNorms norm1, norm2
///     (weight + bias), attn.qkv 3e x e + 3e, attn.proj e x e + e, mlp fc1 / fc2 of e x mlp_ratio
///     with biases. Merger: ln_q (LayerNorm), mlp.0 m x m + m, mlp.2 hidden_size x m + hidden_size,
///     m = e x spatial_merge_size^2 (vision_config.hidden_size is the language model's width).
///   qwen2_5_vl: RMSNorms (weight only), a gated MLP with biases of intermediate_size; the merger's
///     ln_q an RMSNorm, its output out_hidden_size.
///   qwen3_vl(_moe): patch_embed with bias, pos_embed num_position_embeddings x e, LayerNorm blocks,
///     linear_fc1 / linear_fc2 with biases; the merger (a LayerNorm over e) and one deepstack merger
///     per deepstack_visual_indexes entry (its LayerNorm over m), each fc1 m x m + m, fc2 out x m + out.
std::vector<ModelPart> towers(ConfigFields& fields, const Layout&) {
  std::optional<ConfigFields> v = nested_fields(fields, "vision_config");
  if (!v) return {};
  const std::string type = fields.root().value("model_type", "");
  const u64 layers = v->positive("depth");
  const u64 patch = v->positive("patch_size");
  const u64 temporal = v->uint_or("temporal_patch_size", 2);
  const u64 merge = v->uint_or("spatial_merge_size", 2);
  const u64 channels = v->has("in_chans") ? v->positive("in_chans") : v->uint_or("in_channels", 3);
  const u64 e = type == "qwen2_vl" ? v->positive("embed_dim") : v->positive("hidden_size");
  const u64 m = product({e, merge, merge}, "merger width");
  const u64 attention = checked_add(product({4, e, e}, "vision attention"), 4 * e, "vision attention");  // qkv + proj, biases
  Sum tower;
  Sum merger;
  tower.add(product({e, channels, temporal, patch, patch}, "patch_embed"), "vision tower");
  if (type == "qwen2_vl") {
    const u64 mlp = product({e, v->uint_or("mlp_ratio", 4)}, "vision MLP width");
    tower.add(product({layers, attention + 4 * e + mlp_params(e, mlp, false, true)}, "vision blocks"), "vision tower");
    const u64 out = v->positive("hidden_size");
    merger.add(2 * e, "merger");
    merger.add(checked_add(product({m, m}, "merger mlp.0"), m, "merger"), "merger");
    merger.add(checked_add(product({out, m}, "merger mlp.2"), out, "merger"), "merger");
  } else if (type == "qwen2_5_vl") {
    const u64 i = v->positive("intermediate_size");
    const u64 mlp = checked_add(product({3, e, i}, "vision MLP"), 2 * i + e, "vision MLP");
    tower.add(product({layers, attention + 2 * e + mlp}, "vision blocks"), "vision tower");
    const u64 out = v->positive("out_hidden_size");
    merger.add(e, "merger");
    merger.add(checked_add(product({m, m}, "merger mlp.0"), m, "merger"), "merger");
    merger.add(checked_add(product({out, m}, "merger mlp.2"), out, "merger"), "merger");
  } else {
    const u64 i = v->positive("intermediate_size");
    tower.add(e, "vision tower");  // patch_embed bias
    tower.add(product({v->positive("num_position_embeddings"), e}, "pos_embed"), "vision tower");
    tower.add(product({layers, attention + 4 * e + mlp_params(e, i, false, true)}, "vision blocks"), "vision tower");
    const u64 out = v->positive("out_hidden_size");
    const u64 one = checked_add(checked_add(product({m, m}, "merger fc1"), m, "merger"), checked_add(product({out, m}, "merger fc2"), out, "merger"), "merger");
    merger.add(2 * e + one, "merger");
    const nlohmann::json* deepstack = v->find("deepstack_visual_indexes");
    const u64 stacks = deepstack && deepstack->is_array() ? deepstack->size() : 0;
    merger.add(product({stacks, 2 * m + one}, "deepstack mergers"), "merger");
  }
  return {{"vision tower", tower.value}, {"projector", merger.value}};
}

}  // namespace

const Family& family_qwen() {
  static const Family family{
      .name = "qwen",
      .types = {{"qwen2"}, {"qwen2_moe"}, {"qwen3"}, {"qwen3_moe"}, {"qwen3_next"}, {"qwen3_5_text"}, {"qwen3_5_moe_text"},
                {"qwen3_5", false, "Qwen3.5 without a text_config"}, {"qwen3_5_moe", false, "Qwen3.5-MoE without a text_config"},
                {"qwen2_vl", false, "Qwen2-VL: the language model's fields at the top level"},
                {"qwen2_5_vl", false, "Qwen2.5-VL: the language model's fields at the top level"},
                {"qwen3_vl_text"}, {"qwen3_vl_moe_text"}},
      .gguf = "qwen2, qwen2moe, qwen3, qwen3moe, qwen3next, qwen35, qwen35moe",
      .fixtures = {"qwen2.5-7b", "qwen3-8b", "qwen3-30b-a3b", "qwen3-next-80b-a3b", "qwen3.6-27b", "qwen3.5-35b-a3b",
                   "qwen2-vl-7b-instruct", "qwen2.5-vl-7b-instruct", "qwen3-vl-8b-instruct", "qwen3-vl-30b-a3b-instruct"},
      .rules = "Full attention, or sliding from max_window_layers on when use_sliding_window is true. Qwen3-Next / "
               "Qwen3.5: layer_types (or every full_attention_interval-th layer full), the others Gated DeltaNet with a "
               "conv and a recurrent state (mamba_ssm_dtype when given); head_dim defaults 128 (qwen3) and 256 "
               "(Qwen3-Next, 3.5). MoE layers per mlp_only_layers and decoder_sparse_step, with a gated shared "
               "expert; MTP layers (mtp_num_hidden_layers): a full-attention layer each and fc with three norms, in bf16 (Qwen3-Next's config states none: not counted). Qwen2-VL, Qwen2.5-VL "
               "(their language model at the top level) and Qwen3-VL: the vision tower and its merger (Qwen3-VL: + the "
               "deepstack mergers) as their own lines in the weights.",
      .unverified = "Qwen3.5's vision tower (qwen3_5 / qwen3_5_moe wrappers) is not counted: shown as not counted.",
      // transformers 5 writes the MoE configs' num_experts as num_local_experts (its attribute_map).
      .spellings = {{"num_experts", "num_local_experts"}},
      .defaults = {{"qwen3", "head_dim", 128}, {"qwen3_moe", "head_dim", 128}, {"qwen3_next", "head_dim", 256},
                   {"qwen3_5_text", "head_dim", 256}, {"qwen3_5_moe_text", "head_dim", 256}, {"qwen3_5", "head_dim", 256},
                   {"qwen3_5_moe", "head_dim", 256}, {"qwen3_vl_text", "head_dim", 128}, {"qwen3_vl_moe_text", "head_dim", 128}},
      .linear_state = state,
      .count = count,
      .wrappers = {"qwen2_vl", "qwen2_5_vl", "qwen3_vl", "qwen3_vl_moe"},
      .towers = towers,
  };
  return family;
}

}  // namespace kvplan::arch
