// kvplan max is exact under every engine profile: over many catalog models, two cards and two
// batches, each answer fits when planned afresh by make_plan, and one more token or sequence does
// not (unless a cap or the search limit bound it); no deployment tried before the fewest GPUs fits.

#include <catch2/catch.hpp>

#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "kvplan/search.h"

using namespace kvplan;

namespace {

/// The row of `ctx` x `batch` with `cache` on `gpus`, planned afresh; nullopt when the engine
/// refuses the settings outright (a size past 64 bits, ...).
std::optional<Row> row_at(const PlanRequest& base, const ModelSpec& model, const std::vector<GpuSpec>& gpus,
                          std::uint64_t ctx, std::uint64_t batch, const CacheDtypes& cache, bool deployment = false) {
  PlanRequest request = base;
  request.contexts = {ctx};
  request.batch = batch;
  request.batch_given = true;
  request.caches = {cache};
  try {
    return make_plan(model, gpus, request).rows.front();
  } catch (const Error& error) {
    // A deployment the engine does not model (recurrent state split across ranks) counts as not
    // fitting, as the GPU search lists it; for one GPU it is the search's own error.
    if (error.code() == ExitCode::unsupported_architecture && !deployment) throw;
    return std::nullopt;
  }
}

bool fits_at(const PlanRequest& base, const ModelSpec& model, const std::vector<GpuSpec>& gpus, std::uint64_t ctx,
             std::uint64_t batch, const CacheDtypes& cache, bool deployment = false) {
  const std::optional<Row> row = row_at(base, model, gpus, ctx, batch, cache, deployment);
  return row && row->fits;
}

bool capped(SearchBound bound) {
  return bound == SearchBound::trained_context || bound == SearchBound::cap || bound == SearchBound::search_limit;
}

}  // namespace

TEST_CASE("every profile: max ctx, max batch and fewest GPUs are exact", "[max][property][profiles]") {
  const std::string runtime = GENERATE(from_range(runtime_names()));
  const std::size_t index = GENERATE(range(std::size_t{0}, std::size_t{80}, std::size_t{9}));
  const char* card = GENERATE("rtx4090", "h100");
  const std::uint64_t batch = GENERATE(std::uint64_t{1}, std::uint64_t{3});
  const auto& models = builtin_models().models;
  if (index >= models.size()) return;
  const ModelSpec& model = models[index];
  INFO(runtime << " " << model.id << " on " << card << ", batch " << batch);
  const std::vector<GpuSpec> gpus{*builtin_gpus().find(card)};

  LimitsRequest request;
  request.plan.runtime = runtime;
  request.plan.batch = batch;
  request.plan.batch_given = true;
  request.plan.contexts = {4096};
  if (runtime == "generic") {
    const Dtype& fp8 = parse_kv_dtype("fp8", *model.weight_dtype);
    const Dtype& q4 = parse_kv_dtype("int4", *model.weight_dtype);
    request.plan.caches = {{&fp8, &fp8}, {&q4, &q4}};
  }
  Limits limits;
  try {
    limits = find_limits(model, gpus, request);
  } catch (const Error&) {
    return;  // the engine does not model this one (said with exit 3) or refuses the settings
  }
  PlanRequest base = request.plan;
  base.contexts.clear();
  for (const CacheLimits& each : limits.caches) {
    INFO("cache " << each.cache.label());
    const CacheDtypes& cache = each.cache;
    if (each.max_ctx) {
      CHECK(fits_at(base, model, gpus, *each.max_ctx, limits.batch, cache));
      if (!capped(each.ctx_stop.bound)) CHECK_FALSE(fits_at(base, model, gpus, *each.max_ctx + 1, limits.batch, cache));
      else CHECK(*each.max_ctx == limits.ctx_cap);
      CHECK(each.max_ctx <= limits.ctx_cap);
    } else {
      CHECK_FALSE(fits_at(base, model, gpus, 1, limits.batch, cache));
    }
    if (each.uncapped_max_ctx && each.uncapped_stop.bound != SearchBound::search_limit)
      CHECK_FALSE(fits_at(base, model, gpus, *each.uncapped_max_ctx + 1, limits.batch, cache));
    if (each.max_batch) {
      CHECK(fits_at(base, model, gpus, limits.ctx, *each.max_batch, cache));
      if (each.batch_stop.bound != SearchBound::search_limit)
        CHECK_FALSE(fits_at(base, model, gpus, limits.ctx, *each.max_batch + 1, cache));
    } else {
      CHECK_FALSE(fits_at(base, model, gpus, limits.ctx, 1, cache));
    }
    // Fewest GPUs: the answer fits, and every deployment tried before it does not (or cannot be
    // planned, as the skipped list says).
    for (const GpuDeployment& d : limits.tried) {
      const std::vector<GpuSpec> deployment(d.gpus, gpus.front());
      PlanRequest at = base;
      if (d.pp > 1) {
        if (runtime == "sglang") at.engine_options.push_back({"pp-size", std::to_string(d.pp), "--pp-size"});
        else if (runtime == "trtllm") at.engine_options.push_back({"pp_size", std::to_string(d.pp), "--pp_size"});
        else if (runtime == "vllm")
          at.engine_options.push_back({"pipeline-parallel-size", std::to_string(d.pp), "--pipeline-parallel-size"});
      }
      const bool answer = each.min_gpus && d.gpus == each.min_gpus->gpus && d.pp == each.min_gpus->pp;
      if (answer) {
        CHECK(fits_at(at, model, deployment, limits.ctx, limits.batch, cache, true));
        break;
      }
      CHECK_FALSE(fits_at(at, model, deployment, limits.ctx, limits.batch, cache, true));
    }
  }
}
