// The catalog entries of issue #12's last round (models/*.json): each entry's parameters against
// the published count named in tests/fixtures/hf/SOURCES.md, its cache per token and the state a
// sequence holds, computed by hand from its config.json fixture.

#include <string>

#include <catch2/catch.hpp>

#include "arch/arch_test.h"
#include "kvplan/catalog.h"

using namespace kvplan;
using namespace kvplan::testing;

namespace {

const ModelSpec& catalog12_entry(const std::string& name) {
  const ModelSpec* model = builtin_models().find(name);
  REQUIRE(model != nullptr);
  return *model;
}

}  // namespace

TEST_CASE("catalog: Qwen2.5 1.5B Instruct and QwQ 32B", "[catalog12]") {
  const ModelSpec& small = catalog12_entry("Qwen/Qwen2.5-1.5B-Instruct");
  CHECK(small.id == "qwen2.5-1.5b-instruct");
  // Tied embedding 151,936 x 1,536 = 233,373,696; per layer q 1536^2 + 1,536, k, v 2 x (1536 x 256 +
  // 256), o 1536^2, MLP 3 x 1536 x 8960, 2 norms = 46,797,824, x 28; norm 1,536. The report's total.
  CHECK(small.params == 1'543'714'304ull);
  CHECK(small.max_context == 32768);
  // 28 layers x K and V x 2 KV heads x 128 x 2 B.
  CHECK(cache_bytes(small).per_token == 28 * 2 * 2 * 128 * 2);
  const ModelSpec& qwq = catalog12_entry("Qwen/QwQ-32B");
  CHECK(qwq.params == 32'763'876'352ull);  // the report's total over 771 tensors
  CHECK(*qwq.weights_bytes == 2 * 32'763'876'352ull);
  CHECK(qwq.max_context == 131072);
  // use_sliding_window false: every layer full. 64 x 2 x 8 x 128 x 2 B = 256 KiB.
  CHECK(cache_bytes(qwq).per_token == 262'144);
  CHECK(cache_bytes(qwq).fixed == 0);
}

TEST_CASE("catalog: SmolVLM 256M counts its towers", "[catalog12]") {
  const ModelSpec& model = catalog12_entry("HuggingFaceTB/SmolVLM-256M-Instruct");
  CHECK(model.id == "smolvlm-256m");
  CHECK(model.params == 162'974'016ull);
  REQUIRE(model.parts.size() == 2);
  // 162,974,016 + 86,433,024 + 7,077,888 = 256,484,928, x 2 B (bf16).
  CHECK(*model.weights_bytes == 512'969'856ull);
  CHECK(cache_bytes(model).per_token == 30 * 2 * 3 * 64 * 2);
}

TEST_CASE("catalog: the hybrid entries hold their state beside the cache", "[catalog12]") {
  const ModelSpec& falcon = catalog12_entry("tiiuae/Falcon-H1-0.5B-Base");
  CHECK(falcon.id == "falcon-h1-0.5b");
  CHECK(falcon.params == 521'411'104ull);  // Hugging Face's count of the Base repository
  // Attention in all 36 layers: 36 x 2 x 2 KV heads x 64 x 2 B = 18,432 B a token; and a Mamba2
  // state in every layer: conv 3 x (1536 + 2 x 1 x 128) = 5,376 + ssm 24 x 64 x 128 = 196,608 values
  // x 2 B x 36 = 14,542,848 B a sequence.
  CHECK(cache_bytes(falcon).per_token == 18'432);
  CHECK(cache_bytes(falcon).fixed == 14'542'848ull);

  const ModelSpec& granite = catalog12_entry("ibm-granite/granite-4.0-h-tiny");
  CHECK(granite.id == "granite4-h-tiny");
  CHECK(granite.params == 6'939'037'248ull);  // Hugging Face's count
  // 4 attention layers x 2 x 4 KV heads x 128 x 2 B = 8,192 B a token; 36 Mamba2 layers x (conv 3 x
  // (3072 + 2 x 128) + ssm 48 x 64 x 128) x 2 B = 36 x 806,400.
  CHECK(cache_bytes(granite).per_token == 8'192);
  CHECK(cache_bytes(granite).fixed == 29'030'400ull);

  const ModelSpec& jamba = catalog12_entry("ai21labs/AI21-Jamba-1.5-Mini");
  CHECK(jamba.id == "jamba-1.5-mini");
  // total_size 103,140,646,656 B (bf16) = 2 x 51,570,323,328, Hugging Face's count.
  CHECK(jamba.params == 51'570'323'328ull);
  CHECK(*jamba.weights_bytes == 103'140'646'656ull);
  // 4 attention layers (attn_layer_offset 4, period 8) x 2 x 8 x 128 x 2 B; 28 Mamba layers x
  // (conv 3 x 8,192 + ssm 8,192 x 16) x 2 B.
  CHECK(cache_bytes(jamba).per_token == 16'384);
  CHECK(cache_bytes(jamba).fixed == 28ull * 311'296);
}

TEST_CASE("qwen3_moe: transformers 5's num_local_experts is num_experts, and a MoE without it is refused", "[catalog12]") {
  // Qwen3-30B-A3B-Thinking-2507-FP8 as transformers 5.7 prints it: 128 experts spelled
  // num_local_experts. Qwen3-30B-A3B's official count, 30,532,122,624, with 3.35B active.
  const ModelSpec model = hf_model("qwen3-30b-a3b-thinking-2507-fp8");
  CHECK(model.params == 30'532'122'624ull);
  CHECK(model.active_params == 3'353'032'704ull);
  CHECK(model.max_context == 262144);
  CHECK(cache_bytes(model).per_token == 48 * 2 * 4 * 128 * 2);
  nlohmann::json config = hf_config("qwen3-30b-a3b-thinking-2507-fp8");
  config.erase("num_local_experts");
  // Without an expert count the layers would read as dense MLPs of intermediate_size (3.3B).
  CHECK_THROWS_WITH(hf_model_of(config), Catch::Contains("num_experts") && Catch::Contains("missing"));
}
