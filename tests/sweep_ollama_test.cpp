// `kvplan sweep --kv-dtype all` under Ollama: the grid keeps the cache types Ollama has (f16,
// q8_0, q4_0: OLLAMA_KV_CACHE_TYPE) and leaves the others out, as under every engine; asked for
// by name, one Ollama has not is refused by the plan (one line, exit 2) and said to be left out
// by a sweep, as a sweep says of llama.cpp's fp8.

#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/run_binary.h"

using kvplan::testing::ProcessResult;
using kvplan::testing::run_kvplan;

TEST_CASE("sweep --kv-dtype all under Ollama keeps f16, q8_0 and q4_0", "[sweep][ollama]") {
  const ProcessResult sweep = run_kvplan("sweep --models qwen3-8b --gpus 4090 --ctx 8k --kv-dtype all --runtime ollama");
  INFO(sweep.err);
  REQUIRE(sweep.exit_code == 0);
  std::string kinds;
  std::size_t start = 0;
  while (start < sweep.out.size()) {
    const std::size_t end = sweep.out.find('\n', start);
    const nlohmann::json row = nlohmann::json::parse(sweep.out.substr(start, end - start));
    kinds += (kinds.empty() ? "" : ",") + row["kv_dtype"].get<std::string>();
    start = end + 1;
  }
  CHECK(kinds == "fp16,q8_0,q4_0");
  CHECK(sweep.err.empty());  // every dtype's absence is the grid's, not news
}

TEST_CASE("Ollama still refuses a cache type asked for by name", "[sweep][ollama]") {
  const ProcessResult plan = run_kvplan("--model qwen3-8b --gpu 4090 --ctx 8k --kv-dtype fp32 --runtime ollama");
  CHECK(plan.exit_code == 2);
  CHECK(plan.err == "kvplan: error: --kv-dtype: 'fp32' is not a cache type Ollama accepts (f16, q8_0, q4_0)\n");
  const ProcessResult sweep = run_kvplan("sweep --models qwen3-8b --gpus 4090 --ctx 8k --kv-dtype fp32 --runtime ollama");
  CHECK(sweep.exit_code == 0);
  CHECK(sweep.out.empty());
  CHECK(sweep.err == "kvplan: note: qwen3-8b on rtx4090: fp32 left out: --kv-dtype: 'fp32' is not a cache type Ollama "
                     "accepts (f16, q8_0, q4_0)\n");
}
