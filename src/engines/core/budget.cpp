#include "kvplan/budget.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "kvplan/error.h"

namespace kvplan {

std::string CacheDtypes::label() const {
  if (k == v) return std::string(k->name);
  return fmt::format("{}/{}", k->name, v->name);
}

namespace {

/// Tokens one layer keeps per sequence at context `ctx` (engine-neutral: an engine that exploits
/// the structure fully holds exactly this many).
std::uint64_t tokens_held(const LayerSpec& layer, std::uint64_t ctx) {
  switch (layer.kind) {
    case LayerKind::full:
    case LayerKind::mla: return ctx;
    case LayerKind::sliding:
    case LayerKind::chunked: return std::min(ctx, layer.window);
    case LayerKind::linear:
    case LayerKind::none:
    case LayerKind::shared: return 0;
  }
  return ctx;
}

/// Bytes one token occupies in one layer: K row plus V row, each at its own dtype, plus the DSA
/// indexer key where the layer has one. The generic profile stores the indexer key at the K cache
/// dtype, as llama.cpp does (llama-kv-cache-dsa.cpp: a second cache of one index_head_dim head,
/// type_k); vLLM instead keeps fp8 values with an fp32 scale per 128, 132 B per token per layer
/// (deepseek_v2.py DeepseekV32IndexerCache).
std::uint64_t indexer_bytes_per_token(const LayerSpec& layer, const CacheDtypes& cache) {
  return layer.index_head_dim ? dtype_bytes(*cache.k, layer.index_head_dim) : 0;
}

std::uint64_t layer_bytes_per_token(const LayerSpec& layer, const CacheDtypes& cache) {
  if (layer.kind == LayerKind::linear || layer.kind == LayerKind::none || layer.kind == LayerKind::shared) return 0;
  const std::uint64_t k = dtype_bytes(*cache.k, std::uint64_t{layer.kv_heads} * layer.k_head_dim);
  const std::uint64_t v = dtype_bytes(*cache.v, std::uint64_t{layer.kv_heads} * layer.v_head_dim);
  return k + v + indexer_bytes_per_token(layer, cache);
}

std::uint64_t layer_state_bytes(const LayerSpec& layer) {
  std::uint64_t bytes = 0;
  for (const StateTensor& tensor : layer.state) {
    // State tensors may have odd sizes; engines store them unpacked, so round partial blocks up.
    const std::uint64_t blocks = (tensor.elements + tensor.dtype->block_elements - 1) / tensor.dtype->block_elements;
    bytes = checked_add(bytes, checked_mul(blocks, tensor.dtype->block_bytes, "state size"), "state size");
  }
  return bytes;
}

/// Adds `count` alike layers' cost to the breakdown item of their (kind, window, MTP or not),
/// creating it on first use. `indexer` is the part of `bytes` the layers' DSA indexer keys take.
void add_to_breakdown(std::vector<KvBreakdownItem>& items, const LayerSpec& layer, bool mtp, std::uint32_t count,
                      std::uint64_t tokens, std::uint64_t bytes, std::uint64_t indexer) {
  const std::uint64_t window = (layer.kind == LayerKind::sliding || layer.kind == LayerKind::chunked) ? layer.window : 0;
  auto it = std::find_if(items.begin(), items.end(), [&](const KvBreakdownItem& item) {
    return item.kind == layer.kind && item.window == window && item.mtp == mtp;
  });
  if (it == items.end()) {
    KvBreakdownItem item;
    item.kind = layer.kind;
    item.window = window;
    item.tokens_held = tokens;
    item.mtp = mtp;
    it = items.insert(items.end(), item);
  }
  it->layers += count;
  it->bytes = checked_add(it->bytes, bytes, "cache size");
  if (layer.index_head_dim) {
    it->indexer_layers += count;
    it->indexer_bytes = checked_add(it->indexer_bytes, indexer, "cache size");
  }
}

/// True when two layers cost the same in every row: equal in every field that tokens_held,
/// layer_bytes_per_token, layer_state_bytes and add_to_breakdown read (and in the rest of LayerSpec
/// too, to be safe). plan_row prices such layers once and counts them.
bool same_cost(const LayerSpec& a, const LayerSpec& b) {
  static_assert(sizeof(LayerSpec) == 56, "a field was added to LayerSpec: compare it in same_cost");
  if (a.kind != b.kind || a.kv_heads != b.kv_heads || a.k_head_dim != b.k_head_dim || a.v_head_dim != b.v_head_dim ||
      a.mla_rope_dim != b.mla_rope_dim || a.index_head_dim != b.index_head_dim || a.window != b.window ||
      a.state.size() != b.state.size())
    return false;
  for (std::size_t i = 0; i < a.state.size(); ++i)
    if (a.state[i].elements != b.state[i].elements || a.state[i].dtype != b.state[i].dtype ||
        a.state[i].name != b.state[i].name)
      return false;
  return true;
}

/// The model's layers as (first layer of a shape, how many layers have it), in order of first
/// appearance; empty when there are more than `kMaxShapes` shapes (the caller then goes layer by layer).
struct LayerShape {
  const LayerSpec* layer = nullptr;
  std::uint32_t count = 0;
};
constexpr std::size_t kMaxShapes = 32;

std::size_t layer_shapes(const std::vector<LayerSpec>& layers, std::array<LayerShape, kMaxShapes>& shapes) {
  std::size_t n = 0;
  std::size_t last = 0;  // alike layers usually come in runs: try the last match first
  for (const LayerSpec& layer : layers) {
    if (n > 0 && same_cost(*shapes[last].layer, layer)) {
      ++shapes[last].count;
      continue;
    }
    std::size_t i = 0;
    while (i < n && !same_cost(*shapes[i].layer, layer)) ++i;
    if (i == n) {
      if (n == kMaxShapes) return 0;
      shapes[n++] = {&layer, 0};
    }
    ++shapes[i].count;
    last = i;
  }
  return n;
}

bool is_wider_than_fp8(const Dtype& type) {
  // bytes per element > 1, compared exactly as block_bytes / block_elements > 1.
  return type.block_bytes > type.block_elements;
}

}  // namespace

WeightsEstimate estimate_weights(const ModelSpec& model, const Dtype* dtype) {
  const Dtype& target = dtype ? *dtype : *model.weight_dtype;
  if (model.weights_bytes && target.name == model.weight_dtype->name)
    return {*model.weights_bytes, model.weights_source.empty()
                                      ? fmt::format("checkpoint size ({} as published)", target.name)
                                      : model.weights_source};
  // A whole number of bytes: partial blocks (int4's odd parameter) round up.
  const std::uint64_t blocks = (model.params + target.block_elements - 1) / target.block_elements;
  const std::uint64_t bytes = checked_mul(blocks, target.block_bytes, "weight size");
  const std::string per_param = target.block_elements == 1
                                    ? fmt::format("{} B", target.block_bytes)
                                    : fmt::format("{}/{} B", target.block_bytes, target.block_elements);
  return {bytes, fmt::format("params x {} ({})", per_param, target.name)};
}

Row plan_row(const ModelSpec& model, const RowSettings& settings) {
  Row row;
  row.settings = settings;
  row.weight_dtype = settings.weight_dtype ? settings.weight_dtype : model.weight_dtype;

  std::uint64_t per_sequence = 0;
  std::uint64_t state_per_sequence = 0;
  // `count` layers alike `layer`; with a count of 1, exactly the sum as written, one layer at a time.
  const auto add_layers = [&](const LayerSpec& layer, bool mtp, std::uint32_t count) {
    const std::uint64_t per_token = layer_bytes_per_token(layer, settings.cache);
    const std::uint64_t tokens = tokens_held(layer, settings.ctx);
    const std::uint64_t state = layer_state_bytes(layer);
    const std::uint64_t layer_bytes = checked_add(checked_mul(per_token, tokens, "cache size"), state, "cache size");
    const std::uint64_t indexer = checked_mul(indexer_bytes_per_token(layer, settings.cache), tokens, "cache size");
    row.kv_bytes_per_token =
        checked_add(row.kv_bytes_per_token, checked_mul(per_token, count, "cache size"), "cache size");
    per_sequence = checked_add(per_sequence, checked_mul(layer_bytes, count, "cache size"), "cache size");
    state_per_sequence = checked_add(state_per_sequence, checked_mul(state, count, "state size"), "state size");
    add_to_breakdown(row.breakdown, layer, mtp, count, tokens,
                     checked_mul(checked_mul(layer_bytes, settings.batch, "cache size"), count, "cache size"),
                     checked_mul(checked_mul(indexer, settings.batch, "cache size"), count, "cache size"));
  };
  // Speculative decoding with the model's own MTP layers caches them like its main attention.
  const LayerSpec* mtp = settings.mtp_layers ? mtp_cache_layer(model) : nullptr;
  const auto require_mtp = [&] {
    if (!mtp) throw Error(fmt::format("{}: no attention layer to count the MTP layers as", model.id));
  };
  const auto add_one_by_one = [&] {
    for (const LayerSpec& layer : model.layers) add_layers(layer, false, 1);
    if (settings.mtp_layers) require_mtp();
    for (std::uint32_t i = 0; i < settings.mtp_layers; ++i) add_layers(*mtp, true, 1);
  };
  // Most models have a few shapes of layer (Llama: one; Gemma 3: sliding and full), so each shape
  // is priced once and multiplied: the same sums, without pricing every layer. Should a sum pass
  // 2^64, the layer-by-layer sum runs instead, so that the error names the same figures as always.
  std::array<LayerShape, kMaxShapes> shapes;
  const std::size_t shape_count = layer_shapes(model.layers, shapes);
  try {
    if (shape_count == 0) {
      add_one_by_one();
    } else {
      for (std::size_t i = 0; i < shape_count; ++i) add_layers(*shapes[i].layer, false, shapes[i].count);
      if (settings.mtp_layers) {
        require_mtp();
        add_layers(*mtp, true, settings.mtp_layers);
      }
    }
  } catch (const Error&) {
    if (shape_count == 0) throw;
    row.kv_bytes_per_token = 0;
    per_sequence = 0;
    state_per_sequence = 0;
    row.breakdown.clear();
    add_one_by_one();
  }
  row.kv_bytes = checked_mul(per_sequence, settings.batch, "cache size");
  row.state_bytes = checked_mul(state_per_sequence, settings.batch, "state size");

  const WeightsEstimate weights = estimate_weights(model, settings.weight_dtype);
  row.weights_bytes = weights.bytes;
  row.weights_rule = weights.rule;

  row.total_bytes = checked_add(checked_add(row.weights_bytes, row.kv_bytes, "total memory"), settings.overhead_bytes,
                                "total memory");
  row.capacity_bytes = scale_by_millionths(settings.gpu_memory_bytes, settings.utilization_millionths);
  row.fits = row.total_bytes <= row.capacity_bytes;
  // Both sides are below 2^63 in any real question; the Error keeps the subtraction honest.
  if (row.total_bytes > (std::uint64_t{1} << 62) || row.capacity_bytes > (std::uint64_t{1} << 62))
    throw Error("total memory is too large to compare (over 2^62 bytes)");
  row.headroom_bytes = static_cast<std::int64_t>(row.capacity_bytes) - static_cast<std::int64_t>(row.total_bytes);
  return row;
}

std::optional<std::uint64_t> largest_holding(std::uint64_t limit, const std::function<bool(std::uint64_t)>& holds) {
  if (limit == 0 || !holds(1)) return std::nullopt;
  if (holds(limit)) return limit;
  std::uint64_t low = 1;  // holds
  std::uint64_t high = limit;  // does not
  while (high - low > 1) {
    const std::uint64_t middle = low + (high - low) / 2;
    (holds(middle) ? low : high) = middle;
  }
  return low;
}

std::optional<std::uint64_t> max_fitting_ctx(const ModelSpec& model, RowSettings settings, std::uint64_t limit) {
  // Memory never decreases as ctx grows (a window only caps growth), so bisection is exact.
  return largest_holding(limit, [&](std::uint64_t ctx) {
    settings.ctx = ctx;
    try {
      return plan_row(model, settings).fits;
    } catch (const Error&) {
      return false;  // a size past 64 bits certainly does not fit
    }
  });
}

Plan make_plan(const ModelSpec& model, const PlanRequest& request) {
  if (request.contexts.empty() || request.caches.empty()) throw Error("nothing to plan: no context or no cache dtype");
  Plan plan;
  for (const std::uint64_t ctx : request.contexts) {
    for (const CacheDtypes& cache : request.caches) {
      RowSettings settings;
      settings.ctx = ctx;
      settings.batch = request.batch;
      settings.cache = cache;
      settings.weight_dtype = request.weight_dtype;
      settings.overhead_bytes = request.overhead_bytes;
      settings.utilization_millionths = request.utilization_millionths;
      settings.gpu_memory_bytes = request.gpu_memory_bytes;
      settings.mtp_layers = request.mtp_layers;
      plan.rows.push_back(plan_row(model, settings));
    }
  }

  std::uint64_t limit = model.max_context;
  for (const std::uint64_t ctx : request.contexts) limit = std::max(limit, ctx);
  for (const CacheDtypes& cache : request.caches) {
    RowSettings settings = plan.rows.front().settings;
    settings.cache = cache;
    const std::optional<std::uint64_t> max_ctx = max_fitting_ctx(model, settings, limit);
    plan.context_limits.push_back({cache, max_ctx, max_ctx == limit});
  }

  for (std::size_t i = 0; i < plan.rows.size(); ++i) {
    const Row& row = plan.rows[i];
    if (row.fits) continue;
    WayOut way;
    way.row_index = i;
    if (is_wider_than_fp8(*row.weight_dtype)) {
      RowSettings settings = row.settings;
      settings.weight_dtype = &parse_weight_dtype("fp8");
      way.with_fp8_weights = plan_row(model, settings);
    }
    plan.ways_out.push_back(std::move(way));
  }
  return plan;
}

}  // namespace kvplan
