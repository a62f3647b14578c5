#include "loaders/model_facts.h"

#include <limits>
#include <vector>

#include "kvplan/error.h"

namespace kvplan {

namespace {

constexpr std::uint64_t kMaxU32 = std::numeric_limits<std::uint32_t>::max();

/// Whether parse_model_spec (model_spec_from_json) would refuse the flat fields: these facts never
/// hold MLA, state, parts or shapes by kind, so only the checks of the flat fields remain (the
/// layer kinds are checked as they are read). A refusal is left to the parser, so that its message
/// is the parser's.
bool parser_refuses(const embedded::ModelFacts& f) {
  if (f.mtp_layers > 1000) return true;
  if (f.has_mtp_weights_bytes && (f.mtp_weights_bytes == 0 || f.mtp_layers == 0)) return true;
  if (f.mtp_replicated_bytes > f.mtp_weights_bytes) return true;
  if (f.layers == 0 || f.layers > kMaxLayers) return true;
  if (f.attention_heads == 0 || f.attention_heads > kMaxU32) return true;
  if (f.kv_heads == 0 || f.kv_heads > kMaxU32 || f.head_dim > kMaxU32 || f.v_head_dim > kMaxU32) return true;
  if (f.params == 0 && !f.has_weights_bytes) return true;
  if (f.has_vocab_size && f.vocab_size == 0) return true;
  // read_rope's checks: the rope fields need rotary_dim, within 1..65535, a factor within 1..10^6
  // (a whole one, or there are no facts), a type that is not empty.
  const bool rope_fields = f.has_rope_type || f.has_rope_factor || f.has_rope_original_positions || f.rope_local;
  if (rope_fields && !f.has_rotary_dim) return true;
  if (f.has_rotary_dim && (f.rotary_dim == 0 || f.rotary_dim > 0xFFFF)) return true;
  if (f.has_rope_factor && (f.rope_factor == 0 || f.rope_factor > 1'000'000)) return true;
  if (f.has_rope_type && f.rope_type.empty()) return true;
  // read_routed_experts' bounds.
  if (f.has_routed_experts &&
      !routed_experts_in_bounds(f.routed_per_token, f.routed_input_width, f.routed_intermediate_size))
    return true;
  const bool widths = f.has_intermediate_size && f.has_hidden_size && f.has_vocab_size && f.has_tie_word_embeddings;
  // The embedding's parameters, vocab x hidden, past 64 bits (checked_mul's refusal).
  return widths && f.hidden_size != 0 && f.vocab_size > std::numeric_limits<std::uint64_t>::max() / f.hidden_size;
}

/// The kind of every layer of layer_types as the parser reads it (read_layer_kinds). Only the kinds
/// these facts can shape: full, sliding and chunked attention with their window given, and the
/// cacheless none and shared; nullopt for anything else (an MLA, linear or cross layer needs a
/// block the facts do not carry, a count that is not `layers`, a name the parser refuses), which
/// the parser then words.
std::optional<std::vector<LayerKind>> listed_layer_kinds(const embedded::ModelFacts& f) {
  std::vector<LayerKind> kinds;
  kinds.reserve(static_cast<std::size_t>(f.layers));
  for (std::string_view types = f.layer_types; !types.empty();) {
    const std::string_view name = embedded::take_item(types);
    std::optional<LayerKind> kind;
    for (const LayerKind known : {LayerKind::full, LayerKind::sliding, LayerKind::chunked, LayerKind::none, LayerKind::shared})
      if (to_string(known) == name) kind = known;
    if (!kind || kinds.size() == f.layers) return std::nullopt;
    if (*kind == LayerKind::sliding && !f.has_sliding_window) return std::nullopt;
    if (*kind == LayerKind::chunked && !f.has_attention_chunk_size) return std::nullopt;
    kinds.push_back(*kind);
  }
  if (kinds.size() != f.layers) return std::nullopt;
  return kinds;
}

}  // namespace

std::optional<ModelSpec> model_from_facts(const embedded::ModelFacts& f) {
  if (!f.present || parser_refuses(f)) return std::nullopt;
  std::optional<std::vector<LayerKind>> kinds;
  if (!f.layer_types.empty()) {
    kinds = listed_layer_kinds(f);
    if (!kinds) return std::nullopt;
  }
  ModelSpec spec;
  try {
    spec.weight_dtype = &parse_weight_dtype(f.weight_dtype);
  } catch (const Error&) {
    return std::nullopt;
  }
  // As model_spec_from_json, field by field, in its order.
  spec.id = f.id;
  spec.name = f.name;
  spec.aliases = embedded::items_of(f.aliases);
  spec.source = f.source;
  spec.architecture = f.architecture;
  spec.weights_source = f.weights_source;
  spec.mtp_layers = static_cast<std::uint32_t>(f.mtp_layers);
  if (f.has_mtp_weights_bytes) spec.mtp_weights_bytes = f.mtp_weights_bytes;
  spec.mtp_replicated_bytes = f.mtp_replicated_bytes;
  spec.attention_heads = static_cast<std::uint32_t>(f.attention_heads);
  spec.params = f.params;
  spec.active_params = f.active_params;
  if (f.has_weights_bytes) spec.weights_bytes = f.weights_bytes;
  spec.max_context = f.max_context;
  spec.vocab_size = f.vocab_size;
  if (f.has_intermediate_size && f.has_hidden_size && f.has_vocab_size && f.has_tie_word_embeddings) {
    spec.hidden_size = f.hidden_size;
    spec.intermediate_size = f.intermediate_size;
    spec.embedding_params = f.vocab_size * f.hidden_size;  // parser_refuses checked it fits in 64 bits
    spec.lm_head_params = f.tie_word_embeddings ? 0 : spec.embedding_params;
  }
  if (f.has_routed_experts)
    spec.routed_experts = RoutedExperts{static_cast<std::uint32_t>(f.routed_per_token), f.routed_input_width,
                                        f.routed_intermediate_size, f.routed_gated};
  if (f.has_rotary_dim) {
    RotarySpec rope;
    if (f.has_rope_type) rope.type = f.rope_type;
    if (f.has_rope_factor) rope.factor_millionths = f.rope_factor * 1'000'000;  // at most 10^12
    rope.original_positions = f.rope_original_positions;
    rope.rotary_dim = static_cast<std::uint32_t>(f.rotary_dim);
    rope.local = f.rope_local;
    spec.rope = rope;
  }
  // No mla block and no kind_shapes: every attention layer has the top-level shape, V as wide as
  // K unless v_head_dim says otherwise; without layer_types every layer is full attention.
  LayerSpec attention;
  attention.kind = LayerKind::full;
  attention.kv_heads = static_cast<std::uint32_t>(f.kv_heads);
  attention.k_head_dim = static_cast<std::uint32_t>(f.head_dim);
  attention.v_head_dim = static_cast<std::uint32_t>(f.has_v_head_dim ? f.v_head_dim : f.head_dim);
  if (!kinds) {
    spec.layers.assign(static_cast<std::size_t>(f.layers), attention);  // at most kMaxLayers
  } else {
    // A sliding layer holds the window, a chunked one the chunk; none and shared cache nothing.
    spec.layers.reserve(kinds->size());
    for (const LayerKind kind : *kinds) {
      LayerSpec& layer = spec.layers.emplace_back();
      layer.kind = kind;
      if (kind == LayerKind::none || kind == LayerKind::shared) continue;
      layer = attention;
      layer.kind = kind;
      if (kind == LayerKind::sliding) layer.window = f.sliding_window;
      if (kind == LayerKind::chunked) layer.window = f.attention_chunk_size;
    }
  }
  try {
    validate(spec);
  } catch (const Error&) {
    return std::nullopt;
  }
  return spec;
}

}  // namespace kvplan
