// mllama (src/loaders/arch/mllama.cpp): Llama 3.2 11B Vision, whose config.json was not found: the fields
// below are those quoted from the checkpoint's config (vision_config, cross_attention_layers) and
// its tensor listing (danbev's learning-ai notes, search index file id 40415686548), with the text
// sizes several test fixtures agree on; the model_type names are transformers' own for
// MllamaForConditionalGeneration. Its count matches the repository's exactly. The 90B's config.json
// (tests/fixtures/hf/llama3.2-90b-vision-instruct, verbatim) is read whole below.

#include <fstream>

#include "arch/arch_test.h"
#include "loaders/spec_json.h"

using namespace kvplan;
using namespace kvplan::testing;

namespace {

nlohmann::json llama32_vision() {
  return nlohmann::json::parse(R"({
    "model_type": "mllama", "torch_dtype": "bfloat16",
    "text_config": {"model_type": "mllama_text_model", "hidden_size": 4096, "num_hidden_layers": 40,
      "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256,
      "cross_attention_layers": [3, 8, 13, 18, 23, 28, 33, 38]},
    "vision_config": {"attention_heads": 16, "hidden_act": "gelu", "hidden_size": 1280, "image_size": 560,
      "intermediate_size": 5120, "max_num_tiles": 4, "num_channels": 3, "num_global_layers": 8, "num_hidden_layers": 32,
      "patch_size": 14, "supported_aspect_ratios": [[1,1],[1,2],[1,3],[1,4],[2,1],[2,2],[3,1],[4,1]],
      "vision_output_dim": 7680}})");
}

}  // namespace

TEST_CASE("mllama: cross-attention layers cache one image's tokens, whatever the context") {
  const ModelSpec model = hf_model_of(llama32_vision());
  CHECK(describe_layers(model) == "32 full + 8 cross(6404)");
  CHECK(model.layers[3].kind == LayerKind::cross);
  CHECK(model.layers[3].window == 6'404);  // 4 tiles x ((560 / 14)^2 + 1)
  // Per text token: the 32 self-attention layers, 2 x 8 x 128 x 2 B each = 131,072 B. Fixed: the 8
  // cross layers x 6,404 image tokens x 4,096 B = 209,846,272 B (vLLM V0's encoder-decoder cache).
  CHECK(cache_bytes(model).per_token == 131'072);
  CHECK(cache_bytes(model).fixed == 209'846'272ull);
  CHECK(cache_bytes(model, "fp8").fixed == 104'923'136ull);
  // The spec format keeps the kind.
  const ModelSpec again = model_spec_from_json(to_spec_json(model), "again");
  CHECK(describe_layers(again) == describe_layers(model));
  CHECK(again.parts.size() == 2);
}

TEST_CASE("mllama: the language model, the tiled vision encoder and the projector, exactly") {
  const ModelSpec model = hf_model_of(llama32_vision());
  // Embedding (128,256 + 8) x 4,096; 32 self layers (attention 41,943,040); 8 cross layers (the same
  // projections + q/k norms 256 + 2 gates, no self-attention); every layer MLP 3 x 4096 x 14336 +
  // 2 norms; final norm; lm_head 128,256 x 4,096.
  CHECK(model.params == 9'775'192'080ull);
  // Vision: patch 1280 x 3 x 14^2 + class 1,280 + positions 1601 x 1280 + gate + tile embedding 9 x
  // 4 x 1601 x 1280 + 2 x (9 x 4 x 1280 + gate) + 2 LayerNorms 5,120 + 32 local layers 13,118,720 +
  // 8 global layers 13,118,722 = 863,567,379; projector 4096 x 7680 + 4,096 = 31,461,376.
  CHECK(model.parts.at(0).params == 863'567'379ull);
  CHECK(model.parts.at(1).params == 31'461'376ull);
  // = 10,670,220,835, Hugging Face's count of meta-llama/Llama-3.2-11B-Vision-Instruct.
  CHECK(model.params + model.parts[0].params + model.parts[1].params == 10'670'220'835ull);
  // Neither vLLM (removed after 0.10.2) nor llama.cpp runs it: their profiles refuse it.
  const std::string spec = to_spec_json(model).dump();
  const std::string path = "/tmp/kvplan-mllama-spec.json";
  { std::ofstream(path) << spec; }
  check_refused(run_kvplan("--model " + path + " --runtime vllm --gpu h100"), "cross-attention", 3);
  check_refused(run_kvplan("--model " + path + " --runtime llama.cpp --gpu h100"), "cross-attention", 3);
}

TEST_CASE("mllama: Llama 3.2 90B Vision Instruct from its config.json") {
  const ModelSpec model = hf_model("llama3.2-90b-vision-instruct");
  CHECK(describe_layers(model) == "80 full + 20 cross(6404)");
  // Text: embedding (128,256 + 8) x 8,192; 80 self layers of attention 150,994,944 + MLP 3 x 8192 x
  // 28672 + 2 norms; 20 cross layers of the same + q/k norms 256 + 2 gates; final norm; lm_head
  // 128,256 x 8,192.
  CHECK(model.params == 80ull * 855'654'400 + 20ull * 855'654'658 + 128'264ull * 8'192 + 8'192 + 128'256ull * 8'192);
  CHECK(model.params == 87'666'865'192ull);
  // The same vision encoder as 11B's (checked there against Hugging Face's count); the projector
  // maps 7,680 to 8,192 wide: 7680 x 8192 + 8,192.
  CHECK(model.parts.at(0).params == 863'567'379ull);
  CHECK(model.parts.at(1).params == 62'922'752ull);
  // 88,593,355,323 in all, the "90B" of its name.
  // Per token 80 self layers x 2 x 8 x 128 x 2 B; fixed 20 cross layers x 6,404 image tokens x 4,096 B.
  CHECK(cache_bytes(model).per_token == 80 * 2 * 8 * 128 * 2);
  CHECK(cache_bytes(model).fixed == 20ull * 6'404 * 4'096);
}
