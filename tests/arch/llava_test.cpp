// llava, llava_next and mistral3 towers (src/loaders/arch/llava.cpp); sources in
// tests/fixtures/hf/SOURCES.md. Totals are Hugging Face's safetensors counts of each repository.

#include "arch/arch_test.h"

using namespace kvplan;
using namespace kvplan::testing;

TEST_CASE("llava: LLaVA 1.5 7B, CLIP ViT-L/336 and a two-layer projector beside Vicuna") {
  // text_config states vocab 32,064 only: LlamaConfig's defaults (4096, 11008, 32 layers, 32
  // heads) fill the rest: 32 x 202,383,360 + 2 x 32,064 x 4,096 + 4,096 = 6,738,939,904.
  const ModelSpec model = hf_model("llava-1.5-7b-hf");
  CHECK(model.params == 6'738'939'904ull);
  // CLIP: class 1,024 + patch 1024 x 3 x 14 x 14 + positions 577 x 1,024 + pre/post norms 4,096
  // + 24 x (4 x (1024^2 + 1,024) + 4,096 + 1024 x 4096 + 4,096 + 4096 x 1024 + 1,024) = 303,507,456.
  CHECK(part_params(model, "vision tower") == 303'507'456ull);
  // linear_1 4096 x 1024 + 4,096, linear_2 4096^2 + 4,096.
  CHECK(part_params(model, "projector") == 20'979'712ull);
  CHECK(model.params + part_params(model, "vision tower") + part_params(model, "projector") == 7'063'427'072ull);
  // fp16: the whole checkpoint is 2 B a parameter.
  CHECK(*model.weights_bytes == 2 * 7'063'427'072ull);
  CHECK(cache_bytes(model).per_token == 32 * 2 * 32 * 128 * 2);
}

TEST_CASE("llava_next: LLaVA 1.6 Mistral 7B, + image_newline") {
  // Mistral 7B (MistralConfig's 4096 / 32 layers / 32 heads, 8 KV heads given): 7,242,256,384;
  // the same CLIP; the projector 20,979,712 + image_newline 4,096.
  const ModelSpec model = hf_model("llava-v1.6-mistral-7b-hf");
  CHECK(model.params == 7'242'256'384ull);
  CHECK(part_params(model, "vision tower") == 303'507'456ull);
  CHECK(part_params(model, "projector") == 20'983'808ull);
  CHECK(model.params + parts_bytes(model) / 2 == 7'566'747'648ull);
}

TEST_CASE("llava_next: LLaVA 1.6 Vicuna 7B from its verbatim config.json, LlamaConfig's defaults") {
  // text_config states only vocab_size 32,064 (and the context): LlamaConfig's 4096 / 32 layers /
  // 32 heads / 11008 fill the rest: 32 x 202,383,360 + 2 x 32,064 x 4,096 + 4,096 = 6,738,939,904;
  // CLIP ViT-L/336 303,507,456; projector 1024 x 4096 + 4096 x 4096 + biases + image_newline
  // 20,983,808. = 7,063,431,168, Hugging Face's count of llava-hf/llava-v1.6-vicuna-7b-hf.
  const ModelSpec model = hf_model("llava-v1.6-vicuna-7b-hf");
  CHECK(model.params == 6'738'939'904ull);
  CHECK(part_params(model, "vision tower") == 303'507'456ull);
  CHECK(part_params(model, "projector") == 20'983'808ull);
  CHECK(model.params + part_params(model, "vision tower") + part_params(model, "projector") == 7'063'431'168ull);
  CHECK(describe_layers(model) == "32 full");
  CHECK(cache_bytes(model).per_token == 32 * 2 * 32 * 128 * 2);  // no GQA: 32 KV heads
}

TEST_CASE("mistral3: Mistral Small 3.1 24B, Pixtral and a patch merger") {
  const ModelSpec model = hf_model("mistral-small-3.1-24b-instruct");
  CHECK(model.params == 23'572'403'200ull);
  // Pixtral: patch_conv 1024 x 3 x 14 x 14 + ln_pre 1,024 + 24 x (4 x 1024^2 + 2 x 1,024 + 3 x
  // 1024 x 4096) = 403,305,472.
  CHECK(part_params(model, "vision tower") == 403'305'472ull);
  // norm 1,024 + merging_layer 1024 x 4096 + linear_1 5120 x 1024 + linear_2 5120^2 (no biases).
  CHECK(part_params(model, "projector") == 35'652'608ull);
  // "Parameters: 24,011,361,280" (revision 68faf511 of the repository).
  CHECK(model.params + part_params(model, "vision tower") + part_params(model, "projector") == 24'011'361'280ull);
}

TEST_CASE("the weights line splits the language model from its towers, --text-only leaves them out") {
  const std::string folder = source_path("tests/fixtures/hf/mistral-small-3.1-24b-instruct");
  const auto whole = run_kvplan("--model " + folder + " --ctx 4096 --kv-dtype fp16 --gpu 80GiB");
  REQUIRE(whole.exit_code == 0);
  // 23,572,403,200 x 2 B = 43.91 GiB; 806,610,944 B = 0.75 GiB; 71,305,216 B = 0.07 GiB.
  CHECK_THAT(whole.out, Catch::Contains("language model 43.91 GiB + vision tower 0.75 GiB + projector 0.07 GiB"));
  CHECK_THAT(whole.out, Catch::Contains("44.72 GiB"));  // 48,022,722,560 B
  const auto json = nlohmann::json::parse(run_kvplan("--model " + folder + " --ctx 4096 --kv-dtype fp16 --gpu 80GiB --format json").out);
  CHECK(json["rows"][0]["weights_bytes"] == 48'022'722'560ull);
  CHECK(json["model"]["parts"][0] == nlohmann::json({{"name", "vision tower"}, {"params", 403'305'472ull}, {"bytes", 806'610'944ull}}));
  const auto text = nlohmann::json::parse(
      run_kvplan("--model " + folder + " --ctx 4096 --kv-dtype fp16 --gpu 80GiB --format json --text-only").out);
  CHECK(text["rows"][0]["weights_bytes"] == 47'144'806'400ull);  // 23,572,403,200 x 2
  CHECK_FALSE(text["model"].contains("parts"));
  CHECK_THAT(text["rows"][0]["weights_rule"].get<std::string>(), Catch::Contains("--text-only leaves out the vision tower, projector"));
  // A text-only model is unchanged by it.
  const std::string llama = source_path("tests/fixtures/hf/llama3.1-8b");
  CHECK(run_kvplan("--model " + llama + " --ctx 4096 --gpu 80GiB --text-only").out ==
        run_kvplan("--model " + llama + " --ctx 4096 --gpu 80GiB").out);
}
