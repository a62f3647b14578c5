// idefics3 towers (src/loaders/arch/idefics3.cpp); the fixture's source and the published total
// in tests/fixtures/hf/SOURCES.md.

#include "arch/arch_test.h"

using namespace kvplan;
using namespace kvplan::testing;

TEST_CASE("idefics3: SmolVLM-256M, a SigLIP-base encoder and a pixel-shuffle projection beside SmolLM2-135M") {
  const ModelSpec model = hf_model("smolvlm-256m-instruct");
  CHECK(model.architecture == "llama");
  // Llama, untied: embed + lm_head 2 x 49,280 x 576 = 56,770,560; per layer q 576^2 + k, v 2 x 192 x 576
  // + o 576^2 + MLP 3 x 1536 x 576 + 2 norms x 576 = 3,540,096, x 30 = 106,202,880; norm 576.
  CHECK(model.params == 162'974'016ull);
  // patch 768 x 3 x 16 x 16 + 768 = 590,592; positions (512 / 16)^2 x 768 = 786,432; per layer 4 x (768^2
  // + 768) + 4 x 768 + 768 x 3072 + 3,072 + 3072 x 768 + 768 = 7,087,872, x 12 = 85,054,464;
  // post_layernorm 1,536.
  CHECK(part_params(model, "vision tower") == 86'433'024ull);
  // modality_projection 768 x 4^2 -> 576, no bias.
  CHECK(part_params(model, "projector") == 7'077'888ull);
  // "Parameter total: 256,484,928" (the audit of revision 7e3e67ed, SOURCES.md).
  CHECK(model.params + part_params(model, "vision tower") + part_params(model, "projector") == 256'484'928ull);
  // bf16: 2 B a parameter; model.safetensors is 513,028,808 B = 512,969,856 of tensors + its header.
  CHECK(*model.weights_bytes == 2 * 256'484'928ull);
  // 30 layers x K and V x 3 KV heads x 64 x 2 B = 23,040 B (22.5 KiB) a token.
  CHECK(cache_bytes(model).per_token == 30 * 2 * 3 * 64 * 2);
  CHECK(cache_bytes(model).fixed == 0);
  CHECK(model.max_context == 8192);
}

TEST_CASE("idefics3: scale_factor defaults to Idefics3Config's 2, --text-only leaves the towers out") {
  nlohmann::json config = hf_config("smolvlm-256m-instruct");
  config.erase("scale_factor");
  // 768 x 2^2 -> 576.
  CHECK(part_params(hf_model_of(config), "projector") == 1'769'472ull);
  const std::string folder = source_path("tests/fixtures/hf/smolvlm-256m-instruct");
  const auto text = nlohmann::json::parse(run_kvplan("--model " + folder + " --ctx 4096 --gpu 24GiB --format json --text-only").out);
  CHECK(text["rows"][0]["weights_bytes"] == 2 * 162'974'016ull);
  const auto whole = nlohmann::json::parse(run_kvplan("--model " + folder + " --ctx 4096 --gpu 24GiB --format json").out);
  CHECK(whole["rows"][0]["weights_bytes"] == 2 * 256'484'928ull);
}

TEST_CASE("idefics3: SmolVLM2-500M (model_type smolvlm), its vision layers and MLP width from the config class") {
  const ModelSpec model = hf_model("smolvlm2-500m-video-instruct");
  CHECK(model.architecture == "llama");
  // SmolLM2-360M, untied: embed + lm_head 2 x 49,280 x 960 = 94,617,600; per layer q 960^2 + k, v
  // 2 x 320 x 960 + o 960^2 + MLP 3 x 2560 x 960 + 2 norms x 960 = 9,832,320, x 32 = 314,634,240;
  // norm 960.
  CHECK(model.params == 409'252'800ull);
  // vision_config states neither num_hidden_layers nor intermediate_size: Idefics3VisionConfig's 12
  // and 3072 (SmolVLMVisionConfig inherits them), so the tower is SmolVLM-256M's: 86,433,024.
  CHECK(part_params(model, "vision tower") == 86'433'024ull);
  // modality_projection 768 x 4^2 -> 960, no bias.
  CHECK(part_params(model, "projector") == 11'796'480ull);
  // 507,482,304: Hugging Face's count of SmolVLM-500M-Instruct, the same shapes (llmfit
  // data/hf_models.json @bab8c012; SOURCES.md).
  CHECK(model.params + part_params(model, "vision tower") + part_params(model, "projector") == 507'482'304ull);
  // 32 layers x K and V x 5 KV heads x 64 x 2 B = 40,960 B a token.
  CHECK(cache_bytes(model).per_token == 32 * 2 * 5 * 64 * 2);
  CHECK(model.max_context == 8192);
}

TEST_CASE("idefics3: a vision width or patch of 0, or an image smaller than a patch, is refused by name") {
  nlohmann::json config = hf_config("smolvlm2-500m-video-instruct");
  config["vision_config"]["patch_size"] = 0;
  CHECK_THROWS_WITH(hf_model_of(config), Catch::Contains("patch_size") && Catch::Contains("at least 1"));
  config["vision_config"]["patch_size"] = 1024;
  CHECK_THROWS_WITH(hf_model_of(config), Catch::Contains("image_size") && Catch::Contains("smaller than one patch"));
}
