// Budgets users actually have: an absolute limit (--budget), co-tenants' memory (--used, --free),
// MIG instances in the GPU catalog, and each engine's fraction semantics said in the output.

#include <catch2/catch.hpp>

#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "kvplan/plan.h"
#include "kvplan/search.h"
#include "support/run_binary.h"
#include "support/catalog_entries.h"

using kvplan::testing::catalog_model;
using namespace kvplan;
using kvplan::testing::check_refused;
using kvplan::testing::run_kvplan;

namespace {


PlanRequest fp16_at(std::uint64_t ctx) {
  PlanRequest request;
  request.contexts = {ctx};
  const Dtype& type = parse_kv_dtype("fp16", parse_weight_dtype("bf16"));
  request.caches = {{&type, &type}};
  return request;
}

bool has(const Row& row, std::string_view code) {
  for (const Finding& f : row.findings)
    if (f.code == code) return true;
  return false;
}

}  // namespace

TEST_CASE("a budget is an absolute limit per GPU", "[budget]") {
  // An H100 (85,520,809,984 bytes) with a 20 GiB budget: 21,474,836,480 is the capacity. At 4,096
  // tokens: 16,381,470,720 + 603,979,776 + 2 GiB overhead = 19,132,934,144: fits, 2,341,902,336 left.
  PlanRequest request = fp16_at(4096);
  request.budget_bytes = 20 * GiB;
  const Plan plan = make_plan(catalog_model("qwen3-8b"), *builtin_gpus().find("h100"), request);
  const Row& row = plan.rows.front();
  CHECK(row.capacity_bytes == 21'474'836'480u);
  CHECK(row.fits);
  CHECK(row.headroom_bytes == 2'341'902'336);
  // Largest context: (21,474,836,480 - 16,381,470,720 - 2,147,483,648) / 147,456 = 19,978.05.
  CHECK(plan.context_limits.front().max_ctx == 19978u);
  REQUIRE_FALSE(plan.settings.notes.empty());
  CHECK(plan.settings.notes.back().find("at most 20.00 GiB per GPU (a budget of 20.00 GiB)") != std::string::npos);
  // One more token does not fit, and says why.
  const Plan past = make_plan(catalog_model("qwen3-8b"), *builtin_gpus().find("h100"), [&] {
    PlanRequest r = request;
    r.contexts = {19979};
    return r;
  }());
  CHECK_FALSE(past.rows.front().fits);
  CHECK(has(past.rows.front(), "over_budget"));
}

TEST_CASE("co-tenants: vLLM refuses to start when less than utilization x total is free", "[budget]") {
  // A 4090 (25,757,220,864 bytes) at vLLM's 0.9: it takes 23,181,498,777 whatever the rows need.
  // 3 GiB held elsewhere leave 22,535,995,392: vLLM's start-up check fails. 2 GiB leave
  // 23,609,737,216: it starts.
  PlanRequest request;
  request.runtime = "vllm";
  request.contexts = {4096};
  request.used_bytes = 3 * GiB;
  const GpuSpec gpu = *builtin_gpus().find("rtx4090");
  const Row refused = make_plan(catalog_model("qwen3-8b"), gpu, request).rows.front();
  CHECK(refused.verdict == Verdict::engine_refuses);
  CHECK(has(refused, "engine_refuses_start"));
  request.used_bytes = 2 * GiB;
  const Plan starts = make_plan(catalog_model("qwen3-8b"), gpu, request);
  CHECK(starts.rows.front().verdict == Verdict::fits);
  CHECK(starts.settings.notes.back().find("vLLM takes gpu_memory_utilization x the card's TOTAL memory") != std::string::npos);
  // --free says the same from the other side: 22,535,995,392 free is 3 GiB held.
  request.used_bytes.reset();
  request.free_bytes = 25'757'220'864u - 3 * GiB;
  CHECK(make_plan(catalog_model("qwen3-8b"), gpu, request).rows.front().verdict == Verdict::engine_refuses);
}

TEST_CASE("co-tenants shrink what the generic profile may use, and more than the card is an error", "[budget]") {
  // 40 GiB free on an H100: the capacity is 42,949,672,960.
  PlanRequest request = fp16_at(4096);
  request.free_bytes = 40 * GiB;
  const Row row = make_plan(catalog_model("qwen3-8b"), *builtin_gpus().find("h100"), request).rows.front();
  CHECK(row.capacity_bytes == 42'949'672'960u);
  request.free_bytes = 100 * GiB;
  CHECK_THROWS_WITH(make_plan(catalog_model("qwen3-8b"), *builtin_gpus().find("h100"), request),
                    Catch::Contains("free is more than NVIDIA H100 SXM's 79.65 GiB"));
}

TEST_CASE("MIG instances are in the GPU catalog, one instance a deployment", "[budget]") {
  // nvidia-smi mig -lgip prints 39.50 GiB for 3g.40gb: kvplan takes 39.495 GiB, 40,442 MiB down:
  // 42,406,510,592 bytes. Qwen3-8B at fp16: (42,406,510,592 - 16,381,470,720 - 2 GiB) / 147,456 =
  // 161,930.04 tokens, capped by the trained 40,960.
  const GpuSpec* mig = builtin_gpus().find("h100-3g.40gb");
  REQUIRE(mig);
  CHECK(mig->memory_bytes == 42'406'510'592u);
  CHECK(mig->bandwidth_gbps == 1675.0);  // 4 of 8 memory slices of 3,350 GB/s
  CHECK(builtin_gpus().find("h100-1g.10gb")->memory_bytes == 9978ull * MiB);
  LimitsRequest request;
  request.plan = fp16_at(4096);
  const Limits limits = find_limits(catalog_model("qwen3-8b"), {*mig}, request);
  CHECK(limits.caches.front().max_ctx == 40960u);
  CHECK(limits.caches.front().uncapped_max_ctx == 161930u);
  REQUIRE(limits.tried.size() == 1);  // MIG instances are not split across
}

TEST_CASE("budget flags through the binary", "[budget]") {
  const auto result = run_kvplan("--model qwen3-8b --gpu h100 --ctx 4096 --kv-dtype fp16 --budget 20GiB --format json");
  REQUIRE(result.exit_code == 0);
  CHECK(result.out.find("\"capacity_bytes\": 21474836480") != std::string::npos);
  check_refused(run_kvplan("--model qwen3-8b --gpu h100 --free 10GiB --used 10GiB"), "give one");
  check_refused(run_kvplan("--model qwen3-8b --gpu h100 --budget 20"), "--budget");
  check_refused(run_kvplan("--model qwen3-8b --gpu 4090 --used 30GiB"), "more than");
  const auto max = run_kvplan("max --model qwen3-8b --gpu h100 --budget 20GiB --kv-dtype fp16 --ctx 4096");
  REQUIRE(max.exit_code == 0);
  CHECK(max.out.find("19,978") != std::string::npos);
}
