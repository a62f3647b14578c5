#pragma once
/// What runs on a card (`kvplan fit`): every catalog model x the weight formats the engine can load
/// it as x the cache dtypes it offers, each priced by make_plan (the row at the asked context and
/// batch) and find_limits (the largest context, the concurrency), then ranked. This file only
/// chooses what to ask and orders the answers: every figure is the planning core's.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kvplan/advise.h"
#include "kvplan/export.h"
#include "kvplan/gpu.h"
#include "kvplan/model_spec.h"
#include "kvplan/plan.h"
#include "kvplan/search.h"

namespace kvplan {

/// One way to store a model's weights that the engine can load.
struct FitFormat {
  std::string name;    ///< "bf16" (the checkpoint's own dtype), "q4_k_m" (a GGUF quantization)
  std::string kind;    ///< "checkpoint" or "gguf"
  std::string source;  ///< how it is priced: the catalog entry, or the Ollama tag whose blob it is ("qwen3:8b-q8_0")
  Quality quality = Quality::lossless;
};

/// The quality level a stored type belongs to on the advisor's scale: 16 bits or more lossless,
/// fp8 (E4M3 or E5M2) fp8, 8 to 8.5 bits (int8, q8_0) int8, anything narrower int4.
KVPLAN_API Quality quality_of(const Dtype& type);

/// The formats of `model` that `runtime` loads: the checkpoint's own dtype, and for llama.cpp and
/// Ollama the GGUF blobs of the Ollama tags kvplan sizes for it (q4_K_M, q4_K_S, q8_0, f16; gpt-oss
/// its MXFP4 blob). Each with the spec to plan it by.
struct FitVariant {
  FitFormat format;
  ModelSpec spec;
};
KVPLAN_API std::vector<FitVariant> fit_variants(const ModelSpec& model, std::string_view runtime);

struct FitRequest {
  /// The settings every model is planned with: runtime, one context per sequence, batch, engine
  /// options, utilization, budget. No weight dtype and no caches: fit chooses them.
  PlanRequest base;
  Quality quality = Quality::int4;  ///< the least precise level a row may use (int4: any)
  std::string family;               ///< a word the model's id, name, aliases or architecture must hold; empty: any
  std::optional<std::uint64_t> min_params;
  std::optional<std::uint64_t> max_params;
};

/// One model x format x cache dtype, as the core priced it.
struct FitRow {
  std::string model_id;
  std::string model_name;
  std::string architecture;
  std::uint64_t params = 0;
  std::uint64_t active_params = 0;  ///< 0: dense
  std::uint64_t trained_context = 0;
  FitFormat format;
  Quality cache_quality = Quality::lossless;
  Quality quality = Quality::lossless;  ///< the less precise of the format's and the cache's
  /// make_plan's row at the asked context and batch: dtypes, totals, headroom, verdict, findings,
  /// the decode bound.
  Row row;
  /// find_limits at the same settings: the largest context (capped at the trained context) and
  /// what stops it, and the most sequences of the asked context.
  std::optional<std::uint64_t> max_ctx;
  SearchStop ctx_stop;
  std::optional<std::uint64_t> max_batch;
  SearchStop batch_stop;
  /// Empty when the row fits at the asked context and batch; else why not, in one sentence.
  std::string rejected;
};

/// A format x cache the engine does not take (it refuses the dtype or the model), with why.
struct FitRefusal {
  std::string model_id;
  std::string format;
  std::string format_kind;  ///< FitFormat::kind
  std::string cache;  ///< "" when the engine refuses the format whatever the cache
  std::string reason;
};

struct FitResult {
  std::string runtime;
  std::uint64_t ctx = 0;    ///< per sequence
  std::uint64_t batch = 1;  ///< as the searches used it
  PlanSettings settings;    ///< the first model's, for the budget and overhead rules
  std::size_t models = 0;   ///< catalog models evaluated (after the filters)
  std::vector<FitRow> rows;          ///< every evaluated row, in catalog order
  std::vector<FitRefusal> refusals;  ///< what the engine did not take
  std::vector<std::size_t> best;     ///< the best fitting row of each model, ranked (indices into rows)
  std::vector<std::size_t> fitting;  ///< every fitting row, ranked (indices into rows)
};

/// The ranking rule in words, for the report.
KVPLAN_API std::string_view fit_ranking_rule();

/// Evaluates every model of `models` that passes the filters on `gpus`. Throws what make_plan
/// throws for the base settings themselves (an unknown runtime, a flag the engine does not take).
KVPLAN_API FitResult fit_models(const std::vector<ModelSpec>& models, const std::vector<GpuSpec>& gpus,
                                const FitRequest& request);

}  // namespace kvplan
