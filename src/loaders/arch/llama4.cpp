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
      counted.layers.push_back({own + mlp_params(hidden, fields.positive("intermediate_size_mlp"), true, false), 0, 0});
  }
  finish_count(count, fields, counted);
  return count;
}

}  // namespace

const Family& family_llama4() {
  static const Family family{
      .name = "llama4",
      .types = {{"llama4_text"}, {"llama4", false, "the wrapper; its text_config is llama4_text"}},
      .gguf = "llama4",
      .fixtures = {"llama4-scout", "llama4-maverick"},
      .rules = "RoPE layers attend over chunks of attention_chunk_size tokens (chunked); the NoPE layers "
               "(no_rope_layers 0, by default every no_rope_layer_interval = 4th) attend globally. Counted: routed "
               "experts and a shared expert on the moe_layers (every interleave_moe_layer_step-th), "
               "intermediate_size_mlp-wide dense MLPs elsewhere.",
      .default_kinds = default_kinds,
      .count = count,
  };
  return family;
}

}  // namespace kvplan::arch
