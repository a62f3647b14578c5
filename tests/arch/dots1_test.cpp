// dots1 (src/loaders/arch/dots1.cpp); sources in tests/fixtures/hf/SOURCES.md.

#include "arch/arch_test.h"

using namespace kvplan;
using namespace kvplan::testing;

TEST_CASE("dots1: dots.llm1, one dense layer then 128 routed and 2 shared experts") {
  // Attention 4 x 4096^2 + q/k norms 256 per layer; layer 0 MLP 3 x 4096 x 10944; 61 MoE layers:
  // router 4096 x 128 + its correction bias 128 (a stored buffer) + 128 x 3 x 4096 x 1408 + shared
  // 3 x 4096 x 2816; 2 norms per layer; untied 2 x 152,064 x 4,096; final norm.
  // = 142,774,381,696 ("142B"; 7,808 of it the buffers).
  const ParamCount count = hf_count("dots.llm1.inst");
  CHECK(count.total == 142'774'381'696ull);
  // 6 of 128 experts: - 61 x 122 x 17,301,504 = 14,016,588,928 ("14B activated").
  CHECK(count.active == 14'016'588'928ull);
  CHECK(cache_bytes(hf_model("dots.llm1.inst")).per_token == 62 * 2 * 32 * 128 * 2);  // 1,015,808
}
