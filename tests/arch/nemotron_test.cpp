// nemotron (src/loaders/arch/nemotron.cpp; nemotron_h is tested in param_count_test.cpp).

#include "arch/arch_test.h"

using namespace kvplan;
using namespace kvplan::testing;

TEST_CASE("nemotron: relu^2 MLP and LayerNorm1P, on the Llama 3.1 8B shapes (no config was found)") {
  // 32 x (attention 41,943,040 + up and down 2 x 4096 x 14336 + 2 LayerNorm1P 4 x 4,096) + 2 x
  // 128,256 x 4,096 + final LayerNorm1P 8,192.
  nlohmann::json config = hf_config("llama3.1-8b");
  config["model_type"] = "nemotron";
  CHECK(count_params(config).total == 6'151'479'296ull);
  CHECK(cache_bytes(hf_model_of(config)).per_token == 131'072);
}
