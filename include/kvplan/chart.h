#pragma once
/// The series `kvplan plot` draws: memory against context length for each cache dtype, from one
/// make_plan over evenly spaced contexts. The SVG writer formats these figures; it computes none.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kvplan/export.h"
#include "kvplan/gpu.h"
#include "kvplan/model_spec.h"
#include "kvplan/plan.h"

namespace kvplan {

/// One context of one cache dtype, as the plan's row for it says (the fullest GPU's figures).
struct ChartPoint {
  std::uint64_t ctx = 0;
  std::uint64_t weights_bytes = 0;
  std::uint64_t kv_bytes = 0;     ///< the cache held: max(what the sequences need, the engine's pool)
  std::uint64_t other_bytes = 0;  ///< the engine's overhead
  std::uint64_t total_bytes = 0;
  bool fits = false;
};

struct ChartSeries {
  CacheDtypes cache;
  std::vector<ChartPoint> points;        ///< contexts ascending
  std::optional<std::uint64_t> max_ctx;  ///< the plan's largest fitting context; nullopt: none fits
  bool max_ctx_is_search_limit = false;  ///< more may fit
};

struct MemoryChart {
  std::string model;  ///< "Llama 3.1 8B"
  std::string gpu;    ///< "NVIDIA GeForce RTX 4090", "2 x NVIDIA H100 SXM"
  std::string runtime;
  std::uint64_t batch = 1;
  std::uint64_t capacity_bytes = 0;  ///< per GPU, the budget the rows are judged against
  std::uint64_t ctx_end = 0;         ///< the last context drawn
  std::vector<ChartSeries> series;   ///< one per cache dtype, in the request's order
};

/// Prices `points` contexts from ctx_end / points to ctx_end (ctx_end: the request's one context,
/// else the model's trained context, else 131,072) for each of the request's cache dtypes (the
/// engine's defaults when it names none). `points` is 2 to 512. Throws what make_plan throws.
KVPLAN_API MemoryChart memory_chart(const ModelSpec& model, const std::vector<GpuSpec>& gpus, PlanRequest request,
                                    std::size_t points = 48);

}  // namespace kvplan
