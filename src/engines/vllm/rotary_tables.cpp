#include "engines/vllm/rotary_tables.h"

#include <fmt/format.h>

#include "kvplan/units.h"
#include "model/checked.h"

namespace kvplan {

namespace {

/// ceil(n x factor), the factor in millionths: torch.arange of a float length makes ceil(length)
/// positions (linear_scaling_rope.py), yarn_scaling_rope.py takes math.ceil itself.
std::uint64_t rotary_scaled_positions(std::uint64_t n, std::uint64_t factor_millionths) {
  return checked_add(checked_mul(n / 1'000'000, factor_millionths, "rotary table"),
                     ceil_div(checked_mul(n % 1'000'000, factor_millionths, "rotary table"), 1'000'000), "rotary table");
}

std::string rotary_factor_text(std::uint64_t millionths) {
  return millionths % 1'000'000 == 0 ? std::to_string(millionths / 1'000'000)
                                     : fmt::format("{}", static_cast<double>(millionths) / 1e6);
}

/// The K head width of the first layer of `kind` (0 when the model has none): the head the rope
/// of those layers rotates (Gemma 4's full layers are 512 wide, its sliding ones 256).
std::uint32_t head_of_kind(const ModelSpec& model, LayerKind kind) {
  for (const LayerSpec& layer : model.layers)
    if (layer.kind == kind && layer.k_head_dim) return layer.k_head_dim;
  return 0;
}

/// The global (or only) rope's table rows, by rope type, as each class builds its cos_sin_cache
/// (vllm/model_executor/layers/rotary_embedding/): `estimate` when the type is not one read there.
/// `full_head`: the full-attention layers' head width, 0 when none.
VllmRotaryTable rotary_global_table(const RotarySpec& rope, std::uint64_t max_position, std::uint32_t full_head) {
  VllmRotaryTable t;
  t.rotary_dim = rope.rotary_dim;
  const std::string& type = rope.type;
  const std::string factor = rotary_factor_text(rope.factor_millionths);
  if (type == "proportional" && full_head) {
    // gemma4_rope.py, Gemma4RotaryEmbedding: hands head_size to the base class as its rotary_dim
    // (the pairs partial_rotary_factor leaves unrotated get a zero frequency), so the table is
    // max_position_embeddings x the whole head of the full layers (gemma4.py's get_rope).
    t.positions = max_position;
    t.rotary_dim = full_head;
    t.rope = "proportional rope (the whole head)";
  } else if (type == "default" || type == "llama3" || type == "ntk" || (type == "dynamic" && rope.factor_millionths == 1'000'000)) {
    // base.py RotaryEmbedding._compute_cos_sin_cache: arange(max_position_embeddings); llama3_rope.py
    // and ntk only change the frequencies; dynamic with `alpha` (no factor) likewise.
    t.positions = max_position;
    t.rope = type == "default" ? "rope" : type + " rope (positions unscaled)";
  } else if (type == "linear" || type == "dynamic") {
    // linear_scaling_rope.py, dynamic_ntk_scaling_rope.py: max_position_embeddings x factor.
    t.positions = rotary_scaled_positions(max_position, rope.factor_millionths);
    t.rope = fmt::format("{} rope x{}", type, factor);
  } else if ((type == "yarn" || type == "deepseek_yarn") && rope.original_positions) {
    // yarn_scaling_rope.py / deepseek_scaling_rope.py: original_max_position_embeddings x factor.
    t.positions = rotary_scaled_positions(rope.original_positions, rope.factor_millionths);
    t.rope = fmt::format("{} rope {} x{}", type, format_thousands(rope.original_positions), factor);
  } else if (type == "longrope" && rope.original_positions) {
    // phi3_long_rope_scaled_rope.py: a short table of original_max_position_embeddings rows and a
    // long one of max_position_embeddings, concatenated.
    t.positions = checked_add(rope.original_positions, max_position, "rotary table");
    t.rope = "longrope (short + long tables)";
  } else if (type == "mrope") {
    // mrope.py, MRotaryEmbedding: 4 x max_position_embeddings ("enlarge ... to get a larger cos and
    // sin cache" for video positions).
    t.positions = checked_mul(max_position, 4, "rotary table");
    t.rope = "mrope (4 x positions)";
  } else {
    // Not read: sized as the base class would, and said to be an estimate.
    t.positions = max_position;
    t.estimate = true;
    t.rope = fmt::format("ESTIMATE: '{}' rope sized as an unscaled one", type);
  }
  return t;
}

}  // namespace

std::string vllm_rotary_size(std::uint64_t bytes) {
  return bytes >= 64 * MiB ? format_gib(static_cast<std::int64_t>(bytes)) : format_bytes_compact(bytes);
}

VllmRotary vllm_rotary_tables(const ModelSpec& model, const Dtype& model_dtype) {
  VllmRotary out;
  if (!model.rope) {
    out.rule = "rotary tables: none counted (the model's input states no rotary embedding)";
    return out;
  }
  if (model.max_context == 0) {
    out.rule = "rotary tables: not counted (the model states no max_position_embeddings to size them by)";
    return out;
  }
  const RotarySpec& rope = *model.rope;
  out.tables.push_back(rotary_global_table(rope, model.max_context, head_of_kind(model, LayerKind::full)));
  if (rope.local) {
    // gemma3.py, Gemma3Attention: the sliding layers take rope_local_base_freq and an unscaled
    // rope, a distinct get_rope key, so a second table. It rotates their whole head: Gemma 3
    // passes rotary_dim = head_dim, and Gemma 4's sliding_attention parameters state no
    // partial_rotary_factor (gemma4.py hands get_rope the sliding layers' 256-wide head).
    VllmRotaryTable local;
    local.rope = "local rope (sliding layers)";
    local.positions = model.max_context;
    const std::uint32_t sliding_head = head_of_kind(model, LayerKind::sliding);
    local.rotary_dim = sliding_head ? sliding_head : rope.rotary_dim;
    out.tables.push_back(local);
  }
  std::string parts;
  bool estimate = false;
  for (VllmRotaryTable& t : out.tables) {
    // [positions, rotary_dim]: cos and sin of rotary_dim / 2 frequencies each, at the model dtype.
    const std::uint64_t values = checked_mul(t.positions, t.rotary_dim, "rotary table");
    t.bytes = checked_mul(ceil_div(values, model_dtype.block_elements), model_dtype.block_bytes, "rotary table");
    out.bytes = checked_add(out.bytes, t.bytes, "rotary table");
    estimate = estimate || t.estimate;
    parts += fmt::format("{}{} {} x {} x {} B", parts.empty() ? "" : " + ", t.rope, format_thousands(t.positions), t.rotary_dim,
                         model_dtype.block_bytes);
  }
  out.rule = fmt::format("{}rotary tables {} on every GPU: {} (vLLM's cos_sin_cache buffers, in \"Model loading took\")",
                         estimate ? "ESTIMATE: " : "", vllm_rotary_size(out.bytes), parts);
  return out;
}

}  // namespace kvplan
