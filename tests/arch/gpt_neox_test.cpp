// gpt_neox (src/loaders/arch/gpt_neox.cpp); sources in tests/fixtures/hf/SOURCES.md.

#include "arch/arch_test.h"

using namespace kvplan;
using namespace kvplan::testing;

TEST_CASE("gpt_neox: Pythia-6.9B against the Pythia README") {
  // Per layer: 2 LayerNorms 4 x 4,096; query_key_value 3 x 4096^2 + 12,288; dense 4096^2 + 4,096;
  // dense_h_to_4h 4096 x 16384 + 16,384; dense_4h_to_h 16384 x 4096 + 4,096 = 201,379,840 x 32;
  // final LayerNorm 8,192 -> 6,444,163,072 non-embedding; embed_in and embed_out 2 x 50,432 x 4,096.
  // The README: "6,857,302,016 total, 6,444,163,072 non-embedding".
  const ParamCount count = hf_count("pythia-6.9b-deduped");
  CHECK(count.total == 6'857'302'016ull);
  CHECK(count.total - count.embedding - count.lm_head == 6'444'163'072ull);
  CHECK(cache_bytes(hf_model("pythia-6.9b-deduped")).per_token == 32 * 2 * 32 * 128 * 2);
  nlohmann::json gqa = hf_config("pythia-6.9b-deduped");
  gqa["num_key_value_heads"] = 8;  // GPT-NeoX has no such field: not the model transformers builds
  CHECK_THROWS_WITH(hf_model_of(gqa), Catch::Contains("num_key_value_heads = 8"));
}
