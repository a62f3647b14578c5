#pragma once
/// The planning core: one request, its rows priced by one engine profile, and one verdict per row.
///
///   total = weights + max(kv, kv pool) + overhead        (per GPU, the engine's way)
///   fits  = total <= capacity, kv <= kv pool, and no finding that stops the engine
///
/// Every engine (generic, llama.cpp, vLLM, ...) prices rows its own way; the loop over rows, the
/// searches (largest context) and the verdict are written once, here. Pure: no I/O, no globals.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvplan/dtype.h"
#include "kvplan/export.h"
#include "kvplan/gpu.h"
#include "kvplan/model_spec.h"
#include "kvplan/units.h"

namespace kvplan {

/// The cache element types of one row. K and V may differ (llama.cpp's -ctk / -ctv). Both null in
/// a request: the engine's own default ("auto"), resolved by the profile in the row.
struct CacheDtypes {
  const Dtype* k = nullptr;
  const Dtype* v = nullptr;

  /// "fp16", or "q8_0/q4_0" when K and V differ; "auto" when unresolved.
  KVPLAN_API std::string label() const;
};

/// How the request's settings are called in messages: the C API's field names by default, the
/// command line's flag names when the CLI builds the request.
struct SettingNames {
  std::string_view ctx = "ctx";
  std::string_view batch = "batch";
  std::string_view overhead = "overhead";
  std::string_view utilization = "utilization";
  std::string_view mtp_layers = "mtp_layers";
  std::string_view kv_dtype = "kv_dtypes";
  std::string_view weight_dtype = "weight_dtype";
  std::string_view weights = "weights";
  std::string_view params = "params";
  std::string_view runtime = "runtime";
  std::string_view gpu = "gpu";
  std::string_view text_only = "text_only";
};

/// One of an engine's own settings as given: the engine's long flag name without dashes
/// ("max-num-seqs"), its value ("" for a switch) and how messages call it ("--max-num-seqs").
struct EngineOption {
  std::string name;
  std::string value;
  std::string shown_as;
};

/// The whole question: every (context, cache dtype) pair of one model on one card, under one engine.
struct PlanRequest {
  std::string runtime = "generic";       ///< the engine profile: generic, llama.cpp, vllm, ollama
  std::vector<std::uint64_t> contexts;   ///< tokens per sequence; empty: the profile's default
  /// The contexts are the engine's total for all sequences (llama.cpp's -c), not per sequence.
  bool contexts_are_totals = false;
  /// The engine picks the context itself: the longest whose cache fits its memory, capped at the
  /// model's (vLLM 0.14+'s max_model_len -1). `contexts` stays empty; an engine that takes a length
  /// only is refused.
  bool context_auto_fit = false;
  std::vector<CacheDtypes> caches;       ///< empty: the profile's default; {null, null}: "auto"
  std::uint64_t batch = 1;               ///< concurrent sequences
  bool batch_given = false;              ///< the user set the batch (llama.cpp: else one slot, said so)
  const Dtype* weight_dtype = nullptr;   ///< nullptr: the checkpoint's own
  std::optional<std::uint64_t> overhead_bytes;          ///< nullopt: the profile's own figure
  std::optional<std::uint32_t> utilization_millionths;  ///< nullopt: the profile's default
  /// MTP layers counted as cached (speculative decoding): "" none, "N", or "all" the model has.
  std::string mtp_layers;
  std::vector<EngineOption> engine_options;
  /// The speculative-decoding draft checkpoint an engine option names (vLLM's speculative_config
  /// "model" for EAGLE-3), as the front end loaded it; null when none was loaded. The engine prices
  /// it beside the model, or refuses (exit 3) when it needs one and none is here.
  std::shared_ptr<const DraftModel> draft_model;
  SettingNames names;
  /// An absolute memory limit per GPU (a Kubernetes slice, a share agreed with others): what the
  /// engine takes must stay within it. nullopt: none.
  std::optional<std::uint64_t> budget_bytes;
  /// Memory other processes already hold on each GPU (co-tenants). nullopt: none.
  std::optional<std::uint64_t> used_bytes;
  /// Or the memory free on each GPU before the engine starts: the card's memory less it is used.
  std::optional<std::uint64_t> free_bytes;
  /// Only the rows and their verdicts: no largest-context search (Plan::context_limits stays
  /// empty) and no row at fp8 weights for a row that does not fit (WayOut::with_fp8_weights unset;
  /// ways_out still lists every such row). For a caller that runs the searches it shows itself
  /// (kvplan fit asks find_limits, over the whole catalog).
  bool rows_only = false;
  /// false: the rows' engine sections (Row::detail) without their rule sentences, the rows' own
  /// fields and findings unchanged. For a caller that shows no section: kvplan fit prices the
  /// whole catalog, and formatting the sentences was a tenth of its work under llama.cpp.
  bool section_words = true;
};

/// A fact about a row that a user (or CI) must know: a stable code and a sentence. A blocking
/// finding means the row cannot run as asked, whatever the memory says.
struct Finding {
  std::string code;  ///< beyond_trained_context, engine_refuses_start, fp8_not_native_on_gpu, estimate, ...
  std::string text;
  bool blocking = false;
};

enum class Verdict {
  fits,
  does_not_fit,    ///< not enough memory, or a blocking finding (more sequences than the engine runs)
  engine_refuses,  ///< the engine would refuse to start with these settings
};
KVPLAN_API std::string_view to_string(Verdict verdict);  ///< "fits", "does_not_fit", "engine_refuses"

/// How many tokens one group of alike layers holds per sequence and what that costs.
struct KvBreakdownItem {
  LayerKind kind = LayerKind::full;
  std::uint64_t window = 0;          ///< sliding window or chunk size; 0 for other kinds
  std::uint32_t layers = 0;
  std::uint64_t tokens_held = 0;     ///< per sequence; 0 for linear and shared layers
  std::uint64_t bytes = 0;           ///< for all sequences of the row
  std::uint32_t indexer_layers = 0;  ///< layers of the group that keep a DSA indexer key too
  std::uint64_t indexer_bytes = 0;   ///< the indexer keys' part of `bytes`
  bool mtp = false;                  ///< MTP layers counted as cached (--mtp-layers)
  /// A compressed cache (DeepSeek-V4's CSA or HCA under llama.cpp): one entry per this many tokens,
  /// tokens_held counting entries, `bytes` including its compressor state; 0 for any other item.
  std::uint32_t compress_ratio = 0;
};

/// The figures every engine has in some form, so a dashboard can plot one field across engines.
struct EngineFigures {
  std::optional<std::uint64_t> available_kv_bytes;  ///< per GPU, what the engine's deductions leave the cache
  std::optional<std::uint64_t> kv_cache_tokens;     ///< the engine's own capacity figure, in tokens
  std::optional<double> max_concurrency;            ///< sequences of the row's context that fit at once
  bool starts = true;                               ///< the engine would start with these settings
};

/// One GPU of the deployment in a row: what the engine puts on it.
struct GpuShare {
  std::uint32_t rank = 0;   ///< tensor-parallel rank, or the device's index in a layer split
  std::uint32_t stage = 0;  ///< pipeline stage
  std::string gpu;          ///< the card's catalog id
  std::uint64_t weights_bytes = 0;
  std::uint64_t kv_bytes = 0;
  std::uint64_t other_bytes = 0;     ///< the engine's own memory on this GPU (overhead)
  std::uint64_t capacity_bytes = 0;  ///< this GPU's budget
  // Settled by the core.
  std::uint64_t total_bytes = 0;
  std::int64_t headroom_bytes = 0;
  bool fits = false;
};

/// A decode-speed upper bound from the card's memory bandwidth: a decode step reads the weights
/// (an MoE's active ones) and every sequence's cache once, so it takes at least bytes / bandwidth.
/// A roofline bound, not a prediction: compute, kernels and communication only make it slower.
struct DecodeBound {
  std::uint64_t weights_bytes_read = 0;  ///< per step, on the slowest path (the stages' fullest GPUs)
  std::uint64_t kv_bytes_read = 0;       ///< per step, every sequence's cache at the row's context
  double bandwidth_gbps = 0;             ///< the card's, GB/s (10^9 bytes)
  double tokens_per_s_per_sequence = 0;  ///< each sequence of the batch: 1 / step time
  double tokens_per_s_batch = 0;         ///< all sequences: batch / step time
  std::string rule;                      ///< how it was computed, in words
};

/// An engine's own figures for one row, for its report section (vLLM's blocks, llama.cpp's
/// buffers). Defined by each engine profile; opaque here.
struct EngineDetail;

/// One priced row, per GPU.
/// The system RAM a row uses, when the user declared some (llama.cpp and Ollama keep the layers
/// they do not put on the GPUs there). Settled by the core beside the verdict.
struct RowRam {
  std::uint64_t host_bytes = 0;  ///< what the engine keeps in system RAM (weights, cache, buffers)
  std::uint64_t ram_bytes = 0;   ///< declared (--ram)
  std::uint64_t read_bytes = 0;  ///< what a decode step reads from it (the layers kept there)
};

struct Row {
  std::uint64_t ctx = 0;    ///< tokens each sequence holds (as the engine settles it)
  std::uint64_t batch = 1;  ///< concurrent sequences
  CacheDtypes cache;        ///< resolved
  const Dtype* weight_dtype = nullptr;  ///< resolved: the override or the model's own

  std::uint64_t kv_bytes_per_token = 0;  ///< K+V bytes one token adds in every token-holding layer
  std::uint64_t kv_bytes = 0;            ///< the cache the row's sequences need, state included
  std::uint64_t state_bytes = 0;         ///< fixed recurrent state (part of kv_bytes)
  std::vector<KvBreakdownItem> breakdown;
  /// A cache pool the engine allocates whole, whatever the row needs (vLLM's --kv-cache-memory).
  std::optional<std::uint64_t> kv_pool_bytes;
  std::uint64_t weights_bytes = 0;
  std::string weights_rule;              ///< how weights_bytes was obtained, in words
  std::uint64_t overhead_bytes = 0;      ///< the engine's own memory besides weights and cache
  std::uint64_t capacity_bytes = 0;      ///< what the budget allows, per GPU

  // Settled by the core (decide), never by a profile.
  std::uint64_t total_bytes = 0;         ///< weights + max(kv, pool) + overhead
  std::int64_t headroom_bytes = 0;       ///< capacity - total; negative when it does not fit
  Verdict verdict = Verdict::does_not_fit;
  bool fits = false;                     ///< verdict == fits

  EngineFigures engine;
  std::vector<Finding> findings;
  std::shared_ptr<const EngineDetail> detail;

  /// The deployment: tensor-parallel ranks x pipeline stages, and every GPU's share. The row's
  /// own figures above are its worst GPU's; it fits only when every GPU does.
  std::uint32_t tp = 1;
  std::uint32_t pp = 1;
  std::vector<GpuShare> per_gpu;      ///< empty from a profile: one GPU, the row's figures
  std::vector<std::string> assumptions;  ///< what the engine's rules take for granted here

  /// Set by the core from the card's bandwidth; nullopt when the catalog has none for it.
  std::optional<DecodeBound> decode_bound;
  /// Set by the core when system RAM was declared; nullopt: none counted (the row is on the GPUs).
  std::optional<RowRam> host;
};

/// The largest context that fits with one cache dtype, everything else as requested.
struct ContextLimit {
  CacheDtypes cache;
  std::optional<std::uint64_t> max_ctx;  ///< nullopt: not even one token fits
  bool reached_search_limit = false;     ///< max_ctx is the search limit: more may fit
};

/// For a row that does not fit: the same row with fp8 weights (when its weights are wider and
/// the engine can load them so).
struct WayOut {
  std::size_t row_index = 0;
  std::optional<Row> with_fp8_weights;
};

/// What the report says about the model's fixed-size and side caches, computed once per plan.
struct CacheFacts {
  std::uint32_t state_layers = 0;           ///< layers with recurrent state
  std::vector<StateTensor> state_tensors;   ///< of the first such layer
  std::uint64_t state_bytes_per_sequence = 0;  ///< all state layers, one sequence
  std::uint32_t indexer_layers = 0;         ///< layers with a DSA indexer key
  std::uint32_t indexer_head_dim = 0;
  std::uint32_t vllm_indexer_bytes_per_token = 0;  ///< fp8 values + an fp32 scale per 128 values
  std::uint32_t indexer_compress_ratio = 0;  ///< DeepSeek-V4: one indexer key per this many tokens (0: per token)
  std::uint32_t shared_layers = 0;          ///< layers reading an earlier layer's cache
  const LayerSpec* mtp_like = nullptr;      ///< the layer an MTP layer is priced as
};

/// The resolved settings every row shares, as the report prints them.
struct PlanSettings {
  std::uint64_t batch = 1;
  std::uint64_t overhead_bytes = 0;
  std::uint32_t utilization_millionths = 1'000'000;
  std::uint32_t mtp_layers = 0;
  std::string budget_rule;    ///< "23.99 GiB = memory x utilization 100%; fits when ..."
  std::string overhead_rule;  ///< where the overhead comes from
  std::vector<std::string> notes;  ///< plan-wide facts (which card an ambiguous name meant, ...)
};

/// A caution about the accuracy of a row's cache dtype (the seed articles' advice): not a verdict,
/// and never a reason a row does not fit.
struct QualityNote {
  std::string code;  ///< fp8_e5m2_cache, fp8_scales, int4_cache_accuracy, quantized_cache_recall
  std::string text;
  std::vector<std::size_t> rows;  ///< indices of the rows it applies to
};

/// The quality notes that apply to `rows`, each once, in a fixed order (e5m2, scales, 4-bit, recall).
KVPLAN_API std::vector<QualityNote> find_quality_notes(const std::vector<Row>& rows);

class Profile;

/// The most rows (contexts x cache dtypes) one plan holds; more is an Error (exit 2).
inline constexpr std::size_t kMaxPlanRows = 4096;

struct Plan {
  std::string runtime;                       ///< the profile's name
  PlanSettings settings;
  std::vector<Row> rows;                     ///< contexts outer, cache dtypes inner, in request order
  std::vector<ContextLimit> context_limits;  ///< one per cache dtype
  std::vector<WayOut> ways_out;              ///< one per row that does not fit
  CacheFacts facts;
  std::vector<QualityNote> quality_notes;    ///< cautions about the rows' cache dtypes
  /// The profile that priced the rows; it also writes its engine's section of the report.
  std::shared_ptr<const Profile> profile;

  /// True when every row fits (what --check tests).
  bool all_fit() const { return ways_out.empty(); }
};

/// Plans `request` for `model` on `gpus` (one or more cards; the engine decides how it uses them).
/// The plan refers to `model`: keep it alive while the plan is
/// used (its profile writes the engine's report section from it). Throws Error (exit 2) for settings that are invalid or
/// that the engine refuses outright, and an unsupported-architecture Error (exit 3) for what the
/// engine's rules do not cover.
KVPLAN_API Plan make_plan(const ModelSpec& model, const std::vector<GpuSpec>& gpus, const PlanRequest& request);
/// One GPU.
KVPLAN_API Plan make_plan(const ModelSpec& model, const GpuSpec& gpu, const PlanRequest& request);

/// The engine profiles kvplan has, by name ("generic", "llama.cpp", "vllm", "ollama").
KVPLAN_API std::vector<std::string> runtime_names();

/// The largest n in [1, limit] for which `holds(n)`, found by bisection; nullopt when not even 1
/// holds. `holds` must be monotone: true up to some n, false after it.
KVPLAN_API std::optional<std::uint64_t> largest_holding(std::uint64_t limit,
                                                        const std::function<bool(std::uint64_t)>& holds);

// --- The generic profile's row, for callers that want one row without a request ----------------

/// One question to the generic profile: this context and batch, these dtypes, this card.
struct RowSettings {
  std::uint64_t ctx = 0;
  std::uint64_t batch = 1;
  CacheDtypes cache;
  const Dtype* weight_dtype = nullptr;  ///< nullptr: the model's own
  std::uint64_t overhead_bytes = 2 * GiB;
  std::uint32_t utilization_millionths = 1'000'000;
  std::uint64_t gpu_memory_bytes = 0;
  std::uint32_t mtp_layers = 0;  ///< MTP layers counted as cached, each a copy of mtp_cache_layer(model)
};

/// Prices one row with the generic profile, verdict included. Throws Error on overflow.
KVPLAN_API Row plan_row(const ModelSpec& model, const RowSettings& settings);

/// The weight bytes of `model` stored as `dtype` (nullptr: its own), and the rule used. Throws an
/// unsupported-architecture Error when neither the checkpoint's size nor its parameters are known.
struct WeightsEstimate {
  std::uint64_t bytes = 0;
  std::string rule;
};
KVPLAN_API WeightsEstimate estimate_weights(const ModelSpec& model, const Dtype* dtype);

}  // namespace kvplan
