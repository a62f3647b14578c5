// Idefics3 (Idefics3-8B-Llama3, SmolVLM 256M / 500M / 2B) and SmolVLM2 (model_type smolvlm, the same
// modules under other names): a SigLIP-shaped vision encoder and a pixel-shuffle connector in front
// of a language model its own family counts (text_config's model_type: llama). transformers
// modeling_idefics3.py; modular_smolvlm.py subclasses its config classes and modules unchanged.

#include "loaders/tensor_parts.h"

namespace kvplan::arch {

namespace {

/// Idefics3VisionTransformer: embeddings (patch_embedding Conv2d C -> h, kernel p, with bias;
/// position_embedding (image / p)^2 x h), num_hidden_layers encoder layers (q, k, v, out_proj with
/// biases, layer_norm1/2 with biases, fc1 / fc2 with biases: vit_layer_params) and post_layernorm.
/// Unlike SiglipVisionModel it has no attention-pooling head. Idefics3Connector: pixel shuffle
/// by scale_factor (Idefics3Config default 2), then modality_projection.proj, a Linear of
/// vision h x scale_factor^2 -> text h without bias.
///
/// A field the vision_config leaves out takes Idefics3VisionConfig's default, which
/// SmolVLMVisionConfig inherits (SmolVLM2-500M's published config states neither its layer count
/// nor its MLP width): hidden_size 1152, intermediate_size 3072, num_hidden_layers 12,
/// num_channels 3, image_size 224, patch_size 32.
std::vector<ModelPart> towers(ConfigFields& fields, const Layout& layout) {
  std::optional<ConfigFields> v = nested_fields(fields, "vision_config");
  if (!v) return {};
  const u64 h = v->positive_or("hidden_size", 1152);
  const u64 patch = v->positive_or("patch_size", 32);
  const u64 grid = v->positive_or("image_size", 224) / patch;
  if (grid == 0) v->fail("image_size", "is smaller than one patch");
  Sum tower;
  tower.add(checked_add(product({h, v->positive_or("num_channels", 3), patch, patch}, "patch_embedding"), h, "patch_embedding"),
            "vision tower");
  tower.add(product({grid, grid, h}, "position_embedding"), "vision tower");
  tower.add(product({v->positive_or("num_hidden_layers", 12), vit_layer_params(h, v->positive_or("intermediate_size", 3072))},
                    "vision layers"),
            "vision tower");
  tower.add(2 * h, "vision tower");  // post_layernorm
  const u64 scale = fields.has("scale_factor") ? fields.positive("scale_factor") : 2;
  const u64 projector = product({h, scale, scale, layout.hidden}, "modality_projection");
  return {{"vision tower", tower.value}, {"projector", projector}};
}

}  // namespace

const Family& family_idefics3() {
  static const Family family{
      .name = "idefics3",
      .types = {},
      .gguf = "the language model's own (llama); the tower ships as a separate mmproj file",
      .fixtures = {"smolvlm-256m-instruct", "smolvlm2-500m-video-instruct"},
      .rules = "Wrappers only (idefics3, and SmolVLM2's smolvlm, whose classes subclass Idefics3's unchanged): the "
               "cache is the text_config's language model's (SmolVLM: Llama). Counted beside it: the SigLIP-shaped "
               "vision encoder (no pooling head) and the pixel-shuffle connector's projection (vision width x "
               "scale_factor^2 -> text width, no bias), as their own lines in the weights. A vision field the config "
               "leaves out takes Idefics3VisionConfig's default (1152 wide, 12 layers, MLP 3072, patch 32, image 224); "
               "SmolVLM2-500M's config states neither its layer count nor its MLP width.",
      .unverified = "SmolVLM2-500M's total (507,482,304, the vision defaults included) is Hugging Face's count of "
                    "SmolVLM-500M-Instruct, the same shapes; no count of the SmolVLM2 repository itself was found.",
      .wrappers = {"idefics3", "smolvlm"},
      .towers = towers,
  };
  return family;
}

}  // namespace kvplan::arch
