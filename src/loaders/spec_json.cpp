#include "loaders/spec_json.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "loaders/json_reader.h"
#include "kvplan/error.h"
#include "kvplan/units.h"

namespace kvplan {

namespace {

LayerKind parse_layer_kind(const std::string& text, const std::string& context) {
  for (const LayerKind kind : {LayerKind::full, LayerKind::sliding, LayerKind::chunked, LayerKind::mla,
                               LayerKind::linear, LayerKind::none, LayerKind::shared, LayerKind::cross})
    if (to_string(kind) == text) return kind;
  throw unsupported_architecture(context, text);
}

std::uint32_t to_u32(JsonObjectReader& reader, const std::string& key, std::uint64_t value) {
  if (value > 0xFFFF'FFFFu) reader.fail(key, "is larger than 2^32 - 1");
  return static_cast<std::uint32_t>(value);
}

/// The kind of every layer: `layer_types` lists them all, `layer_pattern` repeats a cycle, and
/// with neither every layer is full attention (or MLA when an `mla` block is given).
std::vector<LayerKind> read_layer_kinds(JsonObjectReader& reader, std::uint64_t layers, bool has_mla) {
  const std::vector<std::string> types = reader.optional_string_list("layer_types");
  const std::vector<std::string> pattern = reader.optional_string_list("layer_pattern");
  if (!types.empty() && !pattern.empty()) reader.fail("layer_pattern", "give layer_types or layer_pattern, not both");
  if (!types.empty() && types.size() != layers)
    reader.fail("layer_types", fmt::format("has {} entries but layers is {}", types.size(), layers));
  std::vector<LayerKind> kinds;
  for (std::uint64_t i = 0; i < layers; ++i) {
    if (!types.empty()) kinds.push_back(parse_layer_kind(types[i], fmt::format("{}: layer_types[{}]", reader.context(), i)));
    else if (!pattern.empty())
      kinds.push_back(parse_layer_kind(pattern[i % pattern.size()], fmt::format("{}: layer_pattern", reader.context())));
    else kinds.push_back(has_mla ? LayerKind::mla : LayerKind::full);
  }
  return kinds;
}

std::vector<StateTensor> read_linear_state(JsonObjectReader& reader) {
  const nlohmann::json* list = reader.find("linear_state");
  if (!list) return {};
  if (!list->is_array()) reader.fail("linear_state", "expected an array of {name, elements, dtype}");
  if (list->size() > kMaxStateTensors)
    reader.fail("linear_state", fmt::format("has {} tensors; kvplan reads at most {}", list->size(), kMaxStateTensors));
  std::vector<StateTensor> state;
  for (std::size_t i = 0; i < list->size(); ++i) {
    JsonObjectReader item((*list)[i], fmt::format("{}: linear_state[{}]", reader.context(), i));
    StateTensor tensor;
    tensor.name = item.required_string("name");
    tensor.elements = item.required_uint("elements");
    tensor.dtype = &parse_weight_dtype(item.required_string("dtype"));
    tensor.shards = item.optional_uint("shards").value_or(0);
    tensor.groups = item.optional_uint("groups").value_or(0);
    tensor.group_elements = item.optional_uint("group_elements").value_or(0);
    if (tensor.group_elements != 0 && tensor.groups == 0)
      item.fail("group_elements", "needs groups (the elements of that many groups)");
    if (tensor.group_elements > tensor.elements || (tensor.groups && tensor.group_elements % tensor.groups != 0))
      item.fail("group_elements", "must be at most elements, a whole number per group");
    item.reject_unknown_keys();
    state.push_back(tensor);
  }
  return state;
}

bool is_attention(LayerKind kind) {
  return kind == LayerKind::full || kind == LayerKind::sliding || kind == LayerKind::chunked || kind == LayerKind::cross;
}

/// `parts`: [{name, params, bytes}], the checkpoint's parts beside the language model.
std::vector<ModelPart> read_parts(JsonObjectReader& reader) {
  const nlohmann::json* list = reader.find("parts");
  if (!list) return {};
  if (!list->is_array()) reader.fail("parts", "expected an array of {name, params, bytes}");
  std::vector<ModelPart> parts;
  for (std::size_t i = 0; i < list->size(); ++i) {
    JsonObjectReader item((*list)[i], fmt::format("{}: parts[{}]", reader.context(), i));
    ModelPart part;
    part.name = item.required_string("name");
    part.params = item.required_uint("params");
    part.bytes = item.required_uint("bytes");
    item.reject_unknown_keys();
    parts.push_back(part);
  }
  return parts;
}

/// KV heads and head widths of the attention layers of one kind.
struct KindShape {
  std::optional<std::uint64_t> kv_heads;
  std::optional<std::uint64_t> head_dim;
  std::optional<std::uint64_t> v_head_dim;
};

/// `kind_shapes`: {"full": {kv_heads, head_dim, v_head_dim}, ...}, the shape of the layers of
/// one kind where it differs from the top-level kv_heads / head_dim / v_head_dim (Gemma 4's global
/// layers, MiMo-V2's sliding layers). A kind's v_head_dim defaults to its own head_dim.
std::map<LayerKind, KindShape> read_kind_shapes(JsonObjectReader& reader) {
  std::map<LayerKind, KindShape> shapes;
  const nlohmann::json* object = reader.find("kind_shapes");
  if (!object) return shapes;
  if (!object->is_object()) reader.fail("kind_shapes", "expected an object keyed by layer kind");
  for (const auto& [name, value] : object->items()) {
    const std::string context = fmt::format("{}: kind_shapes.{}", reader.context(), name);
    const LayerKind kind = parse_layer_kind(name, context);
    if (!is_attention(kind)) reader.fail("kind_shapes", fmt::format("'{}' layers have no heads to shape", name));
    JsonObjectReader item(value, context);
    KindShape shape;
    shape.kv_heads = item.optional_uint("kv_heads");
    shape.head_dim = item.optional_uint("head_dim");
    shape.v_head_dim = item.optional_uint("v_head_dim");
    if (shape.kv_heads == 0u) item.fail("kv_heads", "must be at least 1");
    if (shape.head_dim == 0u) item.fail("head_dim", "must be at least 1");
    item.reject_unknown_keys();
    shapes[kind] = shape;
  }
  return shapes;
}

/// `indexer`: {head_dim, layers}: a DSA lightning-indexer key of head_dim values per token on the
/// listed layers (0-based), or on every MLA layer when `layers` is absent.
struct IndexerSpec {
  std::uint64_t head_dim = 0;
  std::optional<std::vector<std::uint64_t>> layers;
};

std::optional<IndexerSpec> read_indexer(JsonObjectReader& reader, std::uint64_t layers) {
  const nlohmann::json* object = reader.find("indexer");
  if (!object) return std::nullopt;
  JsonObjectReader item(*object, reader.context() + ": indexer");
  IndexerSpec indexer;
  indexer.head_dim = item.required_uint("head_dim");
  if (indexer.head_dim == 0 || indexer.head_dim > 0xFFFF) item.fail("head_dim", "must be between 1 and 65535");
  if (const nlohmann::json* list = item.find("layers")) {
    if (!list->is_array()) item.fail("layers", "expected a list of layer indices");
    indexer.layers.emplace();
    for (const nlohmann::json& entry : *list) {
      const std::uint64_t index = json_to_uint(entry, item.context() + ": field 'layers'");
      if (index >= layers) item.fail("layers", fmt::format("layer {} is past the last layer ({})", index, layers - 1));
      indexer.layers->push_back(index);
    }
  }
  item.reject_unknown_keys();
  return indexer;
}

/// "routed_experts": {per_token, input_width, intermediate_size, gated}: a MoE model's routed
/// experts as a token passes through them; nullopt when absent.
std::optional<RoutedExperts> read_routed_experts(JsonObjectReader& reader) {
  const nlohmann::json* object = reader.find("routed_experts");
  if (!object) return std::nullopt;
  if (!object->is_object()) reader.fail("routed_experts", "expected an object {per_token, input_width, intermediate_size}");
  JsonObjectReader block(*object, reader.context() + ": routed_experts");
  RoutedExperts routed;
  const std::uint64_t per_token = block.required_uint("per_token");
  if (per_token == 0 || per_token > kMaxExpertsPerToken)
    block.fail("per_token", fmt::format("must be between 1 and {}", kMaxExpertsPerToken));
  routed.per_token = static_cast<std::uint32_t>(per_token);
  for (const auto& [key, field] : {std::pair{"input_width", &routed.input_width}, std::pair{"intermediate_size", &routed.intermediate}}) {
    *field = block.required_uint(key);
    if (*field == 0 || *field > kMaxExpertWidth) block.fail(key, fmt::format("must be between 1 and {}", kMaxExpertWidth));
  }
  routed.gated = block.optional_bool("gated").value_or(true);
  block.reject_unknown_keys();
  return routed;
}

/// The rope fields (rope_type, rope_factor, rope_original_positions, rotary_dim, rope_local): the
/// rotary embedding as the model's config states it; rotary_dim is what says there is one.
std::optional<RotarySpec> read_rope(JsonObjectReader& reader) {
  const std::optional<std::string> type = reader.optional_string("rope_type");
  const std::optional<double> factor = reader.optional_number("rope_factor");
  const std::optional<std::uint64_t> original = reader.optional_uint("rope_original_positions");
  const std::optional<bool> local = reader.optional_bool("rope_local");
  const std::optional<std::uint64_t> rotary_dim = reader.optional_uint("rotary_dim");
  if (!rotary_dim) {
    if (type || factor || original || local) reader.fail("rotary_dim", "is missing: the rope fields need the rotated width");
    return std::nullopt;
  }
  if (*rotary_dim == 0 || *rotary_dim > 0xFFFF) reader.fail("rotary_dim", "must be between 1 and 65535");
  if (factor && !(*factor > 0 && *factor <= 1e6)) reader.fail("rope_factor", "must be above 0 and at most 1000000");
  RotarySpec rope;
  rope.type = type.value_or("default");
  if (rope.type.empty()) reader.fail("rope_type", "must not be empty");
  if (factor) rope.factor_millionths = static_cast<std::uint64_t>(std::llround(*factor * 1e6));
  rope.original_positions = original.value_or(0);
  rope.rotary_dim = static_cast<std::uint32_t>(*rotary_dim);
  rope.local = local.value_or(false);
  return rope;
}

}  // namespace

ModelSpec parse_model_spec(std::string_view json_text, std::string_view origin) {
  return model_spec_from_json(parse_json_document(json_text, origin), origin);
}

ModelSpec model_spec_from_json(const nlohmann::json& document, std::string_view origin) {
  JsonObjectReader reader(document, std::string(origin));
  reader.optional_string("$schema");
  ModelSpec spec;
  spec.id = reader.optional_string("id").value_or(std::string(origin));
  spec.name = reader.required_string("name");
  spec.aliases = reader.optional_string_list("aliases");
  spec.source = reader.optional_string("source").value_or("");
  reader.optional_string("notes");
  spec.architecture = reader.optional_string("architecture").value_or("");
  spec.weights_source = reader.optional_string("weights_source").value_or("");
  const std::uint64_t mtp_layers = reader.optional_uint("mtp_layers").value_or(0);
  if (mtp_layers > 1000) reader.fail("mtp_layers", "is implausibly large (over 1000)");
  spec.mtp_layers = static_cast<std::uint32_t>(mtp_layers);
  spec.mtp_weights_bytes = reader.optional_uint("mtp_weights_bytes");
  if (spec.mtp_weights_bytes == 0u) reader.fail("mtp_weights_bytes", "must be at least 1");
  if (spec.mtp_weights_bytes && !spec.mtp_layers) reader.fail("mtp_weights_bytes", "is given without mtp_layers");
  spec.mtp_replicated_bytes = reader.optional_uint("mtp_replicated_bytes").value_or(0);
  if (spec.mtp_replicated_bytes > spec.mtp_weights_bytes.value_or(0))
    reader.fail("mtp_replicated_bytes", "is more than mtp_weights_bytes");

  const std::uint64_t layers = reader.required_uint("layers");
  if (layers == 0) reader.fail("layers", "must be at least 1");
  if (layers > kMaxLayers) reader.fail("layers", fmt::format("is more than kvplan reads (at most {})", kMaxLayers));
  spec.attention_heads = to_u32(reader, "attention_heads", reader.required_uint("attention_heads"));
  if (spec.attention_heads == 0) reader.fail("attention_heads", "must be at least 1");
  const std::uint64_t kv_heads = reader.optional_uint("kv_heads").value_or(spec.attention_heads);
  if (kv_heads == 0) reader.fail("kv_heads", "must be at least 1");
  const std::optional<std::uint64_t> hidden_size = reader.optional_uint("hidden_size");
  std::optional<std::uint64_t> head_dim = reader.optional_uint("head_dim");
  if (!head_dim && hidden_size) {
    // As config.json: a hidden size the heads do not divide is an error, never floored.
    if (*hidden_size % spec.attention_heads != 0)
      reader.fail("hidden_size", fmt::format("({}) is not divisible by attention_heads ({}); give head_dim", *hidden_size,
                                             spec.attention_heads));
    head_dim = *hidden_size / spec.attention_heads;
  }
  const std::uint64_t v_head_dim = reader.optional_uint("v_head_dim").value_or(head_dim.value_or(0));

  spec.params = reader.optional_uint("params").value_or(0);
  spec.active_params = reader.optional_uint("active_params").value_or(0);
  spec.weights_bytes = reader.optional_uint("weights_bytes");
  if (spec.params == 0 && !spec.weights_bytes) reader.fail("params", "is missing (or give weights_bytes)");
  spec.weight_dtype = &parse_weight_dtype(reader.required_string("weight_dtype"));
  if (const std::optional<std::string> kv = reader.optional_string("checkpoint_kv_dtype")) {
    const Dtype& dtype = parse_kv_dtype(*kv, *spec.weight_dtype);
    if (dtype.name != "fp8" && dtype.name != "nvfp4") reader.fail("checkpoint_kv_dtype", "expected fp8 or nvfp4");
    spec.checkpoint_kv_dtype = &dtype;
  }
  spec.max_context = reader.optional_uint("max_context").value_or(0);
  // Absent means unknown; a written 0 is a mistake, not a way to say so.
  const std::optional<std::uint64_t> vocab_size = reader.optional_uint("vocab_size");
  if (vocab_size == 0u) reader.fail("vocab_size", "must be at least 1");
  spec.vocab_size = vocab_size.value_or(0);
  // The widths a weight format priced tensor by tensor reads (--weight-dtype q4_k_m): all four, or none.
  const std::optional<std::uint64_t> intermediate_size = reader.optional_uint("intermediate_size");
  const std::optional<bool> tied = reader.optional_bool("tie_word_embeddings");
  if (intermediate_size && hidden_size && vocab_size && tied) {
    spec.hidden_size = *hidden_size;
    spec.intermediate_size = *intermediate_size;
    spec.embedding_params = checked_mul(*vocab_size, *hidden_size, "embedding parameters");
    spec.lm_head_params = *tied ? 0 : spec.embedding_params;
  }

  spec.parts = read_parts(reader);
  if (const nlohmann::json* encoder = reader.find("vision_encoder")) {
    JsonObjectReader item(*encoder, reader.context() + ": vision_encoder");
    spec.vision_encoder = ModelSpec::VisionEncoder{item.optional_uint("layers").value_or(0),
                                                   item.optional_uint("hidden_size").value_or(0)};
    item.reject_unknown_keys();
  }
  spec.routed_experts = read_routed_experts(reader);
  spec.rope = read_rope(reader);
  const std::optional<std::uint64_t> window = reader.optional_uint("sliding_window");
  const std::optional<std::uint64_t> cross_tokens = reader.optional_uint("cross_attention_tokens");
  const std::optional<std::uint64_t> chunk = reader.optional_uint("attention_chunk_size");
  std::optional<std::uint64_t> mla_width;
  std::uint64_t mla_rope = 0;
  if (const nlohmann::json* mla = reader.find("mla")) {
    JsonObjectReader block(*mla, reader.context() + ": mla");
    const std::uint64_t rank = block.required_uint("kv_lora_rank");
    mla_rope = block.required_uint("qk_rope_head_dim");
    if (rank == 0 || rank > 0xFFFF || mla_rope > 0xFFFF) block.fail("kv_lora_rank", "must be between 1 and 65535");
    mla_width = rank + mla_rope;
    block.reject_unknown_keys();
  }
  std::vector<std::uint64_t> kv_heads_per_layer;
  if (const nlohmann::json* list = reader.find("kv_heads_per_layer")) {
    if (!list->is_array() || list->size() != layers) reader.fail("kv_heads_per_layer", fmt::format("expected {} whole numbers", layers));
    for (const nlohmann::json& item : *list) kv_heads_per_layer.push_back(json_to_uint(item, reader.context() + ": field 'kv_heads_per_layer'"));
  }
  const std::vector<StateTensor> state = read_linear_state(reader);
  const bool state_on_every_layer = reader.optional_bool("linear_state_on_every_layer").value_or(false);
  if (state_on_every_layer && state.empty()) reader.fail("linear_state_on_every_layer", "needs linear_state");
  const std::map<LayerKind, KindShape> kind_shapes = read_kind_shapes(reader);
  for (const auto& [kind, shape] : kind_shapes)
    if (shape.kv_heads && !kv_heads_per_layer.empty())
      reader.fail("kind_shapes", fmt::format("give kv_heads_per_layer or kind_shapes.{}.kv_heads, not both", to_string(kind)));
  const std::optional<IndexerSpec> indexer = read_indexer(reader, layers);
  // DeepSeek-V4's compressed caches as llama.cpp lays them out: one ratio per layer, 0, 4 or 128.
  std::vector<std::uint64_t> compress_ratios;
  if (const nlohmann::json* list = reader.find("compress_ratios")) {
    if (!list->is_array() || list->size() != layers) reader.fail("compress_ratios", fmt::format("expected {} ratios", layers));
    for (const nlohmann::json& item : *list) {
      const std::uint64_t ratio = json_to_uint(item, reader.context() + ": field 'compress_ratios'");
      if (ratio != 0 && ratio != 4 && ratio != 128) reader.fail("compress_ratios", fmt::format("{} is not 0, 4 or 128", ratio));
      compress_ratios.push_back(ratio);
    }
  }
  const std::vector<LayerKind> kinds = read_layer_kinds(reader, layers, mla_width.has_value());
  reader.reject_unknown_keys();

  for (std::size_t i = 0; i < kinds.size(); ++i) {
    LayerSpec layer;
    layer.kind = kinds[i];
    switch (layer.kind) {
      case LayerKind::full:
      case LayerKind::sliding:
      case LayerKind::chunked:
      case LayerKind::cross: {
        const auto shape = kind_shapes.find(layer.kind);
        const KindShape own = shape != kind_shapes.end() ? shape->second : KindShape{};
        const std::optional<std::uint64_t> k = own.head_dim ? own.head_dim : head_dim;
        if (!k) reader.fail("head_dim", "is missing (or give hidden_size)");
        const std::uint64_t v = own.v_head_dim ? *own.v_head_dim : own.head_dim ? *own.head_dim : v_head_dim;
        const std::uint64_t heads = !kv_heads_per_layer.empty() ? kv_heads_per_layer[i] : own.kv_heads.value_or(kv_heads);
        layer.kv_heads = to_u32(reader, "kv_heads", heads);
        layer.k_head_dim = to_u32(reader, "head_dim", *k);
        layer.v_head_dim = to_u32(reader, "v_head_dim", v);
        break;
      }
      case LayerKind::mla:
        if (!mla_width) reader.fail("mla", "an mla layer needs the mla block {kv_lora_rank, qk_rope_head_dim}");
        layer.kv_heads = 1;
        layer.k_head_dim = to_u32(reader, "mla", *mla_width);
        layer.mla_rope_dim = static_cast<std::uint32_t>(mla_rope);
        break;
      case LayerKind::linear:
        if (state.empty()) reader.fail("linear_state", "a linear layer needs linear_state");
        layer.state = state;
        break;
      case LayerKind::none:
      case LayerKind::shared: break;
    }
    if (state_on_every_layer) layer.state = state;
    if (layer.kind == LayerKind::sliding) {
      if (!window) reader.fail("sliding_window", "is missing for a sliding layer");
      layer.window = *window;
    }
    if (layer.kind == LayerKind::chunked) {
      if (!chunk) reader.fail("attention_chunk_size", "is missing for a chunked layer");
      layer.window = *chunk;
    }
    if (layer.kind == LayerKind::cross) {
      if (!cross_tokens) reader.fail("cross_attention_tokens", "is missing for a cross layer");
      layer.window = *cross_tokens;
    }
    if (!compress_ratios.empty()) layer.compress_ratio = static_cast<std::uint32_t>(compress_ratios[i]);
    spec.layers.push_back(std::move(layer));
  }
  if (indexer) {
    std::vector<std::uint64_t> indexed = indexer->layers.value_or(std::vector<std::uint64_t>{});
    if (!indexer->layers)
      for (std::size_t i = 0; i < spec.layers.size(); ++i)
        if (spec.layers[i].kind == LayerKind::mla) indexed.push_back(i);
    if (indexed.empty()) reader.fail("indexer", "no layer to index (list them in indexer.layers)");
    for (const std::uint64_t i : indexed) spec.layers[i].index_head_dim = static_cast<std::uint32_t>(indexer->head_dim);
  }
  validate(spec);
  return spec;
}

nlohmann::json to_spec_json(const ModelSpec& spec) {
  nlohmann::json out;
  out["id"] = spec.id;
  out["name"] = spec.name;
  if (!spec.aliases.empty()) out["aliases"] = spec.aliases;
  if (!spec.source.empty()) out["source"] = spec.source;
  if (!spec.architecture.empty()) out["architecture"] = spec.architecture;
  out["params"] = spec.params;
  if (spec.active_params) out["active_params"] = spec.active_params;
  if (spec.routed_experts) {
    const RoutedExperts& routed = *spec.routed_experts;
    out["routed_experts"] = {{"per_token", routed.per_token}, {"input_width", routed.input_width},
                             {"intermediate_size", routed.intermediate}};
    if (!routed.gated) out["routed_experts"]["gated"] = false;
  }
  if (spec.weights_bytes) out["weights_bytes"] = *spec.weights_bytes;
  if (!spec.parts.empty()) {
    nlohmann::json parts = nlohmann::json::array();
    for (const ModelPart& part : spec.parts) parts.push_back({{"name", part.name}, {"params", part.params}, {"bytes", part.bytes}});
    out["parts"] = parts;
  }
  if (spec.vision_encoder) {
    nlohmann::json encoder = nlohmann::json::object();
    if (spec.vision_encoder->layers) encoder["layers"] = spec.vision_encoder->layers;
    if (spec.vision_encoder->hidden_size) encoder["hidden_size"] = spec.vision_encoder->hidden_size;
    out["vision_encoder"] = encoder;
  }
  if (!spec.weights_source.empty()) out["weights_source"] = spec.weights_source;
  if (spec.mtp_layers) out["mtp_layers"] = spec.mtp_layers;
  if (spec.mtp_weights_bytes) out["mtp_weights_bytes"] = *spec.mtp_weights_bytes;
  if (spec.mtp_replicated_bytes) out["mtp_replicated_bytes"] = spec.mtp_replicated_bytes;
  out["weight_dtype"] = spec.weight_dtype->name;
  if (spec.checkpoint_kv_dtype) out["checkpoint_kv_dtype"] = spec.checkpoint_kv_dtype->name;
  if (spec.max_context) out["max_context"] = spec.max_context;
  if (spec.vocab_size) out["vocab_size"] = spec.vocab_size;
  out["layers"] = spec.layers.size();
  out["attention_heads"] = spec.attention_heads;

  // Shapes come from the first attention layer; a kind whose layers all share another shape gets
  // kind_shapes; per-layer KV heads only when they vary within a kind.
  const LayerSpec* attention = nullptr;
  std::map<LayerKind, const LayerSpec*> first_of_kind;
  bool heads_vary = false;
  std::vector<std::uint32_t> heads;
  std::vector<std::string> kinds;
  std::vector<std::uint64_t> indexed;
  std::uint32_t index_head_dim = 0;
  std::size_t mla_layers = 0;
  bool all_default = true;
  for (std::size_t i = 0; i < spec.layers.size(); ++i) {
    const LayerSpec& layer = spec.layers[i];
    kinds.emplace_back(to_string(layer.kind));
    if (is_attention(layer.kind)) {
      if (!attention) attention = &layer;
      const LayerSpec*& first = first_of_kind[layer.kind];
      if (!first) first = &layer;
      if (layer.k_head_dim != first->k_head_dim || layer.v_head_dim != first->v_head_dim)
        throw Error(fmt::format("{}: layer {}: head widths vary within the {} layers, which the spec format cannot "
                                "express", spec.id, i, to_string(layer.kind)));
      heads_vary = heads_vary || layer.kv_heads != first->kv_heads;
      heads.push_back(layer.kv_heads);
    } else {
      heads.push_back(0);
    }
    if (layer.kind == LayerKind::mla) ++mla_layers;
    if (layer.index_head_dim) {
      if (index_head_dim && layer.index_head_dim != index_head_dim)
        throw Error(fmt::format("{}: layer {}: indexer widths vary, which the spec format cannot express", spec.id, i));
      index_head_dim = layer.index_head_dim;
      indexed.push_back(i);
    }
    if (layer.kind == LayerKind::sliding) out["sliding_window"] = layer.window;
    if (layer.kind == LayerKind::chunked) out["attention_chunk_size"] = layer.window;
    if (layer.kind == LayerKind::cross) out["cross_attention_tokens"] = layer.window;
    if (layer.kind == LayerKind::mla)
      out["mla"] = {{"kv_lora_rank", layer.k_head_dim - layer.mla_rope_dim}, {"qk_rope_head_dim", layer.mla_rope_dim}};
    if (layer.kind != LayerKind::linear && !layer.state.empty()) out["linear_state_on_every_layer"] = true;
    if (!layer.state.empty()) {
      nlohmann::json state = nlohmann::json::array();
      for (const StateTensor& tensor : layer.state) {
        nlohmann::json entry = {{"name", tensor.name}, {"elements", tensor.elements}, {"dtype", tensor.dtype->name}};
        if (tensor.shards) entry["shards"] = tensor.shards;
        if (tensor.groups) {
          entry["groups"] = tensor.groups;
          entry["group_elements"] = tensor.group_elements;
        }
        state.push_back(std::move(entry));
      }
      out["linear_state"] = state;
    }
    const LayerKind plain = spec.layers.front().kind == LayerKind::mla ? LayerKind::mla : LayerKind::full;
    all_default = all_default && layer.kind == plain;
  }
  if (attention) {
    out["kv_heads"] = attention->kv_heads;
    out["head_dim"] = attention->k_head_dim;
    if (attention->v_head_dim != attention->k_head_dim) out["v_head_dim"] = attention->v_head_dim;
    nlohmann::json shapes = nlohmann::json::object();
    for (const auto& [kind, first] : first_of_kind) {
      const bool other_heads = !heads_vary && first->kv_heads != attention->kv_heads;
      if (!other_heads && first->k_head_dim == attention->k_head_dim && first->v_head_dim == attention->v_head_dim) continue;
      nlohmann::json shape = {{"head_dim", first->k_head_dim}, {"v_head_dim", first->v_head_dim}};
      if (!heads_vary) shape["kv_heads"] = first->kv_heads;
      shapes[std::string(to_string(kind))] = shape;
    }
    if (!shapes.empty()) out["kind_shapes"] = shapes;
  }
  if (heads_vary) out["kv_heads_per_layer"] = heads;
  if (std::any_of(spec.layers.begin(), spec.layers.end(), [](const LayerSpec& l) { return l.compress_ratio != 0; })) {
    std::vector<std::uint32_t> ratios;
    for (const LayerSpec& layer : spec.layers) ratios.push_back(layer.compress_ratio);
    out["compress_ratios"] = ratios;
  }
  if (index_head_dim) {
    out["indexer"] = {{"head_dim", index_head_dim}};
    if (indexed.size() != mla_layers || std::any_of(indexed.begin(), indexed.end(), [&](std::uint64_t i) {
          return spec.layers[i].kind != LayerKind::mla;
        }))
      out["indexer"]["layers"] = indexed;
  }
  if (!all_default) out["layer_types"] = kinds;
  if (spec.rope) {
    out["rope_type"] = spec.rope->type;
    if (spec.rope->factor_millionths != 1'000'000) {
      if (spec.rope->factor_millionths % 1'000'000 == 0) out["rope_factor"] = spec.rope->factor_millionths / 1'000'000;
      else out["rope_factor"] = static_cast<double>(spec.rope->factor_millionths) / 1e6;
    }
    if (spec.rope->original_positions) out["rope_original_positions"] = spec.rope->original_positions;
    out["rotary_dim"] = spec.rope->rotary_dim;
    if (spec.rope->local) out["rope_local"] = true;
  }
  return out;
}

}  // namespace kvplan
