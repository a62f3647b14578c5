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

TEST_CASE("glm4: two more norms per layer (no GLM-4-0414 config was found)") {
  // The GLM-4-9B shapes as glm4: + 40 x 2 x 4,096 = 9,400,279,040, the n-params llama.cpp reports
  // for a 9B glm4 GGUF of these widths (which checkpoint is not named).
  nlohmann::json config = hf_config("glm-4-9b-chat-hf");
  config["model_type"] = "glm4";
  CHECK(count_params(config).total == 9'400'279'040ull);
}
