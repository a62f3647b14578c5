// phi, phi3 and phimoe (src/loaders/arch/phi.cpp); sources in tests/fixtures/hf/SOURCES.md.

#include "arch/arch_test.h"

using namespace kvplan;
using namespace kvplan::testing;

TEST_CASE("phi: Phi-2's biases everywhere, its checkpoint size from the index") {
  // Per layer: q, k, v, dense with biases 4 x (2560^2 + 2,560) = 26,224,640; fc1 2560 x 10240 +
  // 10,240 and fc2 10240 x 2560 + 2,560 = 52,441,600; one LayerNorm 5,120 -> 78,671,360 x 32 =
  // 2,517,483,520; embedding 51,200 x 2,560 = 131,072,000; final LayerNorm 5,120; lm_head
  // 131,072,000 + its bias 51,200. = 2,779,683,840 = total_size 5,559,367,680 / 2 (fp16).
  const ModelSpec model = hf_model("phi-2");
  CHECK(model.params == 2'779'683'840ull);
  CHECK(model.weights_bytes == 5'559'367'680ull);
  CHECK(model.params * 2 == *model.weights_bytes);
  CHECK(cache_bytes(model).per_token == 32 * 2 * 32 * 80 * 2);  // 327,680
}

TEST_CASE("phi3: Phi-3.5-mini and Phi-4-mini against Hugging Face's parameter counts") {
  // Phi-3.5-mini: 32 x (qkv 3072 x 9216 + o 3072^2 + gate_up 3072 x 16384 + down 8192 x 3072 +
  // 6,144) = 3,624,075,264; embedding and lm_head 2 x 32,064 x 3,072; final norm 3,072.
  CHECK(hf_count("phi3.5-mini").total == 3'821'079'552ull);
  // Phi-4-mini (head_dim 128, 8 KV heads, tied): 32 x (qkv 3072 x 5120 + o 3072^2 + 3072 x 16384 +
  // 8192 x 3072 + 6,144) = 3,221,422,080; embedding 200,064 x 3,072 = 614,596,608; 3,072.
  const ModelSpec mini = hf_model("phi4-mini");
  CHECK(mini.params == 3'836'021'760ull);
  // sliding_window 262144 on every layer; 2 x 8 x 128 x 2 B per layer per token.
  CHECK(describe_layers(mini) == "32 sliding(262144)");
  CHECK(cache_bytes(mini).fixed == 32ull * 4'096 * 262'144);
  // full_attn_mod (Microsoft's own code) 1 is every layer full; another value is refused.
  nlohmann::json config = hf_config("phi4-mini");
  config["full_attn_mod"] = 2;
  CHECK_THROWS_WITH(hf_model_of(config), Catch::Contains("full_attn_mod = 2"));
}

TEST_CASE("phimoe: Phi-3.5-MoE's experts and LayerNorms with biases") {
  // Per layer: attention 2 x 4096^2 + 2 x 4096 x 1024 = 41,943,040; 16 experts x 3 x 4096 x 6400
  // = 1,258,291,200; router 65,536; 2 LayerNorms with biases 16,384 -> 1,300,316,160 x 32 =
  // 41,610,117,120; embedding and lm_head 2 x 32,064 x 4,096 = 262,668,288; final LayerNorm 8,192.
  // The copy lacks attention_bias and lm_head_bias (the release is believed to set both): with them
  // + 32 x 10,240 + 32,064 = 41,873,153,344. Microsoft: "41.9B" either way.
  const ParamCount count = hf_count("phi3.5-moe");
  CHECK(count.total == 41'872'793'600ull);
  CHECK(near(count.total, 41.9e9, 0.001));
  nlohmann::json biased = hf_config("phi3.5-moe");
  biased["attention_bias"] = true;
  biased["lm_head_bias"] = true;
  CHECK(count_params(biased).total == 41'873'153'344ull);
  // 2 of 16 experts: total - 32 x 14 x 78,643,200 = 6,640,640,000 ("6.6B active").
  CHECK(count.active == 6'640'640'000ull);
}
