#pragma once
/// Sweeps for dashboards: every (context, cache dtype) row of one model on one deployment under
/// one engine, handed over one at a time as the core settles it, so a grid of any size streams in
/// constant memory. Pure: the caller decides where the rows go.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kvplan/export.h"
#include "kvplan/gpu.h"
#include "kvplan/model_spec.h"
#include "kvplan/plan.h"

namespace kvplan {

/// A cache dtype the engine does not offer (for this model, on this card), and why.
struct SweptOut {
  std::string kv_dtype;
  std::string reason;
};

/// Settles request.contexts x request.caches (contexts outer) as make_plan would, without its row
/// limit, and calls `emit` with each row. A cache dtype the engine refuses for the first context
/// (vLLM's K and V at two dtypes, a type llama.cpp lacks) is left out and returned; a row the
/// engine cannot price (past 64 bits) is skipped and returned too (the first hundred). Throws Error
/// as make_plan does for settings the engine refuses outright. The rows are settled into one Row
/// and handed to `emit` as an rvalue: a caller that keeps a row moves it out; one that only reads
/// it leaves its buffers to the next row.
KVPLAN_API std::vector<SweptOut> sweep_rows(const ModelSpec& model, const std::vector<GpuSpec>& gpus,
                                            const PlanRequest& request, const std::function<void(Row&&)>& emit);

/// "4k..1M" (doubling from 4,096 to 1,048,576), "1000..8000:1000" (steps of 1,000), or one count
/// or a comma-separated list of them; every value at least 1. At most `limit` values. Errors name
/// `setting`.
KVPLAN_API std::vector<std::uint64_t> parse_context_range(std::string_view text, std::string_view setting,
                                                          std::size_t limit = 1'000'000);

}  // namespace kvplan
