// InternVL 2.5 / 3 / 3.5: an InternViT vision encoder and an MLP projector in front of a language
// model its own family counts (Qwen2, Qwen3, InternLM2, ...). Two spellings of one checkpoint:
// transformers' own internvl (modeling_internvl.py: text_config, vision_config of
// internvl_vision) and OpenGVLab's remote-code internvl_chat (modeling_internvl_chat.py and
// modeling_intern_vit.py: llm_config, vision_config of intern_vit_6b), which OpenGVLab's converter
// maps tensor for tensor (qkv split into q, k, v; mlp1 into multi_modal_projector).

#include <array>
#include <string>

#include "loaders/json_reader.h"
#include "loaders/tensor_parts.h"

namespace kvplan::arch {

namespace {

/// image_size / patch_size: a number (intern_vit_6b) or a [height, width] pair (internvl_vision).
u64 side(ConfigFields& v, const char* key) {
  const nlohmann::json* value = v.find(key);
  if (!value) v.fail(key, "is missing");
  if (!value->is_array()) return json_to_uint(*value, v.where(key));
  if (value->size() != 2 || (*value)[0] != (*value)[1]) v.fail(key, "must be one number or a square [height, width] pair");
  return json_to_uint((*value)[0], v.where(key));
}

/// The ViT, per layer: q, k, v (h x h each; biases with attention_bias / qkv_bias), o h x h + h,
/// with use_qk_norm / qk_normalization an RMSNorm of h on q and one on k, two norms (LayerNorm
/// weight + bias, or RMSNorm weight, by norm_type), fc1 / fc2 with biases and the layer scales
/// lambda_1 / lambda_2 (ls1 / ls2) of h each. Before the layers: the class token h, a mask token h
/// with use_mask_token, the patch projection C x p x p -> h with bias and, with
/// use_absolute_position_embeddings (always in intern_vit_6b), (image / p)^2 + 1 positions. After
/// them a LayerNorm unless use_mean_pooling (internvl_vision's; intern_vit_6b has none).
u64 vision_params(ConfigFields& v, bool hf) {
  const u64 h = v.positive("hidden_size");
  const u64 patch = side(v, "patch_size");
  const u64 grid = side(v, "image_size") / patch;
  const bool bias = *v.boolean(hf ? "attention_bias" : "qkv_bias");
  const bool qk_norm = *v.boolean(hf ? "use_qk_norm" : "qk_normalization");
  const std::string norm = v.required_string("norm_type");
  if (norm != "layer_norm" && norm != "rms_norm") v.fail("norm_type", "must be layer_norm or rms_norm");
  const u64 norm_params = norm == "layer_norm" ? 2 * h : h;
  Sum layer;
  layer.add(checked_add(product({3, h, h}, "vision q, k, v"), bias ? 3 * h : 0, "vision q, k, v"), "vision layer");
  layer.add(checked_add(product({h, h}, "vision o"), h, "vision o"), "vision layer");
  if (qk_norm) layer.add(2 * h, "vision layer");
  layer.add(2 * norm_params, "vision layer");
  layer.add(mlp_params(h, v.positive("intermediate_size"), false, true), "vision layer");
  layer.add(2 * h, "vision layer");  // layer scales
  Sum tower;
  tower.add(h, "vision tower");  // class token
  if (hf && v.flag("use_mask_token", false)) tower.add(h, "vision tower");
  tower.add(checked_add(product({h, v.uint_or("num_channels", 3), patch, patch}, "patch embedding"), h, "patch embedding"),
            "vision tower");
  if (!hf || v.flag("use_absolute_position_embeddings", true)) tower.add(product({grid * grid + 1, h}, "position embedding"), "vision tower");
  tower.add(product({v.positive("num_hidden_layers"), layer.value}, "vision layers"), "vision tower");
  if (hf && !v.flag("use_mean_pooling", true)) tower.add(2 * h, "vision tower");
  return tower.value;
}

/// The projector (multi_modal_projector / mlp1): a LayerNorm of the pixel-shuffled width
/// vision h x (1 / downsample_ratio)^2 with bias, linear_1 to the text width and linear_2 text h x
/// text h, both with biases.
u64 projector_params(ConfigFields& fields, u64 vision_hidden, u64 text_hidden) {
  const std::optional<double> ratio = fields.number("downsample_ratio");
  if (!ratio) fields.fail("downsample_ratio", "is missing");
  if (*ratio != 0.5 && *ratio != 0.25 && *ratio != 1.0) fields.fail("downsample_ratio", "must be 1, 0.5 or 0.25");
  const u64 shuffle = static_cast<u64>(1.0 / *ratio);
  const u64 wide = product({vision_hidden, shuffle, shuffle}, "pixel-shuffled width");
  Sum sum;
  sum.add(2 * wide, "projector");
  sum.add(checked_add(product({wide, text_hidden}, "linear_1"), text_hidden, "linear_1"), "projector");
  sum.add(checked_add(product({text_hidden, text_hidden}, "linear_2"), text_hidden, "linear_2"), "projector");
  return sum.value;
}

std::vector<ModelPart> towers(ConfigFields& fields, const Layout& layout) {
  std::optional<ConfigFields> v = nested_fields(fields, "vision_config");
  if (!v) return {};
  const bool hf = fields.root().value("model_type", "") == "internvl";
  // InternViT's mixture-of-experts variant (use_moe) builds expert MLPs kvplan does not count; the
  // flags that shape every layer have config-class defaults kvplan does not rely on: without them
  // the tower is shown as not counted.
  if (!hf && v->flag("use_moe", false)) return {};
  static constexpr std::array<const char*, 3> hf_flags{"attention_bias", "use_qk_norm", "norm_type"};
  static constexpr std::array<const char*, 3> chat_flags{"qkv_bias", "qk_normalization", "norm_type"};
  for (const char* key : hf ? hf_flags : chat_flags)
    if (!v->has(key)) return {};
  const u64 tower = vision_params(*v, hf);
  return {{"vision tower", tower}, {"projector", projector_params(fields, v->positive("hidden_size"), layout.hidden)}};
}

}  // namespace

const Family& family_internvl() {
  static const Family family{
      .name = "internvl",
      .types = {},
      .gguf = "the language model's own (qwen2, qwen3, ...); the tower ships as a separate mmproj file",
      .fixtures = {"internvl3-1b"},
      .rules = "Wrappers only: the cache is the language model's (text_config, or llm_config in OpenGVLab's "
               "remote-code internvl_chat). Counted beside it: the InternViT encoder (class token, patch and "
               "position embeddings, q/k/v/o, optional q/k RMSNorms, LayerNorm or RMSNorm by norm_type, MLP, layer "
               "scales) and the projector (a LayerNorm of the pixel-shuffled width, two linears with biases), as "
               "their own lines in the weights.",
      .unverified = "InternViT-6B (InternVL 2.5/3 38B and 78B: rms_norm, q/k norms, no qkv bias) is counted by the "
                    "same flags but no published count of it was checked; an InternViT with use_moe is shown as not "
                    "counted.",
      .wrappers = {"internvl", "internvl_chat"},
      .towers = towers,
  };
  return family;
}

}  // namespace kvplan::arch
