// The new model_types of the llama family (src/loaders/arch/llama.cpp): smollm3, seed_oss, arcee,
// apertus (the last two on fine-tunes' real configs). Sources in tests/fixtures/hf/SOURCES.md.

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

TEST_CASE("apertus: Science-Expert-R1, an Apertus-8B fine-tune: xIELU MLP, q/k norms") {
  // Per layer: q and o 2 x 4096^2, k and v 2 x 4096 x 1024, q/k RMSNorms 2 x 128, up and down 2 x
  // 4096 x 21504 (no gate), xIELU's alpha_p and alpha_n 2, 2 norms 8,192 = 218,112,258 x 32;
  // embedding and lm_head 2 x 131,072 x 4,096; final norm. = 8,053,338,176, Hugging Face's count
  // of swiss-ai/Apertus-8B-2509 (llmfit's table, SOURCES.md): the fine-tune kept every shape.
  const ModelSpec model = hf_model("science-expert-r1");
  CHECK(model.params == 8'053'338'176ull);
  CHECK(model.params == 32ull * 218'112'258 + 2ull * 131'072 * 4'096 + 4'096);
  CHECK(cache_bytes(model).per_token == 32 * 2 * 8 * 128 * 2);
}

TEST_CASE("arcee: Austral-AFM-SFT, an AFM-4.5B fine-tune: relu^2 MLP of up and down") {
  // Per layer: q and o 2 x 2560^2, k and v 2 x 2560 x 512, up and down 2 x 2560 x 18432, 2 norms
  // 5,120 = 110,105,600 x 36; embedding and lm_head 2 x 128,005 x 2,560; final norm.
  // = 4,619,189,760: 5,120 more than Hugging Face's count of arcee-ai/AFM-4.5B-Base (4,619,184,640,
  // llmfit's table), exactly one vocabulary row in the embedding and the head (2 x 2,560).
  const ModelSpec model = hf_model("austral-afm-sft");
  CHECK(model.params == 36ull * 110'105'600 + 2ull * 128'005 * 2'560 + 2'560);
  CHECK(model.params == 4'619'184'640ull + 2 * 2'560);
  CHECK(cache_bytes(model).per_token == 36 * 2 * 4 * 128 * 2);
}
