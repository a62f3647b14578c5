// A way forward when kvplan does not know (issue #12): weight formats by name, the Hugging Face
// cache on the machine, unified-memory Macs.

#include <chrono>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "engines/core/weight_formats.h"
#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "kvplan/model_loader.h"
#include "kvplan/plan.h"
#include "kvplan/units.h"
#include "loaders/hf_cache.h"
#include "loaders/hf_config.h"
#include "loaders/unified_memory.h"
#include "support/run_binary.h"
#include "support/temp_dir.h"

namespace {

using kvplan::GiB;
using kvplan::testing::run_kvplan;
using kvplan::testing::source_path;
namespace fs = std::filesystem;


kvplan::ModelSpec llama8b() { return kvplan::load_hf_model(source_path("tests/fixtures/hf/llama3.1-8b")); }

std::uint64_t priced(const kvplan::ModelSpec& model, std::string_view format) {
  return kvplan::estimate_weights(model, &kvplan::parse_requested_weight_dtype(format)).bytes;
}

// Llama 3.1 8B (config.json): hidden 4096, intermediate 14336, vocab 128256 (untied), 32 layers,
// 32 heads, 8 KV heads of 128. Per layer: q and o 4096 x 4096 = 16,777,216 values each, k and v
// 4096 x 1024 = 4,194,304, gate / up / down 4096 x 14336 = 58,720,256; two RMSNorms of 4096.
// Embedding and head 525,336,576 each; 8,030,261,248 parameters in all (the layout adds up exactly).
constexpr std::uint64_t kLinearValues = 32ull * (2 * 16'777'216 + 2 * 4'194'304 + 3 * 58'720'256);  // 6,979,321,856
constexpr std::uint64_t kNormValues = 32ull * 2 * 4096 + 4096;                                      // 266,240
constexpr std::uint64_t kEmbedding = 525'336'576;

}  // namespace

TEST_CASE("weight format q4_k_m: llama.cpp's mix over a dense decoder's tensors", "[weight-formats]") {
  const kvplan::ModelSpec model = llama8b();
  REQUIRE(kvplan::load_model("llama3.1:8b").weights_bytes.has_value());
  // q4_K is 144 B per 256 values, q6_K 210 B. use_more_bits(i, 32): i < 4, i >= 28, (i - 4) % 3 == 2:
  // 16 layers whose attn_v and ffn_down are q6_K. A q4_K layer: 2 x 16384 (norms) + q, o 9,437,184
  // each + k, v 2,359,296 each + gate, up, down 33,030,144 each = 122,716,160 B; a q6_K layer adds
  // attn_v 4,194,304 x (210 - 144) / 256 = 1,081,344 and ffn_down 58,720,256 x 66 / 256 = 15,138,816.
  // 32 x 122,716,160 + 16 x 16,220,160 = 4,186,439,680; token_embd q4_K 295,501,824, output q6_K
  // 430,940,160, output_norm 16,384: 4,912,898,048 B.
  CHECK(priced(model, "q4_k_m") == 4'912'898'048ull);
  CHECK(priced(model, "Q4_K_M") == 4'912'898'048ull);
  // The catalog entry carries the same widths (hidden_size, intermediate_size, tie_word_embeddings).
  CHECK(priced(kvplan::load_model("llama3.1-8b"), "q4_k_m") == 4'912'898'048ull);
  // The Ollama tag's blob is the same mix, tensor by tensor (the same rules, not a second copy).
  CHECK(*kvplan::load_model("llama3.1:8b").weights_bytes == 4'912'898'048ull);
  const kvplan::WeightsEstimate estimate = kvplan::estimate_weights(model, &kvplan::parse_requested_weight_dtype("q4_k_m"));
  // 291 tensors: token_embd, 9 per layer, output_norm, output. q6_K: 16 x 2 + output.
  CHECK(estimate.rule.find("GGUF q4_k_m: llama.cpp's quantizer mix (llama_tensor_get_type) over 291 tensors, "
                           "193 q4_K + 65 f32 + 33 q6_K") == 0);
  // q8_0 is exact: 34 B per 32 values for every matrix, 1-D tensors f32:
  // 8,029,995,008 / 32 x 34 = 8,531,869,696 + 266,240 x 4 = 8,532,934,656.
  CHECK(priced(model, "q8_0") == (kLinearValues + 2 * kEmbedding) / 32 * 34 + kNormValues * 4);
  CHECK(priced(model, "q8_0") == 8'532'934'656ull);
  // q6_k: every matrix q6_K (210 / 256): (6,979,321,856 + 2 x 525,336,576) / 256 x 210 + norms f32.
  CHECK(priced(model, "q6_k") == (kLinearValues + 2 * kEmbedding) / 256 * 210 + kNormValues * 4);
}

TEST_CASE("GGUF mixes that raise attention and ffn_down differently", "[weight-formats]") {
  const kvplan::ModelSpec model = llama8b();
  // q4_k_s: attn_v q5_K (176 B / 256) in layers 0-3, ffn_down q5_K in the first eighth (0-3).
  const std::uint64_t q4_all = (kLinearValues + kEmbedding) / 256 * 144 + kEmbedding / 256 * 210 + kNormValues * 4;
  CHECK(priced(model, "q4_k_s") == q4_all + 4 * (4'194'304 + 58'720'256) / 256 * (176 - 144));
  // q2_k: matrices q2_K (84 B / 256) but attn_v q4_K (n_gqa 4), ffn_down and attn_output q3_K (110 B),
  // token_embd q2_K, output q6_K.
  const std::uint64_t q2 = (32ull * (16'777'216 + 4'194'304 + 2 * 58'720'256) + kEmbedding) / 256 * 84 +
                           32ull * 4'194'304 / 256 * 144 + 32ull * (58'720'256 + 16'777'216) / 256 * 110 +
                           kEmbedding / 256 * 210 + kNormValues * 4;
  CHECK(priced(model, "q2_k") == q2);
  // iq4_xs: 136 B / 256; attn_v q5_K (n_gqa 4 >= 4); ffn_down q5_K in layers 0-3 (no imatrix: the larger).
  const std::uint64_t iq4 = (32ull * (2 * 16'777'216 + 4'194'304 + 2 * 58'720'256) + 28ull * 58'720'256 + kEmbedding) / 256 * 136 +
                            (32ull * 4'194'304 + 4ull * 58'720'256) / 256 * 176 + kEmbedding / 256 * 210 + kNormValues * 4;
  CHECK(priced(model, "iq4_xs") == iq4);
}

TEST_CASE("awq, gptq, nvfp4: every linear layer quantized, embeddings and head 16-bit", "[weight-formats]") {
  const kvplan::ModelSpec model = llama8b();
  // Groups of 128 inputs per output: q, o 32 x 4096; k, v 32 x 1024; gate, up 32 x 14336; down
  // 112 x 4096: 1,703,936 a layer, 54,525,952 in all. AWQ: 4 bits a value + per group an fp16
  // scale (2 B) and a 4-bit zero (1/2 B): 3,489,660,928 + 136,314,880; embeddings and head
  // 2,101,346,304; norms 532,480: 5,727,854,592.
  const std::uint64_t groups = 32ull * 1'703'936;
  const std::uint64_t kept = 2 * kEmbedding * 2 + kNormValues * 2;
  CHECK(priced(model, "awq") == kLinearValues / 2 + groups / 2 + groups * 2 + kept);
  CHECK(priced(model, "awq") == 5'727'854'592ull);
  // GPTQ adds g_idx, an int32 per input: 6 x 4096 + 14336 inputs a layer, x 4 B x 32 layers.
  CHECK(priced(model, "gptq") == 5'727'854'592ull + 32ull * (6 * 4096 + 14336) * 4);
  // Group 32: four times the groups.
  CHECK(priced(model, "awq-g32") == kLinearValues / 2 + groups * 4 / 2 + groups * 4 * 2 + kept);
  // NVFP4: 4 bits + an fp8 scale per 16 values, two fp32 scales per linear layer (7 x 32).
  CHECK(priced(model, "nvfp4") == kLinearValues / 2 + kLinearValues / 16 + 7 * 32 * 8 + kept);
  CHECK(kvplan::estimate_weights(model, &kvplan::parse_requested_weight_dtype("gptq")).rule.find("GPTQ w4a16, group 128") == 0);
}

TEST_CASE("weight formats: unknown names and models kvplan cannot lay out", "[weight-formats]") {
  try {
    kvplan::parse_requested_weight_dtype("q4_k_x");
    FAIL("an unknown format was accepted");
  } catch (const kvplan::Error& error) {
    CHECK(std::string(error.what()).find("did you mean") != std::string::npos);
  }
  // A MoE model has no dense layout: exit 3 with the way forward, never a guess.
  const kvplan::ModelSpec moe = kvplan::load_hf_model(source_path("tests/fixtures/hf/deepseek-v2-lite"));
  try {
    kvplan::estimate_weights(moe, &kvplan::parse_requested_weight_dtype("q4_k_m"));
    FAIL("a MoE model was priced as a dense decoder");
  } catch (const kvplan::Error& error) {
    CHECK(error.code() == kvplan::ExitCode::unsupported_architecture);
    CHECK(std::string(error.what()).find("--weights SIZE") != std::string::npos);
  }
  // The plain dtypes keep their rule: params x bytes.
  CHECK(kvplan::parse_requested_weight_dtype("fp8").name == "fp8");
  CHECK(kvplan::price_weight_format(llama8b(), kvplan::parse_requested_weight_dtype("int4")) == std::nullopt);
}

TEST_CASE("weight format q4_k_m through the binary", "[weight-formats]") {
  const auto result = run_kvplan("--model " + source_path("tests/fixtures/hf/llama3.1-8b") +
                                 " --weight-dtype q4_k_m --gpu 24GiB -c 8192 --kv-dtype fp16 --format json");
  REQUIRE(result.exit_code == 0);
  const nlohmann::json rows = nlohmann::json::parse(result.out)["rows"];
  CHECK(rows[0]["weights_bytes"] == 4'912'898'048ull);
  CHECK(rows[0]["weight_dtype"] == "q4_k_m");
  CHECK(rows[0]["weights_rule"].get<std::string>().find("GGUF q4_k_m") == 0);
  kvplan::testing::check_refused(run_kvplan("--model " + source_path("tests/fixtures/hf/llama3.1-8b") +
                                            " --weight-dtype q4_k_z --gpu 24GiB"),
                                 "unknown weight dtype 'q4_k_z'");
}

namespace {

/// A hub cache as huggingface_hub leaves it: blobs/ with the files, snapshots/<rev>/ with
/// symlinks into blobs/, refs/main naming the revision.
void add_snapshot(const fs::path& hub, const std::string& repo_folder, const std::string& revision,
                  const std::string& config_text, bool with_index) {
  const fs::path repo = hub / repo_folder;
  fs::create_directories(repo / "blobs");
  fs::create_directories(repo / "snapshots" / revision);
  const auto blob = [&](const std::string& name, const std::string& text) {
    const std::string hash = revision + "-" + name;
    std::ofstream(repo / "blobs" / hash) << text;
    fs::create_symlink(fs::path("../../blobs") / hash, repo / "snapshots" / revision / name);
  };
  blob("config.json", config_text);
  if (with_index) blob("model.safetensors.index.json", kvplan::testing::read_file(source_path("tests/fixtures/hf/llama3.1-8b/model.safetensors.index.json")));
}

std::string llama_config(std::uint64_t max_position) {
  nlohmann::json config = nlohmann::json::parse(kvplan::testing::read_file(source_path("tests/fixtures/hf/llama3.1-8b/config.json")));
  config["max_position_embeddings"] = max_position;
  return config.dump();
}

}  // namespace

TEST_CASE("a model named org/name: the Hugging Face cache before the catalog alias", "[hf-cache]") {
  kvplan::testing::TempDir dir("kvplan_hub");
  const fs::path hub = dir.file("hub");
  // Two snapshots; refs/main names the older one, whose context says 4096 (the catalog's: 131072).
  add_snapshot(hub, "models--meta-llama--Llama-3.1-8B", "aaa111", llama_config(4096), true);
  add_snapshot(hub, "models--meta-llama--Llama-3.1-8B", "bbb222", llama_config(8192), false);
  fs::create_directories(hub / "models--meta-llama--Llama-3.1-8B" / "refs");
  std::ofstream(hub / "models--meta-llama--Llama-3.1-8B" / "refs" / "main") << "aaa111";

  const kvplan::ModelSpec model = kvplan::load_model("meta-llama/Llama-3.1-8B", hub.string());
  CHECK(model.id == "meta-llama/Llama-3.1-8B");
  CHECK(model.name == "meta-llama/Llama-3.1-8B");  // not the revision folder's name
  CHECK(model.max_context == 4096);
  CHECK(model.source.find("Hugging Face cache: meta-llama/Llama-3.1-8B revision aaa111, refs/main") != std::string::npos);
  // The index beside it, reached through its symlink: the exact checkpoint size.
  CHECK(model.weights_source.find("safetensors total_size") == 0);
  CHECK(*model.weights_bytes == 16'060'522'496ull);
  // Without a cache folder, the catalog alias.
  CHECK(kvplan::load_model("meta-llama/Llama-3.1-8B", "").max_context == 131072);
  CHECK(kvplan::load_model("meta-llama/Llama-3.1-8B", dir.file("no-such-hub")).max_context == 131072);

  // refs/main gone: the newest snapshot (bbb222, written last and dated later).
  fs::remove(hub / "models--meta-llama--Llama-3.1-8B" / "refs" / "main");
  fs::last_write_time(hub / "models--meta-llama--Llama-3.1-8B" / "snapshots" / "aaa111",
                      fs::file_time_type::clock::now() - std::chrono::hours(24));
  const kvplan::ModelSpec newest = kvplan::load_model("meta-llama/Llama-3.1-8B", hub.string());
  CHECK(newest.max_context == 8192);
  CHECK(newest.source.find("revision bbb222, the newest of 2 snapshots") != std::string::npos);
  // No index there: the count from config.json.
  CHECK(newest.params == 8'030'261'248ull);
}

TEST_CASE("the hub cache: ids it does not look up", "[hf-cache]") {
  CHECK(kvplan::looks_like_hf_repo_id("Qwen/Qwen2.5-7B-Instruct"));
  CHECK_FALSE(kvplan::looks_like_hf_repo_id("../etc"));
  CHECK_FALSE(kvplan::looks_like_hf_repo_id("a/b/c"));
  CHECK_FALSE(kvplan::looks_like_hf_repo_id("org/.."));
  CHECK_FALSE(kvplan::looks_like_hf_repo_id("llama3.1-8b"));
  kvplan::testing::TempDir dir("kvplan_hub");
  // A snapshot without config.json (a GGUF-only repository) is not a model kvplan can read.
  fs::create_directories(fs::path(dir.file("models--org--gguf-only")) / "snapshots" / "r1");
  CHECK_FALSE(kvplan::find_hf_cache_snapshot("org/gguf-only", dir.file("")).has_value());
}

TEST_CASE("the CLI finds the cache through HF_HUB_CACHE and HF_HOME", "[hf-cache]") {
  kvplan::testing::TempDir dir("kvplan_hub");
  add_snapshot(fs::path(dir.file("home")) / "hub", "models--acme--tiny-llama", "c0ffee", llama_config(2048), false);
  const std::string args = "--model acme/tiny-llama --gpu 24GiB -c 1024 --kv-dtype fp16 --format json";
  const auto via_home = run_kvplan(args, "HF_HUB_CACHE= HF_HOME=" + dir.file("home"));
  REQUIRE(via_home.exit_code == 0);
  CHECK(nlohmann::json::parse(via_home.out)["model"]["max_context"] == 2048);
  const auto via_hub = run_kvplan(args, "HF_HOME= HF_HUB_CACHE=" + dir.file("home/hub"));
  CHECK(via_hub.exit_code == 0);
  // Not in the cache and not in the catalog: the usual unknown-model error.
  kvplan::testing::check_refused(run_kvplan(args, "HF_HUB_CACHE=" + dir.file("empty")), "unknown model 'acme/tiny-llama'");
}

TEST_CASE("unified memory: the GPU working set macOS grants", "[unified]") {
  // Two thirds below 64 GiB, rounded down: 32 GiB -> 22,906,492,245 B = 21845.33 MiB, under the
  // 21845.34 MiB llama.cpp's Metal log printed on a 32 GB M2 Max (ollama#434); 16 GiB ->
  // 10922.67 MiB printed (llama-cpp-python#687): 11,453,246,122 B.
  CHECK(kvplan::macos_gpu_working_set(32 * GiB).bytes == 32 * GiB * 2 / 3);
  CHECK(kvplan::macos_gpu_working_set(32 * GiB).bytes == 22'906'492'245ull);
  CHECK(kvplan::macos_gpu_working_set(16 * GiB).bytes == 11'453'246'122ull);
  // Three quarters from 64 GiB: 96 GiB -> 73728.00 MiB exactly, as printed on a 96 GB M2 Max (llama.cpp#3213).
  CHECK(kvplan::macos_gpu_working_set(96 * GiB).bytes == 73728ull << 20);
  CHECK(kvplan::macos_gpu_working_set(64 * GiB).bytes == 48 * GiB);
  // 48 GiB: no source; the smaller share.
  CHECK(kvplan::macos_gpu_working_set(48 * GiB).bytes == 32 * GiB);

  const std::optional<kvplan::GpuSpec> mac = kvplan::apple_silicon_gpu("M3 Max 128GB", "--gpu");
  REQUIRE(mac.has_value());
  CHECK(mac->id == "m3-max-128gb");
  CHECK(mac->memory_bytes == 96 * GiB);
  CHECK(mac->memory_basis == "macOS GPU working set");
  CHECK(kvplan::apple_silicon_gpu("m4-24gb", "--gpu")->memory_bytes == 16 * GiB);
  CHECK_FALSE(kvplan::apple_silicon_gpu("mi300x", "--gpu").has_value());
}

TEST_CASE("unified memory: --gpu m3-max-128gb and --gpu 64GiB --unified through the binary", "[unified]") {
  const auto mac = run_kvplan("--model llama3.1-8b --gpu m3-max-128gb -c 8192 --format json");
  REQUIRE(mac.exit_code == 0);
  const nlohmann::json gpu = nlohmann::json::parse(mac.out)["gpu"];
  CHECK(gpu["memory_bytes"] == 96 * GiB);
  CHECK(gpu["memory_basis"] == "macOS GPU working set");
  const auto given = run_kvplan("--model llama3.1-8b --gpu 64GiB --unified -c 8192 --format json");
  REQUIRE(given.exit_code == 0);
  CHECK(nlohmann::json::parse(given.out)["gpu"]["memory_bytes"] == 48 * GiB);
  kvplan::testing::check_refused(run_kvplan("--model llama3.1-8b --gpu 4090 --unified"), "--unified: takes a memory size");
}

TEST_CASE("unified memory: the catalog's Macs are planned against their working set, not their RAM", "[unified]") {
  // A Mac named from the catalog (--gpu "m2 ultra") once planned against all 192 GiB of its RAM
  // while --gpu m2-ultra-192gb planned against the 144 GiB Metal grants: a false "fits" for
  // anything between the two. Every Apple card in gpus.json is its RAM's working set.
  const nlohmann::json catalog = nlohmann::json::parse(kvplan::testing::read_file(kvplan::testing::source_path("gpus/gpus.json")));
  int macs = 0;
  for (const nlohmann::json& card : catalog["gpus"]) {
    if (card["vendor"] != "Apple") continue;
    INFO(card["id"]);
    ++macs;
    const std::uint64_t ram = card["memory_marketed_gb"].get<std::uint64_t>() * GiB;
    CHECK(card["memory_bytes"].get<std::uint64_t>() == kvplan::macos_gpu_working_set(ram).bytes);
    CHECK(card["memory_basis"] == "macOS GPU working set");
  }
  CHECK(macs == 3);
  // The same budget whichever way the Mac is named: 3/4 of 192 GiB = 144 GiB.
  for (const char* gpu : {"m2-ultra-192g", "'m2 ultra'", "m2-ultra-192gb"}) {
    INFO(gpu);
    const auto run = run_kvplan(std::string("--model llama3.1-8b -c 8192 --format json --gpu ") + gpu);
    REQUIRE(run.exit_code == 0);
    CHECK(nlohmann::json::parse(run.out)["gpu"]["memory_bytes"] == 144 * GiB);
  }
  // 70B at 64k in bf16 needs about 153 GiB: more than the working set, less than the RAM.
  const auto big = run_kvplan("--model llama3.1-70b -c 65536 --kv-dtype fp16 --gpu m2-ultra-192g --check");
  CHECK(big.exit_code == 1);
  kvplan::testing::check_refused(run_kvplan("--model llama3.1-8b --gpu m3-max-128g --unified"),
                                 "whose budget is the working set already");
}

TEST_CASE("a ModelOpt folder: hf_quant_config.json's scheme priced, the checkpoint's size preferred", "[weight-formats]") {
  kvplan::testing::TempDir dir;
  std::ofstream(dir.file("config.json")) << kvplan::testing::read_file(source_path("tests/fixtures/hf/qwen3-8b/config.json"));
  // The file NVIDIA's ModelOpt writes beside config.json (its shape as nvidia/Qwen3-235B-A22B-NVFP4 ships it).
  std::ofstream(dir.file("hf_quant_config.json")) << R"({"producer": {"name": "modelopt", "version": "0.33.0"},
    "quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8", "group_size": 16, "exclude_modules": ["lm_head"]}})";
  const std::string model = "--model " + dir.file("config.json") + " --gpu h100 -c 8192 --format json";
  const auto priced = run_kvplan(model);
  REQUIRE(priced.exit_code == 0);
  const nlohmann::json row = nlohmann::json::parse(priced.out)["rows"][0];
  // Kept at bf16: embeddings and head 2 x 151,936 x 4,096, the final norm and 36 x (2 x 4,096 +
  // 2 x 128) norm values: 1,244,967,936 params. The other 6,945,767,424 at 9/16 B, two fp32 scalars
  // for each of 36 x 7 matrices (tests/modelopt_test.cpp ties it to --weight-dtype nvfp4) and the
  // FP8 KV cache's two on each of the 36 layers.
  CHECK(row["weights_bytes"] == 1'244'967'936ull * 2 + 6'945'767'424ull * 9 / 16 + 36 * 7 * 8 + 36 * 8);
  CHECK_THAT(row["weights_rule"].get<std::string>(), Catch::Contains("computed (NVFP4, NVIDIA ModelOpt)"));
  // The checkpoint's size is exact, and preferred.
  std::ofstream(dir.file("model.safetensors.index.json")) << R"({"metadata": {"total_size": 5000000000}, "weight_map": {}})";
  const nlohmann::json sized = nlohmann::json::parse(run_kvplan(model).out)["rows"][0];
  CHECK(sized["weights_bytes"] == 5'000'000'000ull);
  CHECK(sized["weights_rule"] == "safetensors total_size (nvfp4)");
}

TEST_CASE("an unknown model_type with standard cache fields: its cache sized, its weights asked for", "[weight-formats]") {
  kvplan::testing::TempDir dir;
  // Plain attention kvplan reads with the standard fields; a model_type no family knows.
  std::ofstream(dir.file("config.json")) << R"({"model_type": "mystery", "num_hidden_layers": 4, "hidden_size": 1024,
    "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 128, "max_position_embeddings": 8192,
    "torch_dtype": "bfloat16"})";
  const std::string model = "--model " + dir.file("config.json") + " --gpu 24GiB -c 8192 --kv-dtype fp16";
  // Neither a count nor a size: one line naming the three ways forward.
  const auto refused = run_kvplan(model);
  kvplan::testing::check_refused(refused, "model_type = mystery", 3);
  CHECK(refused.err.find("--weights SIZE") != std::string::npos);
  CHECK(refused.err.find("--params N") != std::string::npos);
  CHECK(refused.err.find("model.safetensors.index.json") != std::string::npos);
  // With one of them, the cache: 4 layers x 2 heads x (128 + 128) x 2 B x 8192 tokens = 33,554,432 B.
  const auto given = run_kvplan(model + " --params 1B --format json");
  REQUIRE(given.exit_code == 0);
  CHECK(nlohmann::json::parse(given.out)["rows"][0]["kv_bytes"] == 4ull * 2 * 256 * 2 * 8192);
  // A named format needs the widths of a known family: exit 3, not a guess.
  kvplan::testing::check_refused(run_kvplan(model + " --params 1B --weight-dtype q4_k_m"), "its model_type is mystery", 3);
}

TEST_CASE("every catalog entry with widths prices as every named format", "[weight-formats]") {
  // The widths must add up to the entry's parameter count within 1% (biases and norms), or the
  // pricing refuses: a wrong tie_word_embeddings (one vocabulary x hidden off) would fail here.
  std::size_t priced_models = 0;
  for (const kvplan::ModelSpec& model : kvplan::builtin_models().models) {
    if (model.hidden_size == 0) continue;
    INFO(model.id);
    for (const kvplan::Dtype& format : kvplan::weight_formats()) CHECK_NOTHROW(kvplan::estimate_weights(model, &format));
    ++priced_models;
  }
  CHECK(priced_models == 29);  // the dense llama, mistral, qwen2, qwen3 and gemma entries
}
