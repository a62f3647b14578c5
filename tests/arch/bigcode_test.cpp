// gpt_bigcode and starcoder2 (src/loaders/arch/bigcode.cpp); sources in tests/fixtures/hf/SOURCES.md.

#include "arch/arch_test.h"

using namespace kvplan;
using namespace kvplan::testing;

TEST_CASE("gpt_bigcode: StarCoder and SantaCoder, GPT-2 spellings and multi-query attention") {
  // multi_query: one K/V head of 6144 / 48 = 128: 40 x 2 x 1 x 128 x 2 B = 20,480 B per token.
  const ModelSpec starcoder = hf_model("starcoder");
  CHECK(starcoder.layers.size() == 40);  // n_layer
  CHECK(starcoder.layers[0].kv_heads == 1);
  CHECK(starcoder.max_context == 8'192);  // n_positions
  CHECK(cache_bytes(starcoder).per_token == 20'480);
  // Per layer: ln_1, ln_2 4 x 6,144; c_attn 6144 x 6400 + 6,400; c_proj 6144^2 + 6,144; c_fc
  // 6144 x 24576 + 24,576; c_proj 24576 x 6144 + 6,144 = 379,128,064 x 40; wte 49,152 x 6,144; wpe
  // 8,192 x 6,144; ln_f 12,288; tied. = 15,517,456,384, a public size table's figure for StarCoder-15B
  // fine-tunes (the same architecture).
  CHECK(starcoder.params == 15'517'456'384ull);
  // SantaCoder: 24 x 42,490,112 + 49,280 x 2,048 + 2,048 x 2,048 + 4,096 = 1,124,886,528 (no
  // published exact count found).
  const ModelSpec santacoder = hf_model("santacoder");
  CHECK(santacoder.params == 1'124'886'528ull);
  CHECK(cache_bytes(santacoder).per_token == 24 * 2 * 1 * 128 * 2);
  nlohmann::json mha = hf_config("santacoder");
  mha["multi_query"] = false;
  CHECK(hf_model_of(mha).layers[0].kv_heads == 16);
}

TEST_CASE("starcoder2: StarCoder2-7B, sliding_window on every layer, biases") {
  // Per layer: q, o 4608^2 + 4,608 each, k, v 4608 x 512 + 512 each = 47,196,160; c_fc 4608 x 18432
  // + 18,432 and c_proj 18432 x 4608 + 4,608 = 169,892,352; 2 LayerNorms 18,432 -> x 32; tied
  // (no tie_word_embeddings: Starcoder2Config ties) 49,152 x 4,608; final LayerNorm 9,216.
  // = 7,173,923,840; no published exact count was found.
  const ModelSpec model = hf_model("starcoder2-7b");
  CHECK(model.params == 7'173'923'840ull);
  CHECK(describe_layers(model) == "32 sliding(4096)");
  CHECK(cache_bytes(model).fixed == 32ull * 2 * 4 * 128 * 2 * 4'096);
}
