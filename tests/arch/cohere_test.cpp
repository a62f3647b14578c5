// cohere and cohere2 (src/loaders/arch/cohere.cpp) on their fixtures; sources in
// tests/fixtures/hf/SOURCES.md.

#include "arch/arch_test.h"

using namespace kvplan;
using namespace kvplan::testing;

TEST_CASE("cohere: Aya-23-8B and Command R v01, one LayerNorm per layer, tied by default") {
  // Aya-23-8B (no tie_word_embeddings: CohereConfig ties). Per layer: q and o 4096^2 each, k and v
  // 4096 x 1024 each = 41,943,040; MLP 3 x 4096 x 14336 = 176,160,768; input_layernorm 4,096 ->
  // 218,107,904 x 32 = 6,979,452,928; embedding 256,000 x 4,096 = 1,048,576,000; final norm 4,096.
  // = 8,028,033,024, Hugging Face's safetensors parameter_count of CohereForAI/aya-expanse-8b,
  // which has these shapes.
  const ModelSpec aya = hf_model("aya-23-8b");
  CHECK(aya.params == 8'028'033'024ull);
  CHECK(hf_count("aya-23-8b").lm_head == 0);
  CHECK(describe_layers(aya) == "32 full");
  CHECK(cache_bytes(aya).per_token == 32 * 2 * 8 * 128 * 2);  // 131,072

  // Command R v01: 40 x (4 x 8192^2 + 3 x 8192 x 22528 + 8192) + 256,000 x 8,192 + 8,192 =
  // 34,980,831,232; Cohere: "35 billion parameters". Multi-head: 40 x 2 x 64 x 128 x 2 B per token.
  const ModelSpec r = hf_model("command-r-v01");
  CHECK(r.params == 34'980'831'232ull);
  CHECK(near(r.params, 35e9, 0.001));
  CHECK(cache_bytes(r).per_token == 1'310'720);

  // use_qk_norm adds the 2-D q_norm [64, 128] and k_norm [64, 128] to each layer.
  nlohmann::json config = hf_config("command-r-v01");
  config["use_qk_norm"] = true;
  CHECK(count_params(config).total == 34'980'831'232ull + 40ull * 2 * 64 * 128);
}

TEST_CASE("cohere2: Command R7B, 3 sliding layers to 1 full from sliding_window_pattern") {
  // No layer_types: sliding_window_pattern 4, layers 3, 7, ..., 31 full (8), 24 slide over 4,096.
  // Per layer per token 2 x 8 x 128 x 2 B = 4,096 B: growth 8 x 4,096; fixed 24 x 4,096 x 4,096.
  const ModelSpec model = hf_model("command-r7b");
  CHECK(describe_layers(model) == "24 sliding(4096) + 8 full");
  CHECK(model.layers[3].kind == LayerKind::full);
  CHECK(model.layers[4].kind == LayerKind::sliding);
  CHECK(cache_bytes(model).per_token == 32'768);
  CHECK(cache_bytes(model).fixed == 24ull * 4'096 * 4'096);
  // The tensors are Aya Expanse 8B's: the same 8,028,033,024 (tied, one LayerNorm per layer).
  CHECK(model.params == 8'028'033'024ull);
}

TEST_CASE("cohere2: a real Command R7B config.json (an abliterated copy) counts Hugging Face's R7B total") {
  // huihui-ai's abliterated R7B: CohereForAI's file with _name_or_path added (and the 8,192
  // context of R7B's first release). 8,028,033,024 is Hugging Face's count of
  // CohereForAI/c4ai-command-r7b-12-2024 (llmfit's table, SOURCES.md).
  const ModelSpec model = hf_model("command-r7b-abliterated");
  CHECK(model.params == 8'028'033'024ull);
  CHECK(describe_layers(model) == "24 sliding(4096) + 8 full");
  CHECK(model.max_context == 8'192);
}
