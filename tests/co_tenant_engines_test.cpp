// SGLang and TensorRT-LLM size their pools from the free memory they measure at start-up, so
// memory other processes hold (--used, --free) shrinks their pools. Before, kvplan priced the
// pools from the whole card and then only checked that the footprint fitted what co-tenants
// left: Qwen3-8B, 10 x 32K on an H100 with 8 GiB held elsewhere was "fits" with a pool of
// 367,363 tokens, where SGLang, measuring 8 GiB less, keeps about 318,000 (< 327,680 needed).

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/run_binary.h"

using kvplan::testing::run_kvplan;

namespace {

nlohmann::json plan_json(const std::string& flags) {
  const auto result = run_kvplan("--model qwen3-8b --gpu h100 --ctx 32k --kv-dtype bf16 --format json " + flags);
  INFO(result.err);
  REQUIRE((result.exit_code == 0 || result.exit_code == 1));
  return nlohmann::json::parse(result.out);
}

}  // namespace

TEST_CASE("co-tenants come out of the free memory SGLang measures", "[budget]") {
  // H100 CUDA total 85,029,615,043 B (catalog); SGLang's estimate of its free memory before load
  // is that less its CUDA context (0.5 GiB = 536,870,912 B), and now less 8 GiB
  // (8,589,934,592 B) held by other processes: 75,902,809,539 B.
  const nlohmann::json alone = plan_json("--runtime sglang --batch 10");
  const nlohmann::json shared = plan_json("--runtime sglang --batch 10 --used 8GiB");
  CHECK(alone["sglang"]["rows"][0]["budget"]["free_before_load_bytes"] == 85'029'615'043ull - 536'870'912ull);
  CHECK(shared["sglang"]["rows"][0]["budget"]["free_before_load_bytes"] == 75'902'809'539ull);
  // 10 x 32,768 = 327,680 tokens: SGLang's pool holds them alone, not beside 8 GiB of others'.
  CHECK(alone["rows"][0]["fits"] == true);
  CHECK(shared["rows"][0]["fits"] == false);
  // --used is the same question as giving SGLang's own measurement.
  const nlohmann::json given = plan_json("--runtime sglang --batch 10 --sglang-free-before-load 75902809539B");
  CHECK(shared["rows"][0]["available_kv_bytes"] == given["rows"][0]["available_kv_bytes"]);
  CHECK(shared["rows"][0]["kv_cache_tokens"] == given["rows"][0]["kv_cache_tokens"]);
  // --free says it from the other side: 79.65 GiB (85,520,809,984 B) less 8 GiB free.
  const nlohmann::json free = plan_json("--runtime sglang --batch 10 --free 76930875392B");
  CHECK(free["sglang"]["rows"][0]["budget"]["free_before_load_bytes"] == 75'902'809'539ull);
}

TEST_CASE("co-tenants come out of the free memory TensorRT-LLM measures", "[budget]") {
  const nlohmann::json alone = plan_json("--runtime trtllm");
  const nlohmann::json shared = plan_json("--runtime trtllm --used 8GiB");
  const std::uint64_t before = alone["trtllm"]["rows"][0]["budget"]["free_memory_bytes"];
  const std::uint64_t after = shared["trtllm"]["rows"][0]["budget"]["free_memory_bytes"];
  CHECK(before - after == 8'589'934'592ull);  // exactly the 8 GiB others hold
  CHECK(shared["rows"][0]["kv_cache_tokens"].get<std::uint64_t>() < alone["rows"][0]["kv_cache_tokens"].get<std::uint64_t>());
}
