// gpt-oss's mxfp4 experts as vLLM creates them (engines/vllm/mxfp4_experts.cpp; docs/engines/vllm.md,
// "mxfp4 experts"): padded for the MoE backend, worked by hand, against vLLM's "Model loading
// took" (shared/reference/vllm-logs.jsonl), and refused where the layout is not derived.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "kvplan/units.h"
#include "engines/vllm/mxfp4_experts.h"
#include "engines/vllm/rules.h"
#include "support/catalog_entries.h"
#include "support/run_binary.h"

using namespace kvplan;
using kvplan::testing::catalog_gpu;
using kvplan::testing::catalog_model;
using kvplan::testing::ProcessResult;
using kvplan::testing::run_kvplan;

namespace {

std::uint64_t mxfp4_extra(const char* model, const char* gpu, std::uint32_t tp) {
  const VllmMxfp4Experts experts = vllm_mxfp4_experts(catalog_model(model), catalog_gpu(gpu), tp);
  REQUIRE(experts.extra_bytes);
  return *experts.extra_bytes;
}

}  // namespace

TEST_CASE("vLLM pads gpt-oss's mxfp4 experts as Marlin does", "[vllm][mxfp4]") {
  // gpt-oss-20b: 13,761,264,768 B for 20,914,757,184 parameters, 2 B each would be 41,829,514,368;
  // the 28,068,249,600 saved are the mxfp4 values' 47/32 B each: 19,110,297,600 values, 768
  // experts (24 layers x 32) of 3 x 2,880 x 2,880.
  // One expert as the checkpoint holds it: 3 x 2,880 x 2,880 = 24,883,200 values, / 2 B
  // 12,441,600 + scales / 32 777,600 + bf16 biases (2 x 2,880 + 2,880) x 2 = 17,280: 13,236,480 B.
  // Marlin at TP 1: I 2,880 -> 2,944 (128), H 2,880 -> 3,072 (256): 3 x 2,944 x 3,072 =
  // 27,131,904 values, 13,565,952 + 847,872 + (5,888 + 3,072) x 2 = 17,920: 14,431,744 B.
  // 768 x (14,431,744 - 13,236,480) = 917,962,752.
  CHECK(mxfp4_extra("gpt-oss-20b", "h100", 1) == 917'962'752);
  // TP 2 on an A100 (Marlin, read): I 1,440 -> 1,536: 3 x 1,536 x 3,072 = 14,155,776 values,
  // 7,077,888 + 442,368 + (3,072 + 3,072) x 2 = 7,532,544 B; 768 x that = 5,784,993,792, less
  // the rank's half of 768 x 13,236,480 = 5,082,808,320: 702,185,472.
  CHECK(mxfp4_extra("gpt-oss-20b", "a100-80g", 2) == 702'185'472);
  // gpt-oss-120b: 4,608 experts (36 x 128) x 1,195,264 = 5,507,776,512.
  CHECK(mxfp4_extra("gpt-oss-120b", "h100", 1) == 5'507'776'512);
  // TP 4: I 720 -> 768 (gpt_oss.py loads shards of 23 blocks, 736): 3 x 768 x 3,072 = 7,077,888
  // values, 3,538,944 + 221,184 + (1,536 + 3,072) x 2 = 3,769,344 B; x 4,608 = 17,369,137,152
  // less 4,608 x 13,236,480 / 4 = 15,248,424,960: 2,120,712,192.
  CHECK(mxfp4_extra("gpt-oss-120b", "h100", 4) == 2'120'712'192);

  // Hopper from 0.12 runs the Triton backend: Marlin's padding is an upper estimate there, a
  // read rule on Ampere and Ada.
  CHECK(vllm_mxfp4_experts(catalog_model("gpt-oss-20b"), catalog_gpu("h100"), 1).estimate);
  CHECK_FALSE(vllm_mxfp4_experts(catalog_model("gpt-oss-20b"), catalog_gpu("4090"), 1).estimate);
}

TEST_CASE("the padded experts against vLLM's logged weights", "[vllm][mxfp4]") {
  // "Model loading took": 13.64 GiB (R040, 0.19.0, TP 1) and 7.01 (R041, TP 2), both on the
  // Triton backend; 65.9651 (R073, ~0.10, Marlin named in its log).
  const auto loaded = [](const char* model, std::uint32_t tp) {
    VllmSettings settings;
    settings.tensor_parallel = tp;
    settings.max_model_len = 8192;
    return static_cast<double>(plan_vllm(catalog_model(model), catalog_gpu("h100"), settings).budget.weights) / GiB;
  };
  // 13,761,264,768 + 917,962,752 + 16 MiB rotary = 14,696,004,736 B = 13.687 GiB: 0.3% over.
  CHECK(loaded("gpt-oss-20b", 1) == Approx(13.687).margin(0.001));
  CHECK(loaded("gpt-oss-20b", 1) >= 13.64);
  // 6,880,632,384 + 702,185,472 + 16,777,216 = 7,599,595,072 B = 7.078 GiB: 1.0% over.
  CHECK(loaded("gpt-oss-20b", 2) == Approx(7.078).margin(0.001));
  CHECK(loaded("gpt-oss-20b", 2) >= 7.01);
  // 65,248,815,744 + 5,507,776,512 + 16,777,216 = 70,773,369,472 B = 65.913 GiB: 0.08% under.
  CHECK(loaded("gpt-oss-120b", 1) == Approx(65.913).margin(0.001));
}

TEST_CASE("vLLM's mxfp4 layout is refused where kvplan has not derived it", "[vllm][mxfp4]") {
  const ModelSpec& oss = catalog_model("gpt-oss-20b");
  // Blackwell runs FlashInfer's TRT-LLM kernels (both widths to 256, then shuffled); AMD's CK has
  // no CUDA compute capability; below sm_80 vLLM has no mxfp4 MoE backend.
  for (const char* gpu : {"b200", "rtx5090", "mi300x", "v100-16g"}) {
    INFO(gpu);
    const VllmMxfp4Experts experts = vllm_mxfp4_experts(oss, catalog_gpu(gpu), 1);
    CHECK_FALSE(experts.extra_bytes);
    CHECK_FALSE(experts.rule.empty());
  }
  // Kimi K3's mxfp4 is compressed-tensors', another method.
  CHECK_FALSE(vllm_mxfp4_experts(catalog_model("kimi-k3"), catalog_gpu("h100"), 1).extra_bytes);
  // A checkpoint one byte off is not bf16 tensors and whole experts: the count is not read.
  ModelSpec odd = oss;
  odd.weights_bytes = *odd.weights_bytes + 1;
  CHECK_THAT(vllm_mxfp4_experts(odd, catalog_gpu("h100"), 1).rule, Catch::Contains("cannot tell how many experts"));
  // 2,880 over 7 ranks is not whole.
  CHECK_THAT(vllm_mxfp4_experts(oss, catalog_gpu("h100"), 7).rule, Catch::Contains("does not split evenly"));

  // The CLI: exit 3, naming the card and the way forward; with vLLM's own figure it answers.
  const ProcessResult refused = run_kvplan("--runtime vllm --model gpt-oss-20b --gpu b200 --max-model-len 8k");
  CHECK(refused.exit_code == 3);
  CHECK_THAT(refused.err, Catch::Contains("NVIDIA B200") && Catch::Contains("give --weights"));
  CHECK(run_kvplan("--runtime vllm --model gpt-oss-20b --gpu b200 --max-model-len 8k --weights 13.64GiB").exit_code == 0);
}

TEST_CASE("the padding is a traceable line of the weights, in the table and the JSON", "[vllm][mxfp4]") {
  const ProcessResult json = run_kvplan("--runtime vllm --model gpt-oss-20b --gpu h100 --max-model-len 8k --format json");
  REQUIRE(json.exit_code == 0);
  const auto doc = nlohmann::json::parse(json.out);
  const auto& row = doc["rows"][0];
  CHECK(row["weights_bytes"] == 14'696'004'736ULL);
  CHECK_THAT(row["weights_rule"].get<std::string>(), Catch::Contains("ESTIMATED: mxfp4 experts padded for the MoE backend +0.85 GiB"));
  CHECK(doc["vllm"]["rows"][0]["budget"]["mxfp4_padding_bytes"] == 917'962'752);
  // Under -pp a stage pads its share of the layers: gpt-oss-120b at TP 2, I 1,440 -> 1,536: per
  // expert 7,532,544 B against half of 13,236,480 = 6,618,240, 914,304 more; x 4,608 experts =
  // 4,213,112,832 a rank, and stage 0 holds 18 of the 36 layers: 2,106,556,416.
  const auto staged = nlohmann::json::parse(
      run_kvplan("--runtime vllm --model gpt-oss-120b --gpu 4xh100 -tp 2 -pp 2 --max-model-len 8k --format json").out);
  CHECK(staged["vllm"]["rows"][0]["budget"]["mxfp4_padding_bytes"] == 2'106'556'416ULL);
  // Given, the figure is vLLM's own: nothing is added.
  const auto given = nlohmann::json::parse(
      run_kvplan("--runtime vllm --model gpt-oss-20b --gpu h100 --max-model-len 8k --weights 13.64GiB --format json").out);
  CHECK(given["vllm"]["rows"][0]["budget"]["mxfp4_padding_bytes"] == 0);
}
