// vLLM's max_model_len -1 (--max-model-len auto, 0.14+): the longest length whose one request fits
// every worker's memory, at most the model's (kv_cache_utils.py, _auto_fit_max_model_len, read at
// vllm-project/vllm main; PR #29431). --kv-cache-memory makes the memory exact, so every length
// below is computed by hand.

#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "engines/vllm/rules.h"
#include "kvplan/units.h"
#include "support/catalog_entries.h"
#include "support/run_binary.h"

using namespace kvplan;
using kvplan::testing::catalog_gpu;
using kvplan::testing::catalog_model;

// Llama 3.1 8B: 32 layers x 8 KV heads x (128 + 128) x 2 B = 128 KiB a token; a 16-token block of
// all 32 layers is 16 x 131,072 = 2,097,152 B (2 MiB). Its trained context is 131,072 tokens.

TEST_CASE("vLLM auto-fit: bounded by memory, by the model's length, or nothing fits", "[vllm][auto]") {
  const ModelSpec model = catalog_model("llama3.1-8b");
  const GpuSpec gpu = catalog_gpu("h100");
  VllmSettings settings;
  settings.auto_fit_max_model_len = true;
  settings.max_model_len = model.max_context;

  SECTION("memory: 5 GiB hold 5,368,709,120 / 2,097,152 = 2,560 blocks = 40,960 tokens, under 131,072") {
    settings.kv_cache_memory_bytes = 5 * GiB;
    const VllmResult r = plan_vllm(model, gpu, settings);
    CHECK(r.auto_fit == VllmAutoFit::memory);
    CHECK(r.auto_fit_cap == 131'072);
    CHECK(r.max_model_len == 40'960);
    CHECK(r.blocks_per_request == 2'560);
    CHECK(r.starts);
    // One token more needs a 2,561st block: 40,961 would not fit.
    settings.auto_fit_max_model_len = false;
    settings.max_model_len = 40'961;
    CHECK_FALSE(plan_vllm(model, gpu, settings).starts);
  }
  SECTION("memory, a block short of the whole length: 8,191 blocks = 131,056 tokens") {
    settings.kv_cache_memory_bytes = 8'191ull * 2'097'152;
    const VllmResult r = plan_vllm(model, gpu, settings);
    CHECK(r.auto_fit == VllmAutoFit::memory);
    CHECK(r.max_model_len == 131'056);
  }
  SECTION("the model's length: 16 GiB = 8,192 blocks = 131,072 tokens, exactly the whole length") {
    settings.kv_cache_memory_bytes = 16 * GiB;
    const VllmResult r = plan_vllm(model, gpu, settings);
    CHECK(r.auto_fit == VllmAutoFit::model_max);
    CHECK(r.max_model_len == 131'072);
    CHECK(r.starts);
  }
  SECTION("the model's length caps it: 40 GiB would hold 20,480 blocks = 327,680 tokens") {
    settings.kv_cache_memory_bytes = 40 * GiB;
    const VllmResult r = plan_vllm(model, gpu, settings);
    CHECK(r.auto_fit == VllmAutoFit::model_max);
    CHECK(r.max_model_len == 131'072);
  }
  SECTION("nothing: 2,097,151 B is one byte short of the block one token needs") {
    settings.kv_cache_memory_bytes = 2'097'151;
    const VllmResult r = plan_vllm(model, gpu, settings);
    CHECK(r.auto_fit == VllmAutoFit::nothing_fits);
    CHECK_FALSE(r.starts);
  }
  SECTION("one block: 2,097,152 B hold 16 tokens") {
    settings.kv_cache_memory_bytes = 2'097'152;
    const VllmResult r = plan_vllm(model, gpu, settings);
    CHECK(r.auto_fit == VllmAutoFit::memory);
    CHECK(r.max_model_len == 16);
  }
}

TEST_CASE("vLLM auto-fit under pipeline parallelism: the minimum over stages", "[vllm][auto]") {
  // Llama 3.1 8B at -pp 2: 16 layers a stage, 16 x 8 x 256 x 2 B = 64 KiB a token, a block of the
  // stage's layers 1 MiB. --kv-cache-memory gives every stage 3 GiB = 3,072 blocks = 49,152 tokens.
  const ModelSpec model = catalog_model("llama3.1-8b");
  VllmSettings settings;
  settings.auto_fit_max_model_len = true;
  settings.max_model_len = model.max_context;
  settings.pipeline_parallel = 2;
  settings.kv_cache_memory_bytes = 3 * GiB;
  const VllmResult r = plan_vllm(model, catalog_gpu("h100"), settings);
  CHECK(r.auto_fit == VllmAutoFit::memory);
  CHECK(r.max_model_len == 49'152);
  CHECK(r.starts);
}

TEST_CASE("kvplan --runtime vllm --max-model-len auto: the row, the JSON and the refusals", "[vllm][auto]") {
  using kvplan::testing::run_kvplan;
  // 5 GiB: 40,960 tokens, as above.
  const auto json = run_kvplan("--runtime vllm --model llama3.1-8b --gpu h100 --max-model-len auto --kv-cache-memory 5GiB "
                               "--format json");
  REQUIRE(json.exit_code == 0);
  const nlohmann::json doc = nlohmann::json::parse(json.out);
  CHECK(doc["rows"].size() == 1);
  CHECK(doc["rows"][0]["ctx"] == 40'960);
  CHECK(doc["rows"][0]["fits"] == true);
  const nlohmann::json& fitted = doc["vllm"]["rows"][0]["max_model_len_auto"];
  CHECK(fitted["bound"] == "memory");
  CHECK(fitted["chosen"] == 40'960);
  CHECK(fitted["derived_max_model_len"] == 131'072);

  // -1 is vLLM's other spelling; 20 GiB hold the whole 131,072.
  const auto whole = run_kvplan("--runtime vllm --model llama3.1-8b --gpu h100 --max-model-len -1 --kv-cache-memory 20GiB");
  REQUIRE(whole.exit_code == 0);
  CHECK_THAT(whole.out, Catch::Contains("Auto-fit max_model_len: full model context length 131072 fits in available GPU memory") &&
                            Catch::Contains("131,072 tokens, the model's whole length (bound: the model's maximum"));
  const auto reduced = run_kvplan("--runtime vllm --model llama3.1-8b --gpu h100 --ctx auto --kv-cache-memory 5GiB");
  CHECK_THAT(reduced.out, Catch::Contains("Auto-fit max_model_len: reduced from 131072 to 40960 to fit in available GPU "
                                          "memory (5.00 GiB available for KV cache)"));

  // Not one token: vLLM raises, kvplan says it does not start (--check: exit 1).
  const auto none = run_kvplan("--runtime vllm --model llama3.1-8b --gpu h100 --ctx auto --kv-cache-memory 2097151B --check");
  CHECK(none.exit_code == 1);
  CHECK_THAT(none.out, Catch::Contains("Cannot auto-fit max_model_len: not enough GPU memory available to serve even a "
                                       "single token"));

  kvplan::testing::check_refused(
      run_kvplan("--runtime vllm --model llama3.1-8b --gpu h100 --ctx auto --vllm-version 0.13.0"),
      "--ctx auto needs vLLM 0.14 or later");
  kvplan::testing::check_refused(run_kvplan("--model llama3.1-8b --gpu h100 --ctx auto"), "only vLLM (0.14 or later) picks");
  kvplan::testing::check_refused(run_kvplan("--runtime vllm --model llama3.1-8b --gpu h100 --ctx 8k,auto"),
                                 "auto picks the one length that fits; give it alone");
  CHECK(run_kvplan("--runtime vllm --model llama3.1-8b --gpu h100 --ctx auto --vllm-version 0.14").exit_code == 0);
}
