// bailing_moe (src/loaders/arch/bailing.cpp); sources in tests/fixtures/hf/SOURCES.md.

#include "arch/arch_test.h"

using namespace kvplan;
using namespace kvplan::testing;

TEST_CASE("bailing_moe: Ling-lite-1.5, the fused query_key_value, MoE in every layer") {
  // Per layer: query_key_value 2048 x (16 + 8) x 128 + dense 2048^2 = 10,485,760; router 2048 x 64
  // + 64 experts x 3 x 2048 x 1408 + shared 3 x 2048 x 2816 = 571,080,704; 2 norms -> x 28; untied
  // 2 x 126,464 x 2,048; final norm. = 16,801,974,272 ("16.8B total").
  const ModelSpec model = hf_model("ling-lite-1.5");
  CHECK(model.params == 16'801'974'272ull);
  // 6 of 64 experts: - 28 x 58 x 8,650,752 = 2,753,153,024 ("2.75B activated").
  CHECK(model.active_params == 2'753'153'024ull);
  CHECK(cache_bytes(model).per_token == 28 * 2 * 4 * 128 * 2);
  nlohmann::json v2 = hf_config("ling-lite-1.5");
  v2["architectures"] = {"BailingMoeV2ForCausalLM"};
  CHECK_THROWS_WITH(count_params(v2), Catch::Contains("BailingMoeV2ForCausalLM"));
}
