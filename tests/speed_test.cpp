// The decode-speed roofline bound of every row: bytes a decode step reads / the card's bandwidth,
// values computed by hand in the comments.

#include <catch2/catch.hpp>

#include "kvplan/catalog.h"
#include "kvplan/plan.h"
#include "support/run_binary.h"

using namespace kvplan;

namespace {

Row row_of(std::string_view model, std::string_view gpu, std::uint64_t ctx, std::uint64_t batch, std::string_view cache,
           std::size_t cards = 1) {
  const ModelSpec& spec = *builtin_models().find(model);
  PlanRequest request;
  request.contexts = {ctx};
  request.batch = batch;
  request.batch_given = true;
  const Dtype& type = parse_kv_dtype(cache, *spec.weight_dtype);
  request.caches = {{&type, &type}};
  return make_plan(spec, std::vector<GpuSpec>(cards, *builtin_gpus().find(gpu)), request).rows.front();
}

}  // namespace

TEST_CASE("a dense model's bound: weights + the cache at its context over the bandwidth", "[speed]") {
  // Qwen3-8B on an H100 (3,350 GB/s), 4,096 tokens at fp16: weights 16,381,470,720 + cache
  // 4,096 x 147,456 = 603,979,776 -> 16,985,450,496 bytes a step; 3.35e12 / that = 197.2276 tokens/s.
  const Row row = row_of("qwen3-8b", "h100", 4096, 1, "fp16");
  REQUIRE(row.decode_bound);
  CHECK(row.decode_bound->weights_bytes_read == 16'381'470'720u);
  CHECK(row.decode_bound->kv_bytes_read == 603'979'776u);
  CHECK(row.decode_bound->bandwidth_gbps == 3350.0);
  CHECK(row.decode_bound->tokens_per_s_per_sequence == Approx(197.2276).epsilon(1e-6));
  CHECK(row.decode_bound->tokens_per_s_batch == Approx(197.2276).epsilon(1e-6));
  CHECK(row.decode_bound->rule.rfind("roofline bound, not a prediction", 0) == 0);

  // 8 sequences at fp8: the cache 8 x 4,096 x 73,728 = 2,415,919,104; 18,797,389,824 a step:
  // 178.2162 tokens/s each, 1,425.7299 for the batch. A smaller cache dtype decodes faster.
  const Row batch = row_of("qwen3-8b", "h100", 4096, 8, "fp8");
  REQUIRE(batch.decode_bound);
  CHECK(batch.decode_bound->tokens_per_s_per_sequence == Approx(178.2162).epsilon(1e-6));
  CHECK(batch.decode_bound->tokens_per_s_batch == Approx(1425.7299).epsilon(1e-6));
  const Row batch_fp16 = row_of("qwen3-8b", "h100", 4096, 8, "fp16");
  CHECK(batch_fp16.decode_bound->tokens_per_s_batch < batch.decode_bound->tokens_per_s_batch);
}

TEST_CASE("an MoE reads its active weights", "[speed]") {
  // Qwen3-30B-A3B: 61,064,245,248 bytes of weights, 3,353,032,704 of 30,532,122,624 parameters
  // active -> ceil(61,064,245,248 x 3,353,032,704 / 30,532,122,624) = 6,706,065,408 bytes a step;
  // the cache 4,096 x (48 layers x 4 heads x 128 x 2 x 2 B) = 402,653,184; 3.35e12 / 7,108,718,592
  // = 471.2523 tokens/s.
  const Row row = row_of("qwen3-30b-a3b", "h100", 4096, 1, "fp16");
  REQUIRE(row.decode_bound);
  CHECK(row.decode_bound->weights_bytes_read == 6'706'065'408u);
  CHECK(row.decode_bound->kv_bytes_read == 402'653'184u);
  CHECK(row.decode_bound->tokens_per_s_per_sequence == Approx(471.2523).epsilon(1e-6));
  CHECK(row.decode_bound->rule.find("active weights") != std::string::npos);
}

TEST_CASE("tensor-parallel ranks read their shares at once", "[speed]") {
  // Two H100s: each reads 16,381,470,720 / 2 = 8,190,735,360 of weights and half the KV heads'
  // cache, 301,989,888: 8,492,725,248 a step, 394.4552 tokens/s.
  const Row row = row_of("qwen3-8b", "h100", 4096, 1, "fp16", 2);
  REQUIRE(row.decode_bound);
  CHECK(row.decode_bound->weights_bytes_read == 8'190'735'360u);
  CHECK(row.decode_bound->kv_bytes_read == 301'989'888u);
  CHECK(row.decode_bound->tokens_per_s_per_sequence == Approx(3.35e12 / 8'492'725'248.0).epsilon(1e-9));
}

TEST_CASE("a card without a bandwidth figure has no bound, and --speed prints the line", "[speed]") {
  PlanRequest request;
  request.contexts = {4096};
  GpuSpec given;
  given.id = "24GiB";
  given.name = "24GiB card";
  given.memory_bytes = 24 * GiB;
  given.memory_basis = "given";
  CHECK_FALSE(make_plan(*builtin_models().find("qwen3-8b"), given, request).rows.front().decode_bound);

  const auto result = kvplan::testing::run_kvplan("--model qwen3-8b --gpu h100 --ctx 4096 --kv-dtype fp16 --speed");
  REQUIRE(result.exit_code == 0);
  CHECK(result.out.find("Speed   ctx 4,096 fp16: at most 197.2 tokens/s per sequence, 197.2 for the batch of 1 "
                        "(roofline bound, not a prediction") != std::string::npos);
  const auto json = kvplan::testing::run_kvplan("--model qwen3-8b --gpu h100 --ctx 4096 --kv-dtype fp16 --format json");
  CHECK(json.out.find("\"tokens_per_s_per_sequence\": 197.22") != std::string::npos);
}
