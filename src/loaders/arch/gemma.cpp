// Gemma 1, 2, 3, 3n and 4 (transformers modeling_gemma.py, modeling_gemma2.py, modeling_gemma3.py,
// modeling_gemma3n.py, modeling_gemma4.py). Every Gemma ties its output head to the embedding and
// defaults head_dim to 256.

#include <fmt/format.h>

#include "kvplan/error.h"
#include "loaders/tensor_parts.h"

namespace kvplan::arch {

namespace {

/// Gemma 2 and 3 when the config lists no layer_types: Gemma2DecoderLayer is_sliding = not
/// bool(layer_idx % 2); Gemma 3 slides unless (i + 1) % sliding_window_pattern == 0 (default 6).
/// Without a sliding_window every layer is full.
bool default_kinds(ConfigFields& fields, Layout& layout) {
  if (!fields.uint("sliding_window")) return false;
  const std::string& type = fields.model_type();
  if (type == "gemma2") {
    for (std::size_t i = 0; i < layout.count(); ++i) layout.layers[i].kind = i % 2 == 0 ? LayerKind::sliding : LayerKind::full;
    return true;
  }
  if (type == "gemma3" || type == "gemma3_text") {
    const u64 pattern = fields.uint("sliding_window_pattern").value_or(6);
    for (std::size_t i = 0; i < layout.count(); ++i)
      layout.layers[i].kind = (pattern != 0 && (i + 1) % pattern == 0) ? LayerKind::full : LayerKind::sliding;
    return true;
  }
  return false;
}

/// Gemma 3n (Gemma3nTextDecoderLayer): q, k, v, o projections and q/k norms in every layer
/// (KV-shared layers keep their weights); MLP 3 x H x I (a list gives each layer its own); 4 norms;
/// AltUp correct_output_scale H, correction_coefs n x n, prediction_coefs n x n^2, modality_router
/// H x n, router_norm H; LAuReL H x r + r x H + H; per-layer input gate, projection and norm. Model:
/// embed_tokens_per_layer, per_layer_model_projection, per_layer_projection_norm, and 2 (n - 1)
/// AltUp projections H x H.
Counted gemma3n_layers(ConfigFields& fields, const Layout& layout) {
  const u64 hidden = layout.hidden;
  const u64 layers = layout.count();
  const u64 heads = layout.heads;
  const u64 kv_heads = fields.positive("num_key_value_heads");
  const u64 head_dim = layout.head_dim;
  const nlohmann::json* sizes = fields.find("intermediate_size");
  const std::vector<u64> intermediate = sizes && sizes->is_array() ? fields.per_layer("intermediate_size", layers)
                                                                   : std::vector<u64>(layers, fields.positive("intermediate_size"));
  const u64 ple = fields.uint_or("hidden_size_per_layer_input", 256);
  const u64 altup = fields.uint_or("altup_num_inputs", 4);
  const u64 laurel = fields.uint_or("laurel_rank", 64);
  if (altup == 0) fields.fail("altup_num_inputs", "must be at least 1");
  if (fields.flag("attention_bias", false)) throw unsupported_architecture("attention_bias", "true (gemma3n_text)");
  Counted out;
  for (u64 i = 0; i < layers; ++i) {
    Sum sum;
    sum.add(gqa_params(hidden, heads, kv_heads, head_dim, head_dim), "layer");
    sum.add(2 * head_dim, "layer");
    sum.add(mlp_params(hidden, intermediate[i], true, false), "layer");
    sum.add(product({4, hidden}, "norms"), "layer");
    sum.add(checked_add(product({2, hidden}, "AltUp"), altup * altup + altup * altup * altup + hidden * altup, "AltUp"), "layer");
    sum.add(checked_add(product({2, hidden, laurel}, "LAuReL"), hidden, "LAuReL"), "layer");
    sum.add(checked_add(product({2, hidden, ple}, "per-layer input"), hidden, "per-layer input"), "layer");
    out.layers.push_back(layer_of(sum.value));
  }
  const u64 packed = product({layers, ple}, "per-layer embedding width");
  Sum extra;
  extra.add(product({fields.uint_or("vocab_size_per_layer_input", 262'144), packed}, "embed_tokens_per_layer"), "PLE");
  extra.add(product({hidden, packed}, "per_layer_model_projection"), "PLE");
  extra.add(ple, "PLE");
  extra.add(product({2, altup - 1, hidden, hidden}, "AltUp projections"), "AltUp");
  out.model_extra = extra.value;
  return out;
}

/// Gemma 4 (Gemma4TextDecoderLayer): attention q_proj, o_proj, q_norm; k_proj, v_proj (none with
/// K=V), k_norm only on layers that own their KV (the last num_kv_shared_layers read an earlier
/// layer's); global (full_attention) layers use global_head_dim and, with attention_k_eq_v,
/// num_global_key_value_heads. MLP 3 x H x I, doubled in the KV-shared layers with
/// use_double_wide_mlp; 4 norms; per-layer input gate, projection and norm
/// (hidden_size_per_layer_input); with enable_moe_block a parallel MoE block: router proj H x E,
/// scale H, per_expert_scale E, experts E x 3 x H x moe_intermediate_size, 3 norms. Model:
/// embed_tokens_per_layer V_ple x L P, per_layer_model_projection H x L P, per_layer_projection_norm P.
Counted gemma4_layers(ConfigFields& fields, const Layout& layout) {
  const u64 hidden = layout.hidden;
  const u64 layers = layout.count();
  const u64 heads = layout.heads;
  const u64 kv_heads = fields.positive("num_key_value_heads");
  const u64 head_dim = layout.head_dim;
  const u64 global_head_dim = fields.uint_or("global_head_dim", head_dim);
  const bool k_eq_v = fields.flag("attention_k_eq_v", false);
  const u64 global_kv_heads = k_eq_v ? fields.uint_or("num_global_key_value_heads", kv_heads) : kv_heads;
  const std::vector<std::string> types = fields.string_list("layer_types");
  if (types.size() != layers) fields.fail("layer_types", fmt::format("has {} entries but num_hidden_layers is {}", types.size(), layers));
  const u64 shared = fields.uint_or("num_kv_shared_layers", 0);
  const u64 intermediate = fields.positive("intermediate_size");
  const bool double_wide = fields.flag("use_double_wide_mlp", false);
  const u64 ple = fields.uint_or("hidden_size_per_layer_input", 0);
  const bool moe = fields.flag("enable_moe_block", false);
  if (fields.flag("attention_bias", false)) throw unsupported_architecture("attention_bias", "true (gemma4_text)");

  Counted out;
  if (moe) {
    out.experts = fields.positive("num_experts");
    out.top_k = fields.positive("top_k_experts");
  }
  for (u64 i = 0; i < layers; ++i) {
    const bool full = types[i] == "full_attention";
    if (!full && types[i] != "sliding_attention") throw unsupported_architecture(fmt::format("layer_types[{}]", i), types[i]);
    const bool is_shared = layout.layers[i].kv_shared;
    const u64 dim = full ? global_head_dim : head_dim;
    const u64 kv = full ? global_kv_heads : kv_heads;
    Sum sum;
    sum.add(gqa_params(hidden, heads, kv, dim, dim, !is_shared, !(full && k_eq_v)), "layer");
    sum.add(is_shared ? dim : 2 * dim, "layer");  // q_norm, k_norm (v_norm has no weight)
    const u64 width = intermediate * (double_wide && is_shared && layers - shared > 0 ? 2 : 1);
    sum.add(mlp_params(hidden, width, true, false), "layer");
    sum.add(product({4, hidden}, "norms"), "layer");
    if (ple) sum.add(checked_add(product({2, hidden, ple}, "per-layer input"), hidden, "per-layer input"), "layer");
    LayerParams layer;
    if (moe) {
      const u64 always = checked_add(product({hidden, out.experts}, "router"), hidden + out.experts + 3 * hidden, "router");
      layer = moe_layer(out.experts, out.top_k, hidden, fields.positive("moe_intermediate_size"), always);
    }
    out.layers.push_back(plus(layer, sum.value));
  }
  if (ple) {
    const u64 vocab_ple = fields.positive("vocab_size_per_layer_input");
    const u64 packed = product({layers, ple}, "per-layer embedding width");
    out.model_extra = checked_add(product({vocab_ple, packed}, "embed_tokens_per_layer"),
                                  checked_add(product({hidden, packed}, "per_layer_model_projection"), ple, "PLE"), "PLE");
  }
  return out;
}

/// Gemma, Gemma 2, Gemma 3: attention (attention_bias on all four; Gemma 3 q/k RMSNorm over
/// head_dim), gated MLP, 2 norms per layer (Gemma) or 4 (Gemma 2/3: input, post-attention, pre- and
/// post-feedforward).
ParamCount count(ConfigFields& fields, const Layout& layout) {
  const std::string& type = fields.model_type();
  ParamCount count = start_count(fields, layout);
  Counted counted;
  if (type == "gemma3n_text") {
    counted = gemma3n_layers(fields, layout);
  } else if (type == "gemma4_text") {
    counted = gemma4_layers(fields, layout);
  } else {
    check_attention(fields, layout);
    Attention attention;
    attention.qkv_bias = attention.o_bias = fields.flag("attention_bias", false);
    if (type == "gemma3_text") attention.qk_norm = 2 * layout.head_dim;
    const u64 norms = type == "gemma" ? 2 : 4;
    const u64 mlp = mlp_params(layout.hidden, fields.positive("intermediate_size"), true, false);
    for (const LayerPlan& layer : layout.layers)
      counted.layers.push_back(layer_of(attention_params(layout, layer, attention) + mlp + norms * layout.hidden));
  }
  counted.final_norm = layout.hidden;
  finish_count(count, fields, counted);
  return count;
}

/// Gemma 3 (Gemma3ForConditionalGeneration): a SigLIP vision tower (siglip_vision_params; Gemma 3
/// sets vision_use_head false) and Gemma3MultiModalProjector: mm_input_projection_weight
/// vision h x text h and mm_soft_emb_norm over vision h. Gemma 4 (Gemma4VisionModel): patch_embedder
/// input_proj h x 3 p^2 (no bias) and position_embedding_table 2 x position_embedding_size x h,
/// std_bias and std_scale with standardize, per layer q, k, v, o (heads, num_key_value_heads x
/// head_dim, no bias), q_norm and k_norm over head_dim, 4 norms, gate / up / down; the projector
/// embed_vision.embedding_projection text h x vision h. Gemma 4's clipped linears
/// (use_clipped_linears: scalars whose placement is not verified) are left uncounted.
std::vector<ModelPart> towers(ConfigFields& fields, const Layout& layout) {
  std::optional<ConfigFields> v = nested_fields(fields, "vision_config");
  if (!v) return {};
  const u64 vh = v->positive("hidden_size");
  const std::string type = fields.root().value("model_type", "");
  if (type == "gemma3")
    return {{"vision tower", siglip_vision_params(*v)}, {"projector", checked_add(product({vh, layout.hidden}, "projector"), vh, "projector")}};
  if (v->flag("use_clipped_linears", false)) return {{"vision tower", 0}, {"projector", product({layout.hidden, vh}, "projector")}};
  const u64 layers = v->positive("num_hidden_layers");
  const u64 heads = v->positive("num_attention_heads");
  const u64 kv = v->uint_or("num_key_value_heads", heads);
  const u64 hd = v->positive("head_dim");
  const u64 patch = v->positive("patch_size");
  Sum tower;
  tower.add(product({vh, 3, patch, patch}, "vision input_proj"), "vision tower");
  tower.add(product({2, v->positive("position_embedding_size"), vh}, "vision position table"), "vision tower");
  if (v->flag("standardize", false)) tower.add(2 * vh, "vision tower");
  Sum layer;
  layer.add(gqa_params(vh, heads, kv, hd, hd), "vision layer");
  layer.add(2 * hd + 4 * vh, "vision layer");
  layer.add(mlp_params(vh, v->positive("intermediate_size"), true, false), "vision layer");
  tower.add(product({layers, layer.value}, "vision layers"), "vision tower");
  return {{"vision tower", tower.value}, {"projector", product({layout.hidden, vh}, "projector")}};
}

}  // namespace

const Family& family_gemma() {
  static const Family family{
      .name = "gemma",
      .types = {{"gemma", true}, {"gemma2", true}, {"gemma3_text", true}, {"gemma3n_text", true}, {"gemma4_text", true}},
      .gguf = "gemma, gemma2, gemma3, gemma3n, gemma4",
      .fixtures = {"gemma2-9b", "gemma3-27b", "gemma3-1b", "gemma3-4b", "gemma3n-e2b", "gemma4-31b", "gemma4-26b-a4b", "gemma4-e2b"},
      .rules = "Gemma 2 without layer_types: even layers slide over sliding_window, odd ones are global; Gemma 3: every "
               "sliding_window_pattern-th (default 6) layer is global, the rest slide; Gemma 3n / 4: layer_types, and "
               "the last num_kv_shared_layers read an earlier layer's cache (shared, no cache of their own). Gemma 4's "
               "global layers use global_head_dim and, with attention_k_eq_v, num_global_key_value_heads. head_dim "
               "defaults to 256, gemma3_text's vocab_size to 262,208; the output head is tied unless stated. Counted "
               "with AltUp, LAuReL and per-layer embeddings (3n), K=V and the parallel MoE block (4). Towers (gemma3, gemma4 "
               "wrappers): Gemma 3's SigLIP encoder and Gemma 4's vision encoder, each with its projector, as their own "
               "lines in the weights.",
      .unverified = "Gemma 3n: no exact published count of the language model alone (keras-hub's figures include the towers). "
                    "Gemma 4's layer_scalar (one parameter per decoder layer) is not counted: Gemma 4 31B is 60 short of "
                    "the sum over its checkpoint's tensors. Not counted (shown as such): Gemma 3n's vision and audio towers, "
                    "Gemma 4's audio tower and clipped-linear vision towers (E-models).",
      .defaults = {{"", "head_dim", 256}, {"gemma3_text", "vocab_size", 262'208}},
      .default_kinds = default_kinds,
      .count = count,
      .wrappers = {"gemma3", "gemma4"},
      .towers = towers,
  };
  return family;
}

}  // namespace kvplan::arch
