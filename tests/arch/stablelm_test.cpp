// stablelm (src/loaders/arch/stablelm.cpp); sources in tests/fixtures/hf/SOURCES.md.

#include "arch/arch_test.h"

using namespace kvplan;
using namespace kvplan::testing;

TEST_CASE("stablelm: StableLM 2 1.6B's q/k/v biases, LayerNorms with biases") {
  // Per layer: q, k, v 3 x 2048^2 + 6,144 bias, o 2048^2; MLP 3 x 2048 x 5632; 2 LayerNorms 8,192
  // = 51,394,560 x 24; embedding and lm_head 2 x 100,352 x 2,048; final LayerNorm 4,096.
  // = 1,644,515,328, the model card's "1,644,515,328 parameters (safetensors metadata)".
  const ModelSpec model = hf_model("stablelm-2-zephyr-1.6b");
  CHECK(model.params == 1'644'515'328ull);
  CHECK(cache_bytes(model).per_token == 24 * 2 * 32 * 64 * 2);  // 196,608
  // StableLM-3B-4E1T's shapes (no qkv bias): 2,795,443,200; no published exact count found.
  CHECK(hf_count("stablelm-3b").total == 2'795'443'200ull);
}
