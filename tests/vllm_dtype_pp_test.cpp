// vLLM's --dtype (config/model.py, _get_and_verify_dtype / _resolve_auto_dtype) and its pipeline
// parallelism (distributed/utils.py get_pp_indices; v1/core/kv_cache_utils.py get_kv_cache_configs),
// against hand arithmetic and the real pipeline-parallel logs of shared/reference/
// engine-logs-serving.jsonl (records P1 and P4).

#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "engines/vllm/rules.h"
#include "kvplan/dtype.h"
#include "kvplan/error.h"
#include "kvplan/units.h"
#include "support/catalog_entries.h"
#include "support/run_binary.h"
#include "support/vllm_exit_code.h"

using namespace kvplan;
using kvplan::testing::catalog_gpu;
using kvplan::testing::catalog_model;
using kvplan::testing::vllm_plan_exit_code;
using kvplan::testing::check_refused;
using kvplan::testing::ProcessResult;
using kvplan::testing::run_kvplan;

namespace {

VllmSettings vllm_pp_settings(std::uint64_t max_len, std::uint32_t pp, std::vector<std::uint32_t> partition = {}) {
  VllmSettings s;
  s.max_model_len = max_len;
  s.pipeline_parallel = pp;
  s.layer_partition = std::move(partition);
  return s;
}

}  // namespace

TEST_CASE("vLLM --dtype auto: a float32 checkpoint is loaded at the card's first dtype", "[vllm][vllm_dtype]") {
  const ModelSpec& gemma = catalog_model("gemma2-9b");  // float32 on the Hub: 9,241,705,984 params
  VllmSettings s;
  s.max_model_len = 8192;
  const VllmResult h100 = plan_vllm(gemma, catalog_gpu("h100"), s);
  // sm_90 supports [bfloat16, float16, float32]: the float32 checkpoint becomes bfloat16.
  CHECK(h100.dtype == "bfloat16");
  CHECK(h100.kv_dtype == "bf16");
  // 9,241,705,984 x 2 B = 18,483,411,968 B = 17.21 GiB (not the 34.43 GiB of float32), and the
  // rotary table at that dtype: 8,192 positions x 256 x 2 B = 4,194,304 B: 18,487,606,272 B.
  CHECK(h100.budget.weights == 18'487'606'272);
  // The cache follows the model dtype: 42 layers x 8 KV heads x (256 + 256) x 2 B = 344,064 B a token.
  CHECK(h100.kv_bytes_per_token == 344'064);

  // A V100 (sm_70) supports [float16, float32], and gemma2 is excluded from float16: float32 stays.
  const VllmResult v100 = plan_vllm(gemma, catalog_gpu("v100-32g"), s);
  CHECK(v100.dtype == "float32");
  CHECK(v100.budget.weights == 36'975'212'544);  // 9,241,705,984 x 4 B + 8,192 x 256 x 4 B
  CHECK(v100.kv_bytes_per_token == 688'128);      // 42 x 8 x 512 x 4 B

  // A bfloat16 checkpoint on a T4 (sm_75): bfloat16 is not supported, vLLM falls back to float16.
  const VllmResult t4 = plan_vllm(catalog_model("llama3.1-8b"), catalog_gpu("t4"), s);
  CHECK(t4.dtype == "float16");
  CHECK(t4.kv_dtype == "fp16");
  // The checkpoint's size (same width) + 131,072 x 128 x 2 B of rotary table = 16,094,076,928 B.
  CHECK(t4.budget.weights == 16'094'076'928);
}

TEST_CASE("vLLM --dtype given: casts, and what vLLM refuses", "[vllm][vllm_dtype]") {
  CHECK(parse_vllm_dtype("HALF", "--dtype") == VllmDtype::float16);
  CHECK(parse_vllm_dtype("float", "--dtype") == VllmDtype::float32);
  CHECK(parse_vllm_dtype("bfloat16", "--dtype") == VllmDtype::bfloat16);
  CHECK(parse_vllm_dtype("auto", "--dtype") == VllmDtype::automatic);
  CHECK_THROWS_WITH(parse_vllm_dtype("fp16", "--dtype"), Catch::Contains("auto, half, float16, bfloat16, float and float32"));

  VllmSettings s;
  s.max_model_len = 8192;
  s.dtype = VllmDtype::float32;
  // llama3.1-8b at float32: 8,030,261,248 params x 4 B = 32,121,044,992 B, and its rotary table at
  // float32, 131,072 x 128 x 4 B = 67,108,864 B: 32,188,153,856 B.
  const VllmResult wide = plan_vllm(catalog_model("llama3.1-8b"), catalog_gpu("h100"), s);
  CHECK(wide.dtype == "float32");
  CHECK(wide.budget.weights == 32'188'153'856);
  CHECK(wide.kv_bytes_per_token == 262'144);  // 32 layers x 8 x 256 x 4 B

  s.dtype = VllmDtype::float16;
  CHECK_THROWS_WITH(plan_vllm(catalog_model("gemma2-9b"), catalog_gpu("h100"), s), Catch::Contains("refuses float16"));
  s.dtype = VllmDtype::bfloat16;
  CHECK_THROWS_WITH(plan_vllm(catalog_model("llama3.1-8b"), catalog_gpu("v100-32g"), s),
                    Catch::Contains("compute capability 8.0"));
  // A quantized checkpoint at float32: which tensors widen is not modelled (exit 3).
  s.dtype = VllmDtype::float32;
  CHECK(vllm_plan_exit_code(catalog_model("llama3-8b-instruct-fp8"), catalog_gpu("h100"), s) == 3);
}

TEST_CASE("kvplan --runtime vllm --dtype: the table, the JSON and the refusals", "[vllm][vllm_dtype]") {
  const ProcessResult json = run_kvplan("--runtime vllm --model gemma2-9b --gpu h100 --max-model-len 8k --format json");
  REQUIRE(json.exit_code == 0);
  const nlohmann::json out = nlohmann::json::parse(json.out);
  CHECK(out["rows"][0]["weights_bytes"] == 18'487'606'272ULL);
  CHECK(out["rows"][0]["weight_dtype"] == "bf16");
  CHECK(out["vllm"]["rows"][0]["dtype"] == "bfloat16");
  const ProcessResult table = run_kvplan("--runtime vllm --model gemma2-9b --gpu h100 --max-model-len 8k");
  CHECK(table.out.find("Weights 17.22 GiB: the checkpoint as bfloat16, loaded whole, rotary tables 4 MiB") != std::string::npos);
  CHECK(table.out.find("--dtype auto: the float32 checkpoint is downcast to bfloat16") != std::string::npos);
  check_refused(run_kvplan("--runtime vllm --model gemma2-9b --gpu h100 --dtype half"), "refuses float16");
  check_refused(run_kvplan("--runtime vllm --model gemma2-9b --gpu h100 --dtype fp64"), "--dtype fp64");
}

TEST_CASE("vLLM get_pp_indices: the remainder before the last stage, or VLLM_PP_LAYER_PARTITION", "[vllm][vllm_pp]") {
  // Record P4 (vLLM 0.25.0): 43 layers on 2 stages printed "Hidden layers were unevenly partitioned: [22,21]".
  CHECK(vllm_pp_partition(43, 2, {}) == std::vector<std::uint32_t>{22, 21});
  // 80 // 3 = 26, remainder 2: the second-to-last, then the third-to-last stage.
  CHECK(vllm_pp_partition(80, 3, {}) == std::vector<std::uint32_t>{27, 27, 26});
  // 32 // 5 = 6, remainder 2.
  CHECK(vllm_pp_partition(32, 5, {}) == std::vector<std::uint32_t>{6, 6, 7, 7, 6});
  CHECK(vllm_pp_partition(48, 2, {16, 32}) == std::vector<std::uint32_t>{16, 32});
  CHECK_THROWS_WITH(vllm_pp_partition(48, 2, {10, 22}), Catch::Contains("adds up to 32 layers"));
  CHECK_THROWS_WITH(vllm_pp_partition(48, 3, {16, 32}), Catch::Contains("one per pipeline stage"));
  CHECK_THROWS_WITH(vllm_pp_partition(4, 8, {}), Catch::Contains("more pipeline stages"));
}

TEST_CASE("vLLM pipeline stages: each its own blocks, every stage the fewest", "[vllm][vllm_pp]") {
  const ModelSpec& llama = catalog_model("llama3.1-8b");
  VllmSettings s = vllm_pp_settings(8192, 2, {10, 22});
  s.kv_cache_memory_bytes = 10 * GiB;
  const VllmResult r = plan_vllm(llama, catalog_gpu("h100"), s);
  REQUIRE(r.stages.size() == 2);
  // A token of one layer: 8 KV heads x (128 + 128) x 2 B = 4,096 B; a block holds 16 tokens.
  // Stage 0: 10 layers, 655,360 B a block: 10 GiB / 655,360 = 16,384 blocks.
  CHECK(r.stages[0].block_bytes == 655'360);
  CHECK(r.stages[0].num_blocks == 16'384);
  // Stage 1: 22 layers, 1,441,792 B a block: 10,737,418,240 / 1,441,792 = 7,447.3 -> 7,447 blocks.
  CHECK(r.stages[1].num_blocks == 7'447);
  CHECK(r.decisive_stage == 1);
  CHECK(r.num_blocks == 7'447);
  // 0.21+: int(7,447 / 512 blocks a request x 8,192) = 119,152 tokens.
  CHECK(r.gpu_kv_cache_tokens == 119'152);
  // Weights: embeddings 128,256 x 4,096 x 2 B = 1,050,673,152 B on the first stage, the untied head
  // as much on the last; the other 16,060,522,496 - 2 x 1,050,673,152 = 13,959,176,192 B by layers
  // (436,224,256 B each): stage 0 10 x that + embeddings, stage 1 22 x that + head; each stage also
  // the rotary table, 131,072 x 128 x 2 B = 33,554,432 B.
  CHECK(r.stages[0].weights == 5'412'915'712 + 33'554'432);
  CHECK(r.stages[1].weights == 10'647'606'784 + 33'554'432);
  CHECK(r.stages[0].weights + r.stages[1].weights == 16'060'522'496 + 2 * 33'554'432);
  CHECK(r.budget.weights == r.stages[1].weights);

  // The even split at TP 2: 16 layers a stage, the KV heads halved.
  VllmSettings even = vllm_pp_settings(8192, 2);
  even.tensor_parallel = 2;
  even.kv_cache_memory_bytes = 10 * GiB;
  const VllmResult tp2 = plan_vllm(llama, catalog_gpu("h100"), even);
  CHECK(tp2.stages[0].layers == 16);
  CHECK(tp2.stages[1].first_layer == 16);
  CHECK(tp2.stages[0].kv_bytes_per_token == 16 * 2'048);  // 4 heads x 256 x 2 B a layer
}

TEST_CASE("vLLM pipeline parallelism: record P1's startup check (0.15) and the fixed one", "[vllm][vllm_pp]") {
  // Record P1 (vLLM 0.15.2rc1, issue #34076): Qwen3-Coder-30B-A3B-Instruct-FP8 (Qwen3-30B-A3B's
  // cache: 48 layers, 4 KV heads of 128, bf16), VLLM_PP_LAYER_PARTITION=16,32, max seq len 262,144:
  // "24.0 GiB KV cache is needed ... available KV cache memory (3.18 GiB) ... estimated maximum
  // model length is 34736". 3.18 GiB is rounded: 3,415,000,000 B lies in its band.
  const ModelSpec& qwen = catalog_model("qwen3-30b-a3b");
  VllmSettings s = vllm_pp_settings(262'144, 2, {16, 32});
  s.kv_cache_memory_bytes = 3'415'000'000;
  s.version = parse_vllm_version("0.15.2", "test");
  s.pp_whole_model_check = true;
  const VllmResult p1 = plan_vllm(qwen, catalog_gpu("rtx5090"), s);
  CHECK_FALSE(p1.starts);
  // The whole model: 48 x 4 x 256 x 2 B = 98,304 B a token x 262,144 = 25,769,803,776 B = 24.0 GiB.
  CHECK(p1.request_bytes == 25'769'803'776);
  // floor(3,415,000,000 / (16 x 98,304)) = 2,171 blocks of 16 tokens = 34,736.
  CHECK(p1.estimated_max_model_len == std::optional<std::uint64_t>(34'736));

  // With each stage checked on its own layers (PR #33698), the 32-layer stage binds:
  // floor(3,415,000,000 / (16 x 32 x 2,048)) = 3,256 blocks = 52,096 tokens.
  s.pp_whole_model_check = false;
  s.version = VllmVersion::v0_21;
  const VllmResult fixed = plan_vllm(qwen, catalog_gpu("rtx5090"), s);
  CHECK_FALSE(fixed.starts);
  CHECK(fixed.estimated_max_model_len == std::optional<std::uint64_t>(52'096));
}

TEST_CASE("kvplan --runtime vllm -pp: tp x pp cards, per-stage figures, refusals", "[vllm][vllm_pp]") {
  const ProcessResult json =
      run_kvplan("--runtime vllm --model llama3.1-70b --gpu 4xh100 -tp 2 -pp 2 --max-model-len 32k --format json");
  REQUIRE(json.exit_code == 0);
  const nlohmann::json out = nlohmann::json::parse(json.out);
  const nlohmann::json& row = out["rows"][0];
  CHECK(row["tp"] == 2);
  CHECK(row["pp"] == 2);
  REQUIRE(row["per_gpu"].size() == 4);
  CHECK(row["per_gpu"][1]["stage"] == 0);
  CHECK(row["per_gpu"][2]["stage"] == 1);
  const nlohmann::json& section = out["vllm"]["rows"][0];
  CHECK(section["pipeline_parallel"] == 2);
  REQUIRE(section["stages"].size() == 2);
  CHECK(section["stages"][0]["layers"] == 40);
  CHECK(section["stages"][0]["embedding"] == true);
  CHECK(section["stages"][1]["lm_head"] == true);

  check_refused(run_kvplan("--runtime vllm --model llama3.1-70b --gpu 2xh100 -tp 2 -pp 2"), "on 2 GPUs");
  check_refused(run_kvplan("--runtime vllm --model llama3.1-8b --gpu h100 -pp 2 --pp-layer-partition 10,20"),
                "adds up to 30 layers");
  // One stage: vLLM still reads the partition, and it must name every layer in one entry.
  check_refused(run_kvplan("--runtime vllm --model llama3.1-8b --gpu h100 --pp-layer-partition 10,22"),
                "one per pipeline stage (1)");
  check_refused(run_kvplan("--runtime vllm --model llama3.1-8b --gpu 3xh100 -pp 2"), "does not divide the 3 GPUs");
  // The partition from the environment, as vLLM reads it.
  const ProcessResult env = run_kvplan("--runtime vllm --model llama3.1-8b --gpu h100 -pp 2 --format json",
                                       "VLLM_PP_LAYER_PARTITION=10,22");
  REQUIRE(env.exit_code == 0);
  CHECK(nlohmann::json::parse(env.out)["vllm"]["rows"][0]["stages"][1]["layers"] == 22);
  // A hybrid layout under -pp is planned from 0.11 (the groups dealt to the stages); on 0.10, whose
  // groups were cut in runs, it is unknown (exit 3), not a guess.
  CHECK(run_kvplan("--runtime vllm --model gemma2-9b --gpu 2xh100 -pp 2").exit_code == 0);
  check_refused(run_kvplan("--runtime vllm --model gemma2-9b --gpu 2xh100 -pp 2 --vllm-version 0.10"), "on vLLM 0.10", 3);
  // Gemma 3n's KV-sharing layers would read a cache another stage holds.
  check_refused(run_kvplan("--runtime vllm --model gemma3n-e4b --gpu 2xh100 -pp 2"), "share another layer's KV cache", 3);
}

// Gemma 3 27B: 52 sliding layers (window 1024) and 10 full (every sixth, 5, 11, ..., 59). The group
// size is 10 (52 is not within 1.5x of 10): 6 sliding groups, the sliding layers dealt to them in
// turn (rank r to group r % 6), and 1 full group. -pp 2 splits the layers 31 + 31: stage 0 holds
// sliding ranks 0-25 and full layers 5-29, so [5,5,4,4,4,4 | 5] of each group; stage 1 ranks 26-51
// and 35-59, [4,4,5,5,4,4 | 5]. A stage's block is a page (16 tokens x 16 KV heads x 128 x 2 x 2 B =
// 131,072 B) x the most layers any of its groups holds, 5: 655,360 B, so 20 GiB hold exactly 32,768
// blocks on each (16,384 of 10 pages on one GPU). A 32,768-token request: 577 blocks in each
// sliding group, 2,048 in the full one, 5,510 in all.
TEST_CASE("vLLM pipeline stages of a hybrid: the whole model's groups projected onto each stage", "[vllm][vllm_pp]") {
  const ModelSpec model = catalog_model("gemma3-27b");
  const GpuSpec h100 = catalog_gpu("h100");
  VllmSettings settings = vllm_pp_settings(32'768, 2);
  settings.kv_cache_memory_bytes = 20 * GiB;
  const VllmResult r = plan_vllm(model, h100, settings);
  REQUIRE(r.stages.size() == 2);
  CHECK(r.stages[0].block_bytes == 655'360);
  CHECK(r.stages[1].block_bytes == 655'360);
  CHECK(r.num_blocks == 32'768);
  REQUIRE(r.groups.size() == 7);
  const std::vector<std::uint32_t> held = {5, 5, 4, 4, 4, 4, 5};  // stage 0, the decisive one (ties go to the first)
  for (std::size_t g = 0; g < held.size(); ++g) {
    INFO("group " << g);
    CHECK(r.groups[g].layers == held[g]);
    CHECK(r.groups[g].padding_layers == 5 - held[g]);
  }
  CHECK(r.blocks_per_request == 5'510);
  CHECK(r.max_concurrency() == Approx(32'768.0 / 5'510));
  // The startup check on each stage: from 0.14, the stage's group size for every group,
  // 5 x 131,072 x 5,510 = 3,611,033,600 B; before, its real layers, (577 x 26 + 2,048 x 5) pages =
  // 3,308,525,568 B on either stage.
  CHECK(r.stages[0].request_bytes == 3'611'033'600ull);
  CHECK(r.stages[1].request_bytes == 3'611'033'600ull);
  settings.check_counts_padding = false;
  settings.version = VllmVersion::v0_11;
  const VllmResult older = plan_vllm(model, h100, settings);
  CHECK(older.stages[0].request_bytes == 3'308'519'424ull);
  CHECK(older.stages[1].request_bytes == 3'308'519'424ull);
  // One GPU: a block of 10 pages, half the blocks, the same requests.
  settings.pipeline_parallel = 1;
  CHECK(plan_vllm(model, h100, settings).num_blocks == 16'384);
}
