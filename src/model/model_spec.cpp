#include "kvplan/model_spec.h"

#include <algorithm>

#include <fmt/format.h>

#include "kvplan/error.h"
#include "kvplan/units.h"
#include "model/checked.h"

namespace kvplan {

std::string_view to_string(LayerKind kind) {
  switch (kind) {
    case LayerKind::full: return "full";
    case LayerKind::sliding: return "sliding";
    case LayerKind::chunked: return "chunked";
    case LayerKind::mla: return "mla";
    case LayerKind::linear: return "linear";
    case LayerKind::none: return "none";
    case LayerKind::shared: return "shared";
    case LayerKind::cross: return "cross";
  }
  return "?";
}

namespace {

bool holds_tokens(LayerKind kind) {
  return kind == LayerKind::full || kind == LayerKind::sliding || kind == LayerKind::chunked || kind == LayerKind::mla ||
         kind == LayerKind::cross;
}

void validate_layer(const ModelSpec& spec, const LayerSpec& layer, std::size_t index) {
  const auto where = [&](std::string_view field) { return fmt::format("{}: layer {}: {}", spec.id, index, field); };
  if (holds_tokens(layer.kind)) {
    if (layer.kv_heads == 0) throw Error(where("kv_heads must be at least 1"));
    if (layer.k_head_dim == 0) throw Error(where("head_dim must be at least 1"));
    if (layer.kind != LayerKind::mla && spec.attention_heads % layer.kv_heads != 0)
      throw Error(where(fmt::format("attention_heads ({}) is not divisible by kv_heads ({})",
                                    spec.attention_heads, layer.kv_heads)));
  }
  if (layer.index_head_dim != 0 && !holds_tokens(layer.kind))
    throw Error(where(fmt::format("a {} layer cannot keep an indexer cache", to_string(layer.kind))));
  if (layer.compress_ratio != 0 && layer.kind != LayerKind::sliding)
    throw Error(where(fmt::format("a {} layer cannot keep a compressed cache (DeepSeek-V4's slide)", to_string(layer.kind))));
  if ((layer.kind == LayerKind::sliding || layer.kind == LayerKind::chunked || layer.kind == LayerKind::cross) &&
      layer.window == 0)
    throw Error(where(fmt::format("a {} layer needs a window of at least 1 token", to_string(layer.kind))));
  if (layer.kind == LayerKind::linear) {
    if (layer.state.empty()) throw Error(where("a linear layer needs its state sizes"));
    for (const StateTensor& tensor : layer.state)
      if (tensor.elements == 0 || tensor.dtype == nullptr)
        throw Error(where(fmt::format("state '{}' needs a size and a dtype", tensor.name)));
  }
}

}  // namespace

std::uint64_t LayerSpec::elements_per_token() const {
  if (!holds_tokens(kind)) return 0;
  return std::uint64_t{kv_heads} * (std::uint64_t{k_head_dim} + v_head_dim) + index_head_dim;
}

void validate(const ModelSpec& spec) {
  if (spec.layers.size() > kMaxLayers)
    throw Error(fmt::format("{}: {} layers are more than kvplan plans (at most {})", spec.id, spec.layers.size(), kMaxLayers));
  // MTP layers are priced as extra layers (llama.cpp's nextn): bounded like the layers, so that a
  // config.json's num_nextn_predict_layers of 2^32 - 1 cannot build four billion of them.
  if (spec.mtp_layers > kMaxLayers)
    throw Error(fmt::format("{}: {} MTP layers are more than kvplan plans (at most {})", spec.id, spec.mtp_layers, kMaxLayers));
  for (const LayerSpec& layer : spec.layers)
    if (layer.state.size() > kMaxStateTensors)
      throw Error(fmt::format("{}: a layer with {} state tensors (kvplan reads at most {})", spec.id, layer.state.size(),
                              kMaxStateTensors));
  if (spec.layers.empty()) throw Error(fmt::format("{}: layers must be at least 1", spec.id));
  if (spec.attention_heads == 0) throw Error(fmt::format("{}: attention_heads must be at least 1", spec.id));
  if (spec.params == 0 && !spec.weights_bytes && spec.params_source.empty())
    throw Error(fmt::format("{}: params must be at least 1 (or give weights_bytes)", spec.id));
  if (spec.weight_dtype == nullptr) throw Error(fmt::format("{}: weight_dtype is missing", spec.id));
  for (std::size_t i = 0; i < spec.layers.size(); ++i) validate_layer(spec, spec.layers[i], i);
  const auto first_cache = std::find_if(spec.layers.begin(), spec.layers.end(),
                                        [](const LayerSpec& layer) { return holds_tokens(layer.kind); });
  const auto first_shared = std::find_if(spec.layers.begin(), spec.layers.end(),
                                         [](const LayerSpec& layer) { return layer.kind == LayerKind::shared; });
  if (first_shared != spec.layers.end() && first_shared < first_cache)
    throw Error(fmt::format("{}: layer {}: a shared layer needs an earlier layer whose cache it reads", spec.id,
                            first_shared - spec.layers.begin()));
}

std::string describe_layers(const ModelSpec& spec) {
  struct Group {
    LayerKind kind;
    std::uint64_t window;
    std::uint32_t index_head_dim;
    std::uint32_t compress_ratio;
    std::uint32_t count;
  };
  std::vector<Group> groups;
  for (const LayerSpec& layer : spec.layers) {
    auto same = [&](const Group& g) {
      return g.kind == layer.kind && g.window == layer.window && g.index_head_dim == layer.index_head_dim &&
             g.compress_ratio == layer.compress_ratio;
    };
    auto it = std::find_if(groups.begin(), groups.end(), same);
    if (it == groups.end()) groups.push_back({layer.kind, layer.window, layer.index_head_dim, layer.compress_ratio, 1});
    else ++it->count;
  }
  std::string text;
  for (const Group& group : groups) {
    if (!text.empty()) text += " + ";
    text += fmt::format("{} {}", group.count, to_string(group.kind));
    if (group.window != 0) text += fmt::format("({})", group.window);
    if (group.compress_ratio != 0) text += fmt::format("+compressed(1/{})", group.compress_ratio);
    if (group.index_head_dim != 0) text += fmt::format("+indexer({})", group.index_head_dim);
  }
  return text;
}

const LayerSpec* mtp_cache_layer(const ModelSpec& spec) {
  const auto growing = std::find_if(spec.layers.rbegin(), spec.layers.rend(), [](const LayerSpec& layer) {
    return layer.kind == LayerKind::full || layer.kind == LayerKind::mla;
  });
  if (growing != spec.layers.rend()) return &*growing;
  const auto any = std::find_if(spec.layers.rbegin(), spec.layers.rend(),
                                [](const LayerSpec& layer) { return holds_tokens(layer.kind) && layer.kind != LayerKind::cross; });
  return any != spec.layers.rend() ? &*any : nullptr;
}

std::uint64_t parts_bytes(const ModelSpec& spec) {
  std::uint64_t bytes = 0;
  for (const ModelPart& part : spec.parts) bytes = checked_add(bytes, part.bytes, "weight size");
  return bytes;
}

std::optional<std::uint64_t> mtp_weights_per_rank(const ModelSpec& spec, std::uint32_t tensor_parallel) {
  if (!spec.mtp_weights_bytes) return std::nullopt;
  const std::uint64_t replicated = std::min(spec.mtp_replicated_bytes, *spec.mtp_weights_bytes);
  return ceil_div(*spec.mtp_weights_bytes - replicated, std::max<std::uint32_t>(tensor_parallel, 1)) + replicated;
}

bool weights_are_estimate(const ModelSpec& spec) { return spec.weights_source.rfind("estimate:", 0) == 0; }

bool weights_are_given(const ModelSpec& spec) { return spec.weights_source.find("(given:") != std::string::npos; }

bool weights_are_quantized_safetensors(const ModelSpec& spec) {
  if (spec.file || !spec.weight_dtype) return false;
  const std::string_view name = spec.weight_dtype->name;
  if (name == "fp32" || name == "fp16" || name == "bf16" || name == "mxfp4") return false;
  return spec.weights_source.rfind("computed (", 0) == 0 || spec.weights_source.rfind("safetensors total_size", 0) == 0;
}

std::uint32_t resolve_mtp_layers(std::string_view text, const ModelSpec& spec, std::string_view flag) {
  if (text.empty() || text == "0") return 0;
  const std::string declared = fmt::format("{} declares {} MTP layer{}", spec.id, spec.mtp_layers, spec.mtp_layers == 1 ? "" : "s");
  if (spec.mtp_layers == 0) throw Error(fmt::format("{} {}: {}", flag, text, declared));
  if (text == "all") return spec.mtp_layers;
  std::uint64_t count = 0;
  for (const char c : text) {
    if (c < '0' || c > '9' || count > 1000)
      throw Error(fmt::format("{}: '{}' is not a number of layers or 'all'", flag, text));
    count = count * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (count > spec.mtp_layers) throw Error(fmt::format("{} {}: {}", flag, text, declared));
  return static_cast<std::uint32_t>(count);
}

bool is_uniform_full_attention(const ModelSpec& spec) {
  if (spec.layers.empty()) return false;
  const LayerSpec& first = spec.layers.front();
  for (const LayerSpec& layer : spec.layers)
    if (layer.kind != LayerKind::full || layer.kv_heads != first.kv_heads || layer.k_head_dim != first.k_head_dim ||
        layer.v_head_dim != first.v_head_dim)
      return false;
  return true;
}

}  // namespace kvplan
