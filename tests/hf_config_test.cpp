// Hugging Face config.json import: real configs (tests/fixtures/hf, sources in SOURCES.md) give the
// right layer layout and cache bytes, computed here by hand.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "kvplan/plan.h"
#include "kvplan/error.h"
#include "loaders/hf_config.h"
#include "support/run_binary.h"
#include "loaders/json_reader.h"

using namespace kvplan;
using kvplan::testing::source_path;

namespace {

ModelSpec fixture(const std::string& id) { return load_hf_model(source_path("tests/fixtures/hf/" + id)); }

nlohmann::json fixture_json(const std::string& id) {
  return kvplan::parse_json_document(kvplan::testing::read_file(source_path("tests/fixtures/hf/" + id + "/config.json")), id);
}

const Dtype& cache(std::string_view name) { return parse_kv_dtype(name, parse_weight_dtype("bf16")); }

Row row_at(const ModelSpec& model, std::uint64_t ctx, std::string_view dtype = "fp16", std::uint64_t batch = 1) {
  RowSettings settings;
  settings.ctx = ctx;
  settings.batch = batch;
  settings.cache = {&cache(dtype), &cache(dtype)};
  settings.gpu_memory_bytes = 80 * GiB;
  return plan_row(model, settings);
}

/// A config built inline, for field spellings no fixture shows.
ModelSpec inline_config(const nlohmann::json& config) { return model_spec_from_hf_config(config, "inline/config.json"); }

nlohmann::json small_llama() {
  return {{"model_type", "llama"}, {"num_hidden_layers", 4}, {"hidden_size", 256}, {"num_attention_heads", 8},
          {"num_key_value_heads", 2}, {"intermediate_size", 512}, {"vocab_size", 1000}, {"torch_dtype", "bfloat16"}};
}

/// The exit code of loading `config` and sizing its weights, as a run without --weights would.
ExitCode code_of(const nlohmann::json& config) {
  try {
    estimate_weights(inline_config(config), nullptr);
  } catch (const Error& error) {
    return error.code();
  }
  return ExitCode::ok;
}

}  // namespace

TEST_CASE("Llama 3.1 8B from its config.json and safetensors index") {
  const ModelSpec model = fixture("llama3.1-8b");
  CHECK(describe_layers(model) == "32 full");
  CHECK(row_at(model, 1).kv_bytes_per_token == 131'072);  // 2 x 32 x 8 x 128 x 2
  CHECK(model.weights_bytes == 16'060'522'496);          // metadata.total_size
  CHECK(model.params == 8'030'261'248);                  // counted from the shapes
  CHECK(model.max_context == 131'072);
}

TEST_CASE("vocab_size: the language model's, nested or not, else the config class default") {
  CHECK(fixture("llama3.1-8b").vocab_size == 128'256);  // top level
  CHECK(fixture("llama4-scout").vocab_size == 202'048);  // text_config only
  // gemma-3-27b-it states none anywhere: Gemma3TextConfig's default, the one the count uses.
  CHECK(fixture_json("gemma3-27b").dump().find("vocab_size") == std::string::npos);
  CHECK(fixture("gemma3-27b").vocab_size == 262'208);

  // Both levels: the language model's own block wins (the wrapper's may count image tokens).
  nlohmann::json wrapped = {{"model_type", "mistral3"}, {"vocab_size", 5}, {"text_config", small_llama()}};
  CHECK(inline_config(wrapped).vocab_size == 1'000);
  // Only the wrapper states it: the top level is read, as the parameter count reads it.
  wrapped["text_config"].erase("vocab_size");
  CHECK(inline_config(wrapped).vocab_size == 5);

  // Absent, no default for llama: unknown (the index size stands in for the count that needs it).
  nlohmann::json bare = small_llama();
  bare.erase("vocab_size");
  CHECK(model_spec_from_hf_config(bare, "inline/config.json", 1'000'000).vocab_size == 0);
}

TEST_CASE("Gemma 3 27B at 128K: sliding layers capped at the window") {
  // text_config; 62 layers, sliding_window_pattern absent = 6: layers 5, 11, ..., 59 are global (10),
  // the other 52 slide over 1,024 tokens. Per layer per token: 2 x 16 x 128 x 2 = 8,192 B.
  const ModelSpec model = fixture("gemma3-27b");
  CHECK(describe_layers(model) == "52 sliding(1024) + 10 full");
  const Row row = row_at(model, 131'072);
  CHECK(row.kv_bytes_per_token == 62 * 8'192);  // 507,904: what a token costs below the window
  // 10 x 8,192 x 131,072 + 52 x 8,192 x 1,024 = 10,737,418,240 + 436,207,616
  CHECK(row.kv_bytes == 11'173'625'856);
  // The naive formula would say 62 x 8,192 x 131,072 = 66,571,993,088: 6x too much.
}

TEST_CASE("gpt-oss-120b: alternating sliding(128) and full layers") {
  // layer_types: 18 sliding_attention + 18 full_attention; 2 x 8 x 64 x 2 = 2,048 B per layer per token.
  const ModelSpec model = fixture("gpt-oss-120b");
  CHECK(describe_layers(model) == "18 sliding(128) + 18 full");
  const Row row = row_at(model, 131'072);
  CHECK(row.kv_bytes_per_token == 73'728);
  // 18 x 2,048 x 131,072 + 18 x 2,048 x 128 = 4,831,838,208 + 4,718,592
  CHECK(row.kv_bytes == 4'836'556'800);
  CHECK(model.weight_dtype->name == "mxfp4");
}

TEST_CASE("DeepSeek-V3: MLA caches 576 values per token per layer") {
  const ModelSpec model = fixture("deepseek-v3");
  CHECK(describe_layers(model) == "61 mla");
  // (kv_lora_rank 512 + qk_rope_head_dim 64) x 61 layers x 2 B = 70,272 B; the naive
  // 2 x 61 x 128 x 56... formula would give 1,748,992 B (25x).
  CHECK(row_at(model, 1).kv_bytes_per_token == 70'272);
  CHECK(row_at(model, 1, "fp8").kv_bytes_per_token == 35'136);
  CHECK(row_at(model, 32'768).kv_bytes == 70'272ull * 32'768);
  CHECK(model.mtp_layers == 1);  // not cached by default
  CHECK(model.weight_dtype->name == "fp8");
  // Its MTP layer (model.layers.61.*), priced beside the weights: 13,463,426,304 parameters
  // (param_count_test), of them the embedding and head copies (2 x 129,280 x 7,168), eh_proj
  // (2 x 7,168^2), the router (256 x 7,168) and the vectors (the layer's 16,640, enorm, hnorm and
  // shared_head.norm 3 x 7,168) in bf16 but its 256 e_score_correction_bias in fp32, as the
  // checkpoint's tensor listing shows them: 1,957,991,680 x 2 B + 256 x 2 B; the other
  // 11,505,434,624 in fp8 with an fp32 scale per 128x128 block of each matrix: 702,236 blocks
  // of values, and 28 more for the 576 x 7,168 kv_a_proj_with_mqa (5 x 56 blocks, not 4.5 x 56).
  // 3,915,983,360 + 512 + 11,505,434,624 + 702,264 x 4 = 15,424,227,552.
  REQUIRE(model.mtp_weights_bytes.has_value());
  CHECK(*model.mtp_weights_bytes == 15'424'227'552);
  CHECK(model.mtp_replicated_bytes == 205'520'896);  // eh_proj, (7,168, 14,336) in bf16 as listed
  CHECK(mtp_weights_per_rank(model, 8) == 1'902'338'332 + 205'520'896);  // (15,424,227,552 - 205,520,896) / 8
  // Without it: 671,026,419,200 parameters, the embedding and head (2 x 129,280 x 7,168), the 58
  // MoE layers' routers (58 x 256 x 7,168) and the vectors (58 MoE layers x 16,640 and 3 dense x
  // 16,384: two norms of 7,168, q_a_layernorm 1,536, kv_a_layernorm 512, and the MoE layers'
  // 256-wide e_score_correction_bias, in fp32; the final norm 7,168) in bf16, 1,960,809,984 x 2 B
  // + 58 x 256 x 2 B; the other 669,065,609,216 in fp8 with 40,836,524 + 61 x 28 fp32 block scales:
  // 3,921,619,968 + 29,696 + 669,065,609,216 + 40,838,232 x 4.
  CHECK(model.weights_bytes == 673'150'611'808);
  // Together, to the byte, what the checkpoint's tensor listing totals (docs/engines/sglang.md).
  CHECK(*model.weights_bytes + *model.mtp_weights_bytes == 688'574'839'360);
  // DeepSeek-V3.2's MTP layer is the same with an indexer of its own (DeepseekV32MTP): wq_b
  // 1,536 x 64 x 128 + wk 7,168 x 128 + weights_proj 7,168 x 64 + k_norm 2 x 128 = 13,959,424
  // parameters more: wq_b and wk, 13,500,416, in fp8 with 824 more block scales of 4 B, and
  // weights_proj and k_norm, 459,008, in bf16 (DeepSeek builds weights_proj in the model dtype):
  // 13,500,416 + 3,296 + 918,016 = 14,421,728 B.
  CHECK(*fixture("deepseek-v3.2").mtp_weights_bytes == 15'424'227'552 + 14'421'728);
}

TEST_CASE("Qwen3-Next: 3 linear : 1 full, the state independent of ctx") {
  // full_attention_interval 4: layers 3, 7, ..., 47 are full (12), 36 Gated DeltaNet layers.
  const ModelSpec model = fixture("qwen3-next-80b-a3b");
  CHECK(describe_layers(model) == "36 linear + 12 full");
  // Full layers: 12 x 2 x 2 KV heads x 256 x 2 B = 24,576 B per token.
  // Linear state per layer: conv (4 - 1) x (2 x 16 x 128 + 32 x 128) = 24,576 values, recurrent
  // 32 x 128 x 128 = 524,288 values, both bf16 (no mamba_ssm_dtype in this config):
  // 36 x (24,576 + 524,288) x 2 B = 39,518,208 B per sequence.
  const Row short_row = row_at(model, 4'096);
  const Row long_row = row_at(model, 131'072);
  CHECK(short_row.kv_bytes_per_token == 24'576);
  CHECK(short_row.state_bytes == 39'518'208);
  CHECK(long_row.state_bytes == 39'518'208);
  CHECK(long_row.kv_bytes == 24'576ull * 131'072 + 39'518'208);
  CHECK(row_at(model, 4'096, "fp16", 4).state_bytes == 4 * 39'518'208);  // per sequence
}

TEST_CASE("Llama 4 Scout: chunked 8192 on 3 of 4 layers") {
  // no_rope_layer_interval 4 (default): layers 3, 7, ..., 47 are global NoPE layers (12); the
  // other 36 use chunked attention over 8,192 tokens. 2 x 8 x 128 x 2 = 4,096 B per layer per token.
  const ModelSpec model = fixture("llama4-scout");
  CHECK(describe_layers(model) == "36 chunked(8192) + 12 full");
  const Row row = row_at(model, 131'072);
  // 12 x 4,096 x 131,072 + 36 x 4,096 x 8,192 = 6,442,450,944 + 1,207,959,552
  CHECK(row.kv_bytes == 7'650'410'496);
}

TEST_CASE("Nemotron-H 8B: Mamba2 hybrid from hybrid_override_pattern") {
  // 52 characters: 4 '*' attention, 24 'M' Mamba2, 24 '-' MLP layers. The trimmed fixture lacks
  // the MLP and vocabulary sizes the parameter count needs; an exact size stands in for them.
  const ModelSpec model = model_spec_from_hf_config(fixture_json("nemotron-h-8b"), "nemotron-h-8b", 16 * GiB);
  CHECK(describe_layers(model) == "24 linear + 24 none + 4 full");
  // Attention: 4 x 2 x 8 x 128 x 2 = 16,384 B per token.
  // Mamba2 per layer: conv (4 - 1) x (128 x 64 + 2 x 8 x 128) = 30,720 bf16 values = 61,440 B;
  // ssm 128 heads x 64 x 128 = 1,048,576 values in float32 (vLLM's NemotronH default) = 4,194,304 B.
  // 24 x (61,440 + 4,194,304) = 102,137,856 B per sequence.
  const Row row = row_at(model, 8'192);
  CHECK(row.kv_bytes_per_token == 16'384);
  CHECK(row.state_bytes == 102'137'856);
}

TEST_CASE("Jamba: attention every 8th layer from offset 4, Mamba elsewhere") {
  // 32 layers: attention at 4, 12, 20, 28. Mamba d_inner = 2 x 4,096 = 8,192:
  // conv 3 x 8,192 = 24,576 values, ssm 8,192 x 16 = 131,072 values, bf16: 311,296 B per layer.
  // The parameter counter does not know Jamba; with the checkpoint size given the cache is still sized.
  const ModelSpec model = model_spec_from_hf_config(fixture_json("jamba-v0.1"), "jamba", 100 * GiB);
  CHECK(describe_layers(model) == "28 linear + 4 full");
  const Row row = row_at(model, 1'024);
  CHECK(row.kv_bytes_per_token == 4 * 2 * 8 * 128 * 2);  // 16,384
  CHECK(row.state_bytes == 28ull * 311'296);
}

TEST_CASE("Falcon-H1: attention and Mamba2 state in every layer") {
  // 36 layers, each: KV 2 x 2 x 64 x 2 = 512 B per token, plus Mamba2 state: d_inner =
  // 24 heads x 64 = 1,536; conv 3 x (1,536 + 2 x 1 x 128) = 5,376 values, ssm 24 x 64 x 128 =
  // 196,608 values, bf16: 403,968 B per layer.
  const ModelSpec model = model_spec_from_hf_config(fixture_json("falcon-h1-0.5b"), "falcon-h1", GiB);
  CHECK(describe_layers(model) == "36 full");
  const Row row = row_at(model, 4'096);
  CHECK(row.kv_bytes_per_token == 36 * 512);
  CHECK(row.state_bytes == 36ull * 403'968);
}

TEST_CASE("sliding-window spellings: Mistral v0.1, Gemma 2, Qwen2 use_sliding_window") {
  CHECK(describe_layers(fixture("mistral-7b-v0.1")) == "32 sliding(4096)");
  CHECK(describe_layers(fixture("mistral-7b-v0.3")) == "32 full");          // sliding_window null
  CHECK(describe_layers(fixture("gemma2-9b")) == "21 sliding(4096) + 21 full");
  CHECK(describe_layers(fixture("qwen2.5-7b")) == "28 full");               // use_sliding_window false
  CHECK(describe_layers(fixture("phi3-mini")) == "32 sliding(2047)");

  nlohmann::json qwen = small_llama();
  qwen["model_type"] = "qwen2";
  qwen["use_sliding_window"] = true;
  qwen["sliding_window"] = 4096;
  qwen["max_window_layers"] = 2;  // layers >= 2 slide
  CHECK(describe_layers(inline_config(qwen)) == "2 full + 2 sliding(4096)");
}

TEST_CASE("field variants: absent KV heads, null head_dim, text_config, dtype") {
  nlohmann::json config = small_llama();
  config.erase("num_key_value_heads");
  config["head_dim"] = nullptr;
  const ModelSpec mha = inline_config(config);
  CHECK(mha.layers[0].kv_heads == 8);     // absent = attention heads
  CHECK(mha.layers[0].k_head_dim == 32);  // null = 256 / 8

  nlohmann::json wrapped = {{"model_type", "mistral3"}, {"torch_dtype", "float16"}, {"text_config", small_llama()}};
  wrapped["text_config"].erase("torch_dtype");
  const ModelSpec nested = inline_config(wrapped);
  CHECK(nested.layers.size() == 4);
  CHECK(nested.weight_dtype->name == "fp16");  // from the top level

  nlohmann::json newer = small_llama();
  newer.erase("torch_dtype");
  newer["dtype"] = "float32";
  CHECK(inline_config(newer).weight_dtype->name == "fp32");

  nlohmann::json per_layer = small_llama();
  per_layer["num_key_value_heads"] = {1, 2, 4, 8};
  // The parameter counter takes one KV-head count for all layers, so the size comes from an index.
  const Row row = row_at(model_spec_from_hf_config(per_layer, "inline/config.json", 1'000'000), 1);
  CHECK(row.kv_bytes_per_token == 2ull * (1 + 2 + 4 + 8) * 32 * 2);  // 1,920
}

TEST_CASE("quantization_config sizes the weights when no index does") {
  nlohmann::json config = small_llama();
  config["quantization_config"] = {{"quant_method", "awq"}, {"bits", 4}, {"group_size", 128}};
  const ModelSpec awq = inline_config(config);
  CHECK(awq.weight_dtype->name == "int4");
  CHECK_THAT(awq.weights_source, Catch::Contains("awq"));

  // A format kvplan does not price keeps the model's cache and leaves the weights to the user:
  // the count is kept in words, sizing them is exit 3 naming --weights, and an index's total_size
  // does not stand in (what the files hold is not what an engine makes of them: vLLM expands
  // bitsandbytes' double-quantized scales on load).
  config["quantization_config"] = {{"quant_method", "bitsandbytes"}, {"load_in_4bit", true}};
  CHECK(code_of(config) == ExitCode::unsupported_architecture);
  const ModelSpec bnb = inline_config(config);
  CHECK(bnb.params == 0);
  ModelSpec given = bnb;  // as --weights 1GB gives them
  given.weights_bytes = 1'000'000'000;
  CHECK(row_at(given, 1).kv_bytes_per_token == 2 * 4 * 2 * 32 * 2);  // K and V x layers x KV heads x head_dim x 2 B
  CHECK_THAT(bnb.params_source, Catch::Contains("0.00B params counted") && Catch::Contains("quant_method = bitsandbytes"));
  CHECK_THROWS_WITH(estimate_weights(bnb, nullptr), Catch::Contains("give their size (--weights SIZE"));
  const ModelSpec indexed = model_spec_from_hf_config(config, "inline/config.json", 1'000'000);
  CHECK(indexed.params == 0);
  CHECK_FALSE(indexed.weights_bytes);
}

TEST_CASE("what kvplan does not understand is exit code 3, naming the field") {
  nlohmann::json config = small_llama();
  config["layer_types"] = {"full_attention", "hyena", "full_attention", "full_attention"};
  CHECK_THROWS_WITH(inline_config(config),
                    "unsupported architecture: inline/config.json: layer_types[1] = hyena");
  CHECK(code_of(config) == ExitCode::unsupported_architecture);

  nlohmann::json unknown = small_llama();
  unknown["model_type"] = "futurenet";
  unknown["kv_sharing_stride"] = 2;
  CHECK_THROWS_WITH(inline_config(unknown), "unsupported architecture: inline/config.json: kv_sharing_stride = 2");

  // An unknown type with only the standard fields: the cache is understood, the weights cannot be
  // counted without knowing its MLP. It loads with its parameters unknown, and pricing its weights
  // is exit code 3 naming the ways forward (the index, --weights, --params).
  nlohmann::json plain = small_llama();
  plain["model_type"] = "futurenet";
  const ModelSpec uncounted = inline_config(plain);
  CHECK(uncounted.params == 0);
  CHECK_THAT(uncounted.params_source, Catch::Contains("model_type = futurenet"));
  try {
    estimate_weights(uncounted, nullptr);
    FAIL("weights of an uncounted model were priced");
  } catch (const Error& error) {
    CHECK(error.code() == ExitCode::unsupported_architecture);
    CHECK_THAT(error.what(), Catch::Contains("--weights SIZE") && Catch::Contains("--params N") &&
                                 Catch::Contains("model.safetensors.index.json"));
  }
  CHECK(describe_layers(model_spec_from_hf_config(plain, "futurenet", 1'000'000)) == "4 full");
}

TEST_CASE("malformed configs are exit code 2 with the field named") {
  nlohmann::json config = small_llama();
  config.erase("num_hidden_layers");
  CHECK_THROWS_WITH(inline_config(config), "inline/config.json: field 'num_hidden_layers': is missing");
  config = small_llama();
  config["num_attention_heads"] = -8;
  CHECK(code_of(config) == ExitCode::invalid_input);
  config = small_llama();
  config["num_key_value_heads"] = 3;
  CHECK_THROWS_WITH(inline_config(config), Catch::Contains("not divisible by kv_heads (3)"));
}

TEST_CASE("the CLI reads a config.json and a model folder") {
  const std::string folder = source_path("tests/fixtures/hf/qwen3-8b");
  const auto by_folder = kvplan::testing::run_kvplan("--model " + folder + " --ctx 100000 --gpu 24GiB --kv-dtype fp16 --format json");
  REQUIRE(by_folder.exit_code == 0);
  const nlohmann::json row = nlohmann::json::parse(by_folder.out)["rows"][0];
  CHECK(row["kv_bytes"] == 14'745'600'000ull);
  CHECK(row["weights_bytes"] == 16'381'470'720ull);  // the index beside it
  const auto by_file = kvplan::testing::run_kvplan("--model " + folder + "/config.json --ctx 100000 --gpu 24GiB --kv-dtype fp16 --format json");
  CHECK(by_file.out == by_folder.out);
}

// ---- The 2026 generation: each new field spelling, from a real fixture where one exists, else
// inline. Per layer per token: 2 (K, V) x kv heads x head_dim x 2 B at fp16. ----

namespace {

/// Bytes one sequence adds per token once every window is full, and what it holds whatever the
/// context (sliding windows full, recurrent state), at `dtype`.
struct GrowthAndFixed {
  std::uint64_t growth = 0;
  std::uint64_t fixed = 0;
};
GrowthAndFixed growth_and_fixed(const ModelSpec& model, std::string_view dtype = "fp16") {
  const std::uint64_t far = 1ull << 22;  // past every window in the catalog
  const Row at = row_at(model, far, dtype);
  const Row next = row_at(model, far + 1, dtype);
  return {next.kv_bytes - at.kv_bytes, at.kv_bytes - (next.kv_bytes - at.kv_bytes) * far};
}

}  // namespace

TEST_CASE("Gemma 4: global_head_dim, num_global_key_value_heads with attention_k_eq_v, KV-shared layers") {
  // 26B-A4B: 25 sliding x 2 x 8 x 256 x 2 B = 8,192 B per layer per token, window 1,024;
  // 5 global x 2 x 2 (num_global_key_value_heads, K=V) x 512 (global_head_dim) x 2 B = 4,096 B,
  // the V copy still stored. Growth 5 x 4,096 = 20,480 B; fixed 25 x 8,192 x 1,024 = 209,715,200 B.
  const ModelSpec moe = fixture("gemma4-26b-a4b");
  CHECK(describe_layers(moe) == "25 sliding(1024) + 5 full");
  CHECK(moe.layers[5].kv_heads == 2);
  CHECK(moe.layers[5].k_head_dim == 512);
  CHECK(moe.layers[5].v_head_dim == 512);
  CHECK(growth_and_fixed(moe).growth == 20'480);
  CHECK(growth_and_fixed(moe).fixed == 209'715'200);

  // E2B: attention_k_eq_v false, so the global layers keep num_key_value_heads (1) at 512 wide;
  // the last 20 of 35 layers (num_kv_shared_layers) read layers 13 (sliding) and 14 (full).
  // Own caches: 3 global x 2 x 1 x 512 x 2 B = 6,144 B per token; 12 sliding x 2 x 1 x 256 x 2 B
  // x 512 tokens = 6,291,456 B.
  const ModelSpec e2b = fixture("gemma4-e2b");
  CHECK(describe_layers(e2b) == "12 sliding(512) + 3 full + 20 shared");
  CHECK(e2b.layers[4].kv_heads == 1);
  CHECK(e2b.layers[4].k_head_dim == 512);
  CHECK(growth_and_fixed(e2b).growth == 6'144);
  CHECK(growth_and_fixed(e2b).fixed == 6'291'456);
  const Row row = row_at(e2b, 131'072);
  CHECK(row.breakdown.back().kind == LayerKind::shared);
  CHECK(row.breakdown.back().layers == 20);
  CHECK(row.breakdown.back().bytes == 0);

  // A shared layer needs an earlier layer of its own type to read.
  nlohmann::json config = fixture_json("gemma4-e2b");
  config["text_config"]["num_kv_shared_layers"] = 31;  // only layers 0..3 own a cache: all sliding
  CHECK_THROWS_WITH(inline_config(config), Catch::Contains("num_kv_shared_layers") && Catch::Contains("no earlier full"));
}

TEST_CASE("Gemma 3n: num_kv_shared_layers") {
  // 30 layers, the last 10 shared: 4 full + 16 sliding own a cache, 2 x 2 x 256 x 2 B = 2,048 B each.
  const ModelSpec model = fixture("gemma3n-e2b");
  CHECK(describe_layers(model) == "16 sliding(512) + 4 full + 10 shared");
  CHECK(growth_and_fixed(model).growth == 4 * 2'048);                  // 8,192
  CHECK(growth_and_fixed(model).fixed == 16ull * 2'048 * 512);         // 16,777,216
}

TEST_CASE("MiMo-V2: hybrid_layer_pattern, swa_* shapes and V narrower than K") {
  // pattern 0 = full (9 layers): 4 kv x (192 K + 128 V) x 2 B = 2,560 B per token;
  // 1 = sliding (39): swa_num_key_value_heads 8 x (swa_head_dim 192 + swa_v_head_dim 128) x 2 B =
  // 5,120 B, window 128. Growth 9 x 2,560 = 23,040 B; fixed 39 x 5,120 x 128 = 25,559,040 B.
  for (const char* id : {"mimo-v2-flash", "mimo-v2.5"}) {
    INFO(id);
    const ModelSpec model = fixture(id);
    CHECK(describe_layers(model) == "9 full + 39 sliding(128)");
    CHECK(model.layers[0].v_head_dim == 128);
    CHECK(model.layers[1].kv_heads == 8);
    CHECK(growth_and_fixed(model).growth == 23'040);
    CHECK(growth_and_fixed(model).fixed == 25'559'040);
    // fp8: half of both.
    CHECK(growth_and_fixed(model, "fp8").growth == 11'520);
  }
  CHECK(fixture("mimo-v2-flash").weight_dtype->name == "fp8");  // quantization_config, 128x128 blocks
}

TEST_CASE("DSA indexer: index_head_dim beside the MLA latent, indexer_types, GlmMoeDsaConfig defaults") {
  // DeepSeek-V3.2: 61 layers x ((512 + 64) latent + 128 indexer key) x 2 B = 85,888 B per token;
  // at fp8 both halve: 42,944 B.
  const ModelSpec v32 = fixture("deepseek-v3.2");
  CHECK(describe_layers(v32) == "61 mla+indexer(128)");
  CHECK(row_at(v32, 1).kv_bytes_per_token == 85'888);
  CHECK(row_at(v32, 1, "fp8").kv_bytes_per_token == 42'944);
  const Row row = row_at(v32, 1'000);
  CHECK(row.breakdown[0].indexer_layers == 61);
  CHECK(row.breakdown[0].indexer_bytes == 61ull * 256 * 1'000);
  CHECK(v32.mtp_layers == 1);

  // GLM-5.2: indexer_types gives 21 "full" layers (own indexer) and 57 "shared":
  // 78 x 576 x 2 B + 21 x 128 x 2 B = 89,856 + 5,376 = 95,232 B per token.
  const ModelSpec glm52 = fixture("glm-5.2");
  CHECK(describe_layers(glm52) == "21 mla+indexer(128) + 57 mla");
  CHECK(row_at(glm52, 1).kv_bytes_per_token == 95'232);
  // GLM-5.1 has head_dim 64 beside qk_head_dim 256: neither sizes the MLA cache.
  // 78 x (576 + 128) x 2 B = 109,824 B.
  CHECK(row_at(fixture("glm-5.1"), 1).kv_bytes_per_token == 109'824);
  // The trimmed GLM-5 copy has no index_* fields: GlmMoeDsaConfig defaults (128 wide, every layer).
  CHECK(row_at(fixture("glm-5"), 1).kv_bytes_per_token == 109'824);

  // indexer_types must agree with index_topk_freq / index_skip_topk_offset when both are given.
  nlohmann::json config = fixture_json("glm-5.2");
  config["indexer_types"][3] = "full";
  CHECK_THROWS_WITH(inline_config(config), Catch::Contains("field 'indexer_types': layer 3 is 'full'"));
  CHECK(code_of(config) == ExitCode::invalid_input);
  config = fixture_json("glm-5.2");
  config["indexer_types"][3] = "compressed";
  CHECK(code_of(config) == ExitCode::unsupported_architecture);
}

TEST_CASE("Qwen3.5: layer_types and full_attention_interval must agree, mamba_ssm_dtype sets the recurrent state") {
  // 48 Gated DeltaNet layers: conv 3 x (2 x 16 x 128 + 48 x 128) = 30,720 bf16 values = 61,440 B;
  // recurrent 48 x 128 x 128 = 786,432 values in float32 (mamba_ssm_dtype) = 3,145,728 B.
  // 48 x 3,207,168 = 153,944,064 B per sequence; growth 16 x 2 x 4 x 256 x 2 B = 65,536 B.
  const ModelSpec model = fixture("qwen3.6-27b");
  CHECK(describe_layers(model) == "48 linear + 16 full");
  CHECK(model.layers[0].state[1].dtype->name == "fp32");
  CHECK(growth_and_fixed(model).growth == 65'536);
  CHECK(growth_and_fixed(model).fixed == 153'944'064);
  CHECK(growth_and_fixed(model, "fp8").fixed == 153'944'064);  // the state keeps its own dtype
  // The trimmed Qwen3.5-27B copy lacks mamba_ssm_dtype: vLLM then keeps the model dtype (bf16):
  // 48 x (61,440 + 1,572,864) = 78,446,592 B. The catalog uses the copy with it restored.
  CHECK(growth_and_fixed(fixture("qwen3.5-27b")).fixed == 78'446'592);
  CHECK(growth_and_fixed(fixture("qwen3.5-27b-full")).fixed == 153'944'064);
  CHECK(fixture("qwen3.5-27b-full").mtp_layers == 1);  // mtp_num_hidden_layers

  nlohmann::json config = fixture_json("qwen3.6-27b");
  config["text_config"]["full_attention_interval"] = 3;
  CHECK_THROWS_WITH(inline_config(config),
                    Catch::Contains("field 'full_attention_interval': 3 disagrees with layer_types at layer 2"));
}

TEST_CASE("Kimi Linear and Kimi K3: linear_attn_config counts layers from 1, KDA state") {
  // full_attn_layers [4, 8, ..., 24, 27] (1-based) are MLA: 7 x 576 x 2 B = 8,064 B per token.
  // 20 KDA layers: conv 3 x 3 x 32 x 128 = 36,864 bf16 values = 73,728 B; recurrent
  // 32 x 128 x 128 float32 = 2,097,152 B; 20 x 2,170,880 = 43,417,600 B.
  const ModelSpec model = fixture("kimi-linear-48b-a3b");
  CHECK(describe_layers(model) == "20 linear + 7 mla");
  CHECK(model.layers[3].kind == LayerKind::mla);   // layer "4"
  CHECK(model.layers[26].kind == LayerKind::mla);  // layer "27"
  CHECK(growth_and_fixed(model).growth == 8'064);
  CHECK(growth_and_fixed(model).fixed == 43'417'600);

  // Kimi K3 (24 MLA + 69 KDA of 96 x 128): 24 x 1,152 = 27,648 B per token;
  // 69 x (3 x 3 x 96 x 128 x 2 B + 96 x 128 x 128 x 4 B) = 449,372,160 B. Its MXFP4 routed experts
  // (compressed-tensors) make the weights 2,722.74B x 17/32 B + 56.74B x 2 B.
  const ModelSpec k3 = fixture("kimi-k3");
  CHECK(growth_and_fixed(k3).growth == 27'648);
  CHECK(growth_and_fixed(k3).fixed == 449'372'160);
  CHECK(k3.weight_dtype->name == "mxfp4");
  CHECK(k3.weights_bytes == 1'559'943'357'632ull);
  nlohmann::json int_experts = fixture_json("kimi-k3");
  int_experts["text_config"]["quantization_config"]["config_groups"]["group_0"]["weights"]["group_size"] = 16;
  CHECK(code_of(int_experts) == ExitCode::unsupported_architecture);  // not MXFP4's 32

  nlohmann::json config = fixture_json("kimi-linear-48b-a3b");
  config["linear_attn_config"]["kda_layers"].push_back(4);
  CHECK_THROWS_WITH(inline_config(config), Catch::Contains("layer 4 (1-based) is in both"));
  config = fixture_json("kimi-linear-48b-a3b");
  config["linear_attn_config"]["num_k_heads"] = 16;
  CHECK_THROWS_WITH(inline_config(config), Catch::Contains("linear_attn_config.num_k_heads = 16"));
}

TEST_CASE("LFM2: layer_types conv and full_attn_idxs, the short-conv state") {
  // LFM2-8B-A1B: 6 attention x 2 x 8 x 64 (2048 / 32) x 2 B = 12,288 B per token; 18 conv layers
  // x (conv_L_cache 3 - 1) x 2,048 x 2 B = 147,456 B per sequence.
  const ModelSpec moe = fixture("lfm2-8b-a1b");
  CHECK(describe_layers(moe) == "18 linear + 6 full");
  CHECK(growth_and_fixed(moe).growth == 12'288);
  CHECK(growth_and_fixed(moe).fixed == 147'456);
  // LFM2-350M lists its attention layers in full_attn_idxs [2, 5, 8, 10, 12, 14]:
  // 6 x 2 x 8 x 64 x 2 B = 12,288 B; 10 conv x 2 x 1,024 x 2 B = 40,960 B.
  const ModelSpec small = fixture("lfm2-350m");
  CHECK(small.layers[2].kind == LayerKind::full);
  CHECK(small.layers[3].kind == LayerKind::linear);
  CHECK(growth_and_fixed(small).growth == 12'288);
  CHECK(growth_and_fixed(small).fixed == 40'960);
}

TEST_CASE("attn_type_list: MiniMax-M2.7 is all softmax, 0 entries are lightning-attention state") {
  // M2.7: 62 x 2 x 8 x 128 x 2 B = 253,952 B per token; 3 MTP modules of 1 layer each.
  const ModelSpec m27 = fixture("minimax-m2.7");
  CHECK(describe_layers(m27) == "62 full");
  CHECK(row_at(m27, 1).kv_bytes_per_token == 253'952);
  CHECK(m27.mtp_layers == 3);

  // A MiniMax-Text-01-like layout: layer 1 lightning, its state 8 heads x 32 x 32 at the model
  // dtype (vLLM linear_attention_state_shape) = 8,192 values x 2 B = 16,384 B per sequence.
  nlohmann::json config = small_llama();
  config["model_type"] = "minimax";
  config["attn_type_list"] = {1, 0, 1, 1};
  const ModelSpec lightning = model_spec_from_hf_config(config, "inline/config.json", 1'000'000);
  CHECK(describe_layers(lightning) == "3 full + 1 linear");
  CHECK(row_at(lightning, 1'000).state_bytes == 16'384);
  config["attn_type_list"] = {1, 2, 1, 1};
  CHECK(code_of(config) == ExitCode::unsupported_architecture);
}

TEST_CASE("Mamba2 layouts: hybrid_override_pattern with E, layers_block_type, Granite 4 layer_types") {
  // Nemotron 3 Nano: 'E' (MoE) blocks keep no cache. 6 '*' x 2 x 2 x 128 x 2 B = 6,144 B per token;
  // 23 'M' x (conv 3 x (64 x 64 + 2 x 8 x 128) x 2 B + ssm 64 x 64 x 128 x 4 B (float32,
  // mamba_ssm_cache_dtype)) = 23 x (36,864 + 2,097,152) = 49,082,368 B.
  const ModelSpec nano = fixture("nemotron3-nano");
  CHECK(growth_and_fixed(nano).growth == 6'144);
  CHECK(growth_and_fixed(nano).fixed == 49'082'368);

  // Nemotron 3 Ultra spells the layout as layers_block_type (mamba, moe, attention, mlp).
  nlohmann::json ultra = fixture_json("nemotron3-nano");
  const std::string pattern = ultra["hybrid_override_pattern"];
  ultra.erase("hybrid_override_pattern");
  nlohmann::json blocks = nlohmann::json::array();
  for (const char c : pattern) blocks.push_back(c == 'M' ? "mamba" : c == 'E' ? "moe" : c == '*' ? "attention" : "mlp");
  ultra["layers_block_type"] = blocks;
  const ModelSpec from_blocks = inline_config(ultra);
  CHECK(describe_layers(from_blocks) == describe_layers(nano));
  CHECK(growth_and_fixed(from_blocks).fixed == 49'082'368);

  // Granite 4.0-H: layer_types mamba / attention, mamba_* spellings, NoPE attention. 2 attention
  // x 2 x 2 x 32 x 2 B = 512 B per token; 2 Mamba2 layers x (conv 3 x (4 x 64 + 2 x 1 x 16) x 2 B
  // + ssm 4 x 64 x 16 x 2 B (no ssm dtype given: the model's bf16)) = 2 x (1,728 + 8,192) = 19,840 B.
  nlohmann::json granite = small_llama();
  granite["model_type"] = "granitemoehybrid";
  granite["layer_types"] = {"mamba", "attention", "mamba", "attention"};
  granite["mamba_n_heads"] = 4;
  granite["mamba_d_head"] = 64;
  granite["mamba_n_groups"] = 1;
  granite["mamba_d_state"] = 16;
  granite["mamba_d_conv"] = 4;
  granite["mamba_expand"] = 1;
  granite["position_embedding_type"] = "nope";
  const ModelSpec hybrid = model_spec_from_hf_config(granite, "inline/config.json", 1'000'000);
  CHECK(describe_layers(hybrid) == "2 linear + 2 full");
  CHECK(growth_and_fixed(hybrid).growth == 512);
  CHECK(growth_and_fixed(hybrid).fixed == 19'840);
}

TEST_CASE("Nemotron 3 Ultra: 108 blocks from layers_block_type alone, its MTP module's attention block") {
  // 12 attention x 2 x 2 x 128 x 2 B = 12,288 B per token; 48 Mamba2 x (conv 3 x (256 x 64 +
  // 2 x 8 x 128) x 2 B + ssm 256 x 64 x 128 x 4 B) = 48 x (110,592 + 8,388,608) = 407,961,600 B.
  const ModelSpec ultra = fixture("nemotron3-ultra");
  CHECK(ultra.layers.size() == 108);
  CHECK(describe_layers(ultra) == "48 linear + 48 none + 12 full");
  CHECK(ultra.layers[7].kind == LayerKind::full);
  CHECK(growth_and_fixed(ultra).growth == 12'288);
  CHECK(growth_and_fixed(ultra).fixed == 407'961'600);
  // One MTP module of ["attention", "moe"]: one cached attention layer for --mtp-layers.
  CHECK(ultra.mtp_layers == 1);
  nlohmann::json config = fixture_json("nemotron3-ultra");
  config["num_nextn_predict_layers"] = 2;
  config["mtp_layers_block_type"] = {"attention", "moe", "attention"};
  CHECK(inline_config(config).mtp_layers == 4);
  config["mtp_layers_block_type"] = {"mamba", "moe"};
  CHECK_THROWS_WITH(inline_config(config), Catch::Contains("mtp_layers_block_type[0] = mamba"));
  config.erase("mtp_layers_block_type");
  config["mtp_hybrid_override_pattern"] = "*E";  // Nemotron 3 Super's spelling
  CHECK(inline_config(config).mtp_layers == 2);
  config["layers_block_type"] = nlohmann::json::array();
  CHECK_THROWS_WITH(inline_config(config), Catch::Contains("layers_block_type': must be at least 1"));
}

TEST_CASE("Granite 4.0-H-Small: 4 NoPE attention layers among 36 Mamba2 layers") {
  // 4 x 2 x 8 x 128 x 2 B = 16,384 B per token; 36 x (conv 3 x (8192 + 2 x 128) x 2 B + ssm
  // 128 x 64 x 128 x 2 B (no mamba_ssm_cache_dtype: bf16)) = 36 x (50,688 + 2,097,152) = 77,322,240 B.
  const ModelSpec small = fixture("granite-4.0-h-small");
  CHECK(describe_layers(small) == "36 linear + 4 full");
  CHECK(growth_and_fixed(small).growth == 16'384);
  CHECK(growth_and_fixed(small).fixed == 77'322'240);
  CHECK(small.params == 32'207'337'984ull);
}

TEST_CASE("Step-3.5/3.7 layout: num_attention_groups, attention_other_setting, MTP entries in layer_types") {
  // The published Step-3.7-Flash config nests a step3p5 text_config: 64 query heads in 8 groups on
  // full layers, attention_other_setting (96 heads, 8 groups) on sliding ones, and 45 + 3
  // layer_types (the last 3 are the MTP layers). Miniature: 4 layers + 1 MTP.
  const nlohmann::json config = {
      {"model_type", "step3p7"},
      {"text_config",
       {{"model_type", "step3p5"}, {"num_hidden_layers", 4}, {"hidden_size", 256}, {"num_attention_heads", 8},
        {"num_attention_groups", 2}, {"head_dim", 32}, {"sliding_window", 16}, {"num_nextn_predict_layers", 1},
        {"layer_types", {"full_attention", "sliding_attention", "sliding_attention", "sliding_attention", "sliding_attention"}},
        {"attention_other_setting",
         {{"attention_type", "sliding_attention"}, {"num_attention_heads", 12}, {"num_attention_groups", 4},
          {"head_dim", 64}, {"true_head_dim", 64}}},
        {"vocab_size", 1000}, {"torch_dtype", "bfloat16"}}}};
  // Full: 2 x 2 x 32 x 2 B = 256 B per token. Sliding: 3 x 2 x 4 x 64 x 2 B = 3,072 B per token,
  // 16 tokens held: 49,152 B.
  const ModelSpec step = model_spec_from_hf_config(config, "inline/config.json", 1'000'000);
  CHECK(describe_layers(step) == "1 full + 3 sliding(16)");
  CHECK(step.mtp_layers == 1);
  CHECK(growth_and_fixed(step).growth == 256);
  CHECK(growth_and_fixed(step).fixed == 49'152);

  nlohmann::json other = config;
  other["text_config"]["attention_other_setting"]["attention_type"] = "chunked_attention";
  CHECK_THROWS_WITH(model_spec_from_hf_config(other, "inline/config.json", 1'000'000),
                    Catch::Contains("attention_other_setting.attention_type = chunked_attention"));
  other = config;
  other["text_config"]["attention_other_setting"]["true_head_dim"] = 96;
  CHECK_THROWS_WITH(model_spec_from_hf_config(other, "inline/config.json", 1'000'000),
                    Catch::Contains("attention_other_setting.true_head_dim = 96"));
  other = config;
  other["text_config"]["layer_types"].push_back("sliding_attention");  // 6 entries for 4 + 1 layers
  CHECK_THROWS_WITH(model_spec_from_hf_config(other, "inline/config.json", 1'000'000),
                    Catch::Contains("field 'layer_types': expected 4 layer type strings"));
}

TEST_CASE("MTP spellings: num_nextn_predict_layers, mtp_num_hidden_layers, num_mtp_modules") {
  CHECK(fixture("glm-5.2").mtp_layers == 1);          // num_nextn_predict_layers
  CHECK(fixture("qwen3.5-35b-a3b").mtp_layers == 1);  // mtp_num_hidden_layers
  CHECK(fixture("minimax-m2.7").mtp_layers == 3);     // num_mtp_modules 3 x mtp_transformer_layers 1
  nlohmann::json config = fixture_json("minimax-m2.7");
  config["use_mtp"] = false;
  CHECK(inline_config(config).mtp_layers == 0);
}

TEST_CASE("Qwen3.5: the MTP layer's weights, counted as the checkpoint's mtp.* tensors") {
  // Qwen3.5-35B-A3B (mtp_num_hidden_layers 1; H 2,048, 16 heads of 256 with the output gate, 2 KV
  // heads, 256 experts of 512, a shared expert of 512): one full-attention decoder layer
  //   q_proj 2,048 x 8,192 + k_proj, v_proj 2,048 x 512 each + o_proj 4,096 x 2,048 + q/k norms 512
  //   = 27,263,488; its two norms 4,096; experts 256 x 3 x 2,048 x 512 = 805,306,368, router
  //   2,048 x 256 = 524,288, shared expert 3 x 2,048 x 512 = 3,145,728 and its gate 2,048
  //   = 836,246,016
  // and fc 2 x 2,048 x 2,048 = 8,388,608 with three norms 6,144: 844,640,768 parameters, the 19
  // mtp.* tensors a Qwen3.5-MoE checkpoint stores, in bf16: 1,689,281,536 B. fc is whole on every
  // rank in SGLang (an nn.Linear): 16,777,216 B.
  const ModelSpec moe = fixture("qwen3.5-35b-a3b");
  REQUIRE(moe.mtp_weights_bytes.has_value());
  CHECK(*moe.mtp_weights_bytes == 2ULL * 844'640'768);
  CHECK(moe.mtp_replicated_bytes == 2ULL * 8'388'608);
  // Qwen3-Next-80B-A3B's config states no MTP layer (its checkpoint holds one, which the GGUF
  // llama.cpp converts leaves out): neither cached nor counted.
  const ModelSpec next = fixture("qwen3-next-80b-a3b");
  CHECK(next.mtp_layers == 0);
  CHECK_FALSE(next.mtp_weights_bytes.has_value());
  // Quantized, the MTP layer stays bf16 (the NVFP4 Qwen3.6-35B-A3B's mtp.* tensors are): the same.
  nlohmann::json fp8 = fixture_json("qwen3.5-35b-a3b");
  fp8["quantization_config"] = {{"quant_method", "fp8"}, {"weight_block_size", nlohmann::json::array({128u, 128u})}};
  CHECK(*inline_config(fp8).mtp_weights_bytes == 2ULL * 844'640'768);
}

TEST_CASE("2026 layouts kvplan cannot size stay exit 3, naming the field") {
  // DeepSeek-V4's compressed sparse attention and MiniMax-M3's sparse index caches: engine
  // layouts not verified.
  for (const auto& [id, field] : {std::pair{"deepseek-v4-flash", "compress_ratios"}, std::pair{"deepseek-v4-pro", "compress_ratios"},
                                  std::pair{"minimax-m3", "sparse_attention_config"}}) {
    INFO(id);
    try {
      model_spec_from_hf_config(fixture_json(id), id, 100 * GiB);
      FAIL("no error");
    } catch (const Error& error) {
      CHECK(error.code() == ExitCode::unsupported_architecture);
      CHECK_THAT(error.what(), Catch::Contains(field));
      // DeepSeek-V4's way forward: its GGUF file, which the llama.cpp profile sizes.
      if (std::string_view(field) == "compress_ratios") CHECK_THAT(error.what(), Catch::Contains("deepseek4 GGUF file"));
    }
  }
  nlohmann::json unknown_type = small_llama();
  unknown_type["layer_types"] = {"full_attention", "kda", "full_attention", "full_attention"};
  CHECK(code_of(unknown_type) == ExitCode::unsupported_architecture);
}

TEST_CASE("a layout stated twice must agree: layer_types + full_attn_idxs, pattern + layers_block_type") {
  nlohmann::json lfm2 = fixture_json("lfm2-8b-a1b");
  lfm2["full_attn_idxs"] = {2, 6, 10, 14, 18, 21};  // the full_attention entries of its layer_types
  CHECK(describe_layers(inline_config(lfm2)) == "18 linear + 6 full");
  lfm2["full_attn_idxs"] = {2, 6, 10, 14, 18, 22};
  CHECK_THROWS_WITH(inline_config(lfm2),
                    "inline/config.json: field 'full_attn_idxs': disagrees with the layout read first at layer 21 (full)");

  nlohmann::json nano = fixture_json("nemotron3-nano");
  nlohmann::json blocks = nlohmann::json::array();
  for (const char c : nano["hybrid_override_pattern"].get<std::string>())
    blocks.push_back(c == 'M' ? "mamba" : c == 'E' ? "moe" : "attention");
  nano["layers_block_type"] = blocks;
  CHECK(describe_layers(inline_config(nano)) == "23 linear + 23 none + 6 full");
  nano["layers_block_type"][0] = "attention";
  CHECK_THROWS_WITH(inline_config(nano), Catch::Contains("field 'layers_block_type': disagrees") && Catch::Contains("layer 0 (linear)"));
}

TEST_CASE("fp8 and GPTQ modules_to_not_convert lists are read name by name") {
  // Qwen3-30B-A3B-FP8's own list: lm_head, and each layer's router and two norms, which kvplan
  // keeps anyway: 31,174,545,408 B either way.
  nlohmann::json config = fixture_json("qwen3-30b-a3b-fp8");
  const ModelSpec own = inline_config(config);
  CHECK(*own.weights_bytes == 31'174'545'408ull);
  CHECK_THAT(own.weights_source, Catch::StartsWith("computed (fp8)"));
  // Layer 0's attention kept too: q 4,096 x 2,048, k and v 512 x 2,048, o 2,048 x 4,096 =
  // 18,874,368 values at 2 B instead of 1 B and their 512 + 64 + 64 + 512 block scales of 4 B.
  nlohmann::json& list = config["quantization_config"]["modules_to_not_convert"];
  list.push_back("model.layers.0.self_attn");
  CHECK(*inline_config(config).weights_bytes == 31'174'545'408ull + 18'874'368ull - 1'152 * 4);
  // A single expert's projection is nothing kvplan counts apart: every parameter at bf16, said so.
  list.push_back("model.layers.3.mlp.experts.7.down_proj");
  const ModelSpec bound = inline_config(config);
  CHECK(*bound.weights_bytes == bound.params * 2);
  CHECK_THAT(bound.weights_source, Catch::Contains("an upper bound") &&
                                       Catch::Contains("its modules_to_not_convert keeps 'model.layers.3.mlp.experts.7.down_proj'"));
  // MiniMax's bare names are the last part of a module's: "gate" its routers, kept anyway.
  const ModelSpec minimax = fixture("minimax-m2.7");
  CHECK_THAT(minimax.weights_source, Catch::StartsWith("computed (fp8)"));
  // A GPTQ list is read the same way: the head named, nothing changes; layer 0's attention kept
  // moves q and o 5,120 x 5,120, k and v 1,024 x 5,120 (62,914,560 values) from 4 bits, a 2 B scale
  // and a 4-bit zero per 128 inputs of a row (491,520 groups) and a 4 B g_idx per input column
  // (4 x 5,120) to fp16: 125,829,120 - 31,457,280 - 1,228,800 - 81,920 = 93,061,120 B more.
  nlohmann::json gptq = fixture_json("qwen1.5-32b-chat-gptq-int4");
  const std::uint64_t plain = *inline_config(gptq).weights_bytes;
  gptq["quantization_config"]["modules_to_not_convert"] = {"lm_head"};
  CHECK(*inline_config(gptq).weights_bytes == plain);
  gptq["quantization_config"]["modules_to_not_convert"] = {"lm_head", "model.layers.0.self_attn"};
  CHECK(*inline_config(gptq).weights_bytes == plain + 93'061'120);
  gptq["quantization_config"]["modules_to_not_convert"] = "lm_head";
  CHECK_THROWS_WITH(inline_config(gptq), Catch::Contains("field 'quantization_config.modules_to_not_convert': expected a list"));
}
