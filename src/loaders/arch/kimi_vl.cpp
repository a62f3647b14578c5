// Kimi-VL (moonshotai/Kimi-VL-A3B-Instruct and -Thinking; model_type kimi_vl) and Kimi K2.5 (K2.6,
// K2.7 Code; kimi_k25): the MoonViT vision encoder and a two-layer projector in front of a
// DeepSeek-V3-shaped language model that its own family counts (text_config's model_type:
// deepseek_v3, kimi_k2). Read in vLLM's models/moonvit.py (MoonVitPretrainedModel, adapted from the
// checkpoint's modeling_kimi_vl.py) and kimi_vl.py (KimiVLMultiModalProjector); K2.5's MoonViT3d
// (NeMo Automodel's kimi_k25_vl/model.py) has the same weights: its temporal position table is a
// non-persistent sin-cos buffer, and its vision_config spells the sizes vt_hidden_size,
// vt_num_hidden_layers and vt_intermediate_size.

#include "loaders/tensor_parts.h"

namespace kvplan::arch {

namespace {

/// One side of the merge kernel (vision_config.merge_kernel_size, a [height, width] pair).
u64 merge_side(ConfigFields& v, std::size_t index) {
  const nlohmann::json* kernel = v.find("merge_kernel_size");
  if (!kernel) return 2;  // MoonViTConfig's default [2, 2]
  if (!kernel->is_array() || kernel->size() != 2 || !(*kernel)[index].is_number_integer() ||
      (*kernel)[index].get<std::int64_t>() <= 0)
    v.fail("merge_kernel_size", "expected two positive whole numbers");
  return static_cast<u64>((*kernel)[index].get<std::int64_t>());
}

/// `key` in K2.5's spelling (vt_<key>) where the vision config has it, else as Kimi-VL spells it.
u64 vision_size(ConfigFields& v, const std::string& key) {
  if (v.has("vt_" + key)) return v.positive("vt_" + key);
  return v.positive(key);
}

/// MoonVitPretrainedModel: patch_embed.proj (Conv2d 3 -> h, kernel and stride patch_size, with
/// bias), patch_embed.pos_emb (a learnable init_pos_emb_height x init_pos_emb_width x h grid,
/// interpolated per image), num_hidden_layers encoder blocks (norm0 and norm1 LayerNorms, wqkv
/// h -> 3h and wo with biases (attn_bias=True), mlp fc0 / fc1 with biases: vit_layer_params), the
/// encoder's final_layernorm; the 2D rope has no parameters. KimiVLMultiModalProjector: pre_norm
/// (LayerNorm of h), linear_1 (h x k -> h x k) and linear_2 (h x k -> text hidden), both with
/// bias, k the merge kernel's area.
std::vector<ModelPart> towers(ConfigFields& fields, const Layout& layout) {
  std::optional<ConfigFields> v = nested_fields(fields, "vision_config");
  if (!v) return {};
  const u64 h = vision_size(*v, "hidden_size");
  const u64 patch = v->positive("patch_size");
  Sum tower;
  tower.add(checked_add(product({h, 3, patch, patch}, "patch_embed"), h, "patch_embed"), "vision tower");
  tower.add(product({v->positive_or("init_pos_emb_height", 64), v->positive_or("init_pos_emb_width", 64), h}, "pos_emb"),
            "vision tower");
  tower.add(product({vision_size(*v, "num_hidden_layers"), vit_layer_params(h, vision_size(*v, "intermediate_size"))},
                    "vision layers"),
            "vision tower");
  tower.add(2 * h, "vision tower");  // final_layernorm
  const u64 merged = product({h, merge_side(*v, 0), merge_side(*v, 1)}, "projector");
  Sum projector;
  projector.add(2 * h, "projector");  // pre_norm
  projector.add(checked_add(product({merged, merged}, "projector linear_1"), merged, "projector"), "projector");
  projector.add(checked_add(product({merged, layout.hidden}, "projector linear_2"), layout.hidden, "projector"), "projector");
  return {{"vision tower", tower.value}, {"projector", projector.value}};
}

}  // namespace

const Family& family_kimi_vl() {
  static const Family family{
      .name = "kimi_vl",
      .types = {},
      .gguf = "the language model's own (deepseek2); the tower ships as a separate mmproj file",
      .fixtures = {"kimi-vl-a3b-instruct", "kimi-k2.5"},
      .rules = "Wrapper only (kimi_vl, kimi_k25): the cache is the text_config's language model's (DeepSeek-V3 MLA). Counted "
               "beside it: the MoonViT encoder (patch embedding with bias, a learnable init_pos_emb_height x "
               "init_pos_emb_width position grid, ViT blocks with biased qkv, output and MLP, a final LayerNorm) and "
               "the projector (LayerNorm, then two biased linears: vision width x merge area -> itself -> text "
               "width); K2.5's vt_hidden_size, vt_num_hidden_layers, vt_intermediate_size read for those sizes.",
      .unverified = "The fixture is transcribed from a machine copy of the Hub file (SOURCES.md); the total, "
                    "16,407,656,048, is within Hugging Face's rounded 16.4B (no exact count was found).",
      .wrappers = {"kimi_vl", "kimi_k25"},
      // The published config.json's text_config has no model_type: KimiVLConfig makes it a
      // DeepseekV3Config.
      .wrapper_text_type = "deepseek_v3",
      .towers = towers,
  };
  return family;
}

}  // namespace kvplan::arch
