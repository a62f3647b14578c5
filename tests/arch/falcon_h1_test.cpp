// falcon_h1 (src/loaders/arch/falcon_h1.cpp); sources in tests/fixtures/hf/SOURCES.md.

#include "arch/arch_test.h"

using namespace kvplan;
using namespace kvplan::testing;

TEST_CASE("falcon_h1: Falcon-H1-7B, attention and Mamba2 in every layer") {
  // 44 layers, each KV 2 x 2 x 128 x 2 B = 1,024 B per token, and Mamba2 (d_ssm 3072, 24 heads,
  // state 256, 1 group): conv 3 x (3072 + 512) x 2 B + ssm 24 x 128 x 256 x 2 B = 1,594,368 B.
  const ModelSpec model = hf_model("falcon-h1-7b");
  CHECK(describe_layers(model) == "44 full");
  CHECK(cache_bytes(model).per_token == 45'056);
  CHECK(cache_bytes(model).fixed == 70'152'192ull);
  // Per layer: in_proj 3072 x (3072 + 3584 + 24) + conv 3584 x 4 + 3,584 + 72 + out_proj 3072^2 =
  // 29,976,136; attention 3072 x 1536 x 2 + 3072 x 256 x 2 = 11,010,048; MLP 3 x 3072 x 12288; 2
  // norms -> x 44; embedding and lm_head 2 x 130,048 x 3,072; final norm. The copy lacks the bias
  // and norm flags (their defaults: conv bias only). No published exact count was found.
  CHECK(model.params == 7'585'513'568ull);
  CHECK(hf_count("falcon-h1-3b").total == 3'149'256'192ull);
  // The 0.5B copy has every flag but lacks mamba_d_ssm: d_ssm = 24 x 64, noted.
  const ParamCount small = hf_count("falcon-h1-0.5b");
  CHECK(small.total == 521'411'104ull);
  CHECK_THAT(small.notes, Catch::Contains("mamba_d_ssm absent"));
}
