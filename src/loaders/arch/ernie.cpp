// Baidu ERNIE 4.5 dense and MoE (transformers modeling_ernie4_5.py, modeling_ernie4_5_moe.py).

#include <fmt/format.h>

#include "kvplan/error.h"
#include "loaders/tensor_parts.h"

namespace kvplan::arch {

namespace {

/// A layer index that may be -1 ("the last layer"), as moe_layer_end_index is.
u64 layer_index(ConfigFields& fields, const std::string& key, u64 fallback, u64 layers) {
  const nlohmann::json* value = fields.find(key);
  if (!value) return fallback;
  if (value->is_number_integer() && value->get<std::int64_t>() == -1) return layers - 1;
  if (!value->is_number_unsigned()) fields.fail(key, "expected a layer index or -1");
  return value->get<u64>();
}

/// q, k, v, o and the gated MLP with bias=use_bias; input and post-attention RMSNorms; lm_head
/// without bias. MoE (Ernie4_5_MoeSparseMoeBlock) on layer i
/// when (i + 1) % moe_layer_interval == 0 and moe_layer_start_index <= i <= moe_layer_end_index (-1
/// = the last): router moe_num_experts x H (float32), moe_statics.e_score_correction_bias [1, E],
/// experts of 3 x H x moe_intermediate_size (+ biases), shared experts one MLP of
/// moe_intermediate_size x moe_num_shared_experts; the other layers a dense MLP of intermediate_size.
/// The checkpoints' MTP tensors (mtp_block, ...) are not loaded by transformers and not counted.
ParamCount count(ConfigFields& fields, const Layout& layout) {
  check_attention(fields, layout);
  ParamCount count = start_count(fields, layout);
  const u64 hidden = layout.hidden;
  const u64 layers = layout.count();
  const bool bias = fields.flag("use_bias", false);
  Attention attention;
  attention.qkv_bias = attention.o_bias = bias;
  Counted counted;
  counted.final_norm = hidden;
  if (fields.model_type() == "ernie4_5") {
    DenseDecoder decoder;
    decoder.attention = attention;
    decoder.intermediate = fields.positive("intermediate_size");
    decoder.mlp_bias = bias;
    decoder.layer_norms = 2 * hidden;
    counted.layers = dense_decoder(layout, decoder).layers;
    finish_count(count, fields, counted);
    return count;
  }
  if (bias) throw unsupported_architecture("use_bias", "true (ernie4_5_moe: expert and head biases are not verified)");
  counted.experts = fields.positive("moe_num_experts");
  counted.top_k = fields.positive("moe_k");
  if (counted.top_k > counted.experts) fields.fail("moe_k", "is larger than the number of experts");
  const u64 width = fields.positive("moe_intermediate_size");
  const u64 start = layer_index(fields, "moe_layer_start_index", 1, layers);
  const u64 end = layer_index(fields, "moe_layer_end_index", layers - 1, layers);
  const u64 interval = fields.positive_or("moe_layer_interval", 1);
  const u64 shared = fields.required_uint("moe_num_shared_experts");
  Sum always;
  always.add(product({hidden, counted.experts}, "router"), "MoE");
  always.add(counted.experts, "MoE");  // e_score_correction_bias
  if (shared) always.add(mlp_params(hidden, product({shared, width}, "shared experts"), true, bias), "MoE");
  for (u64 i = 0; i < layers; ++i) {
    const u64 own = attention_params(layout, layout.layers[i], attention) + 2 * hidden;
    if ((i + 1) % interval == 0 && i >= start && i <= end)
      counted.layers.push_back(plus(moe_layer(counted.experts, counted.top_k, hidden, width, always.value), own));
    else
      counted.layers.push_back(layer_of(own + mlp_params(hidden, fields.positive("intermediate_size"), true, bias)));
  }
  if (fields.uint_or("num_nextn_predict_layers", 0) > 0)
    fields.note("the checkpoint's MTP tensors (mtp_block, mtp_linear_proj, ...) are not counted");
  finish_count(count, fields, counted);
  return count;
}

/// The MoE layer range is read by the counter; it does not change the cache.
void finish_layout(ConfigFields& fields, Layout&) { fields.ignore({"moe_layer_start_index", "moe_layer_end_index"}); }

}  // namespace

const Family& family_ernie() {
  static const Family family{
      .name = "ernie",
      .types = {{"ernie4_5", true}, {"ernie4_5_moe", true}},
      .gguf = "ernie4_5, ernie4_5-moe",
      .fixtures = {"ernie-4.5-0.3b", "ernie-4.5-21b-a3b"},
      .rules = "Full attention; head_dim is given and need not be hidden_size / num_attention_heads (0.3B: 128 vs "
               "64). MoE on layers moe_layer_start_index..moe_layer_end_index (-1 = last) every moe_layer_interval-th, "
               "a dense MLP elsewhere; moe_num_experts / moe_k are the expert and top-k fields. MTP layers "
               "(num_nextn_predict_layers) are priced by --mtp-layers, their weights not counted.",
      .unverified = "ERNIE-4.5-21B-A3B: only the nominal 21B / 3B active was found, and the copy is trimmed. A MoE "
                    "config with use_bias true is refused (expert and lm_head biases not verified).",
      .spellings = {{"moe_num_experts", "num_experts"}, {"moe_k", "num_experts_per_tok"}},
      .defaults = {{"ernie4_5_moe", "moe_num_experts", 64}, {"ernie4_5_moe", "moe_k", 6},
                   {"ernie4_5_moe", "moe_num_shared_experts", 2}, {"ernie4_5_moe", "moe_intermediate_size", 1536}},
      .finish_layout = finish_layout,
      .count = count,
  };
  return family;
}

}  // namespace kvplan::arch
