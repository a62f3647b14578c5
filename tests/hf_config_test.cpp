// Hugging Face config.json import: real configs (tests/fixtures/hf, sources in SOURCES.md) give the
// right layer layout and cache bytes, computed here by hand.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "kvplan/budget.h"
#include "kvplan/error.h"
#include "kvplan/hf_config.h"
#include "support/run_binary.h"

using namespace kvplan;
using kvplan::testing::source_path;

namespace {

ModelSpec fixture(const std::string& id) { return load_hf_model(source_path("tests/fixtures/hf/" + id)); }

nlohmann::json fixture_json(const std::string& id) {
  return nlohmann::json::parse(kvplan::testing::read_file(source_path("tests/fixtures/hf/" + id + "/config.json")));
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

ExitCode code_of(const nlohmann::json& config) {
  try {
    inline_config(config);
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

  config["quantization_config"] = {{"quant_method", "bitsandbytes"}};
  CHECK(code_of(config) == ExitCode::unsupported_architecture);
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
  // counted without knowing its MLP, so the exact size must come from the safetensors index.
  nlohmann::json plain = small_llama();
  plain["model_type"] = "futurenet";
  CHECK(code_of(plain) == ExitCode::unsupported_architecture);
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
