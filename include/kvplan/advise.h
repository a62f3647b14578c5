#pragma once
/// The advisor: which cards, how many and at which dtypes run a model at a context, cheapest
/// first. A search over deployments (card x count x pipeline stages x weight dtype x cache dtype)
/// in which every candidate is one make_plan: the engine's own rules and the core's one verdict,
/// never a second formula.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvplan/export.h"
#include "kvplan/gpu.h"
#include "kvplan/model_spec.h"
#include "kvplan/plan.h"

namespace kvplan {

/// How much accuracy the user trades for memory. Each level allows the ones before it.
enum class Quality {
  lossless,  ///< the model's own weights and a cache at its own float type
  fp8,       ///< + fp8 (E4M3) weights and cache
  int8,      ///< + int8 weights, int8 and q8_0 caches
  int4,      ///< + int4 weights, int4, q4_0 and nvfp4 caches
};
/// "lossless", "fp8", "int8", "int4"; an Error naming `setting` otherwise.
KVPLAN_API Quality parse_quality(std::string_view text, std::string_view setting = "quality");
KVPLAN_API std::string_view to_string(Quality quality);

/// A card the advisor may choose, with its price per GPU-hour.
struct PricedGpu {
  GpuSpec gpu;
  std::optional<double> usd_per_hour;  ///< nullopt: no price known; ranked after every priced card
  std::string price_date;              ///< "2026-03-10" from the catalog's source; "given" for one's own
};

/// The catalog's prices with their dates, read from each card's price_source.
KVPLAN_API PricedGpu priced(const GpuSpec& gpu);

/// A price list of one's own: JSON ({"rtx4090": 0.44, ...} or [{"id": ..., "price": ...}]) or CSV
/// lines "id,price" (a header line "id,price" allowed). Prices are USD per GPU-hour, 0 to 10,000.
/// Ids are not resolved here. Errors name `origin` and the line or key.
struct GivenPrice {
  std::string id;
  double usd_per_hour = 0;
};
KVPLAN_API std::vector<GivenPrice> parse_price_list(std::string_view text, std::string_view origin);

struct AdviseRequest {
  /// The question's settings: runtime, one context, batch, engine options, utilization. Its
  /// weight dtype and caches must be unset: the advisor searches them.
  PlanRequest base;
  Quality quality = Quality::lossless;
  std::vector<PricedGpu> candidates;  ///< one of each card
  std::uint32_t max_gpus = 8;         ///< counts tried: 1, 2, 4, 8, ... up to this
  std::size_t top = 5;                ///< fitting configurations kept
};

/// One deployment at one pair of dtypes, priced by make_plan.
struct AdviseConfig {
  std::size_t candidate = 0;  ///< index into AdviseRequest::candidates
  std::uint32_t count = 1;    ///< GPUs
  std::optional<double> usd_per_hour;  ///< count x the card's price
  Row row;                    ///< the plan's row: dtypes, tp, pp, totals, verdict, findings
};

struct Advice {
  /// The `top` cheapest configurations that fit (price, then headroom, largest first).
  std::vector<AdviseConfig> fitting;
  /// For each deployment (card, count, tp, pp) cheaper than the first fitting one (or every one
  /// when none fits), its allowed configuration with the most headroom: why it does not fit.
  std::vector<AdviseConfig> cheaper;
  std::vector<QualityNote> notes;  ///< of the fitting rows (indices into `fitting`)
  std::size_t tried = 0;           ///< configurations priced
  std::size_t fit_count = 0;       ///< of which fit
  /// Configurations the engine does not offer (it refuses the dtype or the split), with one reason
  /// each, distinct reasons only.
  std::size_t not_offered = 0;
  std::vector<std::string> not_offered_reasons;
  /// Pipeline splits kvplan's engine profile does not model for this model (SGLang's Mamba pool
  /// under --pp-size, a speculative draft across stages): left out, not priced, with one reason each.
  std::size_t not_modelled = 0;
  std::vector<std::string> not_modelled_reasons;
};

/// Searches every candidate x count (x pipeline stages where the engine has them) x weight dtype x
/// cache dtype the quality level allows. Throws what make_plan throws for the base settings
/// themselves (an unknown runtime, an unsupported architecture).
KVPLAN_API Advice advise(const ModelSpec& model, const AdviseRequest& request);

}  // namespace kvplan
