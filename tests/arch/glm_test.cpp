// glm and glm4 (src/loaders/arch/glm.cpp); sources in tests/fixtures/hf/SOURCES.md.

#include "arch/arch_test.h"

using namespace kvplan;
using namespace kvplan::testing;

TEST_CASE("glm: GLM-4-9B-Chat-hf, q/k/v biases, 2 KV heads") {
  // Per layer: q 4096^2 + 4,096, k and v 2 x (4096 x 256 + 256), o 4096^2 = 35,656,192; fused
  // gate_up and down 3 x 4096 x 13696; 2 norms -> x 40; embedding and lm_head 2 x 151,552 x 4,096;
  // final norm. = 9,399,951,360, THUDM's demo: "with 9399951360 (9.4B) parameters".
  const ModelSpec model = hf_model("glm-4-9b-chat-hf");
  CHECK(model.params == 9'399'951'360ull);
  CHECK(cache_bytes(model).per_token == 40 * 2 * 2 * 128 * 2);  // 40,960
}

TEST_CASE("glm4: GLM-4-32B-0414's shapes (a fine-tune's config): two more norms per layer") {
  // Per layer: q and o 2 x 6144^2, k and v 2 x 6144 x 256 (no biases: attention_bias false), fused
  // gate_up 6144 x 46080 and down 23040 x 6144, 4 norms 24,576 = 503,341,056 x 61; embedding and
  // lm_head 2 x 151,552 x 6,144; final norm. = 32,566,081,536, the "32B" of GLM-4-32B-0414.
  const ModelSpec model = hf_model("glm-v2-lora");
  CHECK(model.params == 61ull * 503'341'056 + 2ull * 151'552 * 6'144 + 6'144);
  CHECK(model.params == 32'566'081'536ull);
  CHECK(cache_bytes(model).per_token == 61 * 2 * 2 * 128 * 2);
}

TEST_CASE("glm4: the GLM-4-9B shapes") {
  // The GLM-4-9B shapes as glm4: + 40 x 2 x 4,096 = 9,400,279,040, the official safetensors count
  // of GLM-4-9B-0414 a public model-selection note quotes (search index file id 69323105306), and
  // the n-params llama.cpp reports for a 9B glm4 GGUF of these widths.
  nlohmann::json config = hf_config("glm-4-9b-chat-hf");
  config["model_type"] = "glm4";
  CHECK(count_params(config).total == 9'400'279'040ull);
}
