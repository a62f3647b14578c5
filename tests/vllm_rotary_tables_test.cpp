// vLLM's rotary tables (engines/vllm/rotary_tables.h): the rope each config states, read by the
// loader, and the cos/sin tables vLLM builds from it, counted in its weights per GPU. The sizes by
// hand from vLLM's rotary_embedding/ classes (docs/engines/vllm.md, "Rotary tables").

#include <catch2/catch.hpp>

#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "engines/vllm/rotary_tables.h"
#include "engines/vllm/rules.h"
#include "loaders/hf_config.h"
#include "loaders/spec_json.h"
#include "support/catalog_entries.h"
#include "support/run_binary.h"

#include <nlohmann/json.hpp>

using namespace kvplan;

namespace {

ModelSpec rotary_fixture(const std::string& id) {
  return load_hf_model(kvplan::testing::source_path("tests/fixtures/hf/" + id));
}

VllmSettings rotary_settings(std::uint32_t tp) {
  VllmSettings settings;
  settings.tensor_parallel = tp;
  settings.max_model_len = 8192;
  return settings;
}

}  // namespace

TEST_CASE("the loader reads each config's rope", "[vllm][rope]") {
  // gemma-3-4b-it: rope_scaling {"factor": 8.0, "rope_type": "linear"}, head_dim 256,
  // rope_local_base_freq 10000 (rope_theta 1,000,000): the sliding layers have their own rope.
  const ModelSpec gemma = rotary_fixture("gemma3-4b");
  REQUIRE(gemma.rope);
  CHECK(gemma.rope->type == "linear");
  CHECK(gemma.rope->factor_millionths == 8'000'000);
  CHECK(gemma.rope->rotary_dim == 256);
  CHECK(gemma.rope->local);
  // Llama 3.1 8B: llama3 scaling, factor 8, original 8192; head 4096 / 32 = 128; no sliding layers.
  const ModelSpec llama = rotary_fixture("llama3.1-8b");
  REQUIRE(llama.rope);
  CHECK(llama.rope->type == "llama3");
  CHECK(llama.rope->factor_millionths == 8'000'000);
  CHECK(llama.rope->original_positions == 8192);
  CHECK(llama.rope->rotary_dim == 128);
  CHECK_FALSE(llama.rope->local);
  // Phi-2: partial_rotary_factor 0.4 of a 2560 / 32 = 80-wide head: int(80 x 0.4) = 32.
  const ModelSpec phi = rotary_fixture("phi-2");
  REQUIRE(phi.rope);
  CHECK(phi.rope->type == "default");
  CHECK(phi.rope->rotary_dim == 32);
  // Qwen2-VL: rope_scaling {"type": "mrope", "mrope_section": [16, 24, 24]}; head 3584 / 28 = 128.
  const ModelSpec qwen = rotary_fixture("qwen2-vl-7b-instruct");
  REQUIRE(qwen.rope);
  CHECK(qwen.rope->type == "mrope");
  CHECK(qwen.rope->rotary_dim == 128);
  // Gemma 4 31B: rope_parameters per layer type; the global rope is the full layers' (global_head_dim
  // 512 x partial_rotary_factor 0.25 = 128), not the first layer's (a sliding one, 256 wide).
  const ModelSpec gemma4 = rotary_fixture("gemma4-31b");
  REQUIRE(gemma4.rope);
  CHECK(gemma4.rope->type == "proportional");
  CHECK(gemma4.rope->rotary_dim == 128);
  CHECK(gemma4.rope->local);
}

TEST_CASE("vLLM's rotary tables by hand, in its weights per GPU", "[vllm][rope]") {
  const GpuSpec& h100 = kvplan::testing::catalog_gpu("h100");
  // Gemma 3 4B: the global rope, linear x8: 131,072 x 8 = 1,048,576 positions x 256 x 2 B =
  // 536,870,912 B; the local one 131,072 x 256 x 2 B = 67,108,864 B; 603,979,776 B = 0.5625 GiB.
  const ModelSpec& gemma = kvplan::testing::catalog_model("gemma3-4b");
  const VllmRotary gemma_tables = vllm_rotary_tables(gemma, parse_weight_dtype("bf16"));
  REQUIRE(gemma_tables.tables.size() == 2);
  CHECK(gemma_tables.tables[0].positions == 1'048'576);
  CHECK(gemma_tables.tables[0].bytes == 536'870'912);
  CHECK(gemma_tables.tables[1].bytes == 67'108'864);
  CHECK(gemma_tables.bytes == 603'979'776);
  // The weights per GPU: the checkpoint (8,600,158,944 B, vision tower included) + the tables.
  const VllmResult gemma_plan = plan_vllm(gemma, h100, rotary_settings(1));
  CHECK(gemma_plan.budget.rotary_tables == 603'979'776);
  CHECK(gemma_plan.budget.weights == 8'600'158'944ULL + 603'979'776ULL);

  // Llama 3.1 8B: llama3 scaling changes the frequencies, not the positions: 131,072 x 128 x 2 B =
  // 33,554,432 B (32 MiB), on each of the 2 ranks beside half the checkpoint: 16,060,522,496 / 2 =
  // 8,030,261,248 + 33,554,432 = 8,063,815,680 B.
  const ModelSpec& llama = kvplan::testing::catalog_model("llama3.1-8b");
  const VllmResult llama_plan = plan_vllm(llama, h100, rotary_settings(2));
  CHECK(llama_plan.budget.rotary_tables == 33'554'432);
  CHECK(llama_plan.budget.weights == 8'063'815'680ULL);

  // DeepSeek-V3: yarn x40 of the original 4,096 positions (MLA: vLLM's deepseek_yarn, the same
  // length) = 163,840 x qk_rope_head_dim 64 x 2 B = 20,971,520 B.
  const VllmRotary deepseek = vllm_rotary_tables(kvplan::testing::catalog_model("deepseek-v3"), parse_weight_dtype("bf16"));
  REQUIRE(deepseek.tables.size() == 1);
  CHECK(deepseek.tables[0].positions == 163'840);
  CHECK(deepseek.bytes == 20'971'520);

  // Qwen2-VL: mrope, 4 x 32,768 = 131,072 positions x 128 x 2 B = 33,554,432 B.
  CHECK(vllm_rotary_tables(kvplan::testing::catalog_model("qwen2-vl-7b"), parse_weight_dtype("bf16")).bytes == 33'554'432);
}

TEST_CASE("Gemma 4's proportional rope: a table as wide as the whole head", "[vllm][rope]") {
  // gemma4_rope.py: Gemma4RotaryEmbedding passes head_size (the full layers' 512) to the base class
  // as rotary_dim, whatever partial_rotary_factor (0.25) rotates: 262,144 x 512 x 2 B =
  // 268,435,456 B. The sliding layers' rope (theta 1e4, no partial factor) rotates their whole
  // 256-wide head: 262,144 x 256 x 2 B = 134,217,728 B. Together 402,653,184 B (0.375 GiB).
  const VllmRotary gemma4 = vllm_rotary_tables(kvplan::testing::catalog_model("gemma4-26b-a4b"), parse_weight_dtype("bf16"));
  REQUIRE(gemma4.tables.size() == 2);
  CHECK(gemma4.tables[0].rotary_dim == 512);
  CHECK(gemma4.tables[0].bytes == 268'435'456);
  CHECK_FALSE(gemma4.tables[0].estimate);
  CHECK(gemma4.tables[1].rotary_dim == 256);
  CHECK(gemma4.tables[1].bytes == 134'217'728);
  CHECK(gemma4.bytes == 402'653'184);
  CHECK(gemma4.rule.rfind("rotary tables 0.38 GiB", 0) == 0);
}

TEST_CASE("a rope vLLM's rules do not cover is an estimate, and no rope has no table", "[vllm][rope]") {
  ModelSpec model = kvplan::testing::catalog_model("llama3.1-8b");
  model.rope->type = "some_new_scaling";
  // Sized as the base class would: 131,072 x 128 x 2 B, and said to be an estimate.
  const VllmRotary guessed = vllm_rotary_tables(model, parse_weight_dtype("bf16"));
  CHECK(guessed.bytes == 33'554'432);
  CHECK(guessed.tables.at(0).estimate);
  CHECK(guessed.rule.rfind("ESTIMATE", 0) == 0);
  model.rope.reset();
  const VllmRotary none = vllm_rotary_tables(model, parse_weight_dtype("bf16"));
  CHECK(none.bytes == 0);
  CHECK_THAT(none.rule, Catch::Contains("none counted"));
}

TEST_CASE("the spec format carries the rope and refuses a rope without its width", "[vllm][rope]") {
  const ModelSpec spec = parse_model_spec(
      R"({"name": "r", "layers": 2, "attention_heads": 8, "kv_heads": 8, "head_dim": 64, "params": 1000,
          "weight_dtype": "bf16", "rope_type": "yarn", "rope_factor": 2.5, "rope_original_positions": 4096,
          "rotary_dim": 64})",
      "rope.json");
  REQUIRE(spec.rope);
  CHECK(spec.rope->factor_millionths == 2'500'000);
  CHECK(spec.rope->original_positions == 4096);
  // 4,096 x 2.5 = 10,240 positions x 64 x 2 B = 1,310,720 B (with max_context unset: none counted).
  ModelSpec sized = spec;
  sized.max_context = 32768;
  CHECK(vllm_rotary_tables(sized, parse_weight_dtype("bf16")).bytes == 1'310'720);
  CHECK(vllm_rotary_tables(spec, parse_weight_dtype("bf16")).bytes == 0);
  CHECK(to_spec_json(spec)["rope_factor"].get<double>() == 2.5);
  CHECK_THROWS_WITH(parse_model_spec(R"({"name": "r", "layers": 2, "attention_heads": 8, "head_dim": 64, "params": 1000,
                                         "weight_dtype": "bf16", "rope_type": "linear"})",
                                     "rope.json"),
                    Catch::Contains("rotary_dim"));
}

TEST_CASE("a config's rope read leniently where it may, refused where absurd", "[vllm][rope]") {
  nlohmann::json config = nlohmann::json::parse(kvplan::testing::read_file(
      kvplan::testing::source_path("tests/fixtures/hf/llama3.1-8b/config.json")));
  // A null rope_theta beside the rope_scaling block: the rope is still read.
  config["rope_theta"] = nullptr;
  const ModelSpec lenient = model_spec_from_hf_config(config, "llama.json", std::nullopt);
  REQUIRE(lenient.rope);
  CHECK(lenient.rope->type == "llama3");
  // A factor no rope has (10^9): the table could not be sized, so the config is refused (exit 2).
  config["rope_scaling"]["factor"] = 1e9;
  CHECK_THROWS_WITH(model_spec_from_hf_config(config, "llama.json", std::nullopt), Catch::Contains("factor is above 1000000"));
}

TEST_CASE("a head too wide for any rope leaves the table to the estimate, never a wrapped width", "[vllm][rope]") {
  // The fuzzer's finding: head_dim 2^31 rotated in full is wider than the spec format's 65535,
  // and narrowing it to 32 bits would wrap 2^32 + 64 to 64. No rope is read; the spec round trips.
  nlohmann::json config = nlohmann::json::parse(kvplan::testing::read_file(
      kvplan::testing::source_path("tests/fixtures/hf/llama3.1-8b/config.json")));
  config["head_dim"] = 2147483648ULL;
  const ModelSpec wide = model_spec_from_hf_config(config, "llama.json", std::nullopt);
  CHECK_FALSE(wide.rope);
  CHECK_NOTHROW(model_spec_from_json(to_spec_json(wide), "round trip"));
  // At the format's bound the rope is still read.
  config["head_dim"] = 65535;
  const ModelSpec widest = model_spec_from_hf_config(config, "llama.json", std::nullopt);
  REQUIRE(widest.rope);
  CHECK(widest.rope->rotary_dim == 65535);
}
