#include "kvplan/budget.h"

#include <algorithm>

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
    case LayerKind::none: return 0;
  }
  return ctx;
}

/// Bytes one token occupies in one layer: K row plus V row, each at its own dtype.
std::uint64_t layer_bytes_per_token(const LayerSpec& layer, const CacheDtypes& cache) {
  if (layer.kind == LayerKind::linear || layer.kind == LayerKind::none) return 0;
  const std::uint64_t k = dtype_bytes(*cache.k, std::uint64_t{layer.kv_heads} * layer.k_head_dim);
  const std::uint64_t v = dtype_bytes(*cache.v, std::uint64_t{layer.kv_heads} * layer.v_head_dim);
  return k + v;
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

/// Adds one layer's cost to the breakdown item of its (kind, window), creating it on first use.
void add_to_breakdown(std::vector<KvBreakdownItem>& items, const LayerSpec& layer, std::uint64_t tokens,
                      std::uint64_t bytes) {
  const std::uint64_t window = (layer.kind == LayerKind::sliding || layer.kind == LayerKind::chunked) ? layer.window : 0;
  auto it = std::find_if(items.begin(), items.end(),
                         [&](const KvBreakdownItem& item) { return item.kind == layer.kind && item.window == window; });
  if (it == items.end()) it = items.insert(items.end(), KvBreakdownItem{layer.kind, window, 0, tokens, 0});
  ++it->layers;
  it->bytes = checked_add(it->bytes, bytes, "cache size");
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
  for (const LayerSpec& layer : model.layers) {
    const std::uint64_t per_token = layer_bytes_per_token(layer, settings.cache);
    const std::uint64_t tokens = tokens_held(layer, settings.ctx);
    const std::uint64_t state = layer_state_bytes(layer);
    const std::uint64_t layer_bytes = checked_add(checked_mul(per_token, tokens, "cache size"), state, "cache size");
    row.kv_bytes_per_token = checked_add(row.kv_bytes_per_token, per_token, "cache size");
    per_sequence = checked_add(per_sequence, layer_bytes, "cache size");
    state_per_sequence = checked_add(state_per_sequence, state, "state size");
    add_to_breakdown(row.breakdown, layer, tokens, checked_mul(layer_bytes, settings.batch, "cache size"));
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

std::optional<std::uint64_t> max_fitting_ctx(const ModelSpec& model, RowSettings settings, std::uint64_t limit) {
  // Memory never decreases as ctx grows (a window only caps growth), so binary search is exact.
  const auto fits_at = [&](std::uint64_t ctx) {
    settings.ctx = ctx;
    try {
      return plan_row(model, settings).fits;
    } catch (const Error&) {
      return false;  // a size past 64 bits certainly does not fit
    }
  };
  if (limit == 0 || !fits_at(1)) return std::nullopt;
  std::uint64_t low = 1;  // fits
  std::uint64_t high = limit;
  if (fits_at(high)) return high;
  while (high - low > 1) {  // invariant: low fits, high does not
    const std::uint64_t middle = low + (high - low) / 2;
    (fits_at(middle) ? low : high) = middle;
  }
  return low;
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
