// The new model_types of the llama family (src/loaders/arch/llama.cpp): smollm3, seed_oss, arcee,
// apertus. Sources in tests/fixtures/hf/SOURCES.md.

#include "arch/arch_test.h"

using namespace kvplan;
using namespace kvplan::testing;

TEST_CASE("smollm3: SmolLM3-3B, NoPE layers, tied by default") {
  // 36 x (q 2048^2 + k, v 2048 x 512 + o 2048^2 + MLP 3 x 2048 x 11008 + 2 norms) = 36 x
  // 78,123,008; tied (no tie_word_embeddings: SmolLM3Config ties) 128,256 x 2,048; final norm.
  // = 3,075,098,624, Hugging Face's safetensors total for HuggingFaceTB/SmolLM3-3B.
  const ModelSpec model = hf_model("smollm3-3b");
  CHECK(model.params == 3'075'098'624ull);
  CHECK(describe_layers(model) == "36 full");  // no_rope_layers only skip RoPE
  CHECK(cache_bytes(model).per_token == 36 * 2 * 4 * 128 * 2);
  // With use_sliding_window and no layer_types, the NoPE layers (every 4th) slide.
  nlohmann::json config = hf_config("smollm3-3b");
  config.erase("layer_types");
  config["use_sliding_window"] = true;
  config["sliding_window"] = 4096;
  CHECK(describe_layers(hf_model_of(config)) == "27 full + 9 sliding(4096)");
}

TEST_CASE("seed_oss: Seed-OSS-36B, q/k/v biases without o_proj's, head_dim 128 beside 64") {
  // Per layer: q 5120 x 10240 + 10,240, k and v 2 x (5120 x 1024 + 1,024), o 10240 x 5120 (no
  // bias), MLP 3 x 5120 x 27648, 2 norms = 540,039,168 x 64; embedding and lm_head 2 x 155,136 x
  // 5,120; final norm. = 36,151,104,512, the figure a public model table gives both Seed-OSS-36B.
  const ModelSpec model = hf_model("seed-oss-36b");
  CHECK(model.params == 36'151'104'512ull);
  CHECK(cache_bytes(model).per_token == 64 * 2 * 8 * 128 * 2);
}

TEST_CASE("arcee and apertus: their MLPs, on the Llama 3.1 8B shapes (no config of theirs was found)") {
  // Llama 3.1 8B: attention 4096^2 x 2 + 4096 x 1024 x 2 = 41,943,040 per layer, 2 x 128,256 x
  // 4,096 embedding and head, 14,336-wide MLPs.
  nlohmann::json config = hf_config("llama3.1-8b");
  // Arcee: up and down only: 32 x (41,943,040 + 2 x 4096 x 14336 + 8,192) + 1,050,673,152 + 4,096.
  config["model_type"] = "arcee";
  CHECK(count_params(config).total == 6'151'213'056ull);
  // Apertus: + q/k RMSNorms 2 x 128 and xIELU's alpha_p and alpha_n per layer: + 32 x 258.
  config["model_type"] = "apertus";
  CHECK(count_params(config).total == 6'151'213'056ull + 32 * 258);
}
