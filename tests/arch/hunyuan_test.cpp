// hunyuan_v1_dense, hunyuan_v1_moe and its original spelling hunyuan (src/loaders/arch/hunyuan.cpp);
// sources in tests/fixtures/hf/SOURCES.md.

#include "arch/arch_test.h"

using namespace kvplan;
using namespace kvplan::testing;

TEST_CASE("hunyuan_v1_dense: Hy-MT2-7B (a Hunyuan-7B derivative), per-head q/k layernorms") {
  // 32 x (q 4096^2 + k, v 4096 x 1024 + o 4096^2 + query/key_layernorm 2 x 128 + MLP 3 x 4096 x
  // 14336 + 2 norms) = 32 x 218,112,256; tied 128,167 x 4,096; final norm. = 7,504,568,320 ("7B").
  const ModelSpec model = hf_model("hy-mt2-7b");
  CHECK(model.params == 7'504'568'320ull);
  CHECK(cache_bytes(model).per_token == 32 * 2 * 8 * 128 * 2);
  // Cross-layer attention would share K/V between layers: refused rather than sized wrongly.
  nlohmann::json config = hf_config("hy-mt2-7b");
  config["use_cla"] = true;
  CHECK_THROWS_WITH(hf_model_of(config), Catch::Contains("use_cla = true"));
}

TEST_CASE("hunyuan (hunyuan_v1_moe): Hunyuan-A13B, a shared MLP beside 64 experts") {
  // Per layer: attention 41,943,040 + q/k layernorms 256; shared_mlp 3 x 4096 x 3072 = 37,748,736;
  // experts 64 x 3 x 4096 x 3072 = 2,415,919,104; router 64 x 4,096; 2 norms -> 2,495,881,472 x 32
  // = 79,868,207,104; tied 128,167 x 4,096 = 524,972,032; final norm. = 80,393,183,232 ("80B").
  const ModelSpec model = hf_model("hunyuan-a13b-instruct");
  CHECK(model.architecture == "hunyuan");
  CHECK(model.params == 80'393'183'232ull);
  // 8 of 64 experts: - 32 x 56 x 37,748,736 = 12,747,448,320 ("A13B").
  CHECK(model.active_params == 12'747'448'320ull);
  CHECK(near(model.active_params, 13e9, 0.02));
  nlohmann::json config = hf_config("hunyuan-a13b-instruct");
  config["model_type"] = "hunyuan_v1_moe";
  CHECK(count_params(config).total == 80'393'183'232ull);
}
