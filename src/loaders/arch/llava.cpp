// LLaVA-style wrappers: a vision encoder and a projector in front of a language model that its
// own family counts (the text_config's model_type): llava (LLaVA 1.5: CLIP), llava_next (LLaVA 1.6:
// CLIP and image_newline) and mistral3 (Mistral Small 3.1: Pixtral and a patch merger).
// transformers modeling_llava.py, modeling_llava_next.py, modeling_mistral3.py, modeling_pixtral.py.

#include "loaders/tensor_parts.h"

namespace kvplan::arch {

namespace {

/// Pixtral (PixtralVisionModel): patch_conv h x C x p x p (no bias), ln_pre; per layer
/// attention_norm, q, k, v (heads x head_dim), o, ffn_norm, gate / up / down, no biases.
u64 pixtral_params(ConfigFields& v) {
  const u64 h = v.positive("hidden_size");
  const u64 heads = v.positive("num_attention_heads");
  const u64 hd = v.has("head_dim") ? v.positive("head_dim") : h / heads;
  const u64 patch = v.positive("patch_size");
  Sum sum;
  sum.add(product({h, v.uint_or("num_channels", 3), patch, patch}, "Pixtral patch_conv"), "Pixtral");
  sum.add(h, "Pixtral");  // ln_pre
  const u64 layer = gqa_params(h, heads, heads, hd, hd) + 2 * h + mlp_params(h, v.positive("intermediate_size"), true, false);
  sum.add(product({v.positive("num_hidden_layers"), layer}, "Pixtral layers"), "Pixtral");
  return sum.value;
}

/// The tower and the projector. LlavaMultiModalProjector: linear_1 text h x vision h and linear_2
/// text h x text h, with biases unless multimodal_projector_bias is false; LLaVA-NeXT adds
/// image_newline (text h) with use_image_newline_parameter (default true). Mistral3MultiModalProjector:
/// norm (vision h), patch_merger.merging_layer vision h x vision h s^2 (s = spatial_merge_size, no
/// bias), linear_1 and linear_2 with bias = multimodal_projector_bias (default false).
/// The checkpoint holds every encoder layer; vLLM builds only those up to vision_feature_layer
/// (LLaVA 1.5's -2: 23 of 24, without post_layernorm).
std::vector<ModelPart> towers(ConfigFields& fields, const Layout& layout) {
  std::optional<ConfigFields> v = nested_fields(fields, "vision_config");
  if (!v) return {};
  const std::string type = fields.root().value("model_type", "");
  const u64 th = layout.hidden;
  const u64 vh = v->positive("hidden_size");
  Sum projector;
  u64 tower = 0;
  if (type == "mistral3") {
    tower = pixtral_params(*v);
    const u64 merge = fields.uint_or("spatial_merge_size", 2);
    const bool bias = fields.flag("multimodal_projector_bias", false);
    projector.add(vh, "projector");
    projector.add(product({vh, vh, merge, merge}, "patch merger"), "projector");
    projector.add(checked_add(product({th, vh}, "linear_1"), bias ? th : 0, "projector"), "projector");
    projector.add(checked_add(product({th, th}, "linear_2"), bias ? th : 0, "projector"), "projector");
  } else {
    tower = clip_vision_params(*v);
    const bool bias = fields.flag("multimodal_projector_bias", true);
    projector.add(checked_add(product({th, vh}, "linear_1"), bias ? th : 0, "projector"), "projector");
    projector.add(checked_add(product({th, th}, "linear_2"), bias ? th : 0, "projector"), "projector");
    if (type == "llava_next" && fields.flag("use_image_newline_parameter", true)) projector.add(th, "projector");
  }
  return {{"vision tower", tower}, {"projector", projector.value}};
}

}  // namespace

const Family& family_llava() {
  static const Family family{
      .name = "llava",
      .types = {},
      .gguf = "the language model's own (llama, mistral3); the tower ships as a separate mmproj file",
      .fixtures = {"llava-1.5-7b-hf", "llava-v1.6-mistral-7b-hf", "llava-v1.6-vicuna-7b-hf",
                   "mistral-small-3.1-24b-instruct"},
      .rules = "Wrappers only: the cache is the text_config's language model's (a LLaVA text_config states few fields: "
               "LlamaConfig's and MistralConfig's defaults fill the rest). Counted beside it: the CLIP or Pixtral "
               "vision tower and the projector, as their own lines in the weights.",
      .wrappers = {"llava", "llava_next", "mistral3"},
      .towers = towers,
  };
  return family;
}

}  // namespace kvplan::arch
