// The TensorRT-LLM profile against its real startup logs (shared/reference/engine-logs-serving.jsonl
// records T1-T7; staging/engines/vectors-sglang-trtllm.jsonl) and hand arithmetic. The one log
// that prints the free memory TensorRT-LLM sized from (T3) is reproduced from it to the block;
// the others print the token count the pool holds (or the creator's max_tokens), which is fed back
// as KvCacheConfig.max_tokens to check their blocks, their "Allocated X GiB" and their pages.

#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "engines/trtllm/rules.h"
#include "kvplan/catalog.h"
#include "kvplan/dtype.h"
#include "kvplan/error.h"
#include "kvplan/gpu.h"
#include "kvplan/model_loader.h"
#include "kvplan/units.h"
#include "support/run_binary.h"
#include "support/catalog_entries.h"

using namespace kvplan;
using kvplan::testing::catalog_model;
using kvplan::testing::catalog_cards;

namespace {



const Dtype& kv(const char* name) { return parse_kv_dtype(name, parse_weight_dtype("bf16")); }

bool has_line(const TrtllmResult& r, const std::string& text) {
  for (const std::string& line : r.log_lines)
    if (line.find(text) != std::string::npos) return true;
  return false;
}

/// Generous free memory, so that a given max_tokens is what bounds the pool.
TrtllmSettings with_max_tokens(std::uint64_t tokens, const char* version) {
  TrtllmSettings s;
  s.max_tokens = tokens;
  s.free_memory = 200 * GiB;
  s.version = parse_trtllm_version(version, "test");
  return s;
}

}  // namespace

TEST_CASE("TensorRT-LLM T3: 631 blocks from the printed 21.89 GiB available (TensorRT engine, 0.13)", "[trtllm]") {
  // Qwen1.5-7B (the fine-tune's base, tests/fixtures/hf/qwen1.5-7b), an fp16 engine: 2 x 32 x 32 x
  // 128 x 2 B = 524,288 B a token. calculateMaxNumBlocks: (int)(0.9f x available / 524,288) =
  // 40,338 to 40,356 over the print's rounding band (21.885 to 21.895 GiB); ceilDiv by the
  // engine's 64-token blocks = 631 at both ends, as printed (floor would give 630).
  const ModelSpec qwen = load_model(kvplan::testing::source_path("tests/fixtures/hf/qwen1.5-7b"));
  for (const std::uint64_t thousandths : {21'885u, 21'895u}) {
    TrtllmSettings s;
    s.version = parse_trtllm_version("0.13.0.dev2024082000", "test");
    s.kv_dtype = &kv("fp16");
    s.free_memory = thousandths * GiB / 1000;
    s.max_seq_len = 4096;
    const TrtllmResult r = plan_trtllm(qwen, catalog_cards("a100-40g"), s);
    INFO(thousandths);
    CHECK(r.stages.front().bytes_per_token == 524'288);
    CHECK(r.tokens_per_block == 64);
    CHECK(r.blocks == 631);
    CHECK(has_line(r, "Number of blocks in KV cache primary pool: 631"));
  }
}

TEST_CASE("TensorRT-LLM T1: 860,308 max tokens round UP to 860,320 in 0.20 (52.51 GiB, 5 pages)", "[trtllm]") {
  // Llama-3.1-8B-Instruct-FP8 (its KV shapes are the catalog's Llama 3.1 8B), FP8 KV: 2 x 32 x 8 x
  // 128 x 1 B = 65,536 B a token. The creator's max_tokens 860,308 (printed in the warning) ->
  // ceil(860,308 / 32) = 26,885 blocks = 860,320 tokens, 26,885 x 32 x 65,536 B = 52.51 GiB.
  // Fraction 0.8 as float32: 0.800000011920929, as printed.
  SECTION("from the creator's printed max_tokens, given as KvCacheConfig.max_tokens") {
    TrtllmSettings s = with_max_tokens(860'308, "0.20.0");
    s.kv_dtype = &kv("fp8");
    s.free_gpu_memory_fraction = 0.8;
    s.max_seq_len = 157;
    s.max_num_tokens = 23'552;
    s.max_batch_size = 4096;
    const TrtllmResult r = plan_trtllm(catalog_model("llama3.1-8b"), catalog_cards("h100"), s);
    CHECK(r.blocks == 26'885);
    CHECK(r.tokens == 860'320);
    CHECK(has_line(r, "Both free_gpu_memory_fraction and max_tokens are set (to 0.800000011920929 and 860308, "
                      "respectively). The smaller value will be used."));
    CHECK(has_line(r, "Max KV cache pages per sequence: 5 [window size=157]"));
    CHECK(has_line(r, "Number of tokens per block: 32."));
    CHECK(has_line(r, "[MemUsageChange] Allocated 52.51 GiB for max tokens in paged KV cache (860320)."));
    CHECK(has_line(r, "max_seq_len=157, max_num_requests=4096, max_num_tokens=23552, max_batch_size=4096"));
  }
  SECTION("from free memory that makes the creator's count 860,308 (70,476,430,310 to 70,476,512,229 B)") {
    for (const std::uint64_t free : {70'476'430'310ull, 70'476'512'229ull}) {
      TrtllmSettings s;
      s.version = parse_trtllm_version("0.20.0", "test");
      s.kv_dtype = &kv("fp8");
      s.free_gpu_memory_fraction = 0.8;
      s.free_memory = free;
      s.max_seq_len = 157;
      const TrtllmResult r = plan_trtllm(catalog_model("llama3.1-8b"), catalog_cards("h100"), s);
      INFO(free);
      CHECK(r.creator_max_tokens == 860'308);
      CHECK(r.tokens == 860'320);
      // From 0.21 the same count floors: 26,884 blocks, 860,288 tokens.
      s.version = parse_trtllm_version("0.21.0", "test");
      CHECK(plan_trtllm(catalog_model("llama3.1-8b"), catalog_cards("h100"), s).tokens == 860'288);
    }
  }
}

TEST_CASE("TensorRT-LLM T4, T5, T6, T7: the pools four more logs printed", "[trtllm]") {
  SECTION("T4 (0.21.0rc1): Qwen2.5-VL-7B's text model, 301,472 tokens = 16.10 GiB") {
    // 2 x 28 x 4 x 128 x 2 B = 57,344 B; 301,472 = 9,421 blocks of 32. The count itself needs the
    // dry run's peak, which the log does not print.
    TrtllmSettings s = with_max_tokens(301'472, "0.21.0rc1");
    s.max_seq_len = 1800;
    s.max_num_tokens = 1700;
    s.max_batch_size = 1;
    const TrtllmResult r = plan_trtllm(catalog_model("qwen2.5-7b"), catalog_cards("l40s"), s);
    CHECK(r.stages.front().bytes_per_token == 57'344);
    CHECK(has_line(r, "[MemUsageChange] Allocated 16.10 GiB for max tokens in paged KV cache (301472)."));
  }
  SECTION("T5 (TensorRT engine): Qwen2.5-Coder-0.5B, 395,776 tokens = 4.53 GiB") {
    // An int8 weight-only engine keeps an fp16 cache: 2 x 24 x 2 x 64 x 2 B = 12,288 B; 395,776 =
    // 6,184 blocks of 64. The free memory at sizing is not in the excerpt.
    TrtllmSettings s = with_max_tokens(395'776, "0.15");
    s.kv_dtype = &kv("fp16");
    s.max_seq_len = 4096;
    const TrtllmResult r = plan_trtllm(catalog_model("qwen2.5-0.5b"), catalog_cards("rtxa6000"), s);
    CHECK(r.stages.front().bytes_per_token == 12'288);
    CHECK(r.blocks == 6'184);
    CHECK(has_line(r, "[MemUsageChange] Allocated 4.53 GiB for max tokens in paged KV cache (395776)."));
  }
  SECTION("T6 (v0.8): 69,524,783,104 B for 132,608 tokens (the model is redacted: only its shape is checked)") {
    // 69,524,783,104 / 132,608 = 524,288 B a token: the 32 x 32 x 128 fp16 shape of Llama-2-7B, here
    // Qwen1.5-7B's. 132,608 = 2,072 blocks of 64.
    const ModelSpec qwen = load_model(kvplan::testing::source_path("tests/fixtures/hf/qwen1.5-7b"));
    TrtllmSettings s = with_max_tokens(132'608, "0.8");
    s.kv_dtype = &kv("fp16");
    s.max_seq_len = 5120;
    const TrtllmResult r = plan_trtllm(qwen, catalog_cards("a100-80g"), s);
    CHECK(r.pool_bytes == 69'524'783'104ull);
  }
  SECTION("T7 (TensorRT engine via cortex): 128 tokens = 16,777,216 B cannot hold one sequence") {
    // Mistral 7B, fp16: 2 x 32 x 8 x 128 x 2 B = 131,072 B; 128 tokens = 16,777,216 B. One sequence
    // of 16 pages needs more: the engine's assertion fails, as logged.
    TrtllmSettings s = with_max_tokens(128, "0.11");
    s.kv_dtype = &kv("fp16");
    s.max_seq_len = 1024;
    const TrtllmResult r = plan_trtllm(catalog_model("mistral-7b-v0.1"), catalog_cards("rtx4090"), s);
    CHECK(r.pool_bytes == 16'777'216);
    CHECK(r.windows.front().blocks_per_sequence == 16);
    CHECK_FALSE(r.starts);
    CHECK_THAT(r.refusal, Catch::StartsWith("Assertion failed: maxTokensInPagedKvCache"));
  }
}

TEST_CASE("TensorRT-LLM T2: the logs kvplan cannot match, and why", "[trtllm]") {
  // T2 (Llama-2-7b, GptSession, 2023-10): "Using 10718 tokens" is printed before the block rounding
  // by the v0.5-era GptSession, whose free memory is not in the excerpt; kvplan's rules start at
  // 0.8 and say so.
  CHECK_THROWS_WITH(parse_trtllm_version("0.5", "--trtllm-version"), Catch::Contains("0.8 or later"));
  // T1's own weights line (8.46 GB) and T4's peak are not enough to derive their counts: the dry
  // run's peak is never printed. What the estimate gives for T1 is within 1% of it.
  TrtllmSettings s;
  s.version = parse_trtllm_version("0.20.0", "test");
  s.kv_dtype = &kv("fp8");
  s.free_gpu_memory_fraction = 0.8;
  s.max_seq_len = 157;
  s.max_num_tokens = 23'552;
  s.max_batch_size = 4096;
  ModelSpec fp8 = catalog_model("llama3.1-8b");
  fp8.weights_bytes = 846 * GiB / 100;  // "Rank 0 uses 8.46 GB for model weights"
  fp8.params = 0;
  const TrtllmResult r = plan_trtllm(fp8, catalog_cards("h100"), s);
  CHECK(static_cast<double>(r.tokens) == Approx(860'320).epsilon(0.01));
  CHECK(r.tokens <= 860'320);  // the estimate leaves less, never more
}

TEST_CASE("TensorRT-LLM bytes a token: ceil of the heads per rank, MLA whole, NVFP4 and DSA", "[trtllm]") {
  const auto stage = [](const char* id, std::uint32_t tp, const char* dtype = nullptr, const char* gpu = "h100") {
    TrtllmSettings s = with_max_tokens(1000, "latest");
    s.tp = tp;
    if (dtype) s.kv_dtype = &kv(dtype);
    return plan_trtllm(catalog_model(id), catalog_cards(gpu, tp), s).stages.front();
  };
  // Qwen3-235B-A22B, 4 KV heads: at TP 8 the pool holds ceil(4 / 8) = 1 a layer, 94 x 2 x 128 x 2 B
  // = 48,128; the creator's estimate floors 128 x 4 // 8 = 64: 24,064 B.
  CHECK(stage("qwen3-235b-a22b", 8).bytes_per_token == 48'128);
  CHECK(stage("qwen3-235b-a22b", 8).estimate_bytes_per_token == 24'064);
  CHECK(stage("qwen3-235b-a22b", 4).estimate_bytes_per_token == 48'128);
  // DeepSeek-V2-Lite: 27 x 576 x 2 B at any TP (kv_factor 1).
  CHECK(stage("deepseek-v2-lite", 1).bytes_per_token == 31'104);
  CHECK(stage("deepseek-v2-lite", 4).bytes_per_token == 31'104);
  // NVFP4 on a B200: 65,536 values a token of Llama 3.1 8B -> 32,768 B + 4,096 B of fp8 scales.
  CHECK(stage("llama3.1-8b", 1, "nvfp4", "b200").bytes_per_token == 36'864);
  // DeepSeek-V3.2 (DSACacheManager): fp8 latent 61 x 576 + the indexer 61 x 132 = 43,188 B.
  CHECK(stage("deepseek-v3.2", 1, "fp8").bytes_per_token == 61ull * (576 + 132));
}

TEST_CASE("TensorRT-LLM VSWA: Gemma 3's pool in equal shares across its windows", "[trtllm]") {
  // --max_attention_window 1024,1024,1024,1024,1024,8192 over Gemma 3 12B (max_seq_len 8192): 40
  // layers of window 1024 and 8 of 8192, each 2 x 8 x 256 x 2 B = 8,192 B a token: the sliding pool
  // 327,680 B a token, the full one 65,536 B. 40 GiB free x 0.9 = 38,654,705,664 B, half each:
  // 1,843 and 9,216 blocks of 32 (floor).
  TrtllmSettings s;
  s.free_memory = 40 * GiB;
  s.max_seq_len = 8192;
  s.max_attention_window = {1024, 1024, 1024, 1024, 1024, 8192};
  const TrtllmResult r = plan_trtllm(catalog_model("gemma3-12b"), catalog_cards("h100"), s);
  REQUIRE(r.vswa);
  REQUIRE(r.windows.size() == 2);
  CHECK(r.windows[0].window == 1024);
  CHECK(r.windows[0].bytes_per_token == 327'680);
  CHECK(r.windows[0].blocks == 1'843);
  CHECK(r.windows[1].blocks == 9'216);
  CHECK(r.tokens == r.windows[1].blocks * 32);
  // Without the windows TensorRT-LLM keeps max_seq_len tokens in every layer.
  s.max_attention_window.clear();
  const TrtllmResult plain = plan_trtllm(catalog_model("gemma3-12b"), catalog_cards("h100"), s);
  CHECK_FALSE(plain.vswa);
  CHECK(plain.stages.front().bytes_per_token == 48ull * 8'192);
}

TEST_CASE("TensorRT-LLM pipeline stages: the first ones get the extra layers", "[trtllm]") {
  // Llama 3.1 70B's 80 layers over 3 stages: 27, 27, 26 (Mapping.pp_layers, torch.tensor_split).
  TrtllmSettings s;
  s.pp = 3;
  s.free_memory = 40 * GiB;
  const TrtllmResult r = plan_trtllm(catalog_model("llama3.1-70b"), catalog_cards("h100", 3), s);
  REQUIRE(r.stages.size() == 3);
  CHECK(r.stages[0].layers == 27);
  CHECK(r.stages[2].layers == 26);
  CHECK(r.stages[2].first_layer == 54);
  CHECK(r.decisive_stage == 0);  // the fullest stage bounds max_tokens (allreduce MIN)
}

TEST_CASE("TensorRT-LLM versions and the dtypes it lacks", "[trtllm]") {
  CHECK(parse_trtllm_version("0.13.0.dev2024082000", "v") == TrtllmVersion::engine);
  CHECK(parse_trtllm_version("0.20.0", "v") == TrtllmVersion::v0_19);
  CHECK(parse_trtllm_version("0.21.0rc1", "v") == TrtllmVersion::v0_21);
  CHECK(parse_trtllm_version("1.0", "v") == TrtllmVersion::v0_21);
  CHECK(parse_trtllm_version("1.2.0", "v") == TrtllmVersion::v1_1);
  CHECK(parse_trtllm_version("latest", "v") == TrtllmVersion::v1_1);
  for (const char* bad : {"0.7", "2.0", "x", "", "1", "1.x"})
    CHECK_THROWS_WITH(parse_trtllm_version(bad, "--trtllm-version"), Catch::StartsWith("--trtllm-version: '"));
  TrtllmSettings s = with_max_tokens(1000, "latest");
  s.kv_dtype = &kv("nvfp4");
  const TrtllmResult hopper = plan_trtllm(catalog_model("llama3.1-8b"), catalog_cards("h100"), s);
  CHECK_FALSE(hopper.dtype_supported);
  CHECK_THAT(hopper.dtype_reason, Catch::Contains("Blackwell"));
  s.kv_dtype = &kv("fp8");
  CHECK_FALSE(plan_trtllm(catalog_model("llama3.1-8b"), catalog_cards("a100-80g"), s).dtype_supported);
  s.kv_dtype = &kv("q8_0");
  CHECK_FALSE(plan_trtllm(catalog_model("llama3.1-8b"), catalog_cards("h100"), s).dtype_supported);
  try {
    plan_trtllm(catalog_model("llama4-scout"), catalog_cards("h100"), s);
    FAIL("no error");
  } catch (const Error& error) {
    CHECK(error.code() == ExitCode::unsupported_architecture);
  }
}

// --- Through the command line ---------------------------------------------------------------

TEST_CASE("kvplan --runtime trtllm: trtllm-serve's flags, its lines and the JSON", "[trtllm]") {
  using kvplan::testing::run_kvplan;
  // T1 through the command line: 860,320 tokens in 52.51 GiB.
  const auto text = run_kvplan("--runtime trtllm --model llama3.1-8b --gpu h100 --kv-dtype fp8 --max_seq_len 157 "
                               "--kv_cache_free_gpu_memory_fraction 0.8 --trtllm-version 0.20.0 --max_tokens 860308 "
                               "--trtllm-free-memory 70476430310B");
  REQUIRE(text.exit_code == 0);
  CHECK_THAT(text.out, Catch::Contains("[MemUsageChange] Allocated 52.51 GiB for max tokens in paged KV cache (860320)."));

  const auto json = run_kvplan("--runtime trtllm --model llama3.1-8b --gpu h100 --max_seq_len 8k --batch 4 "
                               "--trtllm-free-memory 60GiB --format json");
  REQUIRE(json.exit_code == 0);
  const nlohmann::json doc = nlohmann::json::parse(json.out);
  CHECK(doc["settings"]["runtime"] == "trtllm");
  const nlohmann::json& row = doc["rows"][0];
  // 60 GiB x 0.9 / 131,072 B = 442,368 tokens = 13,824 blocks of 32; 4 requests of 8,192 tokens.
  CHECK(row["kv_cache_tokens"] == 442'368);
  CHECK(row["kv_bytes"] == 4ull * 8192 * 131'072);
  CHECK(row["fits"] == true);
  CHECK(row["max_concurrency"].get<double>() == Approx(13'824.0 / 256));
  CHECK(doc["trtllm"]["rows"][0]["blocks"] == 13'824);

  // Four GPUs: TP 4 by default, -tp agrees, one share per GPU.
  const auto four = run_kvplan("--runtime trtllm --model llama3.1-70b --gpu 4xh100 -tp 4 --ctx 32k --format json");
  REQUIRE(four.exit_code == 0);
  const nlohmann::json split = nlohmann::json::parse(four.out)["rows"][0];
  CHECK(split["tp"] == 4);
  CHECK(split["per_gpu"].size() == 4);
  CHECK(split["kv_bytes_per_token"] == 80ull * 2 * 2 * 128 * 2);
  const auto pp = run_kvplan("--runtime trtllm --model llama3.1-70b --gpu 4xh100 --pp_size 2 --ctx 8k --format json");
  REQUIRE(pp.exit_code == 0);
  CHECK(nlohmann::json::parse(pp.out)["rows"][0]["pp"] == 2);
}

TEST_CASE("kvplan --runtime trtllm: refusals and what stops TensorRT-LLM", "[trtllm]") {
  using kvplan::testing::run_kvplan;
  const auto check = [](const std::string& args, const std::string& expected, int code = 2) {
    INFO("kvplan " << args);
    kvplan::testing::check_refused(run_kvplan(args), expected, code);
  };
  check("--model llama3.1-8b --gpu h100 --tokens_per_block 64", "--tokens_per_block is a TensorRT-LLM flag");
  check("--runtime trtllm --model llama3.1-8b --gpu h100 --util 0.9", "--util does not apply to the TensorRT-LLM profile");
  check("--runtime trtllm --model llama3.1-8b --gpu 4xh100 --tp_size 2", "--tp_size 2 x --pp_size 1 on 4 GPUs");
  check("--runtime trtllm --model llama3.1-8b --gpu h100 --kv_cache_free_gpu_memory_fraction 1", "below 1.0");
  check("--runtime trtllm --model llama3.1-8b --gpu h100 --trtllm-version 0.13", "--trtllm-free-memory", 3);
  check("--runtime trtllm --model llama4-scout --gpu h100", "chunked local attention", 3);
  // trtllm-serve's YAML may hold a speculative_config, whose draft layers and weights the profile
  // does not model: refused by name (exit 3), not "unknown flag" (exit 2), nor left out.
  check("--runtime trtllm --model llama3.1-8b --gpu h100 --extra_llm_api_options extra.yaml",
        "kvplan does not read the YAML", 3);
  // nvfp4 on Hopper: the row names the dtype and TensorRT-LLM refuses.
  const auto fp4 = run_kvplan("--runtime trtllm --model llama3.1-8b --gpu h100 --ctx 8k --kv-dtype nvfp4 --format json");
  REQUIRE(fp4.exit_code == 0);
  const nlohmann::json row = nlohmann::json::parse(fp4.out)["rows"][0];
  CHECK(row["verdict"] == "engine_refuses");
  bool named = false;
  for (const auto& warning : row["warnings"]) named = named || warning["code"] == "dtype_not_supported_by_engine";
  CHECK(named);
  // A pool too small for one max_seq_len request: TensorRT-LLM lowers max_seq_len; the row does not fit.
  const auto small = run_kvplan("--runtime trtllm --model llama3.1-8b --gpu h100 --ctx 128k --max_tokens 50000 "
                                "--format json");
  REQUIRE(small.exit_code == 0);
  const nlohmann::json cut = nlohmann::json::parse(small.out)["rows"][0];
  CHECK(cut["fits"] == false);
  CHECK(cut["starts"] == true);
  CHECK(run_kvplan("--runtime trtllm --model llama3.1-8b --gpu h100 --ctx 8k --batch 3000 --check").exit_code == 1);
}
