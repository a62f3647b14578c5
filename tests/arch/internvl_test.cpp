// internvl and internvl_chat towers (src/loaders/arch/internvl.cpp); the fixture's source and the
// published totals in tests/fixtures/hf/SOURCES.md.

#include "arch/arch_test.h"

using namespace kvplan;
using namespace kvplan::testing;

namespace {

/// The transformers-format (internvl) config OpenGVLab's converter writes for the fixture's
/// checkpoint: llm_config becomes text_config and vision_config its ViT-300M block (the values of
/// vit_300m_config in OpenGVLab's internvl_custom2hf script, SOURCES.md).
nlohmann::json internvl_hf_form() {
  const nlohmann::json chat = hf_config("internvl3-1b");
  return {{"architectures", {"InternVLForConditionalGeneration"}},
          {"downsample_ratio", 0.5},
          {"image_seq_length", 256},
          {"image_token_id", 151671},
          {"model_type", "internvl"},
          {"projector_hidden_act", "gelu"},
          {"text_config", chat["llm_config"]},
          {"torch_dtype", "bfloat16"},
          {"vision_config",
           {{"architectures", {"InternVisionModel"}},
            {"attention_bias", true},
            {"hidden_act", "gelu"},
            {"hidden_size", 1024},
            {"image_size", {448, 448}},
            {"intermediate_size", 4096},
            {"layer_norm_eps", 1e-06},
            {"layer_scale_init_value", 0.1},
            {"model_type", "internvl_vision"},
            {"norm_type", "layer_norm"},
            {"num_attention_heads", 16},
            {"num_channels", 3},
            {"num_hidden_layers", 24},
            {"patch_size", {14, 14}},
            {"use_absolute_position_embeddings", true},
            {"use_mask_token", false},
            {"use_mean_pooling", true},
            {"use_qk_norm", false}}},
          {"vision_feature_layer", -1},
          {"vision_feature_select_strategy", "default"}};
}

}  // namespace

TEST_CASE("internvl_chat: InternVL3-1B, InternViT-300M and an MLP projector beside Qwen2.5-0.5B's shape") {
  const ModelSpec model = hf_model("internvl3-1b");
  CHECK(model.architecture == "qwen2");
  // llm_config: embed and the untied lm_head 2 x 151,674 x 896 = 271,799,808; per layer q 896^2 + 896,
  // k, v 2 x (896 x 128 + 128), o 896^2, MLP 3 x 896 x 4864, 2 norms = 14,912,384, x 24 =
  // 357,897,216; norm 896.
  CHECK(model.params == 629'697'920ull);
  // class token 1,024 + patch 1024 x 3 x 14 x 14 + 1,024 + positions (32^2 + 1) x 1,024 = 1,653,760;
  // per layer qkv 3 x (1024^2 + 1,024) + proj 1024^2 + 1,024 + 2 LayerNorms 4,096 + fc1 / fc2
  // 8,393,728 + ls1 / ls2 2,048 = 12,598,272, x 24 = 302,358,528.
  CHECK(part_params(model, "vision tower") == 304'012'288ull);
  // LayerNorm 2 x 4,096 + linear_1 4096 x 896 + 896 + linear_2 896^2 + 896.
  CHECK(part_params(model, "projector") == 4'482'816ull);
  // Hugging Face's counts: OpenGVLab/InternVL3-1B 938,193,024 (as InternVL3-1B-hf and
  // InternVL2_5-1B) and InternViT-300M alone 304,012,288 (llmfit's data/hf_models.json).
  CHECK(model.params + part_params(model, "vision tower") + part_params(model, "projector") == 938'193'024ull);
  // 24 layers x K and V x 2 KV heads x 64 x 2 B = 12,288 B a token.
  CHECK(cache_bytes(model).per_token == 24 * 2 * 2 * 64 * 2);
  CHECK(cache_bytes(model).fixed == 0);
}

TEST_CASE("internvl: the transformers form of the same checkpoint counts the same") {
  const ModelSpec model = hf_model_of(internvl_hf_form());
  CHECK(model.params == 629'697'920ull);
  CHECK(part_params(model, "vision tower") == 304'012'288ull);
  CHECK(part_params(model, "projector") == 4'482'816ull);
  CHECK(cache_bytes(model).per_token == 24 * 2 * 2 * 64 * 2);
}

TEST_CASE("internvl: each ViT flag changes the count by its tensors") {
  nlohmann::json config = internvl_hf_form();
  // RMSNorm instead of LayerNorm: 2 norms x 1,024 biases fewer a layer, x 24.
  config["vision_config"]["norm_type"] = "rms_norm";
  CHECK(part_params(hf_model_of(config), "vision tower") == 304'012'288ull - 24 * 2 * 1024);
  // q and k RMSNorms of 1,024 each, in every layer.
  config = internvl_hf_form();
  config["vision_config"]["use_qk_norm"] = true;
  CHECK(part_params(hf_model_of(config), "vision tower") == 304'012'288ull + 24 * 2 * 1024);
  // No q, k, v biases; a final LayerNorm without mean pooling; a mask token.
  config = internvl_hf_form();
  config["vision_config"]["attention_bias"] = false;
  config["vision_config"]["use_mean_pooling"] = false;
  config["vision_config"]["use_mask_token"] = true;
  CHECK(part_params(hf_model_of(config), "vision tower") == 304'012'288ull - 24 * 3 * 1024 + 2 * 1024 + 1024);
}

TEST_CASE("internvl: a tower kvplan cannot count is shown as not counted, never guessed") {
  nlohmann::json chat = hf_config("internvl3-1b");
  chat["vision_config"]["use_moe"] = true;
  const ModelSpec moe = hf_model_of(chat);
  REQUIRE(moe.parts.size() == 1);
  CHECK(moe.parts[0].name == "vision tower");
  CHECK(moe.parts[0].params == 0);
  nlohmann::json hf = internvl_hf_form();
  hf["vision_config"].erase("attention_bias");
  CHECK(part_params(hf_model_of(hf), "vision tower") == 0);
  hf = internvl_hf_form();
  hf["vision_config"]["image_size"] = {448, 224};
  CHECK_THROWS_WITH(hf_model_of(hf), Catch::Contains("image_size"));
}
