// Idefics3 (Idefics3-8B-Llama3, SmolVLM 256M / 500M / 2B): a SigLIP-shaped vision encoder and a
// pixel-shuffle connector in front of a language model its own family counts (text_config's
// model_type: llama). transformers modeling_idefics3.py.

#include "loaders/tensor_parts.h"

namespace kvplan::arch {

namespace {

/// Idefics3VisionTransformer: embeddings (patch_embedding Conv2d C -> h, kernel p, with bias;
/// position_embedding (image / p)^2 x h), num_hidden_layers encoder layers (q, k, v, out_proj with
/// biases, layer_norm1/2 with biases, fc1 / fc2 with biases: vit_layer_params) and post_layernorm.
/// Unlike SiglipVisionModel it has no attention-pooling head. Idefics3Connector: pixel shuffle
/// by scale_factor (Idefics3Config default 2), then modality_projection.proj, a Linear of
/// vision h x scale_factor^2 -> text h without bias.
std::vector<ModelPart> towers(ConfigFields& fields, const Layout& layout) {
  std::optional<ConfigFields> v = nested_fields(fields, "vision_config");
  if (!v) return {};
  const u64 h = v->positive("hidden_size");
  const u64 patch = v->positive("patch_size");
  const u64 grid = v->positive("image_size") / patch;
  Sum tower;
  tower.add(checked_add(product({h, v->uint_or("num_channels", 3), patch, patch}, "patch_embedding"), h, "patch_embedding"),
            "vision tower");
  tower.add(product({grid, grid, h}, "position_embedding"), "vision tower");
  tower.add(product({v->positive("num_hidden_layers"), vit_layer_params(h, v->positive("intermediate_size"))}, "vision layers"),
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
      .fixtures = {"smolvlm-256m-instruct"},
      .rules = "Wrappers only: the cache is the text_config's language model's (SmolVLM: Llama). Counted beside it: "
               "the SigLIP-shaped vision encoder (no pooling head) and the pixel-shuffle connector's projection "
               "(vision width x scale_factor^2 -> text width, no bias), as their own lines in the weights.",
      .unverified = "SmolVLM2's own model_type (smolvlm) is not read: its modelling code is Idefics3's, but no "
                    "config of it was checked.",
      .wrappers = {"idefics3"},
      .towers = towers,
  };
  return family;
}

}  // namespace kvplan::arch
