// minicpm and minicpm3 (src/loaders/arch/minicpm.cpp); sources in tests/fixtures/hf/SOURCES.md.

#include "arch/arch_test.h"

using namespace kvplan;
using namespace kvplan::testing;

TEST_CASE("minicpm: MiniCPM-2B, tied") {
  // 40 x (4 x 2304^2 + 3 x 2304 x 5760 + 4,608) = 2,442,055,680; tied 122,753 x 2,304; final norm.
  // = 2,724,880,896, the demo's "with 2724880896 (2.7B) parameters".
  const ModelSpec model = hf_model("minicpm-2b-sft");
  CHECK(model.params == 2'724'880'896ull);
  CHECK(cache_bytes(model).per_token == 40 * 2 * 36 * 64 * 2);
}

TEST_CASE("minicpm3: MiniCPM3-4B, latent attention") {
  // The latent: 62 x (256 + 32) x 2 B = 35,712 B per token (llama.cpp keeps full K and V instead).
  const ModelSpec model = hf_model("minicpm3-4b");
  CHECK(describe_layers(model) == "62 mla");
  CHECK(cache_bytes(model).per_token == 35'712);
  // Attention: q_a 2560 x 768 + 768, q_b 768 x 40 x 96, kv_a 2560 x 288 + 256, kv_b 256 x 40 x 128,
  // o 40 x 64 x 2560 (v_head_dim absent: 2560 / 40) = 13,517,824; MLP 3 x 2560 x 6400; 2 norms ->
  // x 62; tied 73,448 x 2,560; final norm. = 4,073,875,968 ("4B"; no exact count found).
  CHECK(model.params == 4'073'875'968ull);
}
