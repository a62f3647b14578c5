// kvplan fit: every row is the planning core's. Over the whole catalog, on two cards and under two
// engines (and the others on one card), each fit row equals make_plan's row for the same model,
// weight format, KV dtype and settings, and kvplan max's largest context and batch; the CLI's
// rows equal the plain command's; and a few figures computed by hand.

#include <catch2/catch.hpp>

#include <stdexcept>

#include <nlohmann/json.hpp>

#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "kvplan/fit.h"
#include "kvplan/search.h"
#include "support/run_binary.h"

using namespace kvplan;
using kvplan::testing::check_refused;
using kvplan::testing::run_kvplan;

namespace {

FitRequest request_for(const std::string& runtime, std::uint64_t ctx, std::uint64_t batch) {
  FitRequest request;
  request.base.runtime = runtime;
  request.base.contexts = {ctx};
  request.base.batch = batch;
  request.base.batch_given = true;
  return request;
}

const ModelSpec& spec_of(const std::vector<FitVariant>& variants, const FitFormat& format) {
  for (const FitVariant& v : variants)
    if (v.format.name == format.name && v.format.kind == format.kind) return v.spec;
  FAIL("no variant " << format.name);
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("fit: every row equals make_plan's row and kvplan max's limits", "[fit][property]") {
  const auto [runtime, card] = GENERATE(table<std::string, std::string>({{"generic", "rtx4090"},
                                                                         {"generic", "h100"},
                                                                         {"llama.cpp", "rtx4090"},
                                                                         {"llama.cpp", "rtx3090"},
                                                                         {"ollama", "rtx4090"},
                                                                         {"vllm", "h100"},
                                                                         {"sglang", "h100"},
                                                                         {"trtllm", "h100"}}));
  const std::uint64_t ctx = 32768;
  const std::uint64_t batch = 2;
  INFO(runtime << " on " << card);
  const std::vector<GpuSpec> gpus{*builtin_gpus().find(card)};
  const FitRequest request = request_for(runtime, ctx, batch);
  const FitResult result = fit_models(builtin_models().models, gpus, request);
  CHECK(result.models == builtin_models().models.size());
  REQUIRE(!result.rows.empty());
  CHECK(!result.fitting.empty());

  for (const FitRow& fit : result.rows) {
    INFO(fit.model_id << " " << fit.format.name << " " << fit.row.cache.label());
    const ModelSpec& model = *builtin_models().find(fit.model_id);
    const std::vector<FitVariant> variants = fit_variants(model, runtime);
    const ModelSpec& spec = spec_of(variants, fit.format);

    // The plain plan: `kvplan --model M --gpu G --ctx 32k --batch 2 --kv-dtype D`.
    PlanRequest plain = request.base;
    plain.caches = {fit.row.cache};
    const Plan plan = make_plan(spec, gpus, plain);
    REQUIRE(plan.rows.size() == 1);
    const Row& row = plan.rows.front();
    CHECK(fit.row.cache.label() == row.cache.label());
    CHECK(fit.row.weights_bytes == row.weights_bytes);
    CHECK(fit.row.kv_bytes == row.kv_bytes);
    CHECK(fit.row.total_bytes == row.total_bytes);
    CHECK(fit.row.capacity_bytes == row.capacity_bytes);
    CHECK(fit.row.headroom_bytes == row.headroom_bytes);
    CHECK(fit.row.verdict == row.verdict);
    REQUIRE(fit.row.decode_bound.has_value() == row.decode_bound.has_value());
    if (row.decode_bound) CHECK(fit.row.decode_bound->tokens_per_s_per_sequence == row.decode_bound->tokens_per_s_per_sequence);
    // A row is shown as fitting only when the plan says it fits.
    if (fit.rejected.empty()) CHECK(row.fits);
    if (!row.fits) CHECK(!fit.rejected.empty());

    // `kvplan max` with every search.
    LimitsRequest max;
    max.plan = plain;
    const Limits limits = find_limits(spec, gpus, max);
    REQUIRE(limits.caches.size() == 1);
    const CacheLimits& found = limits.caches.front();
    CHECK(fit.max_ctx == found.max_ctx);
    CHECK(fit.ctx_stop.bound == found.ctx_stop.bound);
    CHECK(fit.ctx_stop.code == found.ctx_stop.code);
    CHECK(fit.max_batch == found.max_batch);
    CHECK(fit.batch_stop.bound == found.batch_stop.bound);
  }
}

TEST_CASE("fit: the ranking is the one it states", "[fit]") {
  const std::vector<GpuSpec> gpus{*builtin_gpus().find("rtx4090")};
  const FitResult result = fit_models(builtin_models().models, gpus, request_for("generic", 8192, 1));
  REQUIRE(result.best.size() >= 2);
  std::vector<std::string> seen;
  for (std::size_t i = 0; i < result.best.size(); ++i) {
    const FitRow& row = result.rows[result.best[i]];
    CHECK(row.rejected.empty());
    CHECK(std::find(seen.begin(), seen.end(), row.model_id) == seen.end());  // one row per model
    seen.push_back(row.model_id);
    if (i > 0) CHECK(result.rows[result.best[i - 1]].params >= row.params);  // largest first
    // No fitting row of the same model is more precise.
    for (const std::size_t j : result.fitting)
      if (result.rows[j].model_id == row.model_id) CHECK(result.rows[j].quality >= row.quality);
  }
}

TEST_CASE("fit: figures computed by hand", "[fit]") {
  // Llama 3.1 8B, bf16 checkpoint of 16,060,522,496 B, on a card of exactly 24 GiB under the generic
  // profile (budget 25,769,803,776 B, overhead 2 GiB = 2,147,483,648 B) with its own bf16 cache
  // (the only lossless one):
  // 32 layers x 8 KV heads x 128 x (K+V) x 2 B = 131,072 B per token.
  // KV room = 25,769,803,776 - 16,060,522,496 - 2,147,483,648 = 7,561,797,632 B
  // / 131,072 = 57,691.06 tokens: the largest context is 57,691 (57,691 x 131,072 = 7,561,674,752),
  // below the trained 131,072 (bound: memory).
  // At ctx 16,384 (2 GiB of cache each) 3 sequences fit (6 GiB), 4 (8 GiB) do not.
  GpuSpec card;
  card.id = "card";
  card.name = "24GiB card";
  card.memory_bytes = 24 * GiB;
  card.memory_basis = "given";
  FitRequest request = request_for("generic", 16384, 1);
  request.family = "llama3.1-8b";
  request.quality = Quality::lossless;
  const FitResult result = fit_models(builtin_models().models, {card}, request);
  REQUIRE(result.models == 1);
  REQUIRE(result.rows.size() == 1);
  const FitRow* own = &result.rows.front();
  CHECK(own->row.cache.label() == "bf16");
  CHECK(own->format.name == "bf16");
  CHECK(own->row.weights_bytes == 16'060'522'496);
  CHECK(own->row.kv_bytes_per_token == 131'072);
  CHECK(own->max_ctx == std::optional<std::uint64_t>{57'691});
  CHECK(own->ctx_stop.bound == SearchBound::memory);
  CHECK(own->max_batch == std::optional<std::uint64_t>{3});
  CHECK(own->rejected.empty());
}

TEST_CASE("fit: quality levels on the advisor's scale", "[fit]") {
  const Dtype& bf16 = parse_weight_dtype("bf16");
  CHECK(quality_of(parse_kv_dtype("fp16", bf16)) == Quality::lossless);
  CHECK(quality_of(parse_kv_dtype("fp8", bf16)) == Quality::fp8);
  CHECK(quality_of(parse_kv_dtype("fp8_e5m2", bf16)) == Quality::fp8);
  CHECK(quality_of(parse_kv_dtype("int8", bf16)) == Quality::int8);
  CHECK(quality_of(parse_kv_dtype("q8_0", bf16)) == Quality::int8);    // 34 B per 32 values: 8.5 bits
  CHECK(quality_of(parse_kv_dtype("q5_1", bf16)) == Quality::int4);    // 24 B per 32: 6 bits, below int8
  CHECK(quality_of(parse_kv_dtype("q4_0", bf16)) == Quality::int4);
  CHECK(quality_of(parse_kv_dtype("nvfp4", bf16)) == Quality::int4);
}

TEST_CASE("fit: llama.cpp and Ollama also run the GGUF blobs kvplan sizes", "[fit]") {
  const ModelSpec& qwen = *builtin_models().find("qwen3-8b");
  std::vector<std::string> generic, llamacpp;
  for (const FitVariant& v : fit_variants(qwen, "generic")) generic.push_back(v.format.name);
  for (const FitVariant& v : fit_variants(qwen, "llama.cpp")) llamacpp.push_back(v.format.name + ":" + std::string(to_string(v.format.quality)));
  CHECK(generic == std::vector<std::string>{"bf16"});
  CHECK(llamacpp == std::vector<std::string>{"bf16:lossless", "q4_k_m:int4", "q4_k_s:int4", "q8_0:int8", "f16:lossless"});
}

TEST_CASE("fit CLI: a row equals the plain command's", "[fit][cli]") {
  const auto fit = run_kvplan("fit --gpu 4090 --runtime llama.cpp --ctx 16k --family qwen3-8b --format json");
  REQUIRE(fit.exit_code == 0);
  const nlohmann::json doc = nlohmann::json::parse(fit.out);
  bool compared = false;
  for (const auto& row : doc["rows"]) {
    if (row["weights"]["format"] != "q8_0" || row["kv_dtype"] != "q8_0") continue;
    const auto plain = run_kvplan("--model qwen3:8b-q8_0 --runtime llama.cpp --gpu 4090 --ctx 16k -ctk q8_0 -ctv q8_0 --format json");
    REQUIRE(plain.exit_code == 0);
    const nlohmann::json one = nlohmann::json::parse(plain.out);
    CHECK(row["row"]["total_bytes"] == one["rows"][0]["total_bytes"]);
    CHECK(row["row"]["headroom_bytes"] == one["rows"][0]["headroom_bytes"]);
    CHECK(row["row"]["verdict"] == one["rows"][0]["verdict"]);
    compared = true;
  }
  CHECK(compared);
}

TEST_CASE("fit CLI: refusals", "[fit][cli]") {
  check_refused(run_kvplan("fit --ctx 8k"), "--gpu is required");
  check_refused(run_kvplan("fit --gpu 4090 --model llama3.1-8b"), "--model is for a plan of one");
  check_refused(run_kvplan("fit --gpu 4090 --kv-dtype fp8"), "chooses the KV and weight dtypes itself");
  check_refused(run_kvplan("fit --gpu 4090 --quality int3"), "not a quality level");
  check_refused(run_kvplan("fit --gpu 4090 --family nosuchmodel"), "no catalog model passes the filters");
  check_refused(run_kvplan("fit --gpu 4090 --min-params 70B --max-params 7B"), "--min-params is more than --max-params");
  check_refused(run_kvplan("fit --gpu 4090 --top 0"), "--top");
  check_refused(run_kvplan("fit --gpu 4090 --format markdown"), "fit writes table, json or csv");
  check_refused(run_kvplan("fit --gpu 4090 --ctx 8k,16k"), "fit takes one context");
}

TEST_CASE("fit: a model's refused cache dtypes are listed in the order of the candidates, whoever refuses them",
          "[fit]") {
  // Phi-2 (head dim 80) under llama.cpp: the profile refuses fp8, int8, int4 and nvfp4 by name
  // without a row (Profile::cache_refusal); q8_0 and q4_0 are refused when priced, since llama.cpp
  // needs the head dim to be a multiple of their 32-value blocks. Listed as the candidates come
  // (fit's ladder: fp8, int8, q8_0, int4, q4_0, nvfp4), not grouped by who refused them.
  const std::vector<GpuSpec> gpus{*builtin_gpus().find("rtx4090")};
  const FitResult result = fit_models({*builtin_models().find("phi-2")}, gpus, request_for("llama.cpp", 32768, 1));
  std::vector<std::string> order;
  for (const FitRefusal& r : result.refusals) {
    CHECK(r.model_id == "phi-2");
    order.push_back(r.cache);
    if (r.cache == "q8_0") CHECK(r.reason.find("block size 32 does not divide n_embd_head_k=80") != std::string::npos);
  }
  CHECK(order == std::vector<std::string>{"fp8", "int8", "q8_0", "int4", "q4_0", "nvfp4"});
}
