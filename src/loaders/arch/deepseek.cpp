// DeepSeek-V2/V3/V3.2 and the models built from their modules: Kimi K2 (DeepseekV3), GLM-4.7-Flash
// (glm4_moe_lite: DeepseekV3Attention + Glm4MoeMoE), GLM-5 (glm_moe_dsa: + the DSA indexer), and
// GLM-4.5/4.7 (glm4_moe: grouped-query attention with the same routed experts and MTP layers).
// transformers modeling_deepseek_v2.py, modeling_deepseek_v3.py, modeling_glm4_moe.py,
// modeling_glm_moe_dsa.py; DeepSeek-V3's README_WEIGHTS.md for the MTP layers.

#include <fmt/format.h>

#include "kvplan/error.h"
#include "loaders/tensor_parts.h"
#include "model/checked.h"

namespace kvplan::arch {

namespace {

bool glm_routing(const std::string& type) { return type == "glm4_moe" || type == "glm4_moe_lite"; }

/// Which layers are MoE: newer configs list each layer's MLP ("dense" / "sparse") in
/// mlp_layer_types. Else DeepseekV3DecoderLayer: MoE when n_routed_experts is set, i >=
/// first_k_dense_replace and i % moe_layer_freq == 0; Glm4MoeDecoderLayer: MoE from
/// first_k_dense_replace (default 1) on.
bool is_moe_layer(ConfigFields& fields, u64 index) {
  if (const std::vector<std::string> types = fields.string_list("mlp_layer_types"); !types.empty()) {
    if (index >= types.size()) fields.fail("mlp_layer_types", "has fewer entries than num_hidden_layers");
    if (types[index] == "sparse") return true;
    if (types[index] == "dense") return false;
    throw unsupported_architecture(fmt::format("mlp_layer_types[{}]", index), types[index]);
  }
  if (!fields.has("n_routed_experts")) return false;
  const bool glm = glm_routing(fields.model_type());
  const u64 freq = glm ? 1 : fields.positive_or("moe_layer_freq", 1);
  return index >= fields.uint_or("first_k_dense_replace", glm ? 1 : 0) && index % freq == 0;
}

/// The DeepSeekMoE block: n_routed_experts experts of 3 x H x moe_intermediate_size, router E x H
/// (+ E e_score_correction_bias with topk_method noaux_tc, the default but for deepseek_v2, and in
/// glm4_moe), shared experts one MLP of n_shared_experts x moe_intermediate_size.
struct Moe {
  u64 experts = 0;
  u64 top_k = 0;
  u64 width = 0;
  u64 always = 0;
  u64 shared = 0;  ///< of always, the shared experts
  u64 shared_width = 0;  ///< their MLP's width, n_shared_experts x moe_intermediate_size
  u64 bias = 0;    ///< of always, e_score_correction_bias
};
Moe read_moe(ConfigFields& fields, u64 hidden) {
  Moe moe;
  moe.experts = fields.positive("n_routed_experts");
  moe.top_k = fields.positive("num_experts_per_tok");
  if (moe.top_k > moe.experts) fields.fail("num_experts_per_tok", "is larger than the number of experts");
  moe.width = fields.positive("moe_intermediate_size");
  moe.always = product({hidden, moe.experts}, "router");
  const std::string method =
      fields.string("topk_method").value_or(fields.model_type() == "deepseek_v2" ? "greedy" : "noaux_tc");
  if (fields.model_type() == "glm4_moe" || method == "noaux_tc") {
    moe.bias = moe.experts;
    moe.always = checked_add(moe.always, moe.bias, "e_score_correction_bias");
  }
  if (const u64 shared = fields.uint_or("n_shared_experts", 0); shared > 0) {
    moe.shared_width = product({shared, moe.width}, "shared experts");
    moe.shared = product({3, hidden, moe.shared_width}, "shared experts");
    moe.always = checked_add(moe.always, moe.shared, "shared experts");
  }
  return moe;
}

ParamCount count(ConfigFields& fields, const Layout& layout) {
  const std::string& type = fields.model_type();
  const u64 hidden = layout.hidden;
  const bool mla = type != "glm4_moe";
  ParamCount count = start_count(fields, layout);
  u64 attention = 0;
  u64 attention_norms = 0;  // of attention, its norms and biases (vectors)
  MlaParts mla_parts;
  std::vector<MatrixShape> attention_shapes;
  if (mla) {
    attention = mla_params(fields, hidden, std::nullopt, &mla_parts);
    attention_norms = mla_parts.vectors;
    attention_shapes = mla_parts.shapes;
  } else {
    // Glm4MoeAttention: q/k/v bias = attention_bias, o_proj none; q/k RMSNorm with use_qk_norm.
    check_attention(fields, layout);
    Attention a;
    a.qkv_bias = fields.flag("attention_bias", false);
    a.qk_norm = fields.flag("use_qk_norm", false) ? 2 * layout.head_dim : 0;
    attention = attention_params(layout, layout.layers.front(), a, &attention_shapes);
    attention_norms = attention_vectors(layout, layout.layers.front(), a);
  }
  const bool any_indexer =
      std::any_of(layout.layers.begin(), layout.layers.end(), [](const LayerPlan& layer) { return layer.index_head_dim > 0; });
  IndexerParts indexer_parts;
  const u64 indexer = any_indexer ? indexer_params(fields, hidden, &indexer_parts) : 0;

  std::vector<bool> moe_layers(layout.count());
  for (u64 i = 0; i < layout.count(); ++i) moe_layers[i] = is_moe_layer(fields, i);
  const bool any_moe = std::find(moe_layers.begin(), moe_layers.end(), true) != moe_layers.end();
  const bool any_dense = std::find(moe_layers.begin(), moe_layers.end(), false) != moe_layers.end();
  const Moe moe = any_moe ? read_moe(fields, hidden) : Moe{};
  const u64 dense_width = any_dense ? fields.positive("intermediate_size") : 0;
  const u64 dense = any_dense ? mlp_params(hidden, dense_width, true, false) : 0;
  const auto layer_params = [&](bool is_moe, bool with_indexer) {
    // self_attn holds the indexer; its norms and biases are vectors beside the layer's two norms.
    const u64 self_attn = attention + (with_indexer ? indexer : 0);
    const u64 self_attn_norms = attention_norms + (with_indexer ? indexer_parts.vectors : 0);
    const u64 own = self_attn + 2 * hidden;
    LayerParams layer =
        is_moe ? plus(moe_layer(moe.experts, moe.top_k, hidden, moe.width, moe.always), own) : layer_of(own + dense);
    // The modules quantization lists name: self_attn, mlp.shared_experts.
    layer.modules = true;
    layer.vectors = self_attn_norms + 2 * hidden + (is_moe ? moe.bias : 0);
    layer.attention = self_attn - self_attn_norms;
    layer.shared = is_moe ? moe.shared : 0;
    layer.unquantized = with_indexer ? indexer_parts.weights_proj : 0;
    if (mla) layer.mla = MlaShare{mla_parts.o_proj, with_indexer ? indexer - indexer_parts.vectors : 0};
    layer.fp32 = is_moe ? moe.bias : 0;
    layer.shapes.insert(layer.shapes.end(), attention_shapes.begin(), attention_shapes.end());
    if (with_indexer) layer.shapes.insert(layer.shapes.end(), indexer_parts.shapes.begin(), indexer_parts.shapes.end());
    if (is_moe && moe.shared) add_mlp_shapes(layer.shapes, hidden, moe.shared_width, true, Block::shared);
    if (!is_moe) add_mlp_shapes(layer.shapes, hidden, dense_width, true, Block::dense_mlp);
    return layer;
  };

  Counted counted;
  counted.final_norm = hidden;
  counted.experts = moe.experts;
  counted.top_k = moe.top_k;
  for (u64 i = 0; i < layout.count(); ++i) {
    if (!layout.layers[i].attends() && layout.layers[i].kind != LayerKind::mla)
      throw unsupported_architecture(fmt::format("layer_types[{}]", i), layout.layers[i].block);
    counted.layers.push_back(layer_params(moe_layers[i], layout.layers[i].index_head_dim > 0));
  }

  // Multi-token-prediction layers (DeepSeek V3, GLM-4.5; DeepSeek-V3 README_WEIGHTS.md): each is
  // one MoE decoder layer plus enorm, hnorm (H each), eh_proj (2H x H) and shared_head.norm (H),
  // DeepSeek's "unique parameters". DeepSeek's checkpoints also store a copy of the embedding and
  // of the output head with each (model.layers.N.embed_tokens, model.layers.N.shared_head.head),
  // which engines load with the MTP layer, so they are counted in `mtp` too. GLM-5's do not
  // (glm_moe_dsa): GLM-5.1's tensor listing, 753,864,139,008 parameters, has no
  // model.layers.78.embed_tokens or shared_head.head, and engines share the target's.
  if (const u64 mtp_layers = fields.uint_or("num_nextn_predict_layers", 0); mtp_layers > 0) {
    Sum unique;
    // A DSA model's MTP layer has an indexer of its own (DeepseekV32MTP, whatever the target's
    // layers share).
    const LayerParams decoder = layer_params(any_moe, any_indexer);
    unique.add(decoder.params, "MTP");
    const u64 mtp_norms = product({3, hidden}, "MTP norms");  // enorm, hnorm, shared_head.norm
    unique.add(mtp_norms, "MTP");
    const u64 eh_proj = product({2, hidden, hidden}, "MTP eh_proj");
    unique.add(eh_proj, "MTP");
    const u64 copies = type == "glm_moe_dsa" ? 0 : product({2, count.embedding}, "MTP embedding and head");
    count.mtp = product({mtp_layers, checked_add(unique.value, copies, "MTP")}, "MTP");
    count.mtp_replicated = product({mtp_layers, eh_proj}, "MTP eh_proj");
    count.mtp_layer = decoder;
    // Kept at the model dtype beside the copies and eh_proj: its router, its vectors (the
    // layer's, enorm, hnorm, shared_head.norm) and its indexer's weights_proj, as the trunk's are.
    const u64 kept = (Checked(copies, "MTP") + decoder.router + decoder.vectors + decoder.unquantized + mtp_norms).value();
    count.mtp_unquantized = checked_add(product({mtp_layers, kept}, "MTP"), count.mtp_replicated, "MTP");
    fields.note(copies ? fmt::format("{} MTP layer(s) not in total: {} unique parameters + {} of embedding/head copies each",
                                     mtp_layers, format_thousands(unique.value), format_thousands(copies))
                       : fmt::format("{} MTP layer(s) not in total: {} parameters each (the embedding and head are the "
                                     "model's)",
                                     mtp_layers, format_thousands(unique.value)));
  }
  finish_count(count, fields, counted);
  return count;
}

/// The DSA lightning indexer's key width on each layer: DeepSeek-V3.2 and GLM-5 (deepseek_v32,
/// glm_moe_dsa) keep one key of index_head_dim values per token per indexed layer. GLM-5.2's
/// indexer_types marks layers "full" (own indexer) or "shared" (reuses the previous full layer's
/// top-k, no indexer); without it GlmMoeDsaConfig derives the pattern from index_topk_freq and
/// index_skip_topk_offset (defaults 1 and 2: every layer). index_head_dim defaults to 128 in
/// GlmMoeDsaConfig. DeepSeek-V4's compressed indexer is not read here (compress_ratios stays exit 3).
void finish_layout(ConfigFields& fields, Layout& layout) {
  const bool glm = fields.model_type() == "glm_moe_dsa";
  if (!glm && fields.model_type() != "deepseek_v32") return;
  fields.ignore({"index_n_heads", "index_topk", "indexer_rope_interleave", "index_share_for_mtp_iteration"});
  const u64 width = glm ? fields.uint("index_head_dim").value_or(128) : fields.required_uint("index_head_dim");
  if (width == 0 || width > 0xFFFF) fields.fail("index_head_dim", "must be between 1 and 65535");
  const u64 layers = layout.count();
  std::vector<bool> own(layers, true);
  if (glm) {
    const auto freq = fields.uint("index_topk_freq");
    const auto offset = fields.uint("index_skip_topk_offset");
    if (const nlohmann::json* pattern = fields.find("index_topk_pattern")) {
      const std::string text = pattern->is_string() ? pattern->get<std::string>() : std::string();
      if (text.size() != layers) fields.fail("index_topk_pattern", fmt::format("expected {} characters F or S", layers));
      for (std::size_t i = 0; i < layers; ++i) {
        if (text[i] != 'F' && text[i] != 'S')
          throw unsupported_architecture(fmt::format("{}: index_topk_pattern[{}]", fields.origin(), i), std::string(1, text[i]));
        own[i] = text[i] == 'F';
      }
    } else {
      // GlmMoeDsaConfig: full when max(i - offset + 1, 0) % freq == 0.
      const u64 every = std::max<u64>(freq.value_or(1), 1);
      const u64 skip = offset.value_or(2);
      for (std::size_t i = 0; i < layers; ++i) own[i] = ((i + 1 > skip ? i + 1 - skip : 0) % every) == 0;
    }
    if (const nlohmann::json* types = fields.find("indexer_types")) {
      if (!types->is_array() || types->size() != layers) fields.fail("indexer_types", fmt::format("expected {} entries", layers));
      for (std::size_t i = 0; i < layers; ++i) {
        const nlohmann::json& entry = (*types)[i];
        const std::string type = entry.is_string() ? entry.get<std::string>() : entry.dump();
        if (type != "full" && type != "shared")
          throw unsupported_architecture(fmt::format("{}: indexer_types[{}]", fields.origin(), i), type);
        // When the config also gives the schedule, both must say the same.
        if ((freq || offset) && own[i] != (type == "full"))
          fields.fail("indexer_types",
                      fmt::format("layer {} is '{}' but index_topk_freq / index_skip_topk_offset say otherwise", i, type));
        own[i] = type == "full";
      }
    }
  }
  for (std::size_t i = 0; i < layers; ++i)
    if (own[i]) layout.layers[i].index_head_dim = width;
}

}  // namespace

const Family& family_deepseek() {
  static const Family family{
      .name = "deepseek",
      .types = {{"deepseek_v2"}, {"deepseek_v3"}, {"deepseek_v32"}, {"kimi_k2"}, {"glm4_moe"}, {"glm4_moe_lite"}, {"glm_moe_dsa"}},
      .gguf = "deepseek2, deepseek32, glm4moe, glm-dsa",
      .fixtures = {"deepseek-v3", "deepseek-v2-lite", "deepseek-v3.2", "kimi-k2", "glm4.5-air", "glm4.7-flash", "glm-5.1", "glm-5.2"},
      .rules = "MLA (kv_lora_rank set): one latent of kv_lora_rank + qk_rope_head_dim per token per layer, whatever "
               "head_dim says. DSA indexer (deepseek_v32, glm_moe_dsa): an index_head_dim key per token on each "
               "indexed layer (indexer_types, else index_topk_freq / index_skip_topk_offset; GlmMoeDsaConfig defaults "
               "index_head_dim 128 and index_n_heads 32). glm4_moe: grouped-query attention with q/k/v bias and "
               "use_qk_norm. Routed experts from first_k_dense_replace (every moe_layer_freq-th) or per "
               "mlp_layer_types, shared experts, e_score_correction_bias with noaux_tc; num_nextn_predict_layers MTP "
               "layers counted apart (with the embedding and head copies DeepSeek's checkpoints store beside each; GLM-5's "
               "store none).",
      .defaults = {{"glm_moe_dsa", "index_n_heads", 32}, {"glm_moe_dsa", "index_head_dim", 128}},
      .finish_layout = finish_layout,
      .count = count,
  };
  return family;
}

}  // namespace kvplan::arch
