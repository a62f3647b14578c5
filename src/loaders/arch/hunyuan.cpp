// Tencent Hunyuan dense and MoE (transformers modeling_hunyuan_v1_dense.py,
// modeling_hunyuan_v1_moe.py; the original remote-code release says model_type "hunyuan").

#include <fmt/format.h>

#include "kvplan/error.h"
#include "loaders/json_reader.h"
#include "loaders/tensor_parts.h"

namespace kvplan::arch {

namespace {

/// One value per layer: a list, or one number for all.
std::vector<u64> each_layer(ConfigFields& fields, const std::string& key, u64 layers) {
  const nlohmann::json* value = fields.find(key);
  if (!value) fields.fail(key, "is missing");
  if (value->is_array()) return fields.per_layer(key, layers);
  return std::vector<u64>(layers, json_to_uint(*value, fields.where(key)));
}

/// Llama attention (attention_bias) with query_layernorm and key_layernorm over head_dim
/// (use_qk_norm, applied after RoPE); dense: gated MLP without bias. MoE (HunYuanMoE): a shared MLP
/// of intermediate_size, a router E x H (created in float32), num_experts experts of
/// moe_intermediate_size (a list per layer; the transformers port uses intermediate_size, equal for
/// Hunyuan-A13B, and llama.cpp moe_intermediate_size[0]) in every layer, moe_topk per token.
ParamCount count(ConfigFields& fields, const Layout& layout) {
  check_attention(fields, layout);
  ParamCount count = start_count(fields, layout);
  const u64 hidden = layout.hidden;
  const u64 layers = layout.count();
  Attention attention;
  attention.qkv_bias = attention.o_bias = fields.flag("attention_bias", false);
  if (fields.flag("use_qk_norm", false)) attention.qk_norm = 2 * layout.head_dim;
  const u64 intermediate = fields.positive("intermediate_size");
  if (fields.flag("mlp_bias", false)) throw unsupported_architecture("mlp_bias", "true (Hunyuan's MLPs are built without bias)");
  Counted counted;
  counted.final_norm = hidden;
  if (fields.model_type() == "hunyuan_v1_dense") {
    DenseDecoder decoder;
    decoder.attention = attention;
    decoder.intermediate = intermediate;
    decoder.layer_norms = 2 * hidden;
    counted.layers = dense_decoder(layout, decoder).layers;
  } else {
    const std::vector<u64> experts = each_layer(fields, "num_experts", layers);
    const std::vector<u64> top_k = each_layer(fields, "moe_topk", layers);
    const std::vector<u64> width =
        fields.has("moe_intermediate_size") ? each_layer(fields, "moe_intermediate_size", layers) : std::vector<u64>(layers, intermediate);
    if (fields.has("num_shared_expert"))
      for (const u64 shared : each_layer(fields, "num_shared_expert", layers))
        if (shared != 1)
          throw unsupported_architecture("num_shared_expert", fmt::format("{} (the shared MLP's width beyond 1 is not verified)", shared));
    if (const u64 skipped = fields.uint_or("moe_layer_num_skipped", 0); skipped > 0)
      throw unsupported_architecture("moe_layer_num_skipped", fmt::format("{} (dense leading layers are not verified)", skipped));
    if (!fields.flag("use_mixed_mlp_moe", true))
      throw unsupported_architecture("use_mixed_mlp_moe", "false (whether the shared MLP is built is not verified)");
    const u64 shared_mlp = mlp_params(hidden, intermediate, true, false);
    for (u64 i = 0; i < layers; ++i) {
      if (top_k[i] > experts[i]) fields.fail("moe_topk", "is larger than the number of experts");
      counted.experts = experts[i];
      counted.top_k = top_k[i];
      const u64 always = checked_add(product({hidden, experts[i]}, "router"), shared_mlp, "shared MLP");
      counted.layers.push_back(
          plus(moe_layer(experts[i], top_k[i], hidden, width[i], always), attention_params(layout, layout.layers[i], attention) + 2 * hidden));
    }
  }
  finish_count(count, fields, counted);
  return count;
}

/// Cross-layer attention (use_cla: cla_share_factor adjacent layers share one K/V in Tencent's
/// code; the transformers port has none) would change the cache: refused unless false. MLA
/// (use_mla) likewise.
void finish_layout(ConfigFields& fields, Layout&) {
  if (fields.flag("use_cla", false))
    throw unsupported_architecture(fmt::format("{}: use_cla", fields.origin()), "true (cross-layer KV sharing)");
  if (fields.flag("use_mla", false)) throw unsupported_architecture(fmt::format("{}: use_mla", fields.origin()), "true");
  fields.ignore({"cla_share_factor"});
}

}  // namespace

const Family& family_hunyuan() {
  static const Family family{
      .name = "hunyuan",
      .types = {{"hunyuan_v1_dense"}, {"hunyuan_v1_moe"}, {"hunyuan", false, "the original remote-code release of Hunyuan-A13B"}},
      .gguf = "hunyuan-dense, hunyuan-moe",
      .fixtures = {"hy-mt2-7b", "hunyuan-a13b-instruct"},
      .rules = "Full attention, head_dim given (attention_head_dim also present); use_cla (cross-layer KV sharing) "
               "and use_mla are refused unless false. Counted: per-head q/k layernorms; the MoE's shared MLP, "
               "router and experts of moe_intermediate_size in every layer.",
      .unverified = "Only the nominal sizes (7B, 80B / 13B active) were found. The dense fixture is Hy-MT2-7B, a "
                    "Hunyuan-7B derivative. The router is created in float32: if the checkpoint stores it so, the "
                    "weights are 8 MiB more than params x 2 B (Hunyuan-A13B).",
      .finish_layout = finish_layout,
      .count = count,
  };
  return family;
}

}  // namespace kvplan::arch
