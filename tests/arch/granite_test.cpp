// granite, granitemoe, granitemoeshared, granitemoehybrid and bamba (src/loaders/arch/granite.cpp);
// sources in tests/fixtures/hf/SOURCES.md.

#include "arch/arch_test.h"

using namespace kvplan;
using namespace kvplan::testing;

TEST_CASE("granite: Granite 3.3 8B, the Llama layout, tied") {
  // 40 x (q 4096^2 + k, v 4096 x 1024 + o 4096^2 + MLP 3 x 4096 x 12800 + 2 norms) = 40 x
  // 199,237,632; tied embedding 49,159 x 4,096 = 201,355,264; final norm. = 8,170,864,640, Hugging
  // Face's safetensors total for ibm-granite/granite-3.3-8b-instruct.
  const ModelSpec model = hf_model("granite-3.3-8b-instruct");
  CHECK(model.params == 8'170'864'640ull);
  CHECK(cache_bytes(model).per_token == 40 * 2 * 8 * 128 * 2);
}

TEST_CASE("granitemoe and granitemoeshared: fused experts, a shared MLP") {
  // Granite 3.1 3B-A800M: 32 x (attention 1536^2 x 2 + 1536 x 512 x 2 = 6,291,456; input_linear
  // 40 x 1024 x 1536 + output_linear 40 x 1536 x 512 = 94,371,840; router 61,440; 2 norms 3,072)
  // = 32 x 100,727,808; tied embedding 49,155 x 1,536; final norm. = 3,298,793,472, the published
  // count of ibm-granite/granite-guardian-3.2-3b-a800m (the same architecture).
  const ParamCount moe = hf_count("granite-3.1-3b-a800m");
  CHECK(moe.total == 3'298'793'472ull);
  // 8 of 40 experts: - 32 x 32 x 2,359,296 = 882,874,368 ("800M active" without the embedding).
  CHECK(moe.active == 882'874'368ull);
  // No granitemoeshared config was found: the same shapes with a shared MLP of 1,024 add
  // shared_mlp input_linear 2048 x 1536 and output_linear 1536 x 1024 per layer: 32 x 4,718,592.
  nlohmann::json shared = hf_config("granite-3.1-3b-a800m");
  shared["model_type"] = "granitemoeshared";
  shared["shared_intermediate_size"] = 1024;
  CHECK(count_params(shared).total == 3'298'793'472ull + 150'994'944ull);
  shared["model_type"] = "granitemoe";  // granitemoe has no shared MLP
  CHECK(count_params(shared).total == 3'298'793'472ull);
}

TEST_CASE("granitemoehybrid: Granite 4.0-H Tiny (MoE) and 1B (dense, shared MLP only)") {
  // 36 Mamba2 layers (d_inner 2 x 1536 = 3072, 48 heads, 1 group, state 128): in_proj 1536 x (3072
  // + 3328 + 48) + conv 3328 x 4 + 3,328 + 144 + norm 3,072 + out_proj 3072 x 1536 = 14,642,576;
  // 4 attention layers 1536^2 x 2 + 1536 x 512 x 2 = 6,291,456. Tiny: every layer 64 experts x 3 x
  // 1536 x 512 + router 1536 x 64 + shared 3 x 1024 x 1536, 2 norms; tied 100,352 x 1,536; final.
  CHECK(hf_count("granite-4.0-h-tiny").total == 6'939'037'248ull);
  // 1B: num_local_experts 0, shared_mlp 3 x 4096 x 1536 alone.
  CHECK(hf_count("granite-4.0-h-1b").total == 1'461'538'368ull);
  // Cache: attention at 5, 15, 25, 35, 2 x 4 x 128 x 2 B each; 36 x (conv 3 x 3,328 x 2 B + ssm
  // 48 x 64 x 128 x 2 B) = 36 x 806,400.
  const ModelSpec tiny = hf_model("granite-4.0-h-tiny");
  CHECK(describe_layers(tiny) == "36 linear + 4 full");
  CHECK(cache_bytes(tiny).per_token == 8'192);
  CHECK(cache_bytes(tiny).fixed == 29'030'400ull);
}

TEST_CASE("bamba: attention on attn_layer_indices, BambaConfig's defaults for the rest") {
  // The copy gives 5 fields; BambaConfig's defaults fill the rest (noted): vocab 128,000,
  // intermediate 14,336, 8 KV heads, 128 Mamba heads, 1 group, d_conv 4, expand 2.
  // Mamba2 (d_inner 8192, conv_dim 8448): 4096 x (8192 + 8448 + 128) + 8448 x 4 + 8,448 + 384 +
  // 8,192 + 8192 x 4096 = 102,286,976 x 29; attention 4096^2 x 2 + 4096 x 1024 x 2 = 41,943,040 x 3;
  // every layer MLP 3 x 4096 x 14336 + 2 norms; untied 2 x 128,000 x 4,096; final norm.
  const ParamCount count = hf_count("bamba-9b");
  CHECK(count.total == 9'778'138'240ull);  // "9B"; no exact figure was found
  CHECK_THAT(count.notes, Catch::Contains("vocab_size absent"));
  const ModelSpec model = hf_model("bamba-9b");
  CHECK(describe_layers(model) == "29 linear + 3 full");
  CHECK(model.layers[9].kind == LayerKind::full);
  // 3 x 2 x 8 x 128 x 2 B per token; 29 x (conv 3 x 8,448 x 2 B + ssm 128 x 64 x 128 x 2 B).
  CHECK(cache_bytes(model).per_token == 12'288);
  CHECK(cache_bytes(model).fixed == 62'287'360ull);
}
