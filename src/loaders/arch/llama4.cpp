// Llama 4 (transformers modeling_llama4.py): chunked attention on the RoPE layers, global NoPE
// layers, and routed experts with a shared expert on every interleave_moe_layer_step-th layer.

#include <fmt/format.h>

#include "kvplan/error.h"
#include "loaders/json_reader.h"
#include "loaders/tensor_parts.h"

namespace kvplan::arch {

namespace {

/// RoPE layers use chunked attention, NoPE layers (no_rope_layers[i] == 0, by default every 4th)
/// attend globally (Llama4TextConfig).
bool default_kinds(ConfigFields& fields, Layout& layout) {
  const u64 layers = layout.count();
  const auto chunk = fields.uint("attention_chunk_size");
  std::vector<u64> rope(layers, 1);
  if (const nlohmann::json* list = fields.find("no_rope_layers")) {
    if (!list->is_array() || list->size() != layers) fields.fail("no_rope_layers", fmt::format("expected {} entries", layers));
    for (std::size_t i = 0; i < layers; ++i) rope[i] = json_to_uint((*list)[i], fields.where("no_rope_layers"));
  } else {
    const u64 interval = fields.uint("no_rope_layer_interval").value_or(4);
    for (std::size_t i = 0; i < layers; ++i) rope[i] = interval && (i + 1) % interval == 0 ? 0 : 1;
  }
  for (std::size_t i = 0; i < layers; ++i) layout.layers[i].kind = (chunk && rope[i]) ? LayerKind::chunked : LayerKind::full;
  return true;
}

/// Llama4TextConfig: moe_layers defaults to every interleave_moe_layer_step-th layer, starting at
/// step - 1.
bool is_moe_layer(ConfigFields& fields, u64 index) {
  if (fields.has("moe_layers")) return fields.index_list("moe_layers").count(index) > 0;
  const u64 step = fields.uint_or("interleave_moe_layer_step", 1);
  if (step == 0) return false;
  return (index + 1) % step == 0;
}

/// Attention q, k, v, o (attention_bias; the qk norm is an L2 norm without weights); MoE layers
/// num_local_experts experts of 3 x H x intermediate_size, router H x E and a shared expert of the
/// same width; dense layers 3 x H x intermediate_size_mlp; 2 norms per layer.
ParamCount count(ConfigFields& fields, const Layout& layout) {
  if (fields.model_type() != "llama4_text") not_counted(fields);
  check_attention(fields, layout);
  ParamCount count = start_count(fields, layout);
  const u64 hidden = layout.hidden;
  Attention attention;
  attention.qkv_bias = attention.o_bias = fields.flag("attention_bias", false);
  Counted counted;
  counted.final_norm = hidden;
  std::vector<bool> moe(layout.count());
  for (u64 i = 0; i < layout.count(); ++i) moe[i] = is_moe_layer(fields, i);
  u64 expert_width = 0;
  u64 always = 0;
  if (std::find(moe.begin(), moe.end(), true) != moe.end()) {
    counted.experts = fields.positive("num_local_experts");
    counted.top_k = fields.positive("num_experts_per_tok");
    if (counted.top_k > counted.experts) fields.fail("num_experts_per_tok", "is larger than the number of experts");
    expert_width = fields.positive("intermediate_size");
    always = checked_add(product({hidden, counted.experts}, "router"), product({3, hidden, expert_width}, "shared expert"), "MoE");
  }
  for (u64 i = 0; i < layout.count(); ++i) {
    const u64 own = attention_params(layout, layout.layers[i], attention) + 2 * hidden;
    if (moe[i])
      counted.layers.push_back(plus(moe_layer(counted.experts, counted.top_k, hidden, expert_width, always), own));
    else
      counted.layers.push_back(layer_of(own + mlp_params(hidden, fields.positive("intermediate_size_mlp"), true, false)));
  }
  finish_count(count, fields, counted);
  return count;
}

/// Llama4VisionModel: patch_embedding.linear h x C p^2 (no bias), class_embedding h,
/// positional_embedding_vlm ((image / p)^2 + 1) x h, layernorm_pre and _post, num_hidden_layers ViT
/// layers (vit_layer_params), and the pixel-shuffle vision_adapter (its tensors live under
/// vision_model): fc1 projector_input_dim x intermediate_size and fc2 projector_output_dim x
/// projector_input_dim, with biases when multi_modal_projector_bias; the projector
/// multi_modal_projector.linear_1 text h x vision_output_dim, no bias.
std::vector<ModelPart> towers(ConfigFields& fields, const Layout& layout) {
  std::optional<ConfigFields> v = nested_fields(fields, "vision_config");
  if (!v) return {};
  const u64 h = v->positive("hidden_size");
  const u64 i = v->positive("intermediate_size");
  const u64 patch = v->positive("patch_size");
  const u64 grid = v->positive("image_size") / patch;
  const u64 in = v->positive("projector_input_dim");
  const u64 out = v->positive("projector_output_dim");
  const bool bias = v->flag("multi_modal_projector_bias", false);
  Sum tower;
  tower.add(product({h, v->uint_or("num_channels", 3), patch, patch}, "vision patch_embedding"), "vision tower");
  tower.add(h, "vision tower");
  tower.add(product({grid * grid + 1, h}, "vision positional_embedding_vlm"), "vision tower");
  tower.add(4 * h, "vision tower");
  tower.add(product({v->positive("num_hidden_layers"), vit_layer_params(h, i)}, "vision layers"), "vision tower");
  tower.add(checked_add(product({in, i}, "vision_adapter fc1"), bias ? in : 0, "vision_adapter"), "vision tower");
  tower.add(checked_add(product({out, in}, "vision_adapter fc2"), bias ? out : 0, "vision_adapter"), "vision tower");
  return {{"vision tower", tower.value}, {"projector", product({layout.hidden, v->positive("vision_output_dim")}, "projector")}};
}

}  // namespace

const Family& family_llama4() {
  static const Family family{
      .name = "llama4",
      .types = {{"llama4_text"}, {"llama4", false, "without a text_config", true}},
      .gguf = "llama4",
      .fixtures = {"llama4-scout", "llama4-maverick"},
      .rules = "RoPE layers attend over chunks of attention_chunk_size tokens (chunked); the NoPE layers "
               "(no_rope_layers 0, by default every no_rope_layer_interval = 4th) attend globally. Counted: routed "
               "experts and a shared expert on the moe_layers (every interleave_moe_layer_step-th), "
               "intermediate_size_mlp-wide dense MLPs elsewhere. The vision tower (with its pixel-shuffle adapter) and the "
               "projector are their own lines in the weights.",
      .default_kinds = default_kinds,
      .count = count,
      .wrappers = {"llama4"},
      .towers = towers,
  };
  return family;
}

}  // namespace kvplan::arch
