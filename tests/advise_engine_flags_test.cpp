// kvplan advise with the runtime's own flags: they apply to every configuration it tries, so they
// can change which one is cheapest. llama3.1-8b's weights are 16,060,522,496 B = 14.96 GiB (bf16,
// safetensors total_size); an RTX 3090 has 24 GiB; prices rtx3090 $0.22/h, h100 $2.69/h.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/run_binary.h"

using kvplan::testing::check_refused;
using kvplan::testing::run_kvplan;

namespace {

/// The cheapest configuration that fits (the JSON lists the cheaper ones that do not first).
nlohmann::json first_config(const std::string& flags) {
  const auto result = run_kvplan("advise --model llama3.1-8b --ctx 8k --gpus 3090,4090,h100 --top 1 --format json " + flags);
  REQUIRE(result.exit_code == 0);
  const nlohmann::json doc = nlohmann::json::parse(result.out);
  for (const nlohmann::json& config : doc["configs"])
    if (config["fits"] == true) return config;
  FAIL("no configuration fits");
  return {};
}

}  // namespace

TEST_CASE("advise: SGLang's --mem-fraction-static changes the cheapest configuration", "[advise]") {
  // SGLang's default fraction leaves one 3090 room for the weights and 8K of cache.
  const nlohmann::json by_default = first_config("--runtime sglang");
  CHECK(by_default["gpu"] == "rtx3090");
  CHECK(by_default["count"] == 1);
  CHECK(by_default["fits"] == true);
  // At 0.5 SGLang keeps half of the memory free before loading (under 12 GiB of the 3090's 24)
  // for weights and cache: less than the 14.96 GiB of weights, so it would not start. Two with
  // tp 2 hold 7.48 GiB of weights each.
  const nlohmann::json at_half = first_config("--runtime sglang --mem-fraction-static 0.5");
  CHECK(at_half["gpu"] == "rtx3090");
  CHECK(at_half["count"] == 2);
  CHECK(at_half["tp"] == 2);
  CHECK(at_half["fits"] == true);
  CHECK(at_half["total_bytes"].get<std::uint64_t>() < 12ull * (1ull << 30));
}

TEST_CASE("advise: vLLM's --kv-cache-memory applies to every card tried", "[advise]") {
  // A 30 GiB cache pool per GPU fits no 24 GiB card, however many: the H100 is the answer.
  const nlohmann::json best = first_config("--runtime vllm --kv-cache-memory 30GiB");
  CHECK(best["gpu"] == "h100");
  CHECK(best["count"] == 1);
  CHECK(best["fits"] == true);
  const nlohmann::json without = first_config("--runtime vllm");
  CHECK(without["gpu"] == "rtx3090");
}

TEST_CASE("advise: the splits are the advisor's, and a flag needs its runtime", "[advise]") {
  check_refused(run_kvplan("advise --model llama3.1-8b --ctx 8k --runtime vllm --tensor-parallel-size 2"),
                "the advisor tries 1, 2, 4, ... GPUs");
  check_refused(run_kvplan("advise --model llama3.1-8b --ctx 8k --runtime sglang --pp-size 2"), "--pp-size");
  check_refused(run_kvplan("advise --model llama3.1-8b --ctx 8k --mem-fraction-static 0.5"), "--mem-fraction-static");
}
