// The budget engine against figures computed by hand (arithmetic in the comments) and against
// the seed articles' tables.

#include <catch2/catch.hpp>

#include "kvplan/plan.h"
#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "support/generic_rows.h"
#include "kvplan/gpu.h"

using namespace kvplan;
using kvplan::testing::card_of;
using kvplan::testing::max_fitting_ctx;

namespace {

const Dtype& kv(std::string_view name) { return parse_kv_dtype(name, parse_weight_dtype("bf16")); }

/// A row for a catalog model on a card of `memory` bytes with the article's 2 GiB overhead.
Row row_for(std::string_view model, std::uint64_t ctx, std::string_view cache, std::uint64_t memory,
            std::uint64_t batch = 1, const Dtype* weights = nullptr) {
  RowSettings settings;
  settings.ctx = ctx;
  settings.batch = batch;
  settings.cache = {&kv(cache), &kv(cache)};
  settings.weight_dtype = weights;
  settings.gpu_memory_bytes = memory;
  return plan_row(*builtin_models().find(model), settings);
}

// nvidia-smi reports 24,564 MiB for an RTX 4090 (shared/reference/gpus.jsonl).
constexpr std::uint64_t kRtx4090 = 24564 * MiB;

}  // namespace

TEST_CASE("the 4090 in the catalog has the driver-reported 24,564 MiB") {
  const GpuSpec* gpu = builtin_gpus().find("4090");
  REQUIRE(gpu != nullptr);
  CHECK(gpu->memory_bytes == 25'757'220'864);  // 24,564 x 1,048,576
  CHECK(gpu->memory_bytes == kRtx4090);
}

TEST_CASE("Llama 3.1 8B: 128 KiB per token and seed 000's fit matrix on a 4090") {
  // 2 (K and V) x 32 layers x 8 KV heads x 128 head dim x 2 bytes = 131,072 B
  const Row r32 = row_for("llama3.1-8b", 32768, "fp16", kRtx4090);
  CHECK(r32.kv_bytes_per_token == 131'072);
  CHECK(r32.kv_bytes == 4 * GiB);                // 131,072 x 32,768 = 2^32
  CHECK(r32.weights_bytes == 16'060'522'496);    // safetensors total_size = 8,030,261,248 x 2
  CHECK(r32.overhead_bytes == 2 * GiB);
  // 16,060,522,496 + 4,294,967,296 + 2,147,483,648 = 22,502,973,440 <= 25,757,220,864
  CHECK(r32.total_bytes == 22'502'973'440);
  CHECK(r32.headroom_bytes == 25'757'220'864 - 22'502'973'440);
  CHECK(r32.fits);

  CHECK_FALSE(row_for("llama3.1-8b", 65536, "fp16", kRtx4090).fits);   // 16.06 GB + 8 GiB + 2 GiB
  CHECK_FALSE(row_for("llama3.1-8b", 131072, "fp16", kRtx4090).fits);  // ... + 16 GiB
  CHECK(row_for("llama3.1-8b", 32768, "fp8", kRtx4090).fits);
  CHECK(row_for("llama3.1-8b", 65536, "fp8", kRtx4090).fits);          // 4 GiB of fp8 cache
  const Row fp8_128k = row_for("llama3.1-8b", 131072, "fp8", kRtx4090);
  CHECK(fp8_128k.kv_bytes == 8 * GiB);
  CHECK_FALSE(fp8_128k.fits);  // 16,060,522,496 + 8 GiB + 2 GiB = 26,797,940,736 > 25,757,220,864

  // Seed 000's way out: fp8 weights too. 8,030,261,248 x 1 + 8 GiB + 2 GiB = 18,767,679,488 B
  // = 17.48 GiB (the article says "about 17.5").
  const Row both_fp8 = row_for("llama3.1-8b", 131072, "fp8", kRtx4090, 1, &parse_weight_dtype("fp8"));
  CHECK(both_fp8.weights_bytes == 8'030'261'248);
  CHECK(both_fp8.total_bytes == 18'767'679'488);
  CHECK(both_fp8.fits);
}

TEST_CASE("Qwen3-8B per-token bytes for every cache dtype the seed names") {
  // 2 x 36 layers x 8 x 128 = 73,728 values per token
  CHECK(row_for("qwen3-8b", 1, "fp16", kRtx4090).kv_bytes_per_token == 147'456);  // x 2 B = 144 KiB
  CHECK(row_for("qwen3-8b", 1, "fp8", kRtx4090).kv_bytes_per_token == 73'728);    // x 1 B
  CHECK(row_for("qwen3-8b", 1, "int8", kRtx4090).kv_bytes_per_token == 73'728);
  CHECK(row_for("qwen3-8b", 1, "int4", kRtx4090).kv_bytes_per_token == 36'864);   // x 1/2 B
  // Block formats: each layer's K row is 1,024 values = 32 blocks of 32.
  // q8_0: 73,728 / 32 x 34 = 78,336 B; q4_0: 73,728 / 32 x 18 = 41,472 B.
  CHECK(row_for("qwen3-8b", 1, "q8_0", kRtx4090).kv_bytes_per_token == 78'336);
  CHECK(row_for("qwen3-8b", 1, "q4_0", kRtx4090).kv_bytes_per_token == 41'472);
  CHECK(row_for("qwen3-8b", 1, "q4_1", kRtx4090).kv_bytes_per_token == 46'080);   // / 32 x 20
  CHECK(row_for("qwen3-8b", 1, "q5_0", kRtx4090).kv_bytes_per_token == 50'688);   // / 32 x 22
  CHECK(row_for("qwen3-8b", 1, "q5_1", kRtx4090).kv_bytes_per_token == 55'296);   // / 32 x 24
  CHECK(row_for("qwen3-8b", 1, "iq4_nl", kRtx4090).kv_bytes_per_token == 41'472); // / 32 x 18
  CHECK(row_for("qwen3-8b", 1, "fp32", kRtx4090).kv_bytes_per_token == 294'912);  // x 4 B

  // Seed 003: 100,000 tokens at fp16 = 14,745,600,000 B = 13.73 GiB ("~13.7 GB").
  CHECK(row_for("qwen3-8b", 100000, "fp16", kRtx4090).kv_bytes == 14'745'600'000);
}

TEST_CASE("q8_0 matches a real llama.cpp log: Qwen3-235B-A22B at 32,768 cells") {
  // shared/reference/llamacpp-logs.jsonl R108 (llama.cpp b5274): 94 layers, n_embd_k_gqa 512,
  // "K (q8_0): 1598.00 MiB". 512 / 32 x 34 = 544 B per layer per token; x 94 x 32,768 = 1,675,624,448 B.
  ModelSpec model;
  model.id = "qwen3-235b-shape";
  model.attention_heads = 64;
  model.params = 1;
  model.weight_dtype = &parse_weight_dtype("bf16");
  model.layers.assign(94, LayerSpec{.kind = LayerKind::full, .kv_heads = 4, .k_head_dim = 128, .v_head_dim = 128});
  RowSettings settings;
  settings.ctx = 32768;
  settings.cache = {&kv("q8_0"), &kv("q8_0")};
  settings.gpu_memory_bytes = 1;
  const Row row = plan_row(model, settings);
  CHECK(row.kv_bytes / 2 == 1598 * MiB);
}

TEST_CASE("Qwen2.5-7B: 128K of fp16 cache is exactly 7 GiB") {
  // 2 x 28 x 4 x 128 x 2 = 57,344 B per token; x 131,072 = 7,516,192,768 = 7 x 2^30
  const Row row = row_for("qwen2.5-7b", 131072, "fp16", kRtx4090);
  CHECK(row.kv_bytes_per_token == 57'344);
  CHECK(row.kv_bytes == 7 * GiB);
}

TEST_CASE("Llama 3.1 70B: 320 KiB per token, batch multiplies") {
  // 2 x 80 x 8 x 128 x 2 = 327,680 B per token
  const Row row = row_for("llama3.1-70b", 8192, "fp16", 80 * GiB, 4);
  CHECK(row.kv_bytes_per_token == 327'680);
  CHECK(row.kv_bytes == 4ull * 8192 * 327'680);  // 10,737,418,240 = 10 GiB
  CHECK(row.kv_bytes == 10 * GiB);
}

TEST_CASE("seed 003: what a 24 GiB card at 0.9 really leaves for Qwen3-8B's cache") {
  // Budget: floor(24 x 2^30 x 0.9) = 23,192,823,398 B. Weights (bf16 checkpoint) 16,381,470,720 B.
  // Left for cache: 6,811,352,678 B = 6.34 GiB, i.e. floor(6,811,352,678 / 147,456) = 46,192 tokens.
  // The article's "5.2 GB -> 37.7K tokens" subtracts 16.4 decimal GB from 21.6 (GiB-derived) GB.
  const ModelSpec& model = *builtin_models().find("qwen3-8b");
  RowSettings settings;
  settings.cache = {&kv("fp16"), &kv("fp16")};
  settings.overhead_bytes = 0;
  settings.utilization_millionths = 900'000;
  settings.gpu_memory_bytes = 24 * GiB;
  CHECK(max_fitting_ctx(model, settings, 1'000'000) == 46'192);
  settings.cache = {&kv("fp8"), &kv("fp8")};
  CHECK(max_fitting_ctx(model, settings, 1'000'000) == 92'384);  // floor(6,811,352,678 / 73,728)
  // The article's "8 concurrent x 4,700" fits with room to spare: 8 x 4,700 x 147,456 = 5.16 GiB.
  settings.cache = {&kv("fp16"), &kv("fp16")};
  settings.ctx = 4700;
  settings.batch = 8;
  CHECK(plan_row(model, settings).fits);
}

TEST_CASE("largest context is exact at the boundary") {
  const ModelSpec& model = *builtin_models().find("llama3.1-8b");
  RowSettings settings;
  settings.cache = {&kv("fp16"), &kv("fp16")};
  settings.gpu_memory_bytes = kRtx4090;
  // (25,757,220,864 - 16,060,522,496 - 2,147,483,648) / 131,072 = 57,595.99 -> 57,595
  const auto limit = max_fitting_ctx(model, settings, 131072);
  REQUIRE(limit == 57'595);
  settings.ctx = *limit;
  CHECK(plan_row(model, settings).fits);
  settings.ctx = *limit + 1;
  CHECK_FALSE(plan_row(model, settings).fits);
  // Nothing fits when the weights alone exceed the card.
  settings.gpu_memory_bytes = 8 * GiB;
  CHECK_FALSE(max_fitting_ctx(model, settings, 131072).has_value());
}

TEST_CASE("a product past 64 bits is an error, not a wrap") {
  const ModelSpec& model = *builtin_models().find("llama3.1-70b");
  RowSettings settings;
  settings.cache = {&kv("fp16"), &kv("fp16")};
  settings.ctx = std::uint64_t{1} << 62;
  settings.gpu_memory_bytes = 80 * GiB;
  CHECK_THROWS_AS(plan_row(model, settings), Error);
  settings.ctx = 1 << 20;
  settings.batch = std::uint64_t{1} << 40;  // 327,680 x 2^20 x 2^40 > 2^64
  CHECK_THROWS_WITH(plan_row(model, settings), Catch::Contains("overflows 64 bits"));
}

TEST_CASE("sliding, chunked, MLA and linear layers hold what they must") {
  ModelSpec model;
  model.id = "mixed";
  model.attention_heads = 8;
  model.params = 1000;
  model.weight_dtype = &parse_weight_dtype("bf16");
  const Dtype& fp32 = parse_weight_dtype("fp32");
  model.layers = {
      LayerSpec{.kind = LayerKind::full, .kv_heads = 2, .k_head_dim = 64, .v_head_dim = 64},       // 2 x (64+64) = 256 values per token
      LayerSpec{.kind = LayerKind::sliding, .kv_heads = 2, .k_head_dim = 64, .v_head_dim = 64, .window = 1024}, // at most 1,024 tokens
      LayerSpec{.kind = LayerKind::chunked, .kv_heads = 2, .k_head_dim = 64, .v_head_dim = 64, .window = 8192}, // at most 8,192 tokens
      LayerSpec{.kind = LayerKind::mla, .kv_heads = 1, .k_head_dim = 576},        // 512 + 64 latent, no V
      LayerSpec{.kind = LayerKind::linear, .state = {{"conv", 3 * 1000, &parse_weight_dtype("bf16")}, {"ssm", 4096, &fp32}}},
      LayerSpec{.kind = LayerKind::none},
  };
  RowSettings settings;
  settings.cache = {&kv("fp16"), &kv("fp16")};
  settings.gpu_memory_bytes = 100 * GiB;
  settings.ctx = 100'000;
  settings.batch = 2;
  const Row row = plan_row(model, settings);
  // per token: 3 x 256 x 2 B + 576 x 2 B = 1,536 + 1,152 = 2,688 B
  CHECK(row.kv_bytes_per_token == 2'688);
  // state per sequence: 3,000 x 2 B + 4,096 x 4 B = 6,000 + 16,384 = 22,384 B
  CHECK(row.state_bytes == 2 * 22'384);
  // per sequence: full 512 x 100,000 + sliding 512 x 1,024 + chunked 512 x 8,192 + mla 1,152 x 100,000 + 22,384
  const std::uint64_t per_sequence = 512ull * 100'000 + 512ull * 1024 + 512ull * 8192 + 1152ull * 100'000 + 22'384;
  CHECK(row.kv_bytes == 2 * per_sequence);
  REQUIRE(row.breakdown.size() == 6);
  CHECK(row.breakdown[1].kind == LayerKind::sliding);
  CHECK(row.breakdown[1].tokens_held == 1024);
  CHECK(row.breakdown[2].tokens_held == 8192);
  CHECK(row.breakdown[4].tokens_held == 0);
  CHECK(row.breakdown[4].bytes == 2 * 22'384);
  // Below the window a sliding layer holds every token.
  settings.ctx = 500;
  CHECK(plan_row(model, settings).breakdown[1].tokens_held == 500);
}

TEST_CASE("make_plan orders rows by context then dtype and explains the rows that do not fit") {
  const ModelSpec& model = *builtin_models().find("llama3.1-8b");
  PlanRequest request;
  request.contexts = {32768, 131072};
  request.caches = {{&kv("fp16"), &kv("fp16")}, {&kv("fp8"), &kv("fp8")}};
  const Plan plan = make_plan(model, card_of(kRtx4090), request);
  REQUIRE(plan.rows.size() == 4);
  CHECK(plan.rows[1].ctx == 32768);
  CHECK(plan.rows[1].cache.k->name == "fp8");
  REQUIRE(plan.ways_out.size() == 2);  // 128K fp16 and 128K fp8
  CHECK(plan.ways_out[1].row_index == 3);
  REQUIRE(plan.ways_out[1].with_fp8_weights.has_value());
  CHECK(plan.ways_out[1].with_fp8_weights->fits);
  REQUIRE(plan.context_limits.size() == 2);
  CHECK(plan.context_limits[0].max_ctx == 57'595);
  CHECK(plan.context_limits[1].max_ctx == 115'191);  // (25,757,220,864 - 18,208,006,144) / 65,536
}

TEST_CASE("largest_holding: the bisection every context-limit search shares") {
  CHECK(largest_holding(1'000, [](std::uint64_t n) { return n * n <= 50'000; }) == 223);  // 223^2 = 49,729
  CHECK(largest_holding(1'000, [](std::uint64_t) { return true; }) == 1'000);
  CHECK_FALSE(largest_holding(1'000, [](std::uint64_t) { return false; }).has_value());
  CHECK_FALSE(largest_holding(0, [](std::uint64_t) { return true; }).has_value());
}
