// The fused-MoE workspace vLLM keeps from its profiling forward pass (engines/vllm/rules.cpp,
// moe_workspace_bytes; docs/engines/vllm.md, "MoE workspace"): the routed experts a config
// states, read by the loader, and the buffers sized from them, by hand and against vLLM 0.19's
// logged torch peaks (llm-d-planner's sweep, shared/reference/vllm-logs.jsonl).

#include <algorithm>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "kvplan/units.h"
#include "engines/vllm/rules.h"
#include "loaders/hf_config.h"
#include "loaders/spec_json.h"
#include "support/catalog_entries.h"
#include "support/run_binary.h"

using namespace kvplan;
using kvplan::testing::catalog_gpu;
using kvplan::testing::catalog_model;

namespace {

VllmResult moe_plan(const char* model, std::uint32_t tp) {
  VllmSettings settings;
  settings.tensor_parallel = tp;
  settings.max_model_len = 8192;
  settings.utilization_millionths = 950'000;
  return plan_vllm(catalog_model(model), catalog_gpu("h100"), settings);
}

}  // namespace

TEST_CASE("the loader reads each MoE config's routed experts", "[vllm][moe]") {
  // Qwen3-30B-A3B: num_experts_per_tok 8, hidden_size 2048, moe_intermediate_size 768.
  const ModelSpec qwen = load_hf_model(kvplan::testing::source_path("tests/fixtures/hf/qwen3-30b-a3b"));
  REQUIRE(qwen.routed_experts);
  CHECK(*qwen.routed_experts == RoutedExperts{8, 2048, 768, true});
  // Mixtral: the experts are the MLP, intermediate_size wide, 2 of 8 a token.
  CHECK(*catalog_model("mixtral-8x7b").routed_experts == RoutedExperts{2, 4096, 14336, true});
  // gpt-oss counts its experts itself (biases beside them): 4 a token, 2880 wide.
  CHECK(*catalog_model("gpt-oss-20b").routed_experts == RoutedExperts{4, 2880, 2880, true});
  // Nemotron 3: two-matrix experts (relu2), not gated.
  CHECK_FALSE(catalog_model("nemotron3-nano").routed_experts->gated);
  // A dense model has none.
  CHECK_FALSE(catalog_model("llama3.1-8b").routed_experts);
}

TEST_CASE("the spec format carries the routed experts and bounds them", "[vllm][moe]") {
  const ModelSpec qwen = catalog_model("qwen3-30b-a3b");
  nlohmann::json spec = to_spec_json(qwen);
  CHECK(spec["routed_experts"] == nlohmann::json{{"per_token", 8}, {"input_width", 2048}, {"intermediate_size", 768}});
  CHECK(*model_spec_from_json(spec, "round trip").routed_experts == *qwen.routed_experts);
  // gated defaults to true, and is written only when false.
  CHECK_FALSE(to_spec_json(catalog_model("nemotron3-nano"))["routed_experts"]["gated"].get<bool>());
  spec["routed_experts"]["per_token"] = 0;
  CHECK_THROWS_WITH(model_spec_from_json(spec, "x.json"), Catch::Contains("per_token") && Catch::Contains("between 1 and 1024"));
  spec["routed_experts"]["per_token"] = 8;
  spec["routed_experts"]["input_width"] = std::uint64_t{1} << 40;
  CHECK_THROWS_WITH(model_spec_from_json(spec, "x.json"), Catch::Contains("input_width"));
  spec["routed_experts"]["input_width"] = 2048;
  spec["routed_experts"]["expert_count"] = 128;
  CHECK_THROWS_WITH(model_spec_from_json(spec, "x.json"), Catch::Contains("expert_count"));
  spec["routed_experts"] = 8;
  CHECK_THROWS_AS(model_spec_from_json(spec, "x.json"), Error);
}

TEST_CASE("vLLM's fused-MoE workspace by hand, beneath the sampler's peak", "[vllm][moe]") {
  // Qwen3-30B-A3B on one H100 (8,192 batched tokens, 1,024 sequences, bf16):
  //   workspace13: 8,192 x 8 x max(768, 2048) x 2 B = 268,435,456
  //   workspace2:  8,192 x 8 x max(1,536, 2048) x 2 B = 268,435,456
  // and the sampler's 16 B x 1,024 x 151,936 = 2,489,319,424: 2.82 GiB, where R054 logged a torch
  // peak of 2.68 GiB (the sampler alone, 2.32, was 0.36 under it).
  const VllmResult qwen = moe_plan("qwen3-30b-a3b", 1);
  CHECK(qwen.budget.moe_workspace == 536'870'912);
  CHECK(qwen.budget.activation == 2'489'319'424ULL + 536'870'912);
  // Mixtral 8x7B at TP 2: each rank holds half of every expert's 14,336-wide intermediate.
  //   workspace13: 8,192 x 2 x max(7,168, 4,096) x 2 B = 234,881,024
  //   workspace2:  8,192 x 2 x max(14,336, 4,096) x 2 B = 469,762,048
  // with the sampler's 16 x 1,024 x 32,000 = 524,288,000: 1.14 GiB, R035 logged 1.21.
  const VllmResult mixtral = moe_plan("mixtral-8x7b", 2);
  CHECK(mixtral.budget.moe_workspace == 704'643'072);
  CHECK(mixtral.budget.activation == 524'288'000 + 704'643'072);
  // The rule says so, and the JSON carries it.
  const auto rule = std::find_if(mixtral.rules.begin(), mixtral.rules.end(),
                                 [](const std::string& line) { return line.find("MoE workspace") != std::string::npos; });
  REQUIRE(rule != mixtral.rules.end());
  CHECK_THAT(*rule, Catch::Contains("8192 tokens x 2 experts a token"));
  // A dense model keeps none.
  CHECK(moe_plan("llama3.1-8b", 1).budget.moe_workspace == 0);
}

TEST_CASE("the MoE workspace follows the batched tokens and is in the JSON", "[vllm][moe]") {
  // --max-num-batched-tokens 2048: a quarter of the default's buffers.
  const std::string out = kvplan::testing::run_kvplan(
                              "--model qwen3-30b-a3b --gpu h100 --runtime vllm --ctx 8k --max-num-batched-tokens 2048 --format json")
                              .out;
  const nlohmann::json json = nlohmann::json::parse(out);
  CHECK(json["vllm"]["rows"][0]["budget"]["moe_workspace_estimate_bytes"] == 134'217'728);
}

TEST_CASE("an absurd --max-num-batched-tokens on a MoE model says what overflowed", "[vllm][moe]") {
  // 2^64 - 1 tokens x 8 experts a token: one line naming vLLM's setting, exit 2.
  const kvplan::testing::ProcessResult run = kvplan::testing::run_kvplan(
      "--runtime vllm --model qwen3-30b-a3b --gpu h100 --ctx 8k --max-num-batched-tokens 18446744073709551615");
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.err, Catch::Contains("max_num_batched_tokens") && Catch::Contains("overflows 64 bits"));
}
