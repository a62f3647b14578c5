// exaone and exaone4 (src/loaders/arch/exaone.cpp); sources in tests/fixtures/hf/SOURCES.md.

#include "arch/arch_test.h"

using namespace kvplan;
using namespace kvplan::testing;

TEST_CASE("exaone: EXAONE 3.0 7.8B, the layer count spelt num_layers") {
  // 32 x (q 4096^2 + k, v 4096 x 1024 + out 4096^2 + MLP 3 x 4096 x 14336 + ln_1 + ln_2) =
  // 32 x 218,112,000; wte and lm_head 2 x 102,400 x 4,096; ln_f. = 7,818,448,896: "7.8B" is the
  // only published figure found.
  const ModelSpec model = hf_model("exaone-3.0-7.8b");
  CHECK(model.layers.size() == 32);
  CHECK(model.params == 7'818'448'896ull);
  CHECK(near(model.params, 7.8e9, 0.003));
  CHECK(cache_bytes(model).per_token == 32 * 2 * 8 * 128 * 2);
}

TEST_CASE("exaone4: EXAONE 4.0 32B, LLLG layers, per-head q/k norms") {
  // 64 x (q 5120 x 5120 + k, v 5120 x 1024 + o 5120^2 + q/k norms 256 + MLP 3 x 5120 x 27392 + 2
  // post-norms) = 64 x 483,666,176; embedding and lm_head 2 x 102,400 x 5,120; final norm.
  // = 32,003,216,384 ("32B").
  const ModelSpec model = hf_model("exaone-4.0-32b");
  CHECK(model.params == 32'003'216'384ull);
  CHECK(describe_layers(model) == "48 sliding(4096) + 16 full");
  CHECK(cache_bytes(model).per_token == 16 * 4'096);
  CHECK(cache_bytes(model).fixed == 48ull * 4'096 * 4'096);
  // Without layer_types, sliding_window_pattern "LLLG" (or the integer 4) gives the same layout.
  nlohmann::json config = hf_config("exaone-4.0-32b");
  config.erase("layer_types");
  CHECK(describe_layers(hf_model_of(config, 1)) == "48 sliding(4096) + 16 full");
  config["sliding_window_pattern"] = 2;
  CHECK(describe_layers(hf_model_of(config, 1)) == "32 sliding(4096) + 32 full");
}
