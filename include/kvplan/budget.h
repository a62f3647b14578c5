#pragma once
/// The budget engine: a pure function from (model spec, settings) to rows of exact byte counts.
/// No I/O, no printing, no globals: loaders feed it, formatters print what it returns.
///
///   total = weights + kv + overhead;   fits when total <= floor(gpu memory x utilization)

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kvplan/dtype.h"
#include "kvplan/model_spec.h"
#include "kvplan/units.h"

namespace kvplan {

/// The cache element types of one row. K and V may differ (llama.cpp's -ctk / -ctv).
struct CacheDtypes {
  const Dtype* k = nullptr;
  const Dtype* v = nullptr;

  /// "fp16", or "q8_0/q4_0" when K and V differ.
  std::string label() const;
};

/// One question: this context, this many sequences, these cache and weight types, this card.
struct RowSettings {
  std::uint64_t ctx = 0;    ///< tokens each sequence holds
  std::uint64_t batch = 1;  ///< concurrent sequences
  CacheDtypes cache;
  const Dtype* weight_dtype = nullptr;  ///< nullptr: the model's own
  std::uint64_t overhead_bytes = 2 * GiB;
  std::uint32_t utilization_millionths = 1'000'000;
  std::uint64_t gpu_memory_bytes = 0;
  /// MTP layers counted as cached layers (speculative decoding, --mtp-layers): each a copy of
  /// mtp_cache_layer(model). 0: not cached, as engines do without speculative decoding.
  std::uint32_t mtp_layers = 0;
};

/// How many tokens one group of alike layers holds per sequence and what that costs.
struct KvBreakdownItem {
  LayerKind kind = LayerKind::full;
  std::uint64_t window = 0;       ///< sliding window or chunk size; 0 for other kinds
  std::uint32_t layers = 0;
  std::uint64_t tokens_held = 0;  ///< per sequence; 0 for linear and shared layers
  std::uint64_t bytes = 0;        ///< for all sequences of the row
  std::uint32_t indexer_layers = 0;  ///< layers of the group that keep a DSA indexer key too
  std::uint64_t indexer_bytes = 0;   ///< the indexer keys' part of `bytes`
  bool mtp = false;                  ///< MTP layers counted as cached (RowSettings::mtp_layers)
};

struct Row {
  RowSettings settings;
  const Dtype* weight_dtype = nullptr;   ///< resolved: the override or the model's own
  std::uint64_t kv_bytes_per_token = 0;  ///< K+V bytes one token adds in every token-holding layer
  std::uint64_t kv_bytes = 0;            ///< all cache bytes of the row, state included
  std::uint64_t state_bytes = 0;         ///< fixed recurrent state (part of kv_bytes)
  std::uint64_t weights_bytes = 0;
  std::string weights_rule;              ///< how weights_bytes was obtained, in words
  std::uint64_t total_bytes = 0;
  std::uint64_t capacity_bytes = 0;      ///< floor(gpu memory x utilization)
  std::int64_t headroom_bytes = 0;       ///< capacity - total; negative when it does not fit
  bool fits = false;
  std::vector<KvBreakdownItem> breakdown;
};

/// The weight bytes of `model` stored as `dtype` (nullptr: its own), and the rule used.
struct WeightsEstimate {
  std::uint64_t bytes = 0;
  std::string rule;
};
WeightsEstimate estimate_weights(const ModelSpec& model, const Dtype* dtype);

/// Prices one row. Throws Error when a product overflows 64 bits.
Row plan_row(const ModelSpec& model, const RowSettings& settings);

/// The largest n in [1, limit] for which `holds(n)`, found by bisection; nullopt when not even 1
/// holds. `holds` must be monotone: true up to some n, false after it (memory never shrinks as a
/// context grows), which every "largest context that fits" search kvplan does relies on.
std::optional<std::uint64_t> largest_holding(std::uint64_t limit, const std::function<bool(std::uint64_t)>& holds);

/// The largest context (tokens per sequence, at most `limit`) for which `settings` still fits,
/// or nullopt when not even one token fits.
std::optional<std::uint64_t> max_fitting_ctx(const ModelSpec& model, RowSettings settings, std::uint64_t limit);

/// The whole question a user asks: every (ctx, cache dtype) pair on one card.
struct PlanRequest {
  std::vector<std::uint64_t> contexts;
  std::vector<CacheDtypes> caches;
  std::uint64_t batch = 1;
  const Dtype* weight_dtype = nullptr;
  std::uint64_t overhead_bytes = 2 * GiB;
  std::uint32_t utilization_millionths = 1'000'000;
  std::uint64_t gpu_memory_bytes = 0;
  std::uint32_t mtp_layers = 0;  ///< see RowSettings::mtp_layers
};

/// The largest context that fits with one cache dtype, everything else as requested.
struct ContextLimit {
  CacheDtypes cache;
  std::optional<std::uint64_t> max_ctx;  ///< nullopt: not even one token fits
  bool reached_search_limit = false;     ///< max_ctx is the search limit: more may fit
};

/// For a row that does not fit: the same row with fp8 weights (when its weights are wider).
struct WayOut {
  std::size_t row_index = 0;
  std::optional<Row> with_fp8_weights;
};

struct Plan {
  std::vector<Row> rows;                     ///< contexts outer, cache dtypes inner, in request order
  std::vector<ContextLimit> context_limits;  ///< one per requested cache dtype
  std::vector<WayOut> ways_out;              ///< one per row that does not fit
};

/// The search for context limits stops at the model's trained context or the largest requested
/// context, whichever is larger.
Plan make_plan(const ModelSpec& model, const PlanRequest& request);

}  // namespace kvplan
