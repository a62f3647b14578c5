// The towers of the wrappers whose language models are tested elsewhere: gemma3 and gemma4
// (src/loaders/arch/gemma.cpp), llama4 (llama4.cpp), qwen2_vl, qwen2_5_vl, qwen3_vl and
// qwen3_vl_moe (qwen.cpp). Published totals: Hugging Face's counts of each repository, or a
// report's sum over the checkpoint's tensors (sources in SOURCES.md and staging/multimodal).

#include "arch/arch_test.h"

using namespace kvplan;
using namespace kvplan::testing;

namespace {

std::uint64_t whole(const ModelSpec& model) {
  std::uint64_t total = model.params;
  for (const ModelPart& part : model.parts) total += part.params;
  return total;
}

}  // namespace

TEST_CASE("gemma3: Gemma 3 4B's SigLIP tower without its head, and the soft-embedding projector") {
  const ModelSpec model = hf_model("gemma3-4b");
  // SigLIP: patch 1152 x 3 x 14^2 + 1,152, positions (896 / 14)^2 = 4096 x 1,152, 27 layers x
  // (4 x (1152^2 + 1,152) + 4,608 + 1152 x 4304 + 4,304 + 4304 x 1152 + 1,152), post_layernorm
  // 2,304 = 416,866,032; projector 1152 x 2560 + 1,152 = 2,950,272.
  REQUIRE(model.parts.size() == 2);
  CHECK(model.parts[0].params == 416'866'032ull);
  CHECK(model.parts[1].params == 2'950'272ull);
  // 3,880,263,168 + both = 4,300,079,472, Hugging Face's count of google/gemma-3-4b-it.
  CHECK(whole(model) == 4'300'079'472ull);
}

TEST_CASE("gemma3: Gemma 3 12B's tower, the same SigLIP encoder with a wider projector") {
  const ModelSpec model = hf_model("gemma3-12b");
  // The 4B's tower (416,866,032, above); projector 1152 x 3840 + 1,152 = 4,424,832.
  REQUIRE(model.parts.size() == 2);
  CHECK(model.parts[0].params == 416'866'032ull);
  CHECK(model.parts[1].params == 4'424'832ull);
  // 11,766,034,176 + both = 12,187,325,040: keras-hub's gemma3_instruct_12b (12,187,079,280) counts
  // a 262,144-row embedding, 64 rows x 3840 = 245,760 fewer than the config's 262,208.
  CHECK(whole(model) == 12'187'079'280ull + 64ull * 3840);
}

TEST_CASE("gemma4: Gemma 4 31B's tower, the language model without Gemma 4's layer_scalar") {
  const ModelSpec model = hf_model("gemma4-31b");
  // input_proj 1152 x 768 + position table 2 x 10240 x 1152 + std_bias/std_scale 2,304 + 27 x
  // (4 x 1152^2 + q/k norms 144 + 4 norms 4,608 + 3 x 1152 x 4304) = 569,550,384; embed_vision
  // 5376 x 1152 = 6,193,152.
  CHECK(model.parts.at(0).params == 569'550'384ull);
  CHECK(model.parts.at(1).params == 6'193'152ull);
  // The report summing the checkpoint's 1,188 tensors gives 31,273,088,876: 60 more, the one
  // layer_scalar of each of the 60 decoder layers that the gemma4_text counter does not add (the
  // catalog's Gemma 4 entries hold the count without it).
  CHECK(whole(model) == 31'273'088'876ull - 60);
}

TEST_CASE("gemma4: Gemma 4 26B-A4B's tower, the 31B's encoder with a narrower projector") {
  const ModelSpec model = hf_model("gemma4-26b-a4b");
  // The same vision_config as the 31B's (569,550,384, above); embed_vision 2816 x 1152 = 3,244,032.
  REQUIRE(model.parts.size() == 2);
  CHECK(model.parts[0].params == 569'550'384ull);
  CHECK(model.parts[1].params == 3'244'032ull);
  // Hugging Face's count of google/gemma-4-26B-A4B-it, 25,805,936,206 (an audit of its safetensors
  // headers: 25,233,141,790 language model + 569,550,384 tower + 3,244,032 projector), less the 30
  // layer_scalars; its total_size 51,611,872,412 B is twice that count.
  CHECK(whole(model) == 25'805'936'206ull - 30);
  CHECK(model.weights_bytes == 2 * (25'805'936'206ull - 30));
}

TEST_CASE("llama4: Llama 4 Scout's tower with its pixel-shuffle adapter") {
  const ModelSpec model = hf_model("llama4-scout");
  // patch 1408 x 588 + class 1,408 + positions 577 x 1,408 + 2 LayerNorms 5,632 + 34 ViT layers of
  // 1,408 / 5,632 + vision_adapter fc1 4096 x 5632 and fc2 4096^2 = 850,960,896; projector
  // 5120 x 4096 = 20,971,520.
  CHECK(model.parts.at(0).params == 850'960'896ull);
  CHECK(model.parts.at(1).params == 20'971'520ull);
  // = 108,641,793,536, Hugging Face's count of a same-shape derivative of
  // Llama-4-Scout-17B-16E-Instruct (Meta: "109B total").
  CHECK(whole(model) == 108'641'793'536ull);
}

TEST_CASE("qwen2_vl, qwen2_5_vl: flat configs, a vision tower and a merger") {
  // Qwen2-VL-7B: 7,615,616,512 (Qwen2-7B's shapes) + patch 1280 x 3 x 2 x 14^2 + 32 blocks of
  // LayerNorms, qkv and proj with biases and a 5,120-wide fc1 / fc2 = 631,183,360 + merger ln_q
  // 2,560 + mlp.0 5120^2 + 5,120 + mlp.2 3584 x 5120 + 3,584 = 44,575,744. = 8,291,375,616.
  const ModelSpec vl2 = hf_model("qwen2-vl-7b-instruct");
  CHECK(vl2.params == 7'615'616'512ull);
  CHECK(vl2.parts.at(0).params == 631'183'360ull);
  CHECK(vl2.parts.at(1).params == 44'575'744ull);
  CHECK(whole(vl2) == 8'291'375'616ull);
  // Qwen2.5-VL-7B: RMSNorms and a gated 3,420-wide MLP with biases: 631,975,680 + 44,574,464.
  const ModelSpec vl25 = hf_model("qwen2.5-vl-7b-instruct");
  CHECK(vl25.parts.at(0).params == 631'975'680ull);
  CHECK(vl25.parts.at(1).params == 44'574'464ull);
  CHECK(whole(vl25) == 8'292'166'656ull);
  CHECK(describe_layers(vl25) == "28 full");  // use_sliding_window false
}

TEST_CASE("qwen3_vl, qwen3_vl_moe: position embeddings and deepstack mergers") {
  // Qwen3-VL-8B: 8,190,735,360 (Qwen3-8B's shapes) + tower 415,891,440 + merger and 3 deepstack
  // mergers 160,496,896 = 8,767,123,696, the report's sum over its 750 tensors.
  const ModelSpec dense = hf_model("qwen3-vl-8b-instruct");
  CHECK(dense.params == 8'190'735'360ull);
  CHECK(dense.parts.at(0).params == 415'891'440ull);
  CHECK(dense.parts.at(1).params == 160'496'896ull);
  CHECK(whole(dense) == 8'767'123'696ull);
  // Qwen3-VL-30B-A3B: 30,532,122,624 + 415,891,440 + 122,739,968 (2,048-wide outputs) =
  // 31,070,754,032, the report's sum over its 882 tensors.
  const ModelSpec moe = hf_model("qwen3-vl-30b-a3b-instruct");
  CHECK(whole(moe) == 31'070'754'032ull);
  CHECK(moe.parts.at(1).params == 122'739'968ull);
}

TEST_CASE("a tower kvplan does not count is shown as not counted, not priced as nothing silently") {
  // Qwen3.5's vision_config (a wrapper qwen3_5 whose tower no family counts yet).
  const ModelSpec model = hf_model("qwen3.6-27b");
  REQUIRE(model.parts.size() == 1);
  CHECK(model.parts[0].name == "vision tower");
  CHECK(model.parts[0].params == 0);
  const auto out = run_kvplan("--model " + source_path("tests/fixtures/hf/qwen3.6-27b") + " --ctx 4096 --gpu 80GiB");
  CHECK_THAT(out.out, Catch::Contains("+ vision tower (not counted)"));
}
