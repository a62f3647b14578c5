// compressed-tensors checkpoints (llm-compressor: RedHatAI's w4a16 / w8a8 / FP8 releases,
// Moonshot's Kimi K2.5): their weights priced from the scheme and from the ignore list's names
// and "re:" expressions, read against the parameter counts; and the norms every rule keeps.

#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "kvplan/error.h"
#include "loaders/excluded_modules.h"
#include "loaders/hf_config.h"
#include "support/run_binary.h"
#include "support/temp_dir.h"

namespace {

using kvplan::testing::source_path;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

nlohmann::json fixture_json(const std::string& folder) {
  return nlohmann::json::parse(kvplan::testing::read_file(source_path("tests/fixtures/hf/" + folder + "/config.json")));
}

/// The model `config` describes, written to a folder of its own and read as a user's would be.
kvplan::ModelSpec load(const nlohmann::json& config) {
  kvplan::testing::TempDir dir;
  std::ofstream(dir.file("config.json"), std::ios::trunc) << config.dump();
  return kvplan::load_hf_model(dir.file("config.json"));
}

/// RedHatAI's w4a16 scheme (llm-compressor's W4A16 preset): int4, symmetric, group 128, packed.
nlohmann::json w4a16(const nlohmann::json& ignore) {
  return {{"quant_method", "compressed-tensors"},
          {"format", "pack-quantized"},
          {"config_groups",
           {{"group_0",
             {{"targets", {"Linear"}},
              {"weights",
               {{"num_bits", 4}, {"type", "int"}, {"symmetric", true}, {"strategy", "group"}, {"group_size", 128}}}}}}},
          {"ignore", ignore}};
}

using Patterns = std::vector<std::string>;

// Kimi K2.5's MoonViT tower and projector, kept in bf16 beside the language model (by hand in the
// test below): 416,866,032 + 54,277,888 params.
constexpr std::uint64_t kKimiTowerBytes = (416'866'032ull + 54'277'888ull) * 2;

}  // namespace

TEST_CASE("compressed-tensors' re: expressions read as fnmatch patterns that take at least as much", "[compressed-tensors]") {
  using kvplan::regex_as_wildcards;
  CHECK(regex_as_wildcards(".*self_attn.*") == Patterns{"*self_attn*"});
  // Kimi K2.5's dense MLPs: one pattern per alternative; re.match matches a prefix, hence the star.
  CHECK(regex_as_wildcards(R"(.*mlp\.(gate|up|gate_up|down)_proj.*)") ==
        Patterns{"*mlp.gate_proj*", "*mlp.up_proj*", "*mlp.gate_up_proj*", "*mlp.down_proj*"});
  // '.' is any one character, a class one of several; '$' ends the match.
  CHECK(regex_as_wildcards(".*mlp.gate$") == Patterns{"*mlp?gate"});
  CHECK(regex_as_wildcards(R"(model\.layers\.(0)\.self_attn\.[qkv]_proj$)") == Patterns{"model.layers.0.self_attn.?_proj"});
  CHECK(regex_as_wildcards(R"(^.*\.experts\.\d+\.(gate|down)_proj$)") ==
        Patterns{"*.experts.*.gate_proj", "*.experts.*.down_proj"});
  CHECK(regex_as_wildcards("lm_head|.*norm") == Patterns{"lm_head*", "*norm*"});
  CHECK(regex_as_wildcards("(?:q|k)_proj") == Patterns{"q_proj*", "k_proj*"});
  // What no fnmatch pattern can take as a superset: refused, and the caller assumes the worst.
  CHECK_FALSE(regex_as_wildcards("((a|b)c)").has_value());  // nested groups
  CHECK_FALSE(regex_as_wildcards("(?=self_attn)").has_value());
  CHECK_FALSE(regex_as_wildcards(R"(\bq_proj)").has_value());
  CHECK_FALSE(regex_as_wildcards("[qkv_proj").has_value());
  CHECK_FALSE(regex_as_wildcards("*q").has_value());
  CHECK_FALSE(regex_as_wildcards(R"(a\*)").has_value());  // a literal star
  CHECK_FALSE(regex_as_wildcards("(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)").has_value());  // 128 alternatives
  CHECK_FALSE(regex_as_wildcards(".*a.*a.*a.*a.*a.*a.*a.*a.*a").has_value());          // 9 stars
}

TEST_CASE("Kimi K2.5 (int4 compressed-tensors): only the routed experts in 4 bits, by hand", "[compressed-tensors]") {
  // Its ignore list: lm_head, re:.*self_attn.*, re:.*shared_experts.*, re:.*mlp\.(gate|up|gate_up|
  // down)_proj.* (the first layer's dense MLP). The routed experts, 60 MoE layers x 384 x 3 x
  // 7,168 x 2,048 = 1,014,686,023,680 values, take 4 bits (507,343,011,840 B) and a bf16 scale per
  // 32 (symmetric: no zero point), 31,708,938,240 x 2 = 63,417,876,480 B, and each packed matrix its
  // shape, two int64: 60 x 384 x 3 = 69,120 matrices x 16 B = 1,105,920 B. The other
  // 1,026,408,232,448 - 1,014,686,023,680 = 11,722,208,768 params stay bf16: 23,444,417,536 B, but
  // the 60 MoE layers' 384 e_score_correction_bias, fp32: 2 B more each, 46,080 B.
  const kvplan::ModelSpec spec = kvplan::load_hf_model(source_path("tests/fixtures/hf/kimi-k2.5"));
  CHECK(spec.weight_dtype->name == "int4");
  CHECK(*spec.weights_bytes ==
        507'343'011'840ull + 63'417'876'480ull + 1'105'920ull + 23'444'417'536ull + 46'080ull + kKimiTowerBytes);
  // The MoonViT3d tower (vt_hidden_size 1,152, 27 layers, vt_intermediate_size 4,304): patch_embed
  // 1,152 x 3 x 14 x 14 + 1,152, the 64 x 64 x 1,152 position grid, 27 x (qkv and out with biases
  // 4 x (1,152^2 + 1,152), two LayerNorms 4 x 1,152, fc0 and fc1 with biases 2 x 1,152 x 4,304 +
  // 4,304 + 1,152 = 15,239,504) and the final LayerNorm: 416,866,032. The projector: pre_norm
  // 2 x 1,152, linear_1 4,608^2 + 4,608, linear_2 4,608 x 7,168 + 7,168: 54,277,888.
  REQUIRE(spec.parts.size() == 2);
  CHECK(spec.parts[0].name == "vision tower");
  CHECK(spec.parts[0].params == 416'866'032ull);
  CHECK(spec.parts[1].params == 54'277'888ull);
  CHECK(contains(spec.weights_source, "1014.69B params at 4 bits + a 16-bit scale per 32"));
  CHECK(contains(spec.weights_source, "what its ignore list names"));
  CHECK_FALSE(contains(spec.weights_source, "upper bound"));

  // The same list with one projection named alone: a module kvplan does not count apart, so every
  // parameter at bf16 (the score biases at fp32), said so.
  nlohmann::json config = fixture_json("kimi-k2.5");
  nlohmann::json& quantization = config["text_config"]["quantization_config"];
  const auto priced_with = [&](const nlohmann::json& ignore) {
    quantization["ignore"] = ignore;
    return load(config);
  };
  const kvplan::ModelSpec partial = priced_with({"lm_head", R"(re:.*self_attn\.q_a_proj.*)"});
  CHECK(*partial.weights_bytes == 1'026'408'232'448ull * 2 + 46'080ull + kKimiTowerBytes);
  CHECK(contains(partial.weights_source, "an upper bound"));
  CHECK(contains(partial.weights_source, "a module kvplan does not count apart"));
  // Names that may reach the routed experts, class names, expressions past reading: the same.
  for (const char* reaching : {"re:.*experts.*", "Linear", "re:(?=x)", "re:.*layers\\.1\\..*"}) {
    INFO(reaching);
    const kvplan::ModelSpec bound = priced_with({"lm_head", reaching});
    CHECK(*bound.weights_bytes == 1'026'408'232'448ull * 2 + 46'080ull + kKimiTowerBytes);
    CHECK(contains(bound.weights_source, "which kvplan cannot place in its counts"));
  }
  // A norm, the embeddings or the routers named everywhere change nothing: kvplan keeps them.
  CHECK(*priced_with({"lm_head", "re:.*self_attn.*", "re:.*shared_experts.*", R"(re:.*mlp\.(gate|up|gate_up|down)_proj.*)",
                      "re:.*norm.*", "re:.*embed_tokens.*", "re:.*mlp.gate$"})
             .weights_bytes == *spec.weights_bytes);
  // Written as RedHatAI's lists write them, the head, the towers and the norms are the same.
  CHECK(*priced_with({"re:.*lm_head", "re:vision_tower.*", "re:.*mm_projector.*", "re:.*self_attn.*", "re:.*shared_experts.*",
                      R"(re:.*mlp\.(gate|up|gate_up|down)_proj.*)", "re:.*input_layernorm$"})
             .weights_bytes == *spec.weights_bytes);
  // Attention, shared experts and dense MLPs quantized too (only lm_head kept): 1,023.89B values.
  const kvplan::ModelSpec all = priced_with({"lm_head"});
  CHECK(contains(all.weights_source, "1023.89B params at 4 bits"));
  CHECK(*all.weights_bytes < *spec.weights_bytes);

  // A hostile list: 65 names of 64 alternatives each pass the 4,096 patterns matching is bounded by.
  quantization["ignore"] = nlohmann::json::array();
  for (int i = 0; i < 65; ++i) quantization["ignore"].push_back("re:(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)");
  CHECK_THROWS_WITH(load(config), Catch::Contains("field 'quantization_config.ignore': its names and their alternatives "
                                                  "(a|b) make more than the 4096 patterns kvplan reads"));

  // Groups aimed at some modules only leave the rest unquantized: an upper bound, not a guess.
  quantization["ignore"] = {"lm_head"};
  quantization["config_groups"]["group_0"]["targets"] = {R"(re:.*mlp\.experts.*)"};
  const kvplan::ModelSpec aimed = load(config);
  CHECK(*aimed.weights_bytes == 1'026'408'232'448ull * 2 + 46'080ull + kKimiTowerBytes);
  CHECK(contains(aimed.weights_source, "config_groups quantize some modules only"));
}

TEST_CASE("A RedHatAI-style w4a16 Llama 3.1 8B: every linear layer but the head in 4 bits, by hand", "[compressed-tensors]") {
  nlohmann::json config = fixture_json("llama3.1-8b");
  config["quantization_config"] = w4a16({"lm_head"});
  const kvplan::ModelSpec spec = load(config);
  // 32 layers x (q and o 4,096^2, k and v 1,024 x 4,096, gate, up and down 14,336 x 4,096) =
  // 6,979,321,856 values at 4 bits (3,489,660,928 B) with a bf16 scale per 128: 54,525,952 x 2 =
  // 109,051,904 B; the shapes of 32 x 7 matrices x 16 B = 3,584 B. In bf16: embedding and head 2 x
  // 128,256 x 4,096 = 1,050,673,152 and the norms 32 x 2 x 4,096 + 4,096 = 266,240: 2,101,878,784 B.
  // Total 5,700,595,200 B.
  CHECK(spec.params == 8'030'261'248ull);
  CHECK(spec.weight_dtype->name == "int4");
  CHECK(*spec.weights_bytes == 5'700'595'200ull);
  CHECK(contains(spec.weights_source, "6.98B params at 4 bits + a 16-bit scale per 128"));
  CHECK(contains(spec.weights_source, "1.05B other params bf16 (embeddings, head, norms)"));

  // Asymmetric: a 4-bit zero point per group as well, 54,525,952 / 2 = 27,262,976 B more.
  config["quantization_config"]["config_groups"]["group_0"]["weights"]["symmetric"] = false;
  CHECK(*load(config).weights_bytes == 5'700'595'200ull + 27'262'976ull);

  // w8a8 int8 (unpacked, per-channel scales): 6,979,321,856 B of values, a bf16 scale for each
  // output row, 32 x (q 4,096 + k 1,024 + v 1,024 + o 4,096 + gate and up 2 x 14,336 + down 4,096)
  // = 1,376,256 x 2 B, the kept 2,101,878,784.
  config["quantization_config"] = w4a16({"lm_head"});
  config["quantization_config"]["format"] = "int-quantized";
  auto& weights = config["quantization_config"]["config_groups"]["group_0"]["weights"];
  weights["num_bits"] = 8;
  weights["strategy"] = "channel";
  weights.erase("group_size");
  const kvplan::ModelSpec w8a8 = load(config);
  CHECK(w8a8.weight_dtype->name == "int8");
  CHECK(*w8a8.weights_bytes == 6'979'321'856ull + 1'376'256ull * 2 + 2'101'878'784ull);
  CHECK(contains(w8a8.weights_source, "a 16-bit scale per output row;"));

  // FP8 dynamic (float 8, per-channel): 1 B a value, an fp32 scale per output row (as vLLM holds
  // it), the same kept part.
  weights["type"] = "float";
  config["quantization_config"]["format"] = "float-quantized";
  const kvplan::ModelSpec fp8 = load(config);
  CHECK(fp8.weight_dtype->name == "fp8");
  CHECK(*fp8.weights_bytes == 6'979'321'856ull + 1'376'256ull * 4 + 2'101'878'784ull);
  // Per tensor: one fp32 scale for each of the 32 x 7 matrices.
  weights["strategy"] = "tensor";
  CHECK(*load(config).weights_bytes == 6'979'321'856ull + 224 * 4 + 2'101'878'784ull);
}
