// falcon and its legacy spellings (src/loaders/arch/falcon.cpp); sources in
// tests/fixtures/hf/SOURCES.md.

#include "arch/arch_test.h"

using namespace kvplan;
using namespace kvplan::testing;

TEST_CASE("falcon: Falcon-40B's new decoder, 8 KV heads, in both spellings") {
  // new_decoder_architecture: num_kv_heads 8 of 64 (8192 / 128): 60 x 2 x 8 x 64 x 2 B.
  const ModelSpec model = hf_model("falcon-40b-instruct");
  CHECK(model.layers[0].kv_heads == 8);
  CHECK(cache_bytes(model).per_token == 122'880);
  // Per layer: query_key_value (128 + 16) x 64 x 8192 = 75,497,472, dense 8192^2, MLP 2 x 8192 x
  // 32768 (4 H), ln_attn and ln_mlp 4 x 8,192 = 679,510,016 x 60; tied 65,024 x 8,192; ln_f.
  // = 41,303,293,952; only the name "40B" was found.
  CHECK(model.params == 41'303'293'952ull);
  // The legacy remote-code copy (model_type RefinedWeb, n_layer, n_head, n_head_kv) reads the same.
  const ModelSpec legacy = hf_model("falcon-40b-refinedweb");
  CHECK(legacy.layers.size() == 60);
  CHECK(legacy.layers[0].kv_heads == 8);
  CHECK(legacy.params == model.params);
}

TEST_CASE("falcon: Falcon-7B's old decoder, multi-query, one LayerNorm") {
  // Cerebras' converter defaults for Falcon-7B (transcribed, no model_type: this test names it).
  nlohmann::json config = {{"model_type", "falcon"}, {"vocab_size", 65024}, {"hidden_size", 4544},
                           {"num_hidden_layers", 32}, {"num_attention_heads", 71}, {"num_kv_heads", nullptr},
                           {"alibi", false}, {"new_decoder_architecture", false}, {"multi_query", true},
                           {"parallel_attn", true}, {"bias", false}};
  const ModelSpec model = hf_model_of(config);
  CHECK(model.layers[0].kv_heads == 1);
  CHECK(cache_bytes(model).per_token == 32 * 2 * 1 * 64 * 2);  // 8,192
  // A public module print of FalconForCausalLM for falcon-7b: word_embeddings 65024 x 4544;
  // query_key_value 4544 -> 4672, dense 4544 -> 4544, dense_h_to_4h 4544 -> 18176, dense_4h_to_h,
  // all without bias; input_layernorm (4544) alone; ln_f. 32 x 207,070,080 + 295,469,056 + 9,088.
  CHECK(model.params == 6'921'720'704ull);
  config["multi_query"] = false;  // the old decoder without multi_query: every head cached
  CHECK(hf_model_of(config).layers[0].kv_heads == 71);
}
