// nemotron (src/loaders/arch/nemotron.cpp; nemotron_h is tested in param_count_test.cpp).

#include "arch/arch_test.h"

using namespace kvplan;
using namespace kvplan::testing;

TEST_CASE("nemotron: Minitron-4B-Base, relu^2 MLP and LayerNorm1P with biases") {
  // Per layer: q and o 2 x 3072^2, k and v 2 x 3072 x 1024 (8 KV heads of 128), up and down 2 x
  // 3072 x 9216, 2 LayerNorm1P with biases 4 x 3,072 = 81,801,216 x 32; embedding and lm_head 2 x
  // 256,000 x 3,072 (untied); final LayerNorm1P 6,144. = 4,190,509,056: the "4B" of its name (no
  // exact published count was found; the arithmetic is the check).
  const ModelSpec model = hf_model("minitron-4b-base");
  CHECK(model.params == 32ull * 81'801'216 + 2ull * 256'000 * 3'072 + 6'144);
  CHECK(model.params == 4'190'509'056ull);
  // partial_rotary_factor 0.5 rotates 64 of 128 dims; the cache keeps all 128.
  CHECK(cache_bytes(model).per_token == 32 * 2 * 8 * 128 * 2);
}

TEST_CASE("nemotron: relu^2 MLP and LayerNorm1P, on the Llama 3.1 8B shapes") {
  // 32 x (attention 41,943,040 + up and down 2 x 4096 x 14336 + 2 LayerNorm1P 4 x 4,096) + 2 x
  // 128,256 x 4,096 + final LayerNorm1P 8,192.
  nlohmann::json config = hf_config("llama3.1-8b");
  config["model_type"] = "nemotron";
  CHECK(count_params(config).total == 6'151'479'296ull);
  CHECK(cache_bytes(hf_model_of(config)).per_token == 131'072);
}
