#include "loaders/model_facts.h"

#include <limits>

#include "kvplan/error.h"

namespace kvplan {

namespace {

constexpr std::uint64_t kMaxU32 = std::numeric_limits<std::uint32_t>::max();

/// Whether parse_model_spec (model_spec_from_json) would refuse the file: these facts never hold
/// layer_types, windows, MLA, state, parts or shapes by kind, so only the checks of the flat fields
/// remain. A refusal is left to the parser, so that its message is the parser's.
bool parser_refuses(const embedded::ModelFacts& f) {
  if (f.mtp_layers > 1000) return true;
  if (f.layers == 0 || f.layers > kMaxLayers) return true;
  if (f.attention_heads == 0 || f.attention_heads > kMaxU32) return true;
  if (f.kv_heads == 0 || f.kv_heads > kMaxU32 || f.head_dim > kMaxU32) return true;
  if (f.params == 0 && !f.has_weights_bytes) return true;
  if (f.has_vocab_size && f.vocab_size == 0) return true;
  const bool widths = f.has_intermediate_size && f.has_hidden_size && f.has_vocab_size && f.has_tie_word_embeddings;
  // The embedding's parameters, vocab x hidden, past 64 bits (checked_mul's refusal).
  return widths && f.hidden_size != 0 && f.vocab_size > std::numeric_limits<std::uint64_t>::max() / f.hidden_size;
}

}  // namespace

std::optional<ModelSpec> model_from_facts(const embedded::ModelFacts& f) {
  if (!f.present || parser_refuses(f)) return std::nullopt;
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
  // No layer_types and no mla block: every layer is full attention of the top-level shape, V as
  // wide as K (no v_head_dim).
  LayerSpec layer;
  layer.kind = LayerKind::full;
  layer.kv_heads = static_cast<std::uint32_t>(f.kv_heads);
  layer.k_head_dim = static_cast<std::uint32_t>(f.head_dim);
  layer.v_head_dim = layer.k_head_dim;
  spec.layers.assign(static_cast<std::size_t>(f.layers), layer);  // at most kMaxLayers
  try {
    validate(spec);
  } catch (const Error&) {
    return std::nullopt;
  }
  return spec;
}

}  // namespace kvplan
