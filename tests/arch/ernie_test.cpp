// ernie4_5 and ernie4_5_moe (src/loaders/arch/ernie.cpp); sources in tests/fixtures/hf/SOURCES.md.

#include "arch/arch_test.h"

using namespace kvplan;
using namespace kvplan::testing;

TEST_CASE("ernie4_5: ERNIE-4.5-0.3B, head_dim 128 beside hidden / heads = 64") {
  // 18 x (q 1024 x 2048 + k, v 1024 x 256 + o 2048 x 1024 + MLP 3 x 1024 x 3072 + 2 norms) = 18 x
  // 14,157,824; tied 103,424 x 1,024; final norm. = 360,748,032, as a public evaluation log counts it.
  const ModelSpec model = hf_model("ernie-4.5-0.3b");
  CHECK(model.params == 360'748'032ull);
  CHECK(model.layers[0].k_head_dim == 128);
  CHECK(cache_bytes(model).per_token == 18 * 2 * 2 * 128 * 2);  // 18,432
}

TEST_CASE("ernie4_5_moe: ERNIE-4.5-21B-A3B, MoE from moe_layer_start_index") {
  // Layer 0 dense: attention 2560^2 x 2 + 2560 x 512 x 2 = 15,728,640 + MLP 3 x 2560 x 12288 +
  // norms = 110,105,600. Layers 1..27 MoE: attention + 64 experts x 3 x 2560 x 1536 + shared
  // experts 3 x 2560 x 3072 + router 64 x 2,560 + e_score_correction_bias 64 + norms = 794,465,344.
  // Tied 103,424 x 2,560; final norm. = 21,825,437,888 ("21B"; the checkpoint's MTP tensors aside).
  const ParamCount count = hf_count("ernie-4.5-21b-a3b");
  CHECK(count.total == 21'825'437'888ull);
  // 6 of 64 experts: - 27 x 58 x 11,796,480 = 3,352,150,208 ("A3B", with the 265M embedding).
  CHECK(count.active == 3'352'150'208ull);
  CHECK(cache_bytes(hf_model("ernie-4.5-21b-a3b")).per_token == 28 * 2 * 4 * 128 * 2);
  // moe_layer_end_index -1 is the last layer; a start past 0 keeps the layers before it dense.
  nlohmann::json config = hf_config("ernie-4.5-21b-a3b");
  config["moe_layer_end_index"] = -1;
  CHECK(count_params(config).total == count.total);
}
