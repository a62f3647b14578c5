// idefics3 towers (src/loaders/arch/idefics3.cpp); the fixture's source and the published total
// in tests/fixtures/hf/SOURCES.md.

#include "arch/arch_test.h"

using namespace kvplan;
using namespace kvplan::testing;

namespace {

std::uint64_t idefics3_part(const ModelSpec& model, const std::string& name) {
  for (const ModelPart& p : model.parts)
    if (p.name == name) return p.params;
  return 0;
}

}  // namespace

TEST_CASE("idefics3: SmolVLM-256M, a SigLIP-base encoder and a pixel-shuffle projection beside SmolLM2-135M") {
  const ModelSpec model = hf_model("smolvlm-256m-instruct");
  CHECK(model.architecture == "llama");
  // Llama, untied: embed + lm_head 2 x 49,280 x 576 = 56,770,560; per layer q 576^2 + k, v 2 x 192 x 576
  // + o 576^2 + MLP 3 x 1536 x 576 + 2 norms x 576 = 3,540,096, x 30 = 106,202,880; norm 576.
  CHECK(model.params == 162'974'016ull);
  // patch 768 x 3 x 16 x 16 + 768 = 590,592; positions (512 / 16)^2 x 768 = 786,432; per layer 4 x (768^2
  // + 768) + 4 x 768 + 768 x 3072 + 3,072 + 3072 x 768 + 768 = 7,087,872, x 12 = 85,054,464;
  // post_layernorm 1,536.
  CHECK(idefics3_part(model, "vision tower") == 86'433'024ull);
  // modality_projection 768 x 4^2 -> 576, no bias.
  CHECK(idefics3_part(model, "projector") == 7'077'888ull);
  // "Parameter total: 256,484,928" (the audit of revision 7e3e67ed, SOURCES.md).
  CHECK(model.params + idefics3_part(model, "vision tower") + idefics3_part(model, "projector") == 256'484'928ull);
  // bf16: 2 B a parameter; model.safetensors is 513,028,808 B = 512,969,856 of tensors + its header.
  CHECK(*model.weights_bytes == 2 * 256'484'928ull);
  // 30 layers x K and V x 3 KV heads x 64 x 2 B = 23,040 B (22.5 KiB) a token.
  CHECK(cache_bytes(model).per_token == 30 * 2 * 3 * 64 * 2);
  CHECK(cache_bytes(model).fixed == 0);
  CHECK(model.max_context == 8192);
}

TEST_CASE("idefics3: scale_factor defaults to Idefics3Config's 2, --text-only leaves the towers out") {
  nlohmann::json config = hf_config("smolvlm-256m-instruct");
  config.erase("scale_factor");
  // 768 x 2^2 -> 576.
  CHECK(idefics3_part(hf_model_of(config), "projector") == 1'769'472ull);
  const std::string folder = source_path("tests/fixtures/hf/smolvlm-256m-instruct");
  const auto text = nlohmann::json::parse(run_kvplan("--model " + folder + " --ctx 4096 --gpu 24GiB --format json --text-only").out);
  CHECK(text["rows"][0]["weights_bytes"] == 2 * 162'974'016ull);
  const auto whole = nlohmann::json::parse(run_kvplan("--model " + folder + " --ctx 4096 --gpu 24GiB --format json").out);
  CHECK(whole["rows"][0]["weights_bytes"] == 2 * 256'484'928ull);
}
