// Which top-k/top-p kernel vLLM's sampler warms up with, by release and VLLM_USE_FLASHINFER_SAMPLER,
// and what it costs: the torch peak vLLM subtracts before sizing the cache. Figures from the
// releases' sources (sampler.h) and the logs named below.

#include <optional>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "engines/vllm/rules.h"
#include "engines/vllm/sampler.h"
#include "support/catalog_entries.h"
#include "support/run_binary.h"

using namespace kvplan;

TEST_CASE("vLLM's sampler by release: sort, then Triton (0.17), then FlashInfer (0.21)", "[vllm]") {
  const std::optional<bool> unset;
  // Up to 0.11.0 FlashInfer's ran only where it was installed: kvplan cannot see that and takes the
  // sort. 0.11.1 to 0.16 sort unless opted in; 0.17 to 0.20 Triton; 0.21 on FlashInfer's.
  CHECK(vllm_sampler(10, unset) == VllmSampler::pytorch_sort);
  CHECK(vllm_sampler(11, unset) == VllmSampler::pytorch_sort);
  CHECK(vllm_sampler(16, unset) == VllmSampler::pytorch_sort);
  CHECK(vllm_sampler(17, unset) == VllmSampler::triton);
  CHECK(vllm_sampler(20, unset) == VllmSampler::triton);
  CHECK(vllm_sampler(21, unset) == VllmSampler::flashinfer);
  CHECK(vllm_sampler(vllm_minor_version("latest", "test"), unset) == VllmSampler::flashinfer);
  // VLLM_USE_FLASHINFER_SAMPLER: 1 turns FlashInfer's on in any release, 0 off in 0.21 and later.
  CHECK(vllm_sampler(10, true) == VllmSampler::flashinfer);
  CHECK(vllm_sampler(18, true) == VllmSampler::flashinfer);
  CHECK(vllm_sampler(21, false) == VllmSampler::triton);
  CHECK(vllm_sampler(15, false) == VllmSampler::pytorch_sort);
  // The Triton kernel leaves batches of fewer than 8 rows to the sort.
  CHECK(sampler_for_rows(VllmSampler::triton, 7) == VllmSampler::pytorch_sort);
  CHECK(sampler_for_rows(VllmSampler::triton, 8) == VllmSampler::triton);
  CHECK(sampler_for_rows(VllmSampler::flashinfer, 1) == VllmSampler::flashinfer);
  CHECK(sampler_bytes_per_entry(VllmSampler::pytorch_sort) == 39);
  CHECK(sampler_bytes_per_entry(VllmSampler::triton) == 16);
  CHECK(sampler_bytes_per_entry(VllmSampler::flashinfer) == 16);
}

TEST_CASE("vLLM 0.11's sort: Qwen3-32B's warm-up is the torch peak the 0.11.0 table logged", "[vllm]") {
  // llm-d-benchmark's 0.11.0 table (R099): Qwen3-32B on one H100, peak activation 5.64 GiB.
  // 39 B x 1,024 rows x 151,936 = 6,067,716,096 B = 5.65 GiB; 16 B an entry gave 2.32 GiB.
  VllmSettings settings;
  settings.version = VllmVersion::v0_11;
  settings.sampler = vllm_sampler(11, std::nullopt);
  settings.max_model_len = 16000;
  const VllmResult r = plan_vllm(testing::catalog_model("qwen3-32b"), testing::catalog_gpu("h100"), settings);
  CHECK(r.max_num_seqs == 1024);
  CHECK(r.budget.sampler == VllmSampler::pytorch_sort);
  CHECK(r.budget.activation == 6'067'716'096ULL);
  // The same run on 0.19's Triton kernel: 16 x 1,024 x 151,936.
  settings.sampler = vllm_sampler(19, std::nullopt);
  CHECK(plan_vllm(testing::catalog_model("qwen3-32b"), testing::catalog_gpu("h100"), settings).budget.activation ==
        2'489'319'424ULL);
  // --max-num-seqs 4 under 0.19: the Triton kernel leaves 4 rows to the sort.
  settings.max_num_seqs = 4;
  const VllmResult few = plan_vllm(testing::catalog_model("qwen3-32b"), testing::catalog_gpu("h100"), settings);
  CHECK(few.budget.sampler == VllmSampler::pytorch_sort);
  CHECK(few.budget.activation == 39ULL * 4 * 151'936);
}

TEST_CASE("kvplan --runtime vllm: VLLM_USE_FLASHINFER_SAMPLER and --use-flashinfer-sampler", "[vllm]") {
  using kvplan::testing::run_kvplan;
  const auto sampler_of = [](const std::string& args, const std::string& environment = "") {
    const auto run = run_kvplan("--runtime vllm --model llama3.1-8b --gpu h100 --ctx 8k --format json " + args, environment);
    REQUIRE(run.exit_code == 0);
    return nlohmann::json::parse(run.out)["vllm"]["rows"][0]["budget"]["sampler"].get<std::string>();
  };
  CHECK(sampler_of("--vllm-version 0.11") == "pytorch_sort");
  CHECK(sampler_of("--vllm-version 0.11 --use-flashinfer-sampler 1") == "flashinfer");
  CHECK(sampler_of("--vllm-version 0.19") == "triton");
  CHECK(sampler_of("") == "flashinfer");
  CHECK(sampler_of("--use-flashinfer-sampler 0") == "triton");
  // The environment variable, as vLLM reads it, when the flag is not given.
  CHECK(sampler_of("--vllm-version 0.11", "VLLM_USE_FLASHINFER_SAMPLER=1") == "flashinfer");
  CHECK(sampler_of("", "VLLM_USE_FLASHINFER_SAMPLER=0") == "triton");
  // vLLM reads the variable as bool(int(value)): 2 is on; a word is an error.
  CHECK(sampler_of("--vllm-version 0.12 --use-flashinfer-sampler 2") == "flashinfer");
  // The sort is said in the row's assumptions, with the way to the smaller figure.
  const auto says_sort = [](const std::string& args) {
    const auto run = run_kvplan("--runtime vllm --model llama3.1-8b --gpu h100 --ctx 8k --format json " + args);
    REQUIRE(run.exit_code == 0);
    const nlohmann::json doc = nlohmann::json::parse(run.out);
    for (const auto& line : doc["rows"][0]["assumptions"])
      if (line.get<std::string>().find("full sort of the logits") != std::string::npos) return true;
    return false;
  };
  CHECK(says_sort("--vllm-version 0.11"));
  CHECK_FALSE(says_sort("--vllm-version 0.11 --use-flashinfer-sampler 1"));
  CHECK_FALSE(says_sort("--vllm-version 0.11 --kv-cache-memory 20GiB"));  // no profiling, no warm-up to price
  CHECK_FALSE(says_sort("--vllm-version 0.19"));
  const auto bad = run_kvplan("--runtime vllm --model llama3.1-8b --gpu h100 --use-flashinfer-sampler yes");
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("--use-flashinfer-sampler yes: 0 or 1"));
}
