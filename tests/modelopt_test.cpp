// NVIDIA ModelOpt checkpoints (NVFP4, FP8, MIXED_PRECISION): their weights priced from the scheme
// in hf_quant_config.json or config.json's quantization_config, on the files NVIDIA and Qwen ship
// (tests/fixtures/hf/*-nvfp4, *-fp8*, provenance in SOURCES.md).

#include <algorithm>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "kvplan/error.h"
#include "loaders/hf_config.h"
#include "loaders/spec_json.h"
#include "model/text.h"
#include "support/run_binary.h"
#include "support/temp_dir.h"

namespace {

using kvplan::testing::run_kvplan;
using kvplan::testing::source_path;

kvplan::ModelSpec fixture(const std::string& folder) { return kvplan::load_hf_model(source_path("tests/fixtures/hf/" + folder)); }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("wildcard_match reads ModelOpt's module patterns as fnmatch does", "[text]") {
  using kvplan::wildcard_match;
  CHECK(wildcard_match("lm_head", "lm_head"));
  CHECK_FALSE(wildcard_match("lm_head", "lm_head.weight"));
  CHECK(wildcard_match("model.layers.0*", "model.layers.0.mlp.experts.0.gate_proj"));
  CHECK(wildcard_match("model.layers.0*", "model.layers.07"));  // fnmatch: 0* is also 0 then anything
  CHECK(wildcard_match("*.mlp.shared_expert.*", "model.layers.3.mlp.shared_expert.up_proj"));
  CHECK_FALSE(wildcard_match("*.mlp.shared_expert.*", "model.layers.3.mlp.experts.0.up_proj"));
  CHECK(wildcard_match("layers.?.attn*", "layers.7.attn.wq"));
  CHECK_FALSE(wildcard_match("layers.?.attn*", "layers.17.attn.wq"));
  CHECK(wildcard_match("*", ""));
  CHECK(wildcard_match("a*b*c", "a-b-b-c"));
  CHECK_FALSE(wildcard_match("a*b*c", "a-b-b-"));
}

TEST_CASE("ModelOpt NVFP4: Qwen3-235B-A22B as NVIDIA ships it, every weight matrix but the head and routers in NVFP4", "[modelopt]") {
  // hf_quant_config.json: NVFP4, group 16, FP8 KV; it leaves lm_head and the 94 routers
  // (model.layers.N.mlp.gate) unquantized. config.json holds no quantization_config.
  const kvplan::ModelSpec spec = fixture("qwen3-235b-a22b-nvfp4");
  CHECK(spec.params == 235'093'634'560ull);
  CHECK(spec.weight_dtype->name == "nvfp4");
  // Kept at bf16: the embeddings and head (2 x 151,936 x 4,096 = 1,244,659,712), the routers
  // (94 x 128 x 4,096 = 49,283,072), the final norm (4,096) and each layer's two norms and q/k
  // norms (94 x (2 x 4,096 + 2 x 128) = 794,112): 1,294,740,992 params, 2,589,481,984 B.
  // NVFP4: the other 233,798,893,568 values at 9/16 B = 131,511,877,632 B. Scales: two fp32 scalars
  // for each of 94 x (128 experts x 3 + q, k, v, o) = 36,472 matrices, and the FP8 KV cache's k_scale
  // and v_scale on each of the 94 layers: 292,528 B, as the checkpoint holds them.
  CHECK(*spec.weights_bytes == 2'589'481'984ull + 131'511'877'632ull + 36'472ull * 8 + 94 * 8);
  CHECK(contains(spec.weights_source, "computed (NVFP4, NVIDIA ModelOpt)"));
  CHECK_FALSE(contains(spec.weights_source, "upper bound"));
}

TEST_CASE("ModelOpt FP8: Llama 3.1 70B Instruct and Qwen3 32B, per-tensor scales, the head kept", "[modelopt]") {
  // nvidia/Llama-3.1-70B-Instruct-FP8: hf_quant_config.json, FP8, exclude_modules [lm_head].
  // Kept at bf16: embeddings and head 2 x 128,256 x 8,192 = 2,101,346,304, the final norm 8,192, the
  // layers' norms 80 x 2 x 8,192 = 1,310,720: 2,102,665,216 params, 4,205,330,432 B. FP8: the other
  // 68,451,041,280 at 1 B. Scales: two fp32 scalars for each of 80 x 7 matrices (q, k, v, o, gate,
  // up, down), and the FP8 KV cache's two on each of the 80 layers.
  const kvplan::ModelSpec llama = fixture("llama3.1-70b-instruct-fp8");
  CHECK(llama.weight_dtype->name == "fp8");
  CHECK(*llama.weights_bytes == 4'205'330'432ull + 68'451'041'280ull + 80 * 7 * 8 + 80 * 8);
  CHECK(contains(llama.weights_source, "for each of 560 weight matrices"));

  // Qwen/Qwen3-32B-FP8-Static-PerTensor writes its scheme into config.json with no quant_method,
  // only producer "modelopt". FP8 values: 32,762,123,264 - (2 x 151,936 x 5,120 + 5,120 + 64 x
  // (2 x 5,120 + 2 x 128)) = 31,205,621,760, the F8_E4M3 count Hugging Face lists for
  // Qwen/Qwen3-32B-FP8 (the same matrices, block-scaled): kept 1,556,501,504 params at 2 B, and
  // 64 x 7 matrices' and 64 layers' KV (kv_cache_scheme FP8) two fp32 scalars.
  const kvplan::ModelSpec qwen = fixture("qwen3-32b-fp8-static-pertensor");
  CHECK(qwen.weight_dtype->name == "fp8");
  CHECK(*qwen.weights_bytes == 31'205'621'760ull + 1'556'501'504ull * 2 + 64 * 7 * 8 + 64 * 8);
}

TEST_CASE("ModelOpt lists that keep attention or shared experts: exact where the family counts them apart", "[modelopt]") {
  // nvidia/MiniMax-M2.7-NVFP4 keeps every layer's self_attn* and router (and the routing bias, a
  // vector): what is quantized is the routed experts, 62 layers x 256 x 3 x 3,072 x 1,536 =
  // 224,680,476,672 values at 9/16 B = 126,382,768,128 B; the other 4,009,288,192 params at bf16,
  // 8,018,576,384 B; 62 x 256 x 3 expert matrices' two fp32 scalars, and the FP8 KV cache's on each
  // of the 62 layers.
  const kvplan::ModelSpec spec = fixture("minimax-m2.7-nvfp4");
  CHECK(spec.params == 228'689'764'864ull);
  CHECK(*spec.weights_bytes == 126'382'768'128ull + 8'018'576'384ull + 62ull * 256 * 3 * 8 + 62 * 8);
  CHECK(contains(spec.weights_source, "computed (NVFP4, NVIDIA ModelOpt): 224.68B params"));
  CHECK_FALSE(contains(spec.weights_source, "upper bound"));

  // One projection of an attention block that is not MLA: kvplan does not count its projections
  // apart, so it prices only the routed experts quantized, the same figure here, and calls it an
  // upper bound.
  kvplan::testing::TempDir dir;
  nlohmann::json config =
      nlohmann::json::parse(kvplan::testing::read_file(source_path("tests/fixtures/hf/minimax-m2.7-nvfp4/config.json")));
  nlohmann::json& ignore = config["quantization_config"]["ignore"];
  ignore.push_back("model.layers.0.self_attn.q_proj");
  std::ofstream(dir.file("config.json")) << config.dump();
  const kvplan::ModelSpec projection = kvplan::load_hf_model(dir.file("config.json"));
  CHECK(*projection.weights_bytes == *spec.weights_bytes);
  CHECK(contains(projection.weights_source, "224.68B routed-expert params"));
  CHECK(contains(projection.weights_source, "an upper bound: ModelOpt also leaves 'model.layers.0.self_attn.q_proj'"));
  // A name that may reach the routed experts: every parameter at bf16.
  ignore.push_back("model.layers.3.block_sparse_moe*");
  std::ofstream(dir.file("config.json"), std::ios::trunc) << config.dump();
  const kvplan::ModelSpec reaching = kvplan::load_hf_model(dir.file("config.json"));
  CHECK(*reaching.weights_bytes == 228'689'764'864ull * 2);
  CHECK(contains(reaching.weights_source, "leaves 'model.layers.3.block_sparse_moe*' unquantized, which kvplan cannot place"));
}

TEST_CASE("ModelOpt lists naming MLA projections one by one: DeepSeek-V3.1 and GLM-5 NVFP4 exact", "[modelopt]") {
  // nvidia/DeepSeek-V3.1-NVFP4 keeps each layer's q_a_proj (7,168 x 1,536), q_b_proj (1,536 x 128
  // x 192), kv_a_proj_with_mqa (7,168 x 576) and kv_b_proj (512 x 128 x 256), 69,664,768 a layer,
  // and quantizes o_proj. Kept in bf16: 61 x 69,664,768 + embedding and head 1,853,358,080 + the
  // routers 106,430,464 + the vectors 1,021,440 = 6,210,360,832 params, 12,420,721,664 B; the
  // other 664,816,058,368 at 9/16 B = 373,959,032,832 B; scales at most (58 x (256 x 3 + 16) + 3 x
  // 16) x 8 B (o_proj is quantized inside a kept attention: its layers' matrices are not taken one
  // by one), and the FP8 KV cache's on each of the 61 layers; the routers' 58 x 256
  // e_score_correction_bias in fp32, 2 B more each.
  const kvplan::ModelSpec v31 = fixture("deepseek-v3.1-nvfp4");
  CHECK(v31.params == 671'026'419'200ull);
  CHECK(*v31.weights_bytes == 12'420'721'664ull + 373'959'032'832ull + 45'520ull * 8 + 61 * 8 + 58 * 256 * 2);
  CHECK(contains(v31.weights_source, "6.21B other params bf16"));
  CHECK_FALSE(contains(v31.weights_source, "upper bound"));
  CHECK(v31.checkpoint_kv_dtype->name == "fp8");

  // nvidia/GLM-5-NVFP4 names o_proj and the indexer too: the whole attention kept, 78 x
  // 174,391,296 (q_a 12,582,912, q_b 33,554,432, kv_a 3,538,944, kv_b 14,680,064, o 100,663,296,
  // indexer 9,371,648), with embedding and head 1,903,165,440, routers 117,964,800 and vectors
  // 1,203,456: 15,624,854,784 params in bf16, but the 75 MoE layers' 256 e_score_correction_bias in
  // fp32 (2 B more each); the other 728,286,363,648 at 9/16 B; two fp32 scalars for each of 75 x
  // (256 x 3 routed + 3 shared) + 3 x 3 dense matrices, 57,834, and the FP8 KV cache's on each of
  // the 78 layers.
  const kvplan::ModelSpec glm5 = fixture("glm-5-nvfp4");
  CHECK(*glm5.weights_bytes == 15'624'854'784ull * 2 + 75 * 256 * 2 + 409'661'079'552ull + 57'834ull * 8 + 78 * 8);
  CHECK_FALSE(contains(glm5.weights_source, "upper bound"));

  // Without kv_b_proj the named projections do not hold the latent path: a module kvplan does not
  // count apart, so the routed experts only are priced quantized, an upper bound.
  kvplan::testing::TempDir dir;
  nlohmann::json scheme =
      nlohmann::json::parse(kvplan::testing::read_file(source_path("tests/fixtures/hf/deepseek-v3.1-nvfp4/hf_quant_config.json")));
  nlohmann::json& names = scheme["quantization"]["exclude_modules"];
  names.erase(std::remove_if(names.begin(), names.end(),
                             [](const nlohmann::json& name) { return name.get<std::string>().ends_with("kv_b_proj"); }),
              names.end());
  std::ofstream(dir.file("hf_quant_config.json")) << scheme.dump();
  std::ofstream(dir.file("config.json")) << kvplan::testing::read_file(source_path("tests/fixtures/hf/deepseek-v3.1-nvfp4/config.json"));
  const kvplan::ModelSpec partial = kvplan::load_hf_model(dir.file("config.json"));
  CHECK(*partial.weights_bytes > *v31.weights_bytes);
  CHECK(contains(partial.weights_source, "an upper bound: ModelOpt also leaves 'model.layers.0.self_attn.kv_a_proj_with_mqa'"));
}

TEST_CASE("ModelOpt MIXED_PRECISION: the experts its quantized_layers puts in NVFP4, the rest at bf16, above the real checkpoint", "[modelopt]") {
  // nvidia/Qwen3.6-35B-A3B-NVFP4: experts, shared experts and the head in W4A16_NVFP4, attention in
  // FP8. kvplan prices the 40 x 256 x 3 x 2,048 x 512 = 32,212,254,720 expert values at 9/16 B
  // (18,119,393,280 B) + 30,720 matrices x 8 B, and the other 2,448,355,968 params at 2 B.
  const kvplan::ModelSpec spec = fixture("qwen3.6-35b-a3b-nvfp4");
  CHECK(spec.weight_dtype->name == "nvfp4");
  const std::uint64_t language_model = 18'119'393'280ull + 30'720ull * 8 + 2'448'355'968ull * 2;
  CHECK(*spec.weights_bytes == language_model);
  CHECK(contains(spec.weights_source, "an upper bound"));
  // Hugging Face's per-dtype count of the real checkpoint (U8 16,423,321,600 + F8_E4M3
  // 3,332,177,920 + BF16 2 x 1,825,916,784) is 23,407,333,088 B with its MTP layer and vision
  // tower; kvplan's language model and MTP layer (bf16) alone stay above it.
  CHECK(language_model + *spec.mtp_weights_bytes > 23'407'333'088ull);
  // The real NVFP4 values (U8 x 2) are kvplan's experts plus the shared experts (40 x 3 x 2,048 x
  // 512) and the head (248,320 x 2,048): the expert count is the checkpoint's.
  CHECK(16'423'321'600ull * 2 == 32'212'254'720ull + 40ull * 3 * 2048 * 512 + 248'320ull * 2048);
}

TEST_CASE("ModelOpt schemes kvplan cannot price exactly fall back to bf16, called an upper bound with the reason", "[modelopt]") {
  kvplan::testing::TempDir dir;
  const std::string config = kvplan::testing::read_file(source_path("tests/fixtures/hf/qwen3-8b/config.json"));
  std::ofstream(dir.file("config.json")) << config;
  // Qwen3-8B: 8,190,735,360 params; at bf16 16,381,470,720 B.
  const auto with_scheme = [&](const std::string& quantization) {
    std::ofstream(dir.file("hf_quant_config.json")) << R"({"producer": {"name": "modelopt"}, "quantization": )" << quantization << "}";
    return kvplan::load_hf_model(dir.file("config.json"));
  };
  const auto upper_bound = [](const kvplan::ModelSpec& spec, const std::string& why) {
    CHECK(*spec.weights_bytes == 16'381'470'720ull);
    CHECK(spec.weight_dtype->name == "bf16");
    CHECK(contains(spec.weights_source, "an upper bound"));
    CHECK(contains(spec.weights_source, why));
  };
  upper_bound(with_scheme(R"({"quant_algo": "W4A8_AWQ", "exclude_modules": ["lm_head"]})"), "not 'W4A8_AWQ'");
  upper_bound(with_scheme(R"({"quant_algo": "NVFP4", "group_size": 32, "exclude_modules": ["lm_head"]})"), "group_size is not 16");
  // No head on the list: a trimmed copy (NVIDIA's Nemotron 3 Super configs as aiconfigurator keeps them).
  upper_bound(with_scheme(R"({"quant_algo": "NVFP4", "group_size": 16, "exclude_modules": []})"), "does not name the output head");
  upper_bound(with_scheme(R"({"quant_algo": "MIXED_PRECISION"})"), "lists no quantized_layers");

  // What it can price: the head, norms, embeddings and whole layers named; whole layers at bf16.
  // Exact: as `--weight-dtype nvfp4` prices the same file tensor by tensor (36 x 7 matrices' scales).
  const kvplan::ModelSpec exact = with_scheme(
      R"({"quant_algo": "NVFP4", "group_size": 16, "exclude_modules": ["lm_head", "model.embed_tokens", "model.norm", "model.layers.0.input_layernorm"]})");
  const auto named = run_kvplan("--model qwen3-8b --weight-dtype nvfp4 --gpu h100 -c 8192 --format json");
  REQUIRE(named.exit_code == 0);
  CHECK(*exact.weights_bytes == nlohmann::json::parse(named.out)["rows"][0]["weights_bytes"].get<std::uint64_t>());
  // Layer 35 kept whole: its 1 x (attention + MLP) matrices move from 9/16 B to 2 B.
  const kvplan::ModelSpec kept = with_scheme(R"({"quant_algo": "NVFP4", "group_size": 16, "exclude_modules": ["lm_head", "model.layers.35*"]})");
  // Qwen3-8B's layer: q 4,096 x 4,096, k and v 4,096 x 1,024 each, o 4,096 x 4,096, MLP 3 x 4,096 x
  // 12,288: 192,937,984 matrix values; 7 matrices fewer scales.
  CHECK(*kept.weights_bytes == *exact.weights_bytes + 192'937'984ull * 2 - 192'937'984ull * 9 / 16 - 7 * 8);
  // "model.layers.3*" is fnmatch's: layers 3 and 30 to 35 kept, 7 layers.
  const kvplan::ModelSpec starred = with_scheme(R"({"quant_algo": "NVFP4", "group_size": 16, "exclude_modules": ["lm_head", "model.layers.3*"]})");
  CHECK(*starred.weights_bytes == *exact.weights_bytes + 7 * (192'937'984ull * 2 - 192'937'984ull * 9 / 16 - 7 * 8));
  // Layer 0's attention kept (the Qwen family counts it apart): q 4,096 x 4,096, k and v 4,096 x
  // 1,024, o 4,096 x 4,096 = 41,943,040 values from 9/16 B to 2 B, and their 4 matrices' scalars gone.
  const kvplan::ModelSpec attention =
      with_scheme(R"({"quant_algo": "NVFP4", "group_size": 16, "exclude_modules": ["lm_head", "model.layers.0.self_attn*"]})");
  CHECK(*attention.weights_bytes == *exact.weights_bytes + 41'943'040ull * 2 - 41'943'040ull * 9 / 16 - 4 * 8);
  CHECK_FALSE(contains(attention.weights_source, "upper bound"));

  // A family that does not count its attention apart (Gemma 4, as nvidia/Gemma-4-31B-IT-NVFP4
  // lists it): every parameter at bf16.
  kvplan::testing::TempDir gemma;
  std::ofstream(gemma.file("config.json")) << kvplan::testing::read_file(source_path("tests/fixtures/hf/gemma4-31b/config.json"));
  std::ofstream(gemma.file("hf_quant_config.json")) << R"({"quantization": {"quant_algo": "NVFP4", "group_size": 16,
    "exclude_modules": ["lm_head", "model.language_model.layers.0.self_attn*"]}})";
  const kvplan::ModelSpec dense = kvplan::load_hf_model(gemma.file("config.json"));
  CHECK(dense.weight_dtype->name == "bf16");
  CHECK(*dense.weights_bytes == dense.params * 2 + kvplan::parts_bytes(dense));
  CHECK(contains(dense.weights_source, "leaves 'model.language_model.layers.0.self_attn*' unquantized, and kvplan does not "
                                       "count a dense layer's modules apart"));
}

TEST_CASE("ModelOpt config.json quantization_config: exclude lists read, malformed ones refused in one line", "[modelopt][hostile]") {
  kvplan::testing::TempDir dir;
  nlohmann::json config = nlohmann::json::parse(kvplan::testing::read_file(source_path("tests/fixtures/hf/qwen3-8b/config.json")));
  const auto load = [&](const nlohmann::json& quantization) {
    config["quantization_config"] = quantization;
    std::ofstream(dir.file("config.json"), std::ios::trunc) << config.dump();
    return kvplan::load_hf_model(dir.file("config.json"));
  };
  // The newer form: quant_method "modelopt", the list under "ignore".
  const kvplan::ModelSpec read = load({{"quant_method", "modelopt"}, {"quant_algo", "FP8"}, {"ignore", {"lm_head"}}});
  CHECK(read.weight_dtype->name == "fp8");
  CHECK(contains(read.weights_source, "computed (FP8, NVIDIA ModelOpt)"));
  CHECK_THROWS_WITH(load({{"quant_method", "modelopt"}, {"quant_algo", "FP8"}, {"ignore", "lm_head"}}),
                    Catch::Contains("field 'quantization_config.ignore': expected a list of module names"));
  CHECK_THROWS_WITH(load({{"quant_method", "modelopt"}, {"quant_algo", "FP8"}, {"ignore", {1, 2}}}),
                    Catch::Contains("expected module names of at most 256 bytes"));
  CHECK_THROWS_WITH(load({{"quant_method", "modelopt"}, {"quant_algo", "FP8"}, {"ignore", {std::string(300, '*')}}}),
                    Catch::Contains("expected module names of at most 256 bytes"));
  CHECK_THROWS_WITH(load({{"quant_method", "modelopt"}, {"quant_algo", "FP8"}, {"ignore", {"lm_head", "1*a*a*a*a*a*a*a*a*b"}}}),
                    Catch::Contains("has more than 8 wildcards (*), which no real list writes"));
  CHECK_THROWS_WITH(load({{"quant_method", "modelopt"}, {"quant_algo", "FP8"}, {"ignore", nlohmann::json(std::vector<std::string>(5000, "lm_head"))}}),
                    Catch::Contains("5000 names, more than the 4096 kvplan reads"));
  // A hf_quant_config.json without its "quantization" object: one line, exit 2.
  config.erase("quantization_config");
  std::ofstream(dir.file("config.json"), std::ios::trunc) << config.dump();
  std::ofstream(dir.file("hf_quant_config.json")) << R"({"producer": {"name": "modelopt"}})";
  kvplan::testing::check_refused(run_kvplan("--model " + dir.file("config.json") + " --gpu h100 -c 8192"),
                                 "hf_quant_config.json: field 'quantization': expected an object", 2);
  // A bad list there is named in that file, under its own name.
  std::ofstream(dir.file("hf_quant_config.json"), std::ios::trunc)
      << R"({"quantization": {"quant_algo": "NVFP4", "group_size": 16, "exclude_modules": "lm_head"}})";
  kvplan::testing::check_refused(run_kvplan("--model " + dir.file("config.json") + " --gpu h100 -c 8192"),
                                 "hf_quant_config.json: field 'quantization.exclude_modules': expected a list of module names", 2);
}

TEST_CASE("ModelOpt's declared KV cache: TensorRT-LLM's auto takes it, vLLM and SGLang rows say so", "[modelopt]") {
  // nvidia/Qwen3-235B-A22B-NVFP4's hf_quant_config.json: kv_cache_quant_algo FP8.
  CHECK(fixture("qwen3-235b-a22b-nvfp4").checkpoint_kv_dtype->name == "fp8");
  // Qwen3-32B-FP8-Static-PerTensor's config.json: kv_cache_scheme "FP8".
  CHECK(fixture("qwen3-32b-fp8-static-pertensor").checkpoint_kv_dtype->name == "fp8");
  // nvidia/MiniMax-M2.7-NVFP4: kv_cache_scheme {"num_bits": 8, "type": "float"}.
  CHECK(fixture("minimax-m2.7-nvfp4").checkpoint_kv_dtype->name == "fp8");
  // Qwen3.6-35B-A3B-NVFP4's config.json states none (its hf_quant_config.json does): the larger cache.
  CHECK(fixture("qwen3.6-35b-a3b-nvfp4").checkpoint_kv_dtype == nullptr);
  CHECK(fixture("qwen3-8b").checkpoint_kv_dtype == nullptr);

  // Under TensorRT-LLM, auto is the checkpoint's fp8: 94 layers x 2 x 4 heads x 128 x 1 B = 96,256 B
  // a token.
  const std::string model = "--model nvidia/Qwen3-235B-A22B-NVFP4 --ctx 32k --gpu b200 --format json";
  const auto trtllm = run_kvplan(model + " --runtime trtllm");
  REQUIRE(trtllm.exit_code == 0);
  const nlohmann::json row = nlohmann::json::parse(trtllm.out)["rows"][0];
  CHECK(row["kv_dtype"] == "fp8");
  CHECK(row["kv_bytes_per_token"] == 94 * 2 * 4 * 128);
  CHECK(contains(row["assumptions"].dump(), "KV dtype auto = fp8: the checkpoint's own KV-cache quantization"));
  // vLLM's auto: the model dtype (what versions before its checkpoint resolution keep), said so.
  for (const char* runtime : {"vllm", "sglang"}) {
    INFO(runtime);
    const auto other = run_kvplan(model + " --runtime " + runtime);
    REQUIRE(other.exit_code == 0);
    const nlohmann::json other_row = nlohmann::json::parse(other.out)["rows"][0];
    CHECK(other_row["kv_bytes_per_token"] == 94 * 2 * 4 * 128 * 2);
    CHECK(contains(other_row["assumptions"].dump(), "the checkpoint declares an fp8 KV cache (kv_cache_quant_algo)"));
  }
  // Where the engine's auto is fp8 already (SGLang for a DSA model on Blackwell), nothing to say.
  const auto dsa = run_kvplan("--model nvidia/GLM-5.1-NVFP4 --gpu 8xb200 --runtime sglang --ctx 64k --format json");
  REQUIRE(dsa.exit_code == 0);
  const nlohmann::json dsa_row = nlohmann::json::parse(dsa.out)["rows"][0];
  CHECK(dsa_row["kv_dtype"] == "fp8");
  CHECK_FALSE(contains(dsa_row["assumptions"].dump(), "the checkpoint declares"));
  // A spec file keeps it, and refuses what is not a checkpoint's KV quantization.
  const kvplan::ModelSpec spec = fixture("qwen3-235b-a22b-nvfp4");
  CHECK(kvplan::to_spec_json(spec)["checkpoint_kv_dtype"] == "fp8");
  CHECK(kvplan::model_spec_from_json(kvplan::to_spec_json(spec), "spec").checkpoint_kv_dtype->name == "fp8");
  nlohmann::json bad = kvplan::to_spec_json(spec);
  bad["checkpoint_kv_dtype"] = "int4";
  CHECK_THROWS_WITH(kvplan::model_spec_from_json(bad, "spec"), Catch::Contains("checkpoint_kv_dtype"));
}
