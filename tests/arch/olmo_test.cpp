// olmo, olmo2, olmo3 and olmoe (src/loaders/arch/olmo.cpp); sources in tests/fixtures/hf/SOURCES.md.

#include "arch/arch_test.h"

using namespace kvplan;
using namespace kvplan::testing;

TEST_CASE("olmo: OLMo-1B's norms have no parameters, the copy found omits tie_word_embeddings") {
  // 16 x (4 x 2048^2 + 3 x 2048 x 8192) = 1,073,741,824; norms 0; embedding 50,304 x 2,048 =
  // 103,022,592. The published 1,176,764,416 ("unique parameters", the native OLMo-1B with
  // weight_tying) is the tied count; the trimmed copy has no tie_word_embeddings, so OlmoConfig's
  // default (untied) adds the output head: 1,279,787,008.
  const ParamCount untied = hf_count("olmo-1b-hf");
  CHECK(untied.total == 1'279'787'008ull);
  CHECK_THAT(untied.notes, Catch::Contains("olmo defaults to untied"));
  nlohmann::json tied = hf_config("olmo-1b-hf");
  tied["tie_word_embeddings"] = true;
  CHECK(count_params(tied).total == 1'176'764'416ull);
  CHECK(cache_bytes(hf_model("olmo-1b-hf")).per_token == 16 * 2 * 16 * 128 * 2);  // 131,072
}

TEST_CASE("olmo2: OLMo-2-1124-7B, full-width q/k norms and post-norms only") {
  // Per layer: q, k, v, o 4 x 4096^2 = 67,108,864; q_norm 4,096 + k_norm 4,096; MLP 3 x 4096 x
  // 11008 = 135,266,304; post-attention and post-feedforward norms 8,192 -> 202,391,552 x 32 =
  // 6,476,529,664; embedding and lm_head 2 x 100,352 x 4,096 = 822,083,584; final norm 4,096.
  // = 7,298,617,344, the Hugging Face safetensors total of allenai/OLMo-2-1124-7B(-Instruct).
  const ModelSpec model = hf_model("olmo2-7b-instruct");
  CHECK(model.params == 7'298'617'344ull);
  CHECK(cache_bytes(model).per_token == 32 * 2 * 32 * 128 * 2);  // 524,288
}

TEST_CASE("olmo3: Olmo-3.1-32B, 3 sliding(4096) layers to 1 full") {
  // Per layer: q 5120^2, k and v 5120 x 1024, o 5120^2 = 62,914,560; q_norm 5,120 + k_norm 1,024;
  // MLP 3 x 5120 x 27648 = 424,673,280; 2 norms 10,240 -> 487,604,224 x 64 = 31,206,670,336;
  // embedding and lm_head 2 x 100,278 x 5,120 = 1,026,846,720; final norm 5,120.
  // = 32,233,522,176, the count a public research script gives Olmo-3 32B.
  const ModelSpec model = hf_model("olmo3.1-32b-instruct");
  CHECK(model.params == 32'233'522'176ull);
  CHECK(describe_layers(model) == "48 sliding(4096) + 16 full");
  // Per layer per token 2 x 8 x 128 x 2 B = 4,096 B: growth 16 x 4,096, fixed 48 x 4,096 x 4,096.
  CHECK(cache_bytes(model).per_token == 65'536);
  CHECK(cache_bytes(model).fixed == 805'306'368ull);
}

TEST_CASE("olmoe: OLMoE-1B-7B, 64 experts of intermediate_size in every layer") {
  // Per layer: attention 4 x 2048^2 = 16,777,216 + q_norm 2,048 + k_norm 2,048; router 64 x 2,048
  // = 131,072; experts 64 x 3 x 2048 x 1024 = 402,653,184; 2 norms 4,096 -> 419,569,664 x 16 =
  // 6,713,114,624; embedding and lm_head 2 x 50,304 x 2,048 = 206,045,184; final norm 2,048.
  // = 6,919,161,856, the safetensors parameterCount of allenai/OLMoE-1B-7B-0924.
  const ParamCount count = hf_count("olmoe-1b-7b");
  CHECK(count.total == 6'919'161'856ull);
  // 8 of 64 experts per token: total - 16 x 56 x 6,291,456 = 1,282,017,280 ("1B active").
  CHECK(count.active == 1'282'017'280ull);
  CHECK(cache_bytes(hf_model("olmoe-1b-7b")).per_token == 131'072);
}
