#include "loaders/hf_rope.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "loaders/json_reader.h"

namespace kvplan {

namespace {

/// A JSON object member, or null when absent or not an object.
const nlohmann::json* object_member(const nlohmann::json* object, const char* key) {
  if (!object || !object->is_object()) return nullptr;
  const auto it = object->find(key);
  return it != object->end() && it->is_object() ? &*it : nullptr;
}

/// A positive number member, or nullopt: a rope field that is absent or unreadable leaves the
/// table to the engine's "estimate" rule rather than failing the whole model.
std::optional<double> positive_number(const nlohmann::json* object, const char* key) {
  if (!object || !object->is_object()) return std::nullopt;
  const auto it = object->find(key);
  if (it == object->end() || !it->is_number()) return std::nullopt;
  const double value = it->get<double>();
  return std::isfinite(value) && value > 0 ? std::optional<double>(value) : std::nullopt;
}

/// The rotated width of a head of `head` values at `partial` (get_rope: int(head_size x
/// partial_rotary_factor)), the same double product Python takes. Kept 64-bit: a head too wide
/// for a rope is the caller's to refuse, not a width to wrap.
std::uint64_t rotated_width(std::uint64_t head, double partial) {
  if (!(partial > 0) || partial >= 1) return head;
  return static_cast<std::uint64_t>(static_cast<double>(head) * partial);
}

/// The widest rotated part the spec format states (and far beyond any real head).
constexpr std::uint64_t kMaxRotaryDim = 0xFFFF;

}  // namespace

std::optional<RotarySpec> read_hf_rope(ConfigFields& fields, const std::vector<LayerSpec>& layers) {
  const nlohmann::json* parameters = fields.find("rope_parameters");
  const nlohmann::json* scaling = fields.find("rope_scaling");
  // Read leniently (a null rope_theta is not a reason to refuse a model whose cache is understood):
  // what is not a positive number is taken as not stated.
  const auto top_number = [&](const char* key) -> std::optional<double> {
    const nlohmann::json* value = fields.find(key);
    if (!value || !value->is_number()) return std::nullopt;
    const double number = value->get<double>();
    return std::isfinite(number) && number > 0 ? std::optional<double>(number) : std::nullopt;
  };
  const auto theta = top_number("rope_theta");
  const auto local_base = top_number("rope_local_base_freq");
  const auto partial = top_number("partial_rotary_factor");
  const auto stated_dim_value = top_number("rotary_dim");
  // 0: not stated (or beyond any head width).
  const std::uint64_t stated_dim =
      stated_dim_value && *stated_dim_value < 65536 ? static_cast<std::uint64_t>(*stated_dim_value) : 0;
  const bool stated = (parameters && parameters->is_object()) || (scaling && scaling->is_object()) || theta || local_base ||
                      partial || stated_dim != 0;
  if (!stated) return std::nullopt;

  // transformers v5 writes rope_parameters, per layer type for models whose layer types differ
  // ({"full_attention": {...}, "sliding_attention": {...}}); v4 wrote rope_scaling.
  const nlohmann::json* global = parameters;
  const nlohmann::json* local = nullptr;
  if (const nlohmann::json* full = object_member(parameters, "full_attention")) {
    global = full;
    local = object_member(parameters, "sliding_attention");
  }
  if (!global || !global->is_object()) global = scaling && scaling->is_object() ? scaling : nullptr;

  RotarySpec rope;
  if (global) {
    for (const char* key : {"rope_type", "type"}) {
      const auto it = global->find(key);
      if (it != global->end() && it->is_string()) {
        rope.type = it->get<std::string>();
        break;
      }
    }
    // Multimodal sections (Qwen2-VL's "mrope", or an unscaled rope with mrope_section): one kind.
    if (global->contains("mrope_section") && (rope.type == "default" || rope.type == "mrope")) rope.type = "mrope";
    if (const auto factor = positive_number(global, "factor")) {
      // As the spec format bounds it: beyond 10^6 no rope is real, and the table would not be sized.
      if (*factor > 1e6) fields.fail(scaling == global ? "rope_scaling" : "rope_parameters", "factor is above 1000000");
      rope.factor_millionths = static_cast<std::uint64_t>(std::llround(*factor * 1e6));
    }
    if (const auto it = global->find("original_max_position_embeddings"); it != global->end() && it->is_number_unsigned())
      rope.original_positions = it->get<std::uint64_t>();
  }
  // Phi-3's longrope states the original length beside rope_scaling.
  if (rope.original_positions == 0) rope.original_positions = fields.uint("original_max_position_embeddings").value_or(0);

  // The rotated width: rotary_dim where the config gives it (GPT-J, Phi-1), else the head width at
  // partial_rotary_factor (top level, or inside rope_parameters in v5); MLA rotates its rope part.
  // The global rope is the full-attention layers' (Gemma 4's are 512 wide, its sliding ones 256):
  // the first full layer's head, else the first attention layer's.
  const auto attends = [](const LayerSpec& layer) {
    return layer.kind == LayerKind::mla || (layer.kv_heads && layer.k_head_dim && layer.kind != LayerKind::cross);
  };
  auto found = std::find_if(layers.begin(), layers.end(),
                            [&](const LayerSpec& layer) { return layer.kind == LayerKind::full && attends(layer); });
  if (found == layers.end()) found = std::find_if(layers.begin(), layers.end(), attends);
  if (found == layers.end()) return std::nullopt;
  const LayerSpec* attention = &*found;
  const std::optional<double> fraction = partial ? partial : positive_number(global, "partial_rotary_factor");
  std::uint64_t width = 0;
  if (attention->kind == LayerKind::mla) width = attention->mla_rope_dim;
  else if (stated_dim != 0 && stated_dim <= attention->k_head_dim) width = stated_dim;
  else width = rotated_width(attention->k_head_dim, fraction.value_or(1.0));
  // None, or wider than any rope the format states: the table is left to the engine's estimate.
  if (width == 0 || width > kMaxRotaryDim) return std::nullopt;
  rope.rotary_dim = static_cast<std::uint32_t>(width);

  // Gemma 3: the sliding layers rotate at rope_local_base_freq, unscaled (a rope of their own);
  // v5's per-type parameters say the same when the sliding entry differs from the full one.
  const bool any_sliding = std::any_of(layers.begin(), layers.end(), [](const LayerSpec& l) { return l.kind == LayerKind::sliding; });
  // vLLM keys its tables by base and scaling: a local base equal to the global one, both unscaled,
  // is the same table.
  const bool own_local_base = local_base && (*local_base != theta.value_or(10000.0) || rope.type != "default" ||
                                             rope.factor_millionths != 1'000'000);
  rope.local = any_sliding && (own_local_base || (local && global && *local != *global));
  return rope;
}

}  // namespace kvplan
