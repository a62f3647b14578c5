#include "loaders/tensor_parts.h"

#include <optional>
#include <utility>

#include <fmt/format.h>

#include "kvplan/error.h"
#include "kvplan/units.h"
#include "model/checked.h"

namespace kvplan::arch {

u64 product(std::initializer_list<u64> factors, std::string_view what) {
  u64 result = 1;
  for (const u64 factor : factors) result = checked_mul(result, factor, what);
  return result;
}

void Sum::add(u64 term, std::string_view what) { value = checked_add(value, term, what); }

ParamCount start_count(ConfigFields& fields, const Layout& layout, u64 rows) {
  ParamCount count;
  const u64 vocab = rows ? rows : fields.positive("vocab_size");
  count.embedding = product({vocab, layout.hidden}, "embedding");
  const ModelType* type = fields.family() ? fields.family()->type(fields.model_type()) : nullptr;
  const bool ties_by_default = type && type->ties;
  const std::optional<bool> given = fields.boolean("tie_word_embeddings");
  const bool tied = given.value_or(ties_by_default);
  if (!given)
    fields.note(fmt::format("tie_word_embeddings absent: {} defaults to {}", fields.model_type(), tied ? "tied" : "untied"));
  count.lm_head = tied ? 0 : count.embedding;
  return count;
}

void finish_count(ParamCount& count, ConfigFields& fields, const Counted& counted) {
  Sum total;
  Sum expert;
  Sum inactive;
  Sum router;
  total.add(count.embedding, "total parameters");
  total.add(count.lm_head, "total parameters");
  total.add(counted.head_bias, "total parameters");
  total.add(counted.final_norm, "total parameters");
  total.add(counted.model_extra, "total parameters");
  u64 moe_layers = 0;
  for (const LayerParams& layer : counted.layers) {
    total.add(layer.params, "total parameters");
    expert.add(layer.expert, "expert parameters");
    inactive.add(layer.inactive, "inactive experts");
    router.add(layer.router, "router parameters");
    count.layers.push_back(layer);  // what the rules read of it
    if (layer.expert) ++moe_layers;
    // Layers may differ (Hunyuan's per-layer lists): the block with the most work per token. No
    // overflow: the layer's expert count (at least per_token) times its matrices was counted.
    const auto work = [](const RoutedExperts& r) { return r.per_token * r.intermediate; };
    if (layer.routed && (!count.routed_experts || work(*layer.routed) > work(*count.routed_experts)))
      count.routed_experts = layer.routed;
  }
  count.total = total.value;
  count.expert = expert.value;
  count.router = router.value;
  count.active = count.total - inactive.value;
  if (counted.model_extra)
    fields.note(fmt::format("{} parameters of {} beside the layers", format_thousands(counted.model_extra),
                            counted.extra_note.empty() ? "per-layer embeddings / projections" : counted.extra_note));
  if (moe_layers > 0)
    fields.note(fmt::format("{} MoE layers of {} experts, {} active per token", moe_layers, counted.experts, counted.top_k));
  count.notes = fields.notes();
}

u64 attention_params(const Layout& layout, const LayerPlan& layer, const Attention& a, std::vector<MatrixShape>* shapes) {
  const u64 hidden = layout.hidden;
  const u64 q_width = product({layout.heads, layer.k_dim}, "attention q width");
  const u64 k_width = product({layer.kv_heads, layer.k_dim}, "attention k width");
  const u64 v_width = product({layer.kv_heads, layer.v_dim}, "attention v width");
  const u64 o_width = product({layout.heads, layer.v_dim}, "attention o width");
  Sum sum;
  sum.add(product({hidden, q_width, a.q_multiplier}, "q_proj"), "attention");
  sum.add(product({hidden, k_width}, "k_proj"), "attention");
  sum.add(product({hidden, v_width}, "v_proj"), "attention");
  sum.add(product({o_width, hidden}, "o_proj"), "attention");
  sum.add(attention_vectors(layout, layer, a), "attention");
  if (shapes)
    shapes->insert(shapes->end(), {{q_width * a.q_multiplier, hidden},  // no overflow: q_proj's product was checked
                                   {k_width, hidden},
                                   {v_width, hidden},
                                   {hidden, o_width}});
  return sum.value;
}

u64 attention_vectors(const Layout& layout, const LayerPlan& layer, const Attention& a) {
  Sum sum;
  if (a.qkv_bias) {
    sum.add(product({layout.heads, layer.k_dim, a.q_multiplier}, "q_proj bias"), "attention");
    sum.add(product({layer.kv_heads, layer.k_dim}, "k_proj bias"), "attention");
    sum.add(product({layer.kv_heads, layer.v_dim}, "v_proj bias"), "attention");
  }
  if (a.o_bias) sum.add(layout.hidden, "attention");
  sum.add(a.qk_norm, "attention");
  if (a.sinks) sum.add(layout.heads, "attention");
  return sum.value;
}

u64 gqa_params(u64 hidden, u64 heads, u64 kv_heads, u64 k_dim, u64 v_dim, bool k_and_v, bool separate_v) {
  Sum sum;
  sum.add(product({hidden, heads, k_dim}, "q_proj"), "attention");
  if (k_and_v) {
    sum.add(product({hidden, kv_heads, k_dim}, "k_proj"), "attention");
    if (separate_v) sum.add(product({hidden, kv_heads, v_dim}, "v_proj"), "attention");
  }
  sum.add(product({heads, v_dim, hidden}, "o_proj"), "attention");
  return sum.value;
}

u64 mlp_params(u64 hidden, u64 intermediate, bool gated, bool bias) {
  return checked_add(product({gated ? 3u : 2u, hidden, intermediate}, "MLP"), mlp_vectors(hidden, intermediate, gated, bias),
                     "MLP");
}

u64 mlp_vectors(u64 hidden, u64 intermediate, bool gated, bool bias) {
  return bias ? checked_add(product({gated ? 2u : 1u, intermediate}, "MLP bias"), hidden, "MLP bias") : 0;
}

void add_mlp_shapes(std::vector<MatrixShape>& shapes, u64 hidden, u64 intermediate, bool gated, Block block, u64 copies) {
  shapes.push_back({intermediate, hidden, product({gated ? 2u : 1u, copies}, "MLP matrices"), block});
  shapes.push_back({hidden, intermediate, copies, block});
}

Counted eagle_draft_layers(ConfigFields& fields, const Layout& layout, u64 (*norms)(const Layout&, std::size_t),
                           u64 (*extra)(const Layout&, std::size_t)) {
  Attention attention;
  attention.qkv_bias = attention.o_bias = fields.flag("attention_bias", false);
  const u64 intermediate = fields.positive("intermediate_size");
  const bool mlp_bias = fields.flag("mlp_bias", false);
  Counted counted;
  for (std::size_t i = 0; i < layout.layers.size(); ++i) {
    const LayerPlan& layer = layout.layers[i];
    if (!layer.attends()) fields.fail("num_hidden_layers", "an EAGLE draft's layers are attention layers");
    Sum params;
    params.add(attention_params(layout, layer, attention), "draft layer");
    if (extra) params.add(extra(layout, i), "draft layer");
    params.add(mlp_params(layout.hidden, intermediate, true, mlp_bias), "draft layer");
    params.add(norms(layout, i), "draft layer");
    counted.layers.push_back(layer_of(params.value));
  }
  return counted;
}

LayerParams moe_layer(u64 experts, u64 top_k, u64 width, u64 intermediate, u64 always, u64 matrices) {
  const u64 one = product({matrices, width, intermediate}, "expert");
  LayerParams layer;
  layer.expert = product({experts, one}, "experts");
  layer.experts = experts;
  layer.params = checked_add(layer.expert, always, "MoE block");
  layer.inactive = product({experts - top_k, one}, "inactive experts");
  layer.routed = routed_experts(top_k, width, intermediate, matrices == 3);
  layer.matrices_per_expert = matrices;
  add_mlp_shapes(layer.shapes, width, intermediate, matrices == 3, Block::experts, experts);
  // The router reads the expert input (the hidden state; a latent-MoE router reads the wider
  // hidden, so this is then its lower bound), and is part of what every token uses.
  layer.router = std::min(always, product({experts, width}, "router"));
  return layer;
}

RoutedExperts routed_experts(u64 top_k, u64 width, u64 intermediate, bool gated) {
  if (top_k > 0xFFFFFFFFu) throw Error(fmt::format("num_experts_per_tok ({}) is too large", top_k));
  return {static_cast<std::uint32_t>(top_k), width, intermediate, gated};
}

LayerParams layer_of(u64 params) {
  LayerParams layer;
  layer.params = params;
  return layer;
}

LayerParams plus(LayerParams moe, u64 params) {
  moe.params = checked_add(moe.params, params, "layer");
  return moe;
}

Counted dense_decoder(const Layout& layout, const DenseDecoder& d) {
  const u64 mlp = mlp_params(layout.hidden, d.intermediate, d.gated, d.mlp_bias);
  const u64 mlp_biases = mlp_vectors(layout.hidden, d.intermediate, d.gated, d.mlp_bias);
  Counted counted;
  for (std::size_t i = 0; i < layout.count(); ++i) {
    const LayerPlan& layer = layout.layers[i];
    if (!layer.attends())
      throw unsupported_architecture(fmt::format("layer {}", i), fmt::format("{} (a decoder of attention layers)", to_string(layer.kind)));
    std::vector<MatrixShape> shapes;
    const u64 attention = attention_params(layout, layer, d.attention, &shapes);
    add_mlp_shapes(shapes, layout.hidden, d.intermediate, d.gated, Block::dense_mlp);
    const u64 attention_norms = attention_vectors(layout, layer, d.attention);
    Sum sum;
    sum.add(attention, "layer");
    sum.add(mlp, "layer");
    sum.add(d.layer_norms, "layer");
    sum.add(d.layer_extra, "layer");
    LayerParams params = layer_of(sum.value);
    params.vectors = (Checked(attention_norms, "layer") + d.layer_norms + d.layer_extra + mlp_biases).value();
    params.modules = true;
    params.attention = attention - attention_norms;
    params.shapes = std::move(shapes);
    counted.layers.push_back(params);
  }
  return counted;
}

u64 mla_params(ConfigFields& fields, u64 hidden, std::optional<u64> v_default, MlaParts* parts) {
  const u64 heads = fields.positive("num_attention_heads");
  const u64 kv_lora = fields.positive("kv_lora_rank");
  const u64 nope = fields.positive("qk_nope_head_dim");
  const u64 rope = fields.positive("qk_rope_head_dim");
  const u64 v_dim = v_default && !fields.has("v_head_dim") ? *v_default : fields.positive("v_head_dim");
  const std::optional<u64> q_lora = fields.uint("q_lora_rank");
  const bool bias = fields.flag("attention_bias", false);
  const u64 q_head = checked_add(nope, rope, "qk head dim");
  const u64 kv_a_width = checked_add(kv_lora, rope, "kv_a width");
  if (q_lora && *q_lora == 0) fields.fail("q_lora_rank", "must be at least 1 (or null for a plain q_proj)");
  // The vectors: q_a_layernorm and kv_a_layernorm, and with attention_bias the biases of q_a_proj
  // (or q_proj), kv_a_proj_with_mqa and o_proj.
  Sum norms;
  if (q_lora) norms.add(*q_lora, "MLA");
  norms.add(kv_lora, "MLA");
  if (bias) {
    norms.add(q_lora ? *q_lora : product({heads, q_head}, "q_proj bias"), "MLA");
    norms.add(kv_a_width, "MLA");
    norms.add(hidden, "MLA");
  }
  // Each projection's output width (rows) by its input width (columns).
  const u64 q_width = product({heads, q_head}, "q_proj");
  const u64 kv_b_width = product({heads, checked_add(nope, v_dim, "kv_b head")}, "kv_b_proj");
  const u64 o_width = product({heads, v_dim}, "o_proj");
  const u64 o_proj = product({o_width, hidden}, "o_proj");
  if (parts) {
    *parts = {norms.value, o_proj, {}};
    if (q_lora)
      parts->shapes.insert(parts->shapes.end(), {{*q_lora, hidden}, {q_width, *q_lora}});
    else
      parts->shapes.push_back({q_width, hidden});
    parts->shapes.insert(parts->shapes.end(),
                         {{kv_a_width, hidden}, {kv_b_width, kv_lora}, {hidden, o_width, 1, Block::mla_o_proj}});
  }
  Sum sum;
  if (q_lora) {
    sum.add(product({hidden, *q_lora}, "q_a_proj"), "MLA");
    sum.add(product({*q_lora, q_width}, "q_b_proj"), "MLA");
  } else {
    sum.add(product({hidden, q_width}, "q_proj"), "MLA");
  }
  sum.add(product({hidden, kv_a_width}, "kv_a_proj_with_mqa"), "MLA");
  sum.add(product({kv_lora, kv_b_width}, "kv_b_proj"), "MLA");
  sum.add(o_proj, "MLA");
  sum.add(norms.value, "MLA");
  return sum.value;
}

u64 indexer_params(ConfigFields& fields, u64 hidden, IndexerParts* parts) {
  const u64 index_heads = fields.positive("index_n_heads");
  const u64 index_dim = fields.positive("index_head_dim");
  const std::optional<u64> q_lora = fields.uint("q_lora_rank");
  if (!q_lora) fields.fail("q_lora_rank", "is needed by the indexer (index_n_heads is set)");
  const u64 wq_b_width = product({index_heads, index_dim}, "indexer wq_b");
  Sum sum;
  sum.add(product({*q_lora, wq_b_width}, "indexer wq_b"), "MLA indexer");
  sum.add(product({hidden, index_dim}, "indexer wk"), "MLA indexer");
  const u64 k_norm = product({2, index_dim}, "indexer k_norm");  // weight and bias
  sum.add(k_norm, "MLA indexer");
  const u64 weights_proj = product({hidden, index_heads}, "indexer weights_proj");
  if (parts) *parts = {k_norm, weights_proj, {{wq_b_width, *q_lora, 1, Block::indexer}, {index_dim, hidden, 1, Block::indexer}}};
  sum.add(weights_proj, "MLA indexer");
  return sum.value;
}

u64 mamba2_params(u64 hidden, const Mamba2Shape& m) {
  const u64 conv_dim = checked_add(m.d_inner, product({2, m.groups, m.state}, "mamba conv dim"), "mamba conv dim");
  const u64 in_width = checked_add(checked_add(m.d_inner, conv_dim, "in_proj width"), m.heads, "in_proj width");
  Sum sum;
  sum.add(product({hidden, in_width}, "mamba in_proj"), "Mamba2");
  if (m.proj_bias) sum.add(in_width, "Mamba2");
  sum.add(product({conv_dim, m.conv_kernel}, "mamba conv1d"), "Mamba2");
  if (m.conv_bias) sum.add(conv_dim, "Mamba2");
  sum.add(product({3, m.heads}, "dt_bias + A_log + D"), "Mamba2");
  if (m.gated_norm) sum.add(m.d_inner, "Mamba2");
  sum.add(product({m.d_inner, hidden}, "mamba out_proj"), "Mamba2");
  if (m.out_bias) sum.add(hidden, "Mamba2");
  return sum.value;
}

u64 gated_deltanet_params(ConfigFields& fields, u64 hidden) {
  const u64 key_heads = fields.positive("linear_num_key_heads");
  const u64 value_heads = fields.positive("linear_num_value_heads");
  const u64 key_dim = product({key_heads, fields.positive("linear_key_head_dim")}, "linear key dim");
  const u64 value_head_dim = fields.positive("linear_value_head_dim");
  const u64 value_dim = product({value_heads, value_head_dim}, "linear value dim");
  const u64 kernel = fields.positive("linear_conv_kernel_dim");
  const u64 conv_dim = checked_add(product({2, key_dim}, "conv dim"), value_dim, "conv dim");
  Sum sum;
  sum.add(product({hidden, checked_add(product({2, key_dim}, "qkvz"), product({2, value_dim}, "qkvz"), "qkvz")}, "in_proj_qkvz"),
          "Gated DeltaNet");
  sum.add(product({hidden, 2, value_heads}, "in_proj_ba"), "Gated DeltaNet");
  sum.add(product({conv_dim, kernel}, "conv1d"), "Gated DeltaNet");
  sum.add(product({2, value_heads}, "dt_bias + A_log"), "Gated DeltaNet");
  sum.add(value_head_dim, "Gated DeltaNet");
  sum.add(product({value_dim, hidden}, "out_proj"), "Gated DeltaNet");
  return sum.value;
}

std::vector<StateTensor> mamba2_state(u64 d_inner, u64 groups, u64 state, u64 heads, u64 head_dim, u64 d_conv,
                                      const Dtype& dtype, const Dtype& ssm) {
  // mamba2_state_shape: the conv's channels (d_inner + the groups' B and C) and the SSM's heads
  // split over the ranks, the groups replicated up to the TP size where they do not divide it.
  const u64 group_part = (d_conv - 1) * 2 * groups * state;
  return {{"conv", (d_conv - 1) * d_inner + group_part, &dtype, heads, groups, group_part},
          {"ssm", heads * head_dim * state, &ssm, heads}};
}

std::vector<StateTensor> mamba2_config_state(ConfigFields& fields, const Dtype& dtype, const Dtype& ssm_fallback) {
  const u64 heads = fields.required_uint_of({"mamba_num_heads", "mamba_n_heads"});
  const u64 head_dim = fields.required_uint_of({"mamba_head_dim", "mamba_d_head"});
  const u64 groups = fields.required_uint_of({"n_groups", "mamba_n_groups"});
  const u64 d_state = fields.required_uint_of({"ssm_state_size", "mamba_d_state"});
  const u64 d_conv = fields.required_uint_of({"conv_kernel", "mamba_d_conv"});
  fields.ignore({"expand", "mamba_expand", "mamba_chunk_size", "mamba_conv_bias", "mamba_proj_bias", "mamba_rms_norm",
                 "mamba_norm_before_gate", "mamba_use_mlp", "ssm_in_multiplier", "ssm_out_multiplier", "ssm_multipliers",
                 "mamba_hidden_act", "use_mamba_kernels", "mamba_dt_rank", "chunk_size", "use_conv_bias", "mamba_d_ssm"});
  const u64 d_inner = fields.uint("mamba_d_ssm").value_or(heads * head_dim);
  if (d_conv == 0) fields.fail("conv_kernel", "must be at least 1");
  return mamba2_state(d_inner, groups, d_state, heads, head_dim, d_conv, dtype,
                      state_dtype(fields, {"mamba_ssm_cache_dtype", "mamba_ssm_dtype"}, ssm_fallback));
}

const Dtype& state_dtype(ConfigFields& fields, std::initializer_list<const char*> keys, const Dtype& fallback) {
  for (const char* key : keys)
    if (const auto name = fields.string(key); name && *name != "auto") return parse_torch_dtype(*name);
  return fallback;
}

std::optional<ConfigFields> nested_fields(ConfigFields& fields, const char* key) {
  const auto it = fields.root().find(key);
  if (it == fields.root().end() || it->is_null()) return std::nullopt;
  fields.ignore({key});
  return std::optional<ConfigFields>(std::in_place, *it, fields.origin() + ": " + key);
}

u64 vit_layer_params(u64 hidden, u64 intermediate) {
  Sum sum;
  sum.add(product({4, checked_add(product({hidden, hidden}, "vision attention"), hidden, "vision attention")}, "vision attention"),
          "vision layer");
  sum.add(product({4, hidden}, "vision norms"), "vision layer");
  sum.add(mlp_params(hidden, intermediate, false, true), "vision layer");
  return sum.value;
}

u64 clip_vision_params(ConfigFields& v) {
  const u64 h = v.positive("hidden_size");
  const u64 patch = v.positive("patch_size");
  const u64 grid = v.positive("image_size") / patch;
  Sum sum;
  sum.add(h, "CLIP");  // class_embedding
  sum.add(product({h, v.uint_or("num_channels", 3), patch, patch}, "CLIP patch_embedding"), "CLIP");
  sum.add(product({grid * grid + 1, h}, "CLIP position_embedding"), "CLIP");
  sum.add(product({4, h}, "CLIP pre/post layernorm"), "CLIP");
  sum.add(product({v.positive("num_hidden_layers"), vit_layer_params(h, v.positive("intermediate_size"))}, "CLIP layers"), "CLIP");
  return sum.value;
}

u64 siglip_vision_params(ConfigFields& v) {
  const u64 h = v.positive("hidden_size");
  const u64 i = v.positive("intermediate_size");
  const u64 patch = v.positive("patch_size");
  const u64 grid = v.positive("image_size") / patch;
  Sum sum;
  sum.add(checked_add(product({h, v.uint_or("num_channels", 3), patch, patch}, "SigLIP patch_embedding"), h, "SigLIP"), "SigLIP");
  sum.add(product({grid * grid, h}, "SigLIP position_embedding"), "SigLIP");
  sum.add(product({v.positive("num_hidden_layers"), vit_layer_params(h, i)}, "SigLIP layers"), "SigLIP");
  sum.add(product({2, h}, "SigLIP post_layernorm"), "SigLIP");
  if (v.flag("vision_use_head", true)) {
    sum.add(h, "SigLIP head");  // probe
    sum.add(checked_add(product({3, h, h}, "SigLIP head in_proj"), 3 * h, "SigLIP head"), "SigLIP head");
    sum.add(checked_add(product({h, h}, "SigLIP head out_proj"), h, "SigLIP head"), "SigLIP head");
    sum.add(2 * h, "SigLIP head");
    sum.add(mlp_params(h, i, false, true), "SigLIP head");
  }
  return sum.value;
}

void check_attention(ConfigFields& fields, const Layout& layout) {
  if (!layout.head_dim_stated && layout.hidden % layout.heads != 0)
    fields.fail("head_dim", "is absent and hidden_size is not a multiple of num_attention_heads");
  if (layout.head_dim == 0) fields.fail("head_dim", "must be at least 1");
  for (const LayerPlan& layer : layout.layers)
    if (layer.attends() && layer.kv_heads == 0) fields.fail("num_key_value_heads", "must be at least 1");
}

void not_counted(ConfigFields& fields) { throw unsupported_architecture("model_type", fields.model_type()); }

}  // namespace kvplan::arch
