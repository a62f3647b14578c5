// Issue #18: under Ollama E4 memory can shrink as the batch or the context grows, because Ollama
// lowers its automatic batch (-b/-ub) as its prediction grows, and llama.cpp's compute buffer and
// sliding-window streams shrink with it. The searches must never answer a batch or a context whose
// smaller values do not all fit (a false "fits" for the user who reads "max batch 212" and runs 180).

#include <algorithm>
#include <vector>

#include <catch2/catch.hpp>

#include "engines/core/profile.h"
#include "engines/ollama/e4_choices.h"
#include "engines/ollama/engine.h"
#include "engines/ollama/rules.h"
#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "kvplan/plan.h"
#include "kvplan/search.h"
#include "kvplan/units.h"
#include "loaders/ollama_tags.h"

using namespace kvplan;

namespace {

PlanRequest shrink_request(std::uint64_t ctx, std::uint64_t batch, std::optional<std::uint64_t> budget) {
  PlanRequest request;
  request.runtime = "ollama";
  request.contexts = {ctx};
  request.batch = batch;
  request.batch_given = true;
  request.budget_bytes = budget;
  return request;
}

Row shrink_row_at(const ModelSpec& model, const std::vector<GpuSpec>& gpus, std::uint64_t ctx, std::uint64_t batch,
           std::optional<std::uint64_t> budget) {
  PlanRequest request = shrink_request(ctx, batch, budget);
  request.rows_only = true;
  return make_plan(model, gpus, request).rows.at(0);
}

/// find_limits' largest context and batch for `plan` (no GPU search, no uncapped context).
Limits shrink_limits(const ModelSpec& model, const std::vector<GpuSpec>& gpus, const PlanRequest& plan) {
  LimitsRequest request;
  request.plan = plan;
  request.search_gpus = false;
  request.search_uncapped_ctx = false;
  return find_limits(model, gpus, request);
}

std::uint32_t shrink_num_batch(const Row& row) { return ollama_result(row)->num_batch; }

const ModelSpec& shrink_gpt_oss() { return *builtin_models().find("gpt-oss-20b"); }
std::vector<GpuSpec> shrink_a100() { return {*builtin_gpus().find("a100-80gb")}; }

}  // namespace

TEST_CASE("ollama shrink: E4 lowers its batch at 187 sequences and llama.cpp allocates less", "[ollama][shrink]") {
  // gpt-oss-20b (catalog, 13,761,264,768 B of weights; 24 layers, 8 KV heads, n_embd / heads = 64)
  // at num_ctx 4096 on an A100 80GB (85,899,345,920 B free):
  //   available = 85,899,345,920 - 457 MiB (479,199,232) = 85,420,146,688
  //   predicted = 13,761,264,768 + 2 x 24 x 8 x 64 x 2 = 49,152 B per token of n_ctx
  //   -b 2048 needs predicted <= 0.6 x available = 51,252,088,012.8
  //     -> n_ctx <= (51,252,088,012.8 - 13,761,264,768) / 49,152 = 762,752.75
  //   n_ctx = 4096 x 186 = 761,856 keeps 2048; 4096 x 187 = 765,952 gets 1024.
  const Row before = shrink_row_at(shrink_gpt_oss(), shrink_a100(), 4096, 186, std::nullopt);
  const Row after = shrink_row_at(shrink_gpt_oss(), shrink_a100(), 4096, 187, std::nullopt);
  CHECK(shrink_num_batch(before) == 2048);
  CHECK(shrink_num_batch(after) == 1024);
  // The cache (f16, 1024 B per layer per cell for K + V of 8 heads x 64 x 2 B, 12 full + 12 sliding
  // layers, one stream per sequence):
  //   186: 4096 x 186 x 12 x 2048 + pad256(128 + 2048) = 2304 x 186 x 12 x 2048 = 18,723,373,056 + 10,531,897,344
  //   187: 4096 x 187 x 12 x 2048 + pad256(128 + 1024) = 1280 x 187 x 12 x 2048 = 18,824,036,352 + 5,882,511,360
  CHECK(before.kv_bytes == 29'255'270'400u);
  CHECK(after.kv_bytes == 24'706'547'712u);
  CHECK(after.total_bytes < before.total_bytes);  // the engine's own non-monotonicity

  // The profile says so: 187 and, where 0.75 x available = 64,065,110,016 stops -b 1024,
  // (64,065,110,016 - 13,761,264,768) / 49,152 = 1,023,434.6 -> n_ctx 1,023,435 -> parallel 250.
  const std::shared_ptr<const Profile> profile = ollama_engine().make(shrink_gpt_oss(), shrink_a100(), shrink_request(4096, 1, {}));
  RowQuery query;
  query.ctx = 4096;
  query.batch = 1;
  CHECK(profile->shrink_points(query, SearchAxis::batch, 256) == std::vector<std::uint64_t>{187, 250});
  CHECK(shrink_num_batch(shrink_row_at(shrink_gpt_oss(), shrink_a100(), 4096, 249, std::nullopt)) == 1024);
  CHECK(shrink_num_batch(shrink_row_at(shrink_gpt_oss(), shrink_a100(), 4096, 250, std::nullopt)) == 512);
  // Along the context at 186 sequences: n_ctx 762,753 -> num_ctx ceil(762,753 / 186) = 4101.
  query.batch = 186;
  const std::shared_ptr<const Profile> at_186 = ollama_engine().make(shrink_gpt_oss(), shrink_a100(), shrink_request(4096, 186, {}));
  const std::vector<std::uint64_t> ctx_steps = at_186->shrink_points(query, SearchAxis::context, 131072);
  REQUIRE(!ctx_steps.empty());
  CHECK(ctx_steps.front() == 4101);
  CHECK(shrink_num_batch(shrink_row_at(shrink_gpt_oss(), shrink_a100(), 4100, 186, std::nullopt)) == 2048);
  CHECK(shrink_num_batch(shrink_row_at(shrink_gpt_oss(), shrink_a100(), 4101, 186, std::nullopt)) == 1024);
}

TEST_CASE("ollama shrink: the largest batch is one whose every smaller batch fits (issue #18)", "[ollama][shrink]") {
  // With a 40 GiB budget, rows fit to 178 sequences, not from 179 to 186 (-b 2048), and again from
  // 187 to 212 (-b 1024). The batch search answered 212 (bisection probed 128, 256, 192, 224, 208,
  // 216, 212, ...); every batch below the answer must fit.
  const std::uint64_t budget = 40 * GiB;
  CHECK(shrink_row_at(shrink_gpt_oss(), shrink_a100(), 4096, 178, budget).fits);
  CHECK_FALSE(shrink_row_at(shrink_gpt_oss(), shrink_a100(), 4096, 179, budget).fits);
  CHECK_FALSE(shrink_row_at(shrink_gpt_oss(), shrink_a100(), 4096, 186, budget).fits);
  CHECK(shrink_row_at(shrink_gpt_oss(), shrink_a100(), 4096, 187, budget).fits);
  CHECK(shrink_row_at(shrink_gpt_oss(), shrink_a100(), 4096, 212, budget).fits);
  CHECK_FALSE(shrink_row_at(shrink_gpt_oss(), shrink_a100(), 4096, 213, budget).fits);

  const Limits limits = shrink_limits(shrink_gpt_oss(), shrink_a100(), shrink_request(4096, 1, budget));
  REQUIRE(limits.caches.size() == 1);
  const CacheLimits& found = limits.caches.front();
  REQUIRE(found.max_batch);
  CHECK(*found.max_batch == 178);
  CHECK(found.batch_stop.bound == SearchBound::memory);
  CHECK(found.batch_stop.code == "over_budget");
  REQUIRE(found.max_batch_row);
  CHECK(found.max_batch_row->batch == 178);
  for (std::uint64_t batch = 1; batch <= *found.max_batch; ++batch) {
    INFO("batch " << batch);
    REQUIRE(shrink_row_at(shrink_gpt_oss(), shrink_a100(), 4096, batch, budget).fits);
  }
}

TEST_CASE("ollama shrink: the largest context is one whose every shorter context fits", "[ollama][shrink]") {
  // 186 sequences with a 40 GiB budget: num_ctx 4096 does not fit (-b 2048: 41.06 GiB), 4101 does
  // (-b 1024), so a search that skips the step would answer past a gap. Every context up to the
  // answer must fit and the next must not.
  const std::uint64_t budget = 40 * GiB;
  CHECK_FALSE(shrink_row_at(shrink_gpt_oss(), shrink_a100(), 4100, 186, budget).fits);
  CHECK(shrink_row_at(shrink_gpt_oss(), shrink_a100(), 4101, 186, budget).fits);
  PlanRequest request = shrink_request(1024, 186, budget);
  const Plan plan = make_plan(shrink_gpt_oss(), shrink_a100(), request);
  REQUIRE(plan.context_limits.size() == 1);
  REQUIRE(plan.context_limits.front().max_ctx);
  const std::uint64_t answer = *plan.context_limits.front().max_ctx;
  CHECK(answer < 4096);
  CHECK(shrink_row_at(shrink_gpt_oss(), shrink_a100(), answer, 186, budget).fits);
  CHECK_FALSE(shrink_row_at(shrink_gpt_oss(), shrink_a100(), answer + 1, 186, budget).fits);
  for (std::uint64_t ctx = 1; ctx <= answer; ctx += 97) REQUIRE(shrink_row_at(shrink_gpt_oss(), shrink_a100(), ctx, 186, budget).fits);

  LimitsRequest limits_request;
  limits_request.plan = request;
  limits_request.search_gpus = false;
  const Limits limits = find_limits(shrink_gpt_oss(), shrink_a100(), limits_request);
  REQUIRE(limits.caches.front().max_ctx);
  CHECK(*limits.caches.front().max_ctx == answer);
}

TEST_CASE("ollama shrink: E3 on two GPUs spreads at 25 sequences, and with a budget the batch stops before the gap",
          "[ollama][shrink]") {
  // llama3.1:8b (Q4_K_M blob) at num_ctx 4096 on two RTX 4090s under Ollama v0.20.0 (E3): buildLayout
  // keeps every layer on one GPU to 24 sequences (23.84 GiB there), and uses both from 25 (16.43 GiB
  // on the fullest). With --budget 20GiB, 20 to 24 do not fit and 25 does again: the largest
  // batch is 19 (it answered 31 before the profile named the step).
  const ModelSpec model = load_ollama_tag("llama3.1:8b", builtin_models());
  const std::vector<GpuSpec> two(2, *builtin_gpus().find("rtx4090"));
  PlanRequest request = shrink_request(4096, 1, 20 * GiB);
  request.engine_options.push_back({"ollama-version", "0.20.0", "--ollama-version"});
  const std::shared_ptr<const Profile> profile = ollama_engine().make(model, two, request);
  RowQuery query;
  query.ctx = 4096;
  const std::vector<std::uint64_t> steps = profile->shrink_points(query, SearchAxis::batch, 256);
  CHECK(std::find(steps.begin(), steps.end(), 25) != steps.end());
  const Limits limits = shrink_limits(model, two, request);
  REQUIRE(limits.caches.front().max_batch);
  const std::uint64_t answer = *limits.caches.front().max_batch;
  CHECK(answer == 19);
  for (std::uint64_t batch = 1; batch <= answer + 1; ++batch) {
    PlanRequest at = request;
    at.batch = batch;
    at.rows_only = true;
    INFO("batch " << batch);
    CHECK(make_plan(model, two, at).rows.front().fits == (batch <= answer));
  }
}

TEST_CASE("ollama shrink: memory shrinks only where the profile says, over every batch", "[ollama][shrink][property]") {
  // For catalog models and Ollama tags on one and two cards: along the batch (1 to 256, llama.cpp's
  // most sequences), a row takes less than the one before only at a shrink point.
  // Every era: E4 (latest), E3 (0.20.0), E1 (0.5.12); catalog models and Ollama tags.
  const std::vector<std::string> ids = {"gpt-oss-20b", "llama3.1-8b", "gemma3-27b", "qwen3-8b", "llama3.1:8b", "gemma3:12b"};
  const std::vector<std::vector<GpuSpec>> card_sets = {shrink_a100(), {*builtin_gpus().find("rtx4090"), *builtin_gpus().find("rtx4090")}};
  for (const char* version : {"latest", "0.20.0", "0.5.12"})
  for (const std::string& id : ids) {
    const ModelSpec model = id.find(':') != std::string::npos ? load_ollama_tag(id, builtin_models()) : *builtin_models().find(id);
    for (const std::vector<GpuSpec>& gpus : card_sets) {
      for (const std::uint64_t ctx : {std::uint64_t{1024}, std::uint64_t{4096}}) {
        INFO(version << " " << id << " on " << gpus.size() << " x " << gpus.front().id << " ctx " << ctx);
        std::vector<std::uint64_t> steps;
        PlanRequest base = shrink_request(ctx, 1, {});
        base.engine_options.push_back({"ollama-version", version, "--ollama-version"});
        try {
          const std::shared_ptr<const Profile> profile = ollama_engine().make(model, gpus, base);
          RowQuery query;
          query.ctx = ctx;
          steps = profile->shrink_points(query, SearchAxis::batch, 256);
        } catch (const Error&) {
          continue;  // not an architecture the profile prices
        }
        std::optional<Row> previous;
        for (std::uint64_t batch = 1; batch <= 256; batch += batch < 64 ? 1 : 7) {
          PlanRequest at = base;
          at.batch = batch;
          at.rows_only = true;
          const Row row = make_plan(model, gpus, at).rows.at(0);
          if (previous && row.total_bytes < previous->total_bytes) {
            // A step in (the previous batch sampled, this one].
            INFO("batch " << batch << " takes " << row.total_bytes << " after " << previous->total_bytes);
            CHECK(std::any_of(steps.begin(), steps.end(), [&](std::uint64_t s) { return s > previous->batch && s <= batch; }));
          }
          previous = row;
        }
      }
    }
  }
}

TEST_CASE("ollama shrink: E1 on unlike GPUs moves a layer as the context grows, and the search stops before the gap",
          "[ollama][shrink]") {
  // Llama 3.1 70B (the llama3.1:70b-instruct-q4_K_M blob) on an RTX 5090 + RTX 3090 under v0.5.12:
  // EstimateGPULayers keeps both GPUs from the first token, but as the context grows it moves a
  // layer between them, and the fullest GPU then holds less. Rows fit to 12,469 tokens (61,440 B to
  // spare), not at 12,470 (79,872 B short) nor at 13,000, and again at 14,000 (78,428,160 B to
  // spare) to 14,273. The largest context every shorter one of which fits is 12,469; the search
  // answered 14,273 while only a change in the number of GPUs counted as a point.
  const ModelSpec model = load_ollama_tag("llama3.1:70b-instruct-q4_K_M", builtin_models());
  const std::vector<GpuSpec> mixed{*builtin_gpus().find("rtx5090"), *builtin_gpus().find("rtx3090")};
  PlanRequest request = shrink_request(8192, 1, {});
  request.engine_options.push_back({"ollama-version", "0.5.12", "--ollama-version"});
  const auto row_at = [&](std::uint64_t ctx) {
    PlanRequest at = request;
    at.contexts = {ctx};
    at.rows_only = true;
    return make_plan(model, mixed, at).rows.front();
  };
  CHECK(row_at(12469).headroom_bytes == 61440);
  CHECK(row_at(12470).headroom_bytes == -79872);
  CHECK_FALSE(row_at(13000).fits);
  CHECK(row_at(14000).headroom_bytes == 78428160);

  const Limits limits = shrink_limits(model, mixed, request);
  REQUIRE(limits.caches.front().max_ctx);
  CHECK(*limits.caches.front().max_ctx == 12469);

  // Along the context, the fullest GPU takes less than a shorter context only at a point the
  // profile lists.
  const std::shared_ptr<const Profile> profile = ollama_engine().make(model, mixed, request);
  RowQuery query;
  query.ctx = 8192;
  const std::vector<std::uint64_t> points = profile->shrink_points(query, SearchAxis::context, 16384);
  std::optional<Row> previous;
  for (std::uint64_t ctx = 512; ctx <= 16384; ctx += 37) {
    const Row row = row_at(ctx);
    if (previous && row.total_bytes < previous->total_bytes) {
      INFO("ctx " << ctx << " takes " << row.total_bytes << " after " << previous->total_bytes);
      CHECK(std::any_of(points.begin(), points.end(), [&](std::uint64_t p) { return p > ctx - 37 && p <= ctx; }));
    }
    previous = row;
  }
}
