// Meta Llama 3.2 Vision (mllama: transformers modeling_mllama.py; vLLM's V0 mllama.py): a Llama
// language model whose cross_attention_layers attend to the image instead of the text, and the
// tiled vision encoder.

#include <fmt/format.h>

#include "kvplan/error.h"
#include "loaders/tensor_parts.h"

namespace kvplan::arch {

namespace {

/// The image tokens a cross-attention layer caches per sequence: one image at max_num_tiles tiles of
/// (image_size / patch_size)^2 + 1 tokens (the +1 is the class token): 4 x 1,601 = 6,404 for Llama
/// 3.2 11B Vision, the most vLLM V0 allotted an image (get_max_mllama_image_tokens) and what
/// transformers pads every image to.
u64 image_tokens(ConfigFields& fields) {
  std::optional<ConfigFields> v = nested_fields(fields, "vision_config");
  if (!v) fields.fail("cross_attention_layers", "needs vision_config (image_size, patch_size, max_num_tiles) to size the image tokens");
  const u64 grid = v->positive("image_size") / v->positive("patch_size");
  return product({v->positive("max_num_tiles"), grid * grid + 1}, "image tokens");
}

/// The layers in cross_attention_layers keep no text cache: they cache K and V of the image tokens
/// (k_norm(k_proj(vision)), v_proj(vision): num_key_value_heads x head_dim each), the same for any
/// context.
void finish_layout(ConfigFields& fields, Layout& layout) {
  const std::set<u64> cross = fields.index_list("cross_attention_layers");
  if (cross.empty()) return;
  const u64 tokens = image_tokens(fields);
  for (const u64 i : cross) {
    if (i >= layout.count()) fields.fail("cross_attention_layers", fmt::format("layer {} is past the last layer", i));
    LayerPlan& layer = layout.layers[i];
    if (layer.kind != LayerKind::full)
      throw unsupported_architecture(fmt::format("{}: cross_attention_layers[{}]", fields.origin(), i), std::string(to_string(layer.kind)));
    layer.kind = LayerKind::cross;
    layer.window = tokens;
  }
}

/// MllamaTextModel: embed_tokens of vocab_size + 8 rows; self-attention layers q, k, v, o; cross
/// layers cross_attn q, k, v, o, its q_norm and k_norm over head_dim and two gates
/// (cross_attn_attn_gate, cross_attn_mlp_gate), no self-attention; every layer a gated MLP and
/// two RMSNorms; the final norm; lm_head of vocab_size rows (untied).
ParamCount count(ConfigFields& fields, const Layout& layout) {
  check_attention(fields, layout);
  ParamCount count = start_count(fields, layout, checked_add(fields.positive("vocab_size"), 8, "embedding rows"));
  count.lm_head = count.lm_head ? product({fields.positive("vocab_size"), layout.hidden}, "lm_head") : 0;
  const u64 hidden = layout.hidden;
  const u64 mlp = mlp_params(hidden, fields.positive("intermediate_size"), true, false);
  Counted counted;
  counted.final_norm = hidden;
  for (const LayerPlan& layer : layout.layers) {
    LayerPlan attention = layer;
    const bool cross = layer.kind == LayerKind::cross;
    const u64 extra = cross ? 2 * layout.head_dim + 2 : 0;
    counted.layers.push_back(layer_of(attention_params(layout, attention, {}) + extra + mlp + 2 * hidden));
  }
  finish_count(count, fields, counted);
  return count;
}

/// MllamaVisionModel: patch_embedding h x C x p^2 (no bias), class_embedding h,
/// gated_positional_embedding (embedding N x h, gate 1, tile_embedding (A + 1) x T N h),
/// pre_ and post_tile_positional_embedding ((A + 1) x T h and a gate each), layernorm_pre and
/// _post; num_hidden_layers local and num_global_layers global layers: q, k, v, o h x h without
/// bias, fc1 / fc2 with biases, two LayerNorms with biases, and on the global ones gate_attn and
/// gate_ffn. N = (image / p)^2 + 1, T = max_num_tiles, A = len(supported_aspect_ratios). The
/// projector: multi_modal_projector text h x vision_output_dim + text h.
std::vector<ModelPart> towers(ConfigFields& fields, const Layout& layout) {
  std::optional<ConfigFields> v = nested_fields(fields, "vision_config");
  if (!v) return {};
  const u64 h = v->positive("hidden_size");
  const u64 i = v->positive("intermediate_size");
  const u64 patch = v->positive("patch_size");
  const u64 grid = v->positive("image_size") / patch;
  const u64 positions = grid * grid + 1;
  const u64 tiles = v->positive("max_num_tiles");
  const nlohmann::json* ratios = v->find("supported_aspect_ratios");
  if (!ratios || !ratios->is_array() || ratios->empty()) v->fail("supported_aspect_ratios", "is missing");
  const u64 aspect_ids = ratios->size() + 1;
  const u64 layer = vit_layer_params(h, i) - 4 * h;  // q, k, v, o without biases
  Sum tower;
  tower.add(product({h, v->uint_or("num_channels", 3), patch, patch}, "patch_embedding"), "vision tower");
  tower.add(h, "vision tower");
  tower.add(checked_add(product({positions, h}, "gated_positional_embedding"), 1, "gate"), "vision tower");
  tower.add(product({aspect_ids, tiles, positions, h}, "tile_embedding"), "vision tower");
  tower.add(product({2, checked_add(product({aspect_ids, tiles, h}, "tile positional embedding"), 1, "gate")}, "tiles"), "vision tower");
  tower.add(4 * h, "vision tower");
  tower.add(product({v->positive("num_hidden_layers"), layer}, "vision layers"), "vision tower");
  tower.add(product({v->positive("num_global_layers"), layer + 2}, "global layers"), "vision tower");
  return {{"vision tower", tower.value},
          {"projector", checked_add(product({layout.hidden, v->positive("vision_output_dim")}, "projector"), layout.hidden, "projector")}};
}

}  // namespace

const Family& family_mllama() {
  static const Family family{
      .name = "mllama",
      .types = {{"mllama_text_model"}},
      .gguf = "mllama (Ollama's own converter; upstream llama.cpp has no mllama)",
      .fixtures = {"llama3.2-90b-vision-instruct"},
      .rules = "The layers in cross_attention_layers are cross layers: no text cache, but K and V (num_key_value_heads x "
               "head_dim) of one image's tokens, max_num_tiles x ((image_size / patch_size)^2 + 1) = 6,404 for Llama 3.2 "
               "Vision, whatever the context; the other layers are full attention. Counted with the tiled vision "
               "encoder and the projector as their own lines.",
      .unverified = "11B: no config.json was found, tested on the fields quoted from its config and its tensor "
                    "listing, inline (its count is Hugging Face's exactly); 90B from its config.json (88.59B with the "
                    "tower and projector, no exact published count found). The cache assumes one image per sequence at "
                    "the KV cache dtype (vLLM V0's encoder-decoder cache; vLLM removed mllama after 0.10.2, llama.cpp "
                    "never had it, early transformers kept the cross K/V at num_attention_heads after repeat_kv).",
      .finish_layout = finish_layout,
      .count = count,
      .wrappers = {"mllama"},
      .towers = towers,
  };
  return family;
}

}  // namespace kvplan::arch
