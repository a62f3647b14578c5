// internlm2 and internlm3 (src/loaders/arch/internlm.cpp); sources in tests/fixtures/hf/SOURCES.md.

#include "arch/arch_test.h"

using namespace kvplan;
using namespace kvplan::testing;

TEST_CASE("internlm2: InternLM2.5-7B-Chat, the fused wqkv") {
  // 32 x (wqkv (32 + 16) x 128 x 4096 = 25,165,824 + wo 4096^2 + w1, w3, w2 3 x 4096 x 14336 +
  // 2 norms) = 32 x 218,112,000; tok_embeddings and output 2 x 92,544 x 4,096; norm 4,096.
  // = 7,737,708,544: a public model-size table and InternLM's own demo ("with 7737708544 (7.7B)
  // parameters").
  const ModelSpec model = hf_model("internlm2.5-7b-chat");
  CHECK(model.params == 7'737'708'544ull);
  CHECK(cache_bytes(model).per_token == 32 * 2 * 8 * 128 * 2);
}

TEST_CASE("internlm3: InternLM3-8B, 2 KV heads, `bias` refused") {
  // 48 x (q 4096^2 + k, v 4096 x 256 + o 4096^2 + MLP 3 x 4096 x 10240 + 2 norms) = 48 x
  // 161,488,896; embedding and lm_head 2 x 128,512 x 4,096; norm. = 8,804,241,408 ("8B").
  const ModelSpec model = hf_model("internlm3-8b-instruct");
  CHECK(model.params == 8'804'241'408ull);
  CHECK(cache_bytes(model).per_token == 48 * 2 * 2 * 128 * 2);  // 49,152
  nlohmann::json config = hf_config("internlm3-8b-instruct");
  config["bias"] = true;
  CHECK_THROWS_WITH(count_params(config), Catch::Contains("bias = true"));
}
