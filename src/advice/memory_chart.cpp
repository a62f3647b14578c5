// The plot's series: one make_plan over evenly spaced contexts, its rows regrouped by cache dtype.

#include "kvplan/chart.h"

#include <algorithm>

#include <fmt/format.h>

#include "kvplan/error.h"

namespace kvplan {

MemoryChart memory_chart(const ModelSpec& model, const std::vector<GpuSpec>& gpus, PlanRequest request, std::size_t points) {
  if (points < 2 || points > 512) throw Error("a chart has 2 to 512 points");
  if (gpus.empty()) throw Error(fmt::format("{}: no GPU to plan for", request.names.gpu));
  if (request.contexts.size() > 1) throw Error(fmt::format("{}: give one context, the last one drawn", request.names.ctx));
  if (request.contexts_are_totals) throw Error(fmt::format("{}: a chart is drawn per sequence", request.names.ctx));
  const std::uint64_t end = !request.contexts.empty() ? request.contexts.front()
                            : model.max_context       ? model.max_context
                                                      : 131'072;
  if (end < points) throw Error(fmt::format("{}: draw at least {} tokens", request.names.ctx, points));
  request.contexts.clear();
  for (std::size_t i = 1; i <= points; ++i) request.contexts.push_back(end / points * i + (i == points ? end % points : 0));

  const Plan plan = make_plan(model, gpus, request);
  MemoryChart chart;
  chart.model = model.name;
  chart.gpu = gpus.size() > 1 ? fmt::format("{} x {}", gpus.size(), gpus.front().name) : gpus.front().name;
  chart.runtime = plan.runtime;
  chart.batch = plan.rows.front().batch;
  chart.capacity_bytes = plan.rows.front().capacity_bytes;
  chart.ctx_end = end;
  const std::size_t caches = plan.context_limits.size();
  for (std::size_t d = 0; d < caches; ++d) {
    ChartSeries series;
    series.cache = plan.context_limits[d].cache;
    series.max_ctx = plan.context_limits[d].max_ctx;
    series.max_ctx_is_search_limit = plan.context_limits[d].reached_search_limit;
    for (std::size_t i = d; i < plan.rows.size(); i += caches) {
      const Row& row = plan.rows[i];
      series.points.push_back({row.ctx, row.weights_bytes, std::max(row.kv_bytes, row.kv_pool_bytes.value_or(0)),
                               row.overhead_bytes, row.total_bytes, row.fits});
    }
    chart.series.push_back(std::move(series));
  }
  return chart;
}

}  // namespace kvplan
