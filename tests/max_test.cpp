// kvplan max: the largest context, the largest batch and the fewest GPUs, with values computed by
// hand (the arithmetic in the comments) and vLLM's own "Maximum concurrency" definition.

#include <cmath>

#include <catch2/catch.hpp>

#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "kvplan/search.h"
#include "support/run_binary.h"
#include "support/catalog_entries.h"

using kvplan::testing::catalog_model;
using namespace kvplan;
using kvplan::testing::check_refused;
using kvplan::testing::run_kvplan;

namespace {


GpuSpec card_24gb() {
  GpuSpec gpu;
  gpu.id = "24GB";
  gpu.name = "24GB card";
  gpu.memory_bytes = 24'000'000'000;
  gpu.memory_basis = "given";
  return gpu;
}

CacheDtypes max_cache(std::string_view name) {
  const Dtype& type = parse_kv_dtype(name, parse_weight_dtype("bf16"));
  return {&type, &type};
}

/// Seed 003's scenario under the generic profile: a 24 GB card at 0.9, no overhead (the article
/// counts none), 8 sequences of 4,700 tokens.
LimitsRequest seed_003(std::uint64_t batch) {
  LimitsRequest request;
  request.plan.contexts = {4700};
  request.plan.batch = batch;
  request.plan.batch_given = true;
  request.plan.utilization_millionths = 900'000;
  request.plan.overhead_bytes = 0;
  request.plan.caches = {max_cache("fp16"), max_cache("fp8")};
  return request;
}

}  // namespace

TEST_CASE("seed 003: Qwen3-8B on a 24 GB card at 0.9, 8 x 4,700 tokens", "[max]") {
  // budget 24,000,000,000 x 0.9 = 21,600,000,000; weights 16,381,470,720 (safetensors total_size);
  // the cache may use 21,600,000,000 - 16,381,470,720 = 5,218,529,280 bytes.
  // fp16: 2 x 36 layers x 8 KV heads x 128 x 2 B = 147,456 B a token; fp8 73,728 B.
  const Limits limits = find_limits(catalog_model("qwen3-8b"), {card_24gb()}, seed_003(8));
  REQUIRE(limits.caches.size() == 2);
  CHECK(limits.ctx == 4700);
  CHECK(limits.batch == 8);
  CHECK(limits.ctx_cap == 40960);  // the trained context
  CHECK(limits.cap_kind == SearchBound::trained_context);
  const CacheLimits& fp16 = limits.caches[0];
  CHECK(fp16.cache.label() == "fp16");
  // 8 sequences: 5,218,529,280 / (8 x 147,456) = 4,423.9 -> 4,423 tokens each.
  CHECK(fp16.max_ctx == 4423u);
  CHECK(fp16.ctx_stop.bound == SearchBound::memory);
  CHECK(fp16.uncapped_max_ctx == 4423u);
  REQUIRE(fp16.max_ctx_row);
  CHECK(fp16.max_ctx_row->kv_bytes == 4423ull * 8 * 147456);  // 5,217,583,104
  CHECK(fp16.max_ctx_row->fits);
  // 4,700 tokens: 693,043,200 B a sequence; 5,218,529,280 / 693,043,200 = 7.53 -> 7 sequences.
  CHECK(fp16.max_batch == 7u);
  CHECK(fp16.batch_stop.bound == SearchBound::memory);
  // One card does not hold 8 x 4,700 at fp16 (22.42 GiB of 20.12); two at tp 2 do: weights
  // 8,190,735,360 + KV 8 x 4,700 x 73,728 (4 of 8 KV heads) = 10,962,908,160 <= 21,600,000,000.
  REQUIRE(fp16.min_gpus);
  CHECK(fp16.min_gpus->gpus == 2);
  CHECK(fp16.min_gpus->tp == 2);
  CHECK(fp16.min_gpus->pp == 1);
  REQUIRE(fp16.min_gpus_row);
  CHECK(fp16.min_gpus_row->total_bytes == 10'962'908'160u);

  const CacheLimits& fp8 = limits.caches[1];
  CHECK(fp8.cache.label() == "fp8");
  // 5,218,529,280 / (8 x 73,728) = 8,847.7 -> 8,847; at 4,700: / 346,521,600 = 15.06 -> 15.
  CHECK(fp8.max_ctx == 8847u);
  CHECK(fp8.max_batch == 15u);
  REQUIRE(fp8.min_gpus);
  CHECK(fp8.min_gpus->gpus == 1);
}

TEST_CASE("the trained context caps the context search and the memory limit is reported too", "[max]") {
  // One sequence: fp16 5,218,529,280 / 147,456 = 35,390.6 -> 35,390 (memory, below 40,960);
  // fp8 / 73,728 = 70,780.8: the trained context 40,960 binds, memory would allow 70,780.
  const Limits limits = find_limits(catalog_model("qwen3-8b"), {card_24gb()}, seed_003(1));
  CHECK(limits.caches[0].max_ctx == 35390u);
  CHECK(limits.caches[0].ctx_stop.bound == SearchBound::memory);
  CHECK(limits.caches[1].max_ctx == 40960u);
  CHECK(limits.caches[1].ctx_stop.bound == SearchBound::trained_context);
  CHECK(limits.caches[1].uncapped_max_ctx == 70780u);
  CHECK(limits.caches[1].uncapped_stop.bound == SearchBound::memory);

  LimitsRequest capped = seed_003(1);
  capped.ctx_cap = 32768;
  const Limits under_cap = find_limits(catalog_model("qwen3-8b"), {card_24gb()}, capped);
  CHECK(under_cap.cap_kind == SearchBound::cap);
  CHECK(under_cap.caches[0].max_ctx == 32768u);
  CHECK(under_cap.caches[0].ctx_stop.bound == SearchBound::cap);
  CHECK(under_cap.caches[0].uncapped_max_ctx == 35390u);
}

TEST_CASE("vLLM's largest batch is its Maximum concurrency, and max_num_seqs bounds it", "[max]") {
  // A real 4090 under vLLM: at 4,700 tokens its log line would say "Maximum concurrency for 4,700
  // tokens per request: 7.03x" (2,066 blocks / 294 a request; 2,070 before vLLM's rotary table,
  // 40,960 x 128 x 2 B = 10 MiB, was counted in its weights: 4 blocks of 2,359,296 B); the largest
  // batch is its floor.
  LimitsRequest request;
  request.plan.runtime = "vllm";
  request.plan.contexts = {4700};
  const GpuSpec gpu = *builtin_gpus().find("rtx4090");
  const Limits limits = find_limits(catalog_model("qwen3-8b"), {gpu}, request);
  REQUIRE(limits.caches.size() == 1);
  const CacheLimits& auto_cache = limits.caches[0];
  REQUIRE(auto_cache.max_batch_row);
  const double concurrency = auto_cache.max_batch_row->engine.max_concurrency.value();
  CHECK(concurrency == Approx(2066.0 / 294.0));
  CHECK(auto_cache.max_batch == 7u);
  CHECK(auto_cache.max_batch == static_cast<std::uint64_t>(std::floor(concurrency)));

  // A short context: the concurrency is past 256, and max_num_seqs (256 on a 24 GiB card) binds.
  request.plan.contexts = {64};
  const Limits short_ctx = find_limits(catalog_model("qwen3-8b"), {gpu}, request);
  CHECK(short_ctx.caches[0].max_batch == 256u);
  CHECK(short_ctx.caches[0].batch_stop.bound == SearchBound::engine);
  CHECK(short_ctx.caches[0].batch_stop.code == "exceeds_max_num_seqs");
  // vLLM refuses a max_model_len beyond the trained context: the uncapped search says so.
  const LimitsRequest long_request = [] {
    LimitsRequest r;
    r.plan.runtime = "vllm";
    r.plan.contexts = {1024};
    return r;
  }();
  const Limits on_h100 = find_limits(catalog_model("qwen3-8b"), {*builtin_gpus().find("h100")}, long_request);
  CHECK(on_h100.caches[0].max_ctx == 40960u);
  CHECK(on_h100.caches[0].ctx_stop.bound == SearchBound::trained_context);
  CHECK(on_h100.caches[0].uncapped_max_ctx == 40960u);
  CHECK(on_h100.caches[0].uncapped_stop.bound == SearchBound::engine);
  CHECK(on_h100.caches[0].uncapped_stop.code == "beyond_trained_context");
}

TEST_CASE("llama.cpp's searches count its slots and its padding", "[max]") {
  // -np 4 becomes the batch the searches vary; the context per sequence is what the 4 slots
  // hold of a -c padded to 256 tokens.
  LimitsRequest request;
  request.plan.runtime = "llama.cpp";
  request.plan.engine_options = {{"parallel", "4", "-np"}};
  request.plan.contexts = {8192};
  const Limits limits = find_limits(*builtin_models().find("llama3.1-8b"), {*builtin_gpus().find("rtx4090")}, request);
  CHECK(limits.batch == 4);
  REQUIRE(limits.caches.size() == 1);
  const CacheLimits& f16 = limits.caches[0];
  REQUIRE(f16.max_ctx_row);
  CHECK(f16.max_ctx_row->batch == 4);
  const std::uint64_t cells = f16.max_ctx_row->engine.kv_cache_tokens.value();
  CHECK(cells % 256 == 0);              // llama.cpp pads n_ctx to 256
  CHECK(cells >= 4 * *f16.max_ctx);     // the four slots hold the context each
  REQUIRE(f16.max_batch_row);
  CHECK(f16.max_batch_row->batch == *f16.max_batch);  // the slots, not -np's 4
  CHECK(*f16.max_batch > 4);
}

TEST_CASE("the GPU search tries tp 1, 2, 4, 8, and pipeline stages where the engine has them", "[max]") {
  const std::vector<GpuDeployment> tp_only = gpu_search_order(false, 8);
  REQUIRE(tp_only.size() == 4);
  CHECK(tp_only[3].gpus == 8);
  const std::vector<GpuDeployment> with_pp = gpu_search_order(true, 2);
  // 1 (1x1), 2 (2x1), 2 (1x2), 4 (4x1), 4 (2x2), 8 (8x1), 8 (4x2), 16 (8x2)
  REQUIRE(with_pp.size() == 8);
  CHECK(with_pp[1].tp == 2);
  CHECK(with_pp[2].pp == 2);
  CHECK(with_pp[7].gpus == 16);

  // Llama 3.1 70B (141 GB of bf16 weights) at 8k on H100s under SGLang: on two (tp 2, or pp 2)
  // each holds 65.71 GiB of weights, and SGLang's default --mem-fraction-static 0.834 of the
  // 76.69 GiB free leaves 63.96 GiB: it refuses to start. Three pipeline stages hold 44.35 GiB
  // each and fit: three GPUs, pp 3, before tp 4.
  LimitsRequest request;
  request.plan.runtime = "sglang";
  request.plan.contexts = {8192};
  const Limits limits = find_limits(*builtin_models().find("llama3.1-70b"), {*builtin_gpus().find("h100")}, request);
  const CacheLimits& bf16 = limits.caches.front();
  REQUIRE(bf16.min_gpus);
  CHECK(bf16.min_gpus->gpus == 3);
  CHECK(bf16.min_gpus->pp == 3);
  REQUIRE(bf16.min_gpus_row);
  CHECK(bf16.min_gpus_row->pp == 3);
  CHECK(bf16.min_gpus_row->weights_bytes == 47'623'751'884u);
  CHECK(bf16.min_gpus_row->fits);
  // One H100 holds none of it: the searches say the engine refuses, not "0 tokens".
  CHECK_FALSE(bf16.max_ctx);
  CHECK(bf16.ctx_stop.bound == SearchBound::engine);
  CHECK(bf16.ctx_stop.code == "engine_refuses_start");
}

TEST_CASE("kvplan max through the binary", "[max]") {
  const auto result = run_kvplan("max --model qwen3-8b --gpu 24GB --util 0.9 --overhead 0 --ctx 4700 --batch 8 "
                                 "--kv-dtype fp16,fp8 --format json");
  REQUIRE(result.exit_code == 0);
  CHECK(result.out.find("\"max_ctx\": 4423") != std::string::npos);
  CHECK(result.out.find("\"max_batch\": 15") != std::string::npos);
  CHECK(result.out.find("\"limit\": \"memory\"") != std::string::npos);

  const auto table = run_kvplan("max --model qwen3-8b --gpu 24GB --util 0.9 --overhead 0 --kv-dtype fp8");
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("fits 70,780 tokens (memory); trained for 40,960") != std::string::npos);
  for (std::size_t start = 0, end; (end = table.out.find('\n', start)) != std::string::npos; start = end + 1)
    if (table.out.compare(start, 8, "KV dtype") == 0 || table.out.compare(start, 4, "fp8_") == 0) CHECK(end - start <= 100);

  check_refused(run_kvplan("max --model qwen3-8b --gpu 24GB --max-ctx-cap 0"), "--max-ctx-cap");
  check_refused(run_kvplan("max --model qwen3-8b --gpu 24GB --ctx 4k,8k"), "one context");
  check_refused(run_kvplan("max --model qwen3-8b --gpu 24GB --format csv"), "table or json");
  check_refused(run_kvplan("max --model qwen3-8b --gpu 24GB --max-ctx-cpa 8k"), "did you mean --max-ctx-cap");
}
