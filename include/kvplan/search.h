#pragma once
/// The inverse questions of a plan: the largest context per sequence at a batch, the largest batch
/// at a context, and the fewest GPUs of one type, each under the chosen engine's rules and for
/// each cache dtype. Every answer is exact: it fits, and one more token, one more sequence (or any
/// deployment with fewer GPUs) does not. Pure: no I/O, no globals.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kvplan/export.h"
#include "kvplan/gpu.h"
#include "kvplan/model_spec.h"
#include "kvplan/plan.h"

namespace kvplan {

/// What stopped a search one step past its answer.
enum class SearchBound {
  memory,           ///< one more does not fit in memory
  trained_context,  ///< the model's trained context, the default cap of the context search
  cap,              ///< the caller's cap
  engine,           ///< one more is refused by the engine or blocked by a finding (SearchStop::code says which)
  search_limit,     ///< kvplan's own search limit: more may fit
};
/// "memory", "trained_context", "cap", "engine", "search_limit".
KVPLAN_API std::string_view to_string(SearchBound bound);

/// The bound and the code of the finding that blocks the next step: for `engine`
/// "exceeds_max_num_seqs", "beyond_trained_context", "engine_refuses_start"; for `memory`, empty
/// or "over_budget" (a budget, co-tenants) or "kv_pool_too_small".
struct SearchStop {
  SearchBound bound = SearchBound::memory;
  std::string code;
};

/// A deployment of N alike GPUs: tensor-parallel ranks x pipeline stages, as the engine runs it.
struct GpuDeployment {
  std::uint32_t gpus = 1;
  std::uint32_t tp = 1;
  std::uint32_t pp = 1;
};

/// The question: one model on one card type, under one engine.
struct LimitsRequest {
  /// Runtime, cache dtypes (empty: the profile's default), batch, engine options, names. Its
  /// contexts, at most one, per sequence: the context of the batch and GPU searches (none: the cap).
  PlanRequest plan;
  /// The context search stops here; nullopt: the model's trained context (none stated: the
  /// engine's own search limit).
  std::optional<std::uint64_t> ctx_cap;
  /// The batch search's limit: a larger answer is reported as SearchBound::search_limit.
  std::uint64_t batch_limit = std::uint64_t{1} << 32;
  /// The GPU search tries tp 1, 2, 4, 8 and, where the engine has pipeline stages, pp 1 to max_pp.
  std::uint32_t max_pp = 8;
  /// Which searches run besides the capped context and the batch: a caller that needs only those
  /// two (kvplan fit, over the whole catalog) leaves these out; their answers are then unset.
  bool search_uncapped_ctx = true;
  bool search_gpus = true;
  /// The rows at the largest context and batch (CacheLimits::max_ctx_row, max_batch_row); a caller
  /// that shows only the answers (kvplan fit) leaves them out, and they are not priced again.
  bool answer_rows = true;
  /// Rows the caller has already planned at the searches' context and batch, one per cache dtype in
  /// the order of plan.caches (fewer: the rest are priced here), as make_plan priced them: both
  /// searches start from them instead of pricing them again. Borrowed for the call.
  std::span<const Row> known_rows;
};

/// The answers for one cache dtype.
struct CacheLimits {
  CacheDtypes cache;  ///< resolved ("auto" is the dtype it meant)

  std::optional<std::uint64_t> max_ctx;  ///< at the request's batch, at most the cap; nullopt: not 1 token fits
  SearchStop ctx_stop;
  std::optional<Row> max_ctx_row;        ///< the row at max_ctx
  /// Without the cap: what memory (and the engine) allow, up to kvplan's search limit.
  std::optional<std::uint64_t> uncapped_max_ctx;
  SearchStop uncapped_stop;

  std::optional<std::uint64_t> max_batch;  ///< at the searches' context; nullopt: not 1 sequence fits
  SearchStop batch_stop;
  std::optional<Row> max_batch_row;

  std::optional<GpuDeployment> min_gpus;  ///< as tried; nullopt: no deployment tried fits
  std::optional<Row> min_gpus_row;        ///< its row: tp and pp as the engine runs them
  /// Deployments with fewer GPUs the engine cannot plan, and why ("tp 3: ..."); they count as not fitting.
  std::vector<std::string> skipped;
};

struct Limits {
  std::string runtime;
  PlanSettings settings;         ///< the request's, on the cards given
  CacheFacts facts;              ///< the model's fixed-size and side caches, for the report
  std::uint64_t ctx_cap = 0;     ///< the context search's cap
  SearchBound cap_kind = SearchBound::trained_context;  ///< trained_context, cap or search_limit
  std::uint64_t ctx = 0;         ///< the context of the batch and GPU searches
  std::uint64_t batch = 1;       ///< the batch of the context and GPU searches
  std::vector<GpuDeployment> tried;  ///< the GPU search's deployments, in the order tried
  std::vector<CacheLimits> caches;
};

/// Runs the three searches for each cache dtype of `request`, on `gpus` (the GPU search uses
/// copies of the first card). Throws Error as make_plan does for invalid settings.
KVPLAN_API Limits find_limits(const ModelSpec& model, const std::vector<GpuSpec>& gpus, const LimitsRequest& request);

/// The deployments the GPU search tries, fewest GPUs first (at equal count, fewer stages first):
/// tp 1, 2, 4, 8 x pp 1 (to max_pp when `has_pipeline`).
KVPLAN_API std::vector<GpuDeployment> gpu_search_order(bool has_pipeline, std::uint32_t max_pp);

}  // namespace kvplan
