// vLLM's decode context parallelism (-dcp N, --decode-context-parallel-size N; issue #13): the dcp
// ranks are the TP ranks, each keeping 1/dcp of every request's tokens. Rules read in vLLM's source:
// kv_cache_interface.py (FullAttentionSpec.max_memory_usage_bytes: cdiv(max_model_len, dcp x pcp)
// before the blocks; SlidingWindowSpec asserts dcp == 1) and kv_cache_utils.py
// (_report_kv_cache_config: x dcp x pcp) at vllm-project/vllm 001cabc1; config/model.py
// (verify_with_parallel_config, the GQA checks) at 0052a5b8; config/parallel.py (tp % dcp) at
// 00193b82. --kv-cache-memory makes the memory exact, so every figure is computed by hand.

#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "engines/vllm/rules.h"
#include "kvplan/error.h"
#include "kvplan/units.h"
#include "loaders/logs/engine_log.h"
#include "support/catalog_entries.h"
#include "support/log_fixtures.h"
#include "support/run_binary.h"

using namespace kvplan;
using kvplan::testing::catalog_gpu;
using kvplan::testing::catalog_model;

// DeepSeek-V3 (MLA): one latent of kv_lora_rank 512 + qk_rope_head_dim 64 = 576 values x 2 B (bf16)
// = 1,152 B a token a layer, on every TP rank. FlashMLA forces 64-token blocks on the H200 (sm_90):
// a page is 64 x 1,152 = 73,728 B, a block of the 61 layers 61 x 73,728 = 4,497,408 B.
// 40 GiB = 42,949,672,960 B hold floor(42,949,672,960 / 4,497,408) = 9,549 blocks
// (9,549 x 4,497,408 = 42,945,748,992; 3,923,968 B left, less than a block).

TEST_CASE("vLLM -dcp: DeepSeek-V3 at -tp 8 -dcp 8, each rank a 1/8 of every request", "[vllm][dcp]") {
  const ModelSpec model = catalog_model("deepseek-v3");
  const GpuSpec gpu = catalog_gpu("h200");
  VllmSettings settings;
  settings.tensor_parallel = 8;
  settings.kv_cache_memory_bytes = 40 * GiB;
  settings.max_model_len = 163'840;

  const VllmResult whole = plan_vllm(model, gpu, settings);
  settings.decode_context_parallel = 8;
  const VllmResult split = plan_vllm(model, gpu, settings);

  // The page and the blocks of a rank do not change: dcp reuses the TP ranks.
  CHECK(split.page_bytes == 73'728);
  CHECK(split.groups.at(0).block_size == 64);
  CHECK(split.num_blocks == 9'549);
  CHECK(whole.num_blocks == 9'549);
  CHECK(split.decode_context_parallel == 8);
  CHECK(whole.decode_context_parallel == 1);
  // A request: cdiv(163,840, 64) = 2,560 blocks whole; cdiv(cdiv(163,840, 8) = 20,480, 64) = 320 a rank.
  CHECK(whole.blocks_per_request == 2'560);
  CHECK(split.blocks_per_request == 320);
  // "Maximum concurrency": 9,549 / 2,560 = 3.73x; 9,549 / 320 = 29.84x.
  CHECK(whole.max_concurrency() == Approx(3.730078125));
  CHECK(split.max_concurrency() == Approx(29.840625));
  // "GPU KV cache size" (0.21+): int(concurrency x 163,840) = 9,549 x 64 = 611,136 whole and
  // 9,549 x 512 = 4,889,088 with -dcp 8 (the tokens of the 8 ranks' shares).
  CHECK(whole.gpu_kv_cache_tokens == 611'136);
  CHECK(split.gpu_kv_cache_tokens == 4'889'088);
  // The startup check: one request is 320 x 4,497,408 = 1,439,170,560 B a rank (2,560 blocks:
  // 11,513,364,480 B without -dcp).
  CHECK(whole.request_bytes == 11'513'364'480ull);
  CHECK(split.request_bytes == 1'439'170'560ull);
  CHECK(split.starts);
  bool said = false;
  for (const std::string& rule : split.rules)
    said = said || rule.find("-dcp 8: the 8 TP ranks form 1 decode-context group of 8; each rank keeps 1/8") == 0;
  CHECK(said);

  SECTION("0.11 to 0.20: blocks // groups x block size, x dcp (_report_kv_cache_config)") {
    settings.version = VllmVersion::v0_11;
    // 9,549 x 64 x 8 = 4,889,088.
    CHECK(plan_vllm(model, gpu, settings).gpu_kv_cache_tokens == 4'889'088);
  }
  SECTION("a length that does not divide: cdiv(cdiv(100,000, 8) = 12,500, 64) = 196 blocks (whole: 1,563)") {
    settings.max_model_len = 100'000;
    CHECK(plan_vllm(model, gpu, settings).blocks_per_request == 196);
    settings.decode_context_parallel = 1;
    CHECK(plan_vllm(model, gpu, settings).blocks_per_request == 1'563);
  }
  SECTION("-dcp 2 at -tp 8: four groups of 2 ranks, a request cdiv(81,920, 64) = 1,280 blocks a rank") {
    settings.decode_context_parallel = 2;
    const VllmResult r = plan_vllm(model, gpu, settings);
    CHECK(r.blocks_per_request == 1'280);
    bool groups = false;
    for (const std::string& rule : r.rules) groups = groups || rule.find("form 4 decode-context groups of 2") != std::string::npos;
    CHECK(groups);
  }
}

TEST_CASE("vLLM -dcp: the startup check, vLLM's suggestion and auto-fit count a rank's share", "[vllm][dcp]") {
  const ModelSpec model = catalog_model("deepseek-v3");
  const GpuSpec gpu = catalog_gpu("h200");
  VllmSettings settings;
  settings.tensor_parallel = 8;
  settings.max_model_len = 163'840;

  SECTION("5 GiB: 1,193 blocks (5,368,709,120 / 4,497,408 = 1,193.7); whole, vLLM stops; split, it starts") {
    settings.kv_cache_memory_bytes = 5 * GiB;
    const VllmResult whole = plan_vllm(model, gpu, settings);
    CHECK_FALSE(whole.starts);
    // The longest whole request: 1,193 blocks x 64 = 76,352 tokens.
    CHECK(whole.estimated_max_model_len == 76'352);
    settings.decode_context_parallel = 8;
    const VllmResult split = plan_vllm(model, gpu, settings);
    CHECK(split.starts);  // 320 blocks of the 1,193
    CHECK(split.max_concurrency() == Approx(1'193.0 / 320));
  }
  SECTION("1 GiB: 238 blocks (1,073,741,824 / 4,497,408 = 238.7); the longest L with cdiv(cdiv(L, 8), 64) <= 238") {
    settings.kv_cache_memory_bytes = 1 * GiB;
    settings.decode_context_parallel = 8;
    const VllmResult r = plan_vllm(model, gpu, settings);
    CHECK_FALSE(r.starts);  // 320 blocks needed
    // cdiv(L, 8) <= 238 x 64 = 15,232, so L <= 15,232 x 8 = 121,856.
    CHECK(r.estimated_max_model_len == 121'856);
    settings.auto_fit_max_model_len = true;
    const VllmResult fitted = plan_vllm(model, gpu, settings);
    CHECK(fitted.auto_fit == VllmAutoFit::memory);
    CHECK(fitted.max_model_len == 121'856);
    CHECK(fitted.blocks_per_request == 238);
  }
}

TEST_CASE("vLLM -dcp with GQA: the KV heads' replicas split the tokens", "[vllm][dcp]") {
  // Llama 3.1 70B: 80 layers, 8 KV heads of 128, 64 query heads. At -tp 16 each KV head is
  // replicated on 2 ranks (get_num_kv_heads: max(1, 8 // 16) = 1 a rank): 1 x 256 x 2 B = 512 B a
  // token a layer, 80 x 512 = 40,960 B a token, 16-token blocks of 655,360 B. 10 GiB =
  // 10,737,418,240 / 655,360 = 16,384 blocks exactly.
  const ModelSpec model = catalog_model("llama3.1-70b");
  const GpuSpec gpu = catalog_gpu("h100");
  VllmSettings settings;
  settings.tensor_parallel = 16;
  settings.kv_cache_memory_bytes = 10 * GiB;
  settings.max_model_len = 131'072;
  const VllmResult whole = plan_vllm(model, gpu, settings);
  settings.decode_context_parallel = 2;
  const VllmResult split = plan_vllm(model, gpu, settings);
  CHECK(split.kv_bytes_per_token == 40'960);
  CHECK(split.num_blocks == 16'384);
  // cdiv(131,072, 16) = 8,192 blocks whole; cdiv(65,536, 16) = 4,096 a rank at -dcp 2.
  CHECK(whole.blocks_per_request == 8'192);
  CHECK(split.blocks_per_request == 4'096);
  CHECK(whole.max_concurrency() == Approx(2.0));
  CHECK(split.max_concurrency() == Approx(4.0));
  // int(4.0 x 131,072) = 524,288 = 16,384 x 16 x 2.
  CHECK(split.gpu_kv_cache_tokens == 524'288);
}

TEST_CASE("vLLM -dcp: sliding-window layers only once they are full attention", "[vllm][dcp]") {
  // Gemma 3 12B: 40 sliding(1024) + 8 full layers, 8 KV heads of 256, 16 query heads. With the
  // hybrid manager, vLLM asserts in SlidingWindowSpec ("DCP not support sliding window."); without
  // it, unify_hybrid_kv_cache_specs makes them FullAttentionSpec and they are split too:
  // cdiv(cdiv(131,072, 2) = 65,536, 16) = 4,096 blocks a request.
  const ModelSpec model = catalog_model("gemma3-12b");
  const GpuSpec gpu = catalog_gpu("h100");
  VllmSettings settings;
  settings.tensor_parallel = 16;
  settings.decode_context_parallel = 2;
  settings.kv_cache_memory_bytes = 10 * GiB;
  settings.max_model_len = 131'072;
  CHECK_THROWS_WITH(plan_vllm(model, gpu, settings), Catch::Contains("DCP not support sliding window."));
  settings.hybrid_kv_cache_manager = false;
  const VllmResult r = plan_vllm(model, gpu, settings);
  REQUIRE(r.groups.size() == 1);
  CHECK(r.groups[0].kind == LayerKind::full);
  CHECK(r.blocks_per_request == 4'096);
}

TEST_CASE("kvplan --runtime vllm -dcp: both spellings, the JSON, kvplan check and the refusals", "[vllm][dcp]") {
  using kvplan::testing::check_refused;
  using kvplan::testing::run_kvplan;
  const std::string deepseek = "--runtime vllm --model deepseek-v3 --gpu h200 -tp 8 --kv-cache-memory 40GiB ";
  const auto json = run_kvplan(deepseek + "-dcp 8 --format json");
  REQUIRE(json.exit_code == 0);
  const nlohmann::json doc = nlohmann::json::parse(json.out);
  CHECK(doc["vllm"]["rows"][0]["decode_context_parallel"] == 8);
  CHECK(doc["vllm"]["rows"][0]["blocks_per_request"] == 320);
  CHECK(doc["vllm"]["rows"][0]["gpu_kv_cache_tokens"] == 4'889'088);
  // The row's KV: one request's 320 blocks of 4,497,408 B on each rank.
  CHECK(doc["rows"][0]["kv_bytes"] == 1'439'170'560ull);
  const auto long_name = run_kvplan(deepseek + "--decode-context-parallel-size 8 --format json");
  CHECK(long_name.out == json.out);
  const auto table = run_kvplan(deepseek + "-dcp 8");
  CHECK_THAT(table.out, Catch::Contains("Row 1: -tp 8 -dcp 8, --max-model-len 163,840") &&
                            Catch::Contains("GPU KV cache size: 4,889,088 tokens (9,549 blocks)") &&
                            Catch::Contains("Maximum concurrency for 163,840 tokens per request: 29.84x"));

  // kvplan check reads the flag in a vllm serve command line.
  const auto checked = run_kvplan("check --cmd 'vllm serve deepseek-ai/DeepSeek-V3 -tp 8 -dcp 8 --kv-cache-memory 40GiB' "
                                  "--gpu 8xh200 --format json");
  CHECK(checked.exit_code == 0);
  CHECK_THAT(checked.out, Catch::Contains("\"decode_context_parallel\": 8"));

  // In vLLM's words (exit 2).
  check_refused(run_kvplan("--runtime vllm --model deepseek-v3 --gpu h200 -tp 8 -dcp 3"),
                "-dcp 3: vLLM refuses it: tp_size=8 must be divisible by dcp_size=3.");
  check_refused(run_kvplan("--runtime vllm --model llama3.1-70b --gpu h100 -tp 8 -dcp 2"),
                "tensor parallel size 8 must be greater than total num kv heads 8 when enable decode context parallel "
                "for GQA/MQA");
  check_refused(run_kvplan("--runtime vllm --model llama3.1-70b --gpu h100 -tp 16 -dcp 4"),
                "decode context parallel size must less than or equal to (tensor parallel size 16 // total num kv heads "
                "8) = 2, but got 4");
  // Qwen2.5 14B: 40 query heads over 8 KV heads = 5 a KV head, not divisible by 2.
  check_refused(run_kvplan("--runtime vllm --model qwen2.5-14b --gpu h100 -tp 20 -dcp 2"),
                "Total number of q per kv attn heads (5) must be divisible by dcp world size");
  check_refused(run_kvplan("--runtime vllm --model gemma3-12b --gpu h100 -tp 16 -dcp 2"), "DCP not support sliding window.");
  // Not read from vLLM's source: refused (exit 3), naming -dcp and the kind.
  check_refused(run_kvplan("--runtime vllm --model llama4-scout --gpu h100 -tp 8 -dcp 2"),
                "-dcp 2: the vLLM profile does not model decode context parallelism with chunked-local attention", 3);
  check_refused(run_kvplan("--runtime vllm --model qwen3.5-27b --gpu h100 -tp 8 -dcp 2"),
                "-dcp 2: the vLLM profile does not model decode context parallelism with recurrent", 3);
  check_refused(run_kvplan("--runtime vllm --model deepseek-v3 --gpu h200 -tp 8 -dcp 8 --vllm-version 0.10"),
                "under the 0.10 rules", 3);
  check_refused(run_kvplan("--runtime vllm --model deepseek-v3 --gpu h200 -tp 8 -pp 2 -dcp 8"),
                "-dcp 8: the vLLM profile does not model decode context parallelism with pipeline parallelism (-pp 2)", 3);
  check_refused(run_kvplan("--runtime vllm --model deepseek-v3.2 --gpu h200 -tp 8 -dcp 8"), "DSA indexer cache", 3);
}

TEST_CASE("kvplan explain reads -dcp from a vLLM log: the args dict and the cp_world_size line", "[vllm][dcp][explain]") {
  // The sentence is _report_kv_cache_config's format string (kv_cache_utils.py at 001cabc1,
  // "Multiplying the GPU KV cache size by the cp_world_size %d (pcp_world_size %d * dcp_world_size
  // %d).") with 8, 1, 8 filled in: no real log of a -dcp run was found to quote.
  const logs::EngineLog multiplied = logs::read_engine_log(
      "INFO 11-02 10:00:00 [kv_cache_utils.py:1087] Multiplying the GPU KV cache size by the cp_world_size 8 "
      "(pcp_world_size 1 * dcp_world_size 8).\n");
  REQUIRE(multiplied.setting("decode_context_parallel_size") != nullptr);
  CHECK(multiplied.setting("decode_context_parallel_size")->value == "8");
  // The API server's dict of the flags given (the same line as -tp's 'tensor_parallel_size').
  const logs::EngineLog args = logs::read_engine_log(
      "(APIServer pid=1) INFO 11-02 10:00:00 [utils.py:233] non-default args: {'model': 'deepseek-ai/DeepSeek-V3', "
      "'tensor_parallel_size': 8, 'decode_context_parallel_size': 4}\n");
  REQUIRE(args.setting("decode_context_parallel_size") != nullptr);
  CHECK(args.setting("decode_context_parallel_size")->value == "4");
  CHECK(args.setting("tensor_parallel_size")->value == "8");
  // vLLM 0.19's config line prints it among the parallel sizes (a real log: tests/fixtures/logs,
  // "tensor_parallel_size=1, pipeline_parallel_size=1, data_parallel_size=1,
  // decode_context_parallel_size=1").
  const logs::EngineLog real = kvplan::testing::read_log_fixture("vllm-0.19-llama3.1-8b-h100.log");
  REQUIRE(real.setting("decode_context_parallel_size") != nullptr);
  CHECK(real.setting("decode_context_parallel_size")->value == "1");
}
