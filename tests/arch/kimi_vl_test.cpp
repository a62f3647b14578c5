// kimi_vl towers (src/loaders/arch/kimi_vl.cpp): MoonViT and the projector beside the DeepSeek-V3
// language model; the fixture's sources in tests/fixtures/hf/SOURCES.md.

#include "arch/arch_test.h"

using namespace kvplan;
using namespace kvplan::testing;

TEST_CASE("kimi_vl: Kimi-VL-A3B, MoonViT and a two-layer projector beside a DeepSeek-V3 MoE") {
  const ModelSpec model = hf_model("kimi-vl-a3b-instruct");
  CHECK(model.architecture == "deepseek_v3");
  // patch_embed 1152 x 3 x 14 x 14 + 1,152 = 678,528; pos_emb 64 x 64 x 1152 = 4,718,592; per block
  // 4 x (1152^2 + 1152) + 4 x 1152 + (1152 x 4304 + 4,304) + (4304 x 1152 + 1,152) = 15,239,504,
  // x 27 = 411,466,608; final_layernorm 2,304.
  CHECK(part_params(model, "vision tower") == 416'866'032ull);
  // pre_norm 2 x 1152; linear_1 4608 x 4608 + 4,608; linear_2 4608 x 2048 + 2,048 (4608 = 1152 x 2 x 2).
  CHECK(part_params(model, "projector") == 2'304ull + 21'238'272ull + 9'439'232ull);
  // The whole checkpoint, 16,407,656,048, within Hugging Face's rounded 16.4B.
  const std::uint64_t total = model.params + part_params(model, "vision tower") + part_params(model, "projector");
  CHECK(total == 16'407'656'048ull);
  // In bf16, but the 26 MoE layers' 64-wide e_score_correction_bias in fp32, as vLLM builds it.
  CHECK(*model.weights_bytes == 2 * total + 26 * 64 * 2);
  // The cache is the language model's: MLA, one latent of 512 + 64 a token on each of 27 layers.
  CHECK(cache_bytes(model).per_token == 27 * (512 + 64) * 2);
  CHECK(model.max_context == 131'072);
}

TEST_CASE("kimi_vl: the merge kernel sizes the projector, and a malformed one is named") {
  nlohmann::json config = hf_config("kimi-vl-a3b-instruct");
  config["vision_config"]["merge_kernel_size"] = {1, 1};
  // 1152 -> 1152 -> 2048: pre_norm 2,304 + 1,328,256 + 2,361,344.
  CHECK(part_params(hf_model_of(config), "projector") == 2'304ull + 1'328'256ull + 2'361'344ull);
  config["vision_config"]["merge_kernel_size"] = "2x2";
  CHECK_THROWS_WITH(hf_model_of(config), Catch::Contains("merge_kernel_size"));
}
