// deepseek4 (DeepSeek-V4) GGUF files under the llama.cpp profile: llama_kv_cache_dsv4's K-only
// window on every layer, its compressed caches (CSA and the lightning indexer at 1 in 4 tokens, HCA
// at 1 in 128) and their compressor states. The fixture runs through the real llama.cpp in
// tests/llamacpp/crosscheck.mjs; the totals below are what that llama.cpp's memory breakdown gave.

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "engines/llamacpp/rules.h"
#include "kvplan/error.h"
#include "kvplan/model_spec.h"
#include "loaders/gguf_model.h"
#include "loaders/spec_json.h"
#include "support/deepseek4_keys.h"
#include "support/gguf_writer.h"
#include "support/llamacpp_fixture_model.h"
#include "support/llamacpp_fixtures.h"

namespace {

using kvplan::LlamaCppResult;

/// The settings of the fixture's cross-check run, with `edit` applied.
template <typename Edit>
LlamaCppResult plan(const kvplan::GgufModel& m, std::uint64_t n_ctx, std::uint32_t seqs, Edit edit) {
  kvplan::LlamaCppSettings s;
  s.n_ctx = n_ctx;
  s.n_parallel = seqs;
  s.type_k = &kvplan::ggml_type_by_name("f16");
  s.type_v = &kvplan::ggml_type_by_name("f16");
  s.flash_attn = kvplan::LlamaCppFlashAttn::off;
  s.n_gpu_layers = 0;
  edit(s);
  return kvplan::plan_llamacpp(m.spec, s, kvplan::llamacpp_facts(m.spec));
}

std::uint64_t memory_module_bytes(const LlamaCppResult& r) {
  return r.kv_bytes + r.recurrent_bytes + r.compressor_state_bytes;
}

/// A file of the keys the loader reads (4 layers of 128), with the compress ratios, K heads,
/// indexer key width and nextn layers given.
kvplan::testing::GgufWriter deepseek4_keys(std::vector<std::uint32_t> ratios, std::uint32_t kv_heads = 1,
                                           std::uint32_t indexer_width = 128, std::uint32_t nextn = 0) {
  kvplan::testing::GgufWriter w = kvplan::testing::gguf_bare_file("deepseek4");
  kvplan::testing::add_deepseek4_keys(w, {std::move(ratios), kv_heads, indexer_width, nextn});
  return w;
}

}  // namespace

TEST_CASE("deepseek4: a K-only window on every layer beside compressed caches", "[gguf_archs]") {
  const kvplan::GgufModel m = kvplan::testing::load_llamacpp_fixture("deepseek4");
  CHECK(kvplan::describe_layers(m.spec) ==
        "1 sliding(128) + 2 sliding(128)+compressed(1/4)+indexer(128) + 1 sliding(128)+compressed(1/128)");
  CHECK(m.spec.layers[0].v_head_dim == 0);
  CHECK(m.spec.layers[2].compress_ratio == 128);
  CHECK(m.spec.layers[2].index_head_dim == 0);  // the indexer is the CSA layers'

  // n_ctx 8192 over 2 sequences: n_ctx_seq 4096, 2 streams everywhere. K rows f16: 64 wide = 128 B,
  // the indexer's 128 wide = 256 B.
  const LlamaCppResult r = kvplan::testing::llamacpp_cpu_plan(m, 8192, 2);
  REQUIRE(r.caches.size() == 5);
  CHECK(r.caches[0].role == "non-SWA KV");
  CHECK(r.caches[0].layers == 0);
  CHECK(r.caches[0].cells == 4096);
  CHECK(r.caches[1].role == "SWA KV");
  CHECK(r.caches[1].cells == 768);  // pad256(128 + 512)
  CHECK(r.caches[1].k_bytes == 4ull * 128 * 768 * 2);
  CHECK(r.caches[1].v_bytes == 0);
  CHECK(r.caches[2].role == "CSA KV");
  CHECK(r.caches[2].cells == 1024);  // pad256(4096 / 4)
  CHECK(r.caches[2].k_bytes == 2ull * 128 * 1024 * 2);
  CHECK(r.caches[3].role == "HCA KV");
  CHECK(r.caches[3].cells == 256);  // pad256(4096 / 128 = 32): llama.cpp logs 32, allocates 256
  CHECK(r.caches[3].k_bytes == 1ull * 128 * 256 * 2);
  CHECK(r.caches[4].role == "LID KV");
  CHECK(r.caches[4].k_bytes == 2ull * 256 * 1024 * 2);
  // Compressor states, f32: kv and score per layer, [n_embd_state, state_size, 2 planes].
  REQUIRE(r.compressor_states.size() == 3);
  CHECK(r.compressor_states[0].name == "CSA");
  CHECK(r.compressor_states[0].n_embd_state == 128);
  CHECK(r.compressor_states[0].bytes == 2ull * 2 * 4 * 128 * 8 * 2);
  CHECK(r.compressor_states[1].name == "HCA");
  CHECK(r.compressor_states[1].bytes == 1ull * 2 * 4 * 64 * 128 * 2);
  CHECK(r.compressor_states[2].name == "LID");
  CHECK(r.compressor_states[2].bytes == 2ull * 2 * 4 * 256 * 8 * 2);
  CHECK(r.compressor_state_bytes == 229'376);
  // llama.cpp's memory breakdown for this context: 2,654,122 to 2,654,226 bytes.
  CHECK(memory_module_bytes(r) == 2'654'208);
  CHECK(r.host_cache_bytes == 2'654'208);

  // One sequence of 4096: exactly half (llama.cpp: 1,327,104 within its +-53 B).
  CHECK(memory_module_bytes(kvplan::testing::llamacpp_cpu_plan(m, 4096, 1)) == 1'327'104);
  // --swa-full: the window cache holds n_ctx_seq cells.
  const LlamaCppResult full = plan(m, 8192, 2, [](kvplan::LlamaCppSettings& s) { s.swa_full = true; });
  CHECK(full.caches[1].cells == 4096);
  CHECK(memory_module_bytes(full) == 2'654'208 - 786'432 + 4'194'304);
  // --kv-unified: n_ctx_seq becomes n_ctx, but every cache and state keeps a stream per sequence.
  const LlamaCppResult unified = plan(m, 8192, 2, [](kvplan::LlamaCppSettings& s) { s.kv_unified = true; });
  CHECK(unified.n_ctx_seq == 8192);
  CHECK(unified.caches[1].streams == 2);
  CHECK(unified.caches[1].k_bytes == 786'432);  // pad256(min(8192, 128 x 1 + 512)), not 128 x 2
  CHECK(unified.caches[2].cells == 2048);
  CHECK(unified.caches[3].cells == 256);  // pad256(64)
  CHECK(unified.caches[4].k_bytes == 2'097'152);
  CHECK(unified.compressor_state_bytes == 229'376);
  // The GPU's share follows each layer's device: -ngl 3 puts the output layer and layers 2 and 3
  // there, with their caches and states (an HCA layer and a CSA layer).
  const LlamaCppResult two = plan(m, 8192, 2, [](kvplan::LlamaCppSettings& s) { s.n_gpu_layers = 3; });
  CHECK(two.compressor_states[1].gpu_layers == 1);
  CHECK(two.compressor_states[0].gpu_layers == 1);
  CHECK(two.gpu_cache_bytes + two.host_cache_bytes == 2'654'208);
}

TEST_CASE("deepseek4: a spec file keeps the compress ratios (kvplan spec, then --model spec.json)", "[gguf_archs]") {
  const kvplan::GgufModel m = kvplan::testing::load_llamacpp_fixture("deepseek4");
  const nlohmann::json document = kvplan::to_spec_json(m.spec);
  CHECK(document["compress_ratios"] == nlohmann::json::array({0, 4, 128, 4}));
  const kvplan::ModelSpec back = kvplan::parse_model_spec(document.dump(), "spec.json");
  REQUIRE(back.layers.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(back.layers[i].compress_ratio == m.spec.layers[i].compress_ratio);
    CHECK(back.layers[i].index_head_dim == m.spec.layers[i].index_head_dim);
  }
  // The same caches and states as from the GGUF file (the weights are no longer placed by tensor).
  const LlamaCppResult from_spec = kvplan::plan_llamacpp(back, [] {
    kvplan::LlamaCppSettings s;
    s.n_ctx = 8192;
    s.n_parallel = 2;
    s.flash_attn = kvplan::LlamaCppFlashAttn::off;
    s.n_gpu_layers = 0;
    return s;
  }());
  CHECK(memory_module_bytes(from_spec) == 2'654'208);
  // A ratio llama.cpp does not have, or one on a layer that does not slide, is refused.
  nlohmann::json bad = document;
  bad["compress_ratios"] = {0, 4, 64, 4};
  CHECK_THROWS_WITH(kvplan::parse_model_spec(bad.dump(), "spec.json"), Catch::Contains("64 is not 0, 4 or 128"));
  bad["compress_ratios"] = {0, 4, 128, 4};
  bad["layer_types"] = {"full", "sliding", "sliding", "sliding"};
  bad["kind_shapes"] = {{"full", {{"head_dim", 64}, {"v_head_dim", 64}}}};
  bad["compress_ratios"] = {4, 4, 128, 4};
  bad["indexer"]["layers"] = {0, 1, 3};
  CHECK_THROWS_WITH(kvplan::parse_model_spec(bad.dump(), "spec.json"), Catch::Contains("cannot keep a compressed cache"));
}

TEST_CASE("deepseek4: DeepSeek-V4-Flash's shapes at a context of 1,048,576", "[gguf_archs]") {
  // The GGUF llama.cpp's converter writes from DeepSeek-V4-Flash's config.json (conversion/deepseek.py:
  // key_length = value_length = head_dim 512, head_count_kv 1, sliding_window 128, indexer key
  // index_head_dim 128, compress_ratios as given, the MTP layer left out), as a spec file.
  std::ifstream in(std::filesystem::path(KVPLAN_SOURCE_DIR) / "tests/fixtures/hf/deepseek-v4-flash/config.json");
  const nlohmann::json config = nlohmann::json::parse(in);
  const std::uint64_t layers = config["num_hidden_layers"];
  std::vector<std::uint64_t> ratios;
  for (std::uint64_t i = 0; i < layers; ++i) ratios.push_back(config["compress_ratios"][i]);  // 44: the last is MTP's
  std::vector<std::uint64_t> indexed;
  for (std::uint64_t i = 0; i < layers; ++i)
    if (ratios[i] == 4) indexed.push_back(i);
  const nlohmann::json spec = {{"name", "DeepSeek-V4-Flash (llama.cpp's deepseek4)"},
                               {"architecture", "deepseek4"},
                               {"layers", layers},
                               {"attention_heads", config["num_attention_heads"]},
                               {"kv_heads", config["num_key_value_heads"]},
                               {"head_dim", config["head_dim"]},
                               {"v_head_dim", 0},
                               {"layer_pattern", {"sliding"}},
                               {"sliding_window", config["sliding_window"]},
                               {"compress_ratios", ratios},
                               {"indexer", {{"head_dim", config["index_head_dim"]}, {"layers", indexed}}},
                               {"params", 284'000'000'000ull},  // the model card's; the weights are not checked here
                               {"weight_dtype", "fp8"}};
  const kvplan::ModelSpec flash = kvplan::parse_model_spec(spec.dump(), "deepseek-v4-flash");
  CHECK(kvplan::describe_layers(flash) ==
        "2 sliding(128) + 21 sliding(128)+compressed(1/4)+indexer(128) + 20 sliding(128)+compressed(1/128)");
  kvplan::LlamaCppSettings s;
  s.n_ctx = 1'048'576;
  s.flash_attn = kvplan::LlamaCppFlashAttn::on;
  const LlamaCppResult r = kvplan::plan_llamacpp(flash, s);
  // f16 K rows of 512 (1,024 B) and the indexer's 128 (256 B): the window 43 x 768 cells, CSA 21 x
  // 262,144, HCA 20 x 8,192, LID 21 x 262,144; the states 21 x 65,536 + 20 x 524,288 + 21 x 16,384 B.
  CHECK(r.caches[1].k_bytes == 43ull * 1024 * 768);
  CHECK(r.caches[2].k_bytes == 21ull * 1024 * 262'144);
  CHECK(r.caches[3].k_bytes == 20ull * 1024 * 8'192);
  CHECK(r.caches[4].k_bytes == 21ull * 256 * 262'144);
  CHECK(r.compressor_state_bytes == 12'206'080);
  CHECK(memory_module_bytes(r) == 7'260'225'536);  // 6.76 GiB for one sequence of a million tokens
}

TEST_CASE("deepseek4: what llama.cpp refuses, and the engines kvplan has no rules for", "[gguf_archs]") {
  const kvplan::GgufModel m = kvplan::testing::load_llamacpp_fixture("deepseek4");
  // K and V types must match (K-only caches), and a quantized V needs flash attention.
  const auto outcome = [&](auto edit) -> std::pair<kvplan::ExitCode, std::string> {
    try {
      plan(m, 8192, 2, edit);
    } catch (const kvplan::Error& e) {
      return {e.code(), e.what()};
    }
    return {kvplan::ExitCode::ok, ""};
  };
  CHECK_THAT(outcome([](kvplan::LlamaCppSettings& s) { s.type_v = &kvplan::ggml_type_by_name("q8_0"); }).second,
             Catch::Contains("does not support different K (f16) and V (q8_0) cache types"));
  CHECK_THAT(outcome([](kvplan::LlamaCppSettings& s) {
               s.type_k = s.type_v = &kvplan::ggml_type_by_name("q8_0");
             }).second,
             Catch::Contains("quantized V cache requires flash_attn"));
  // q8_0 with flash attention: the states stay f32, the caches shrink to 34 bytes per 32 values.
  const LlamaCppResult q8 = plan(m, 8192, 2, [](kvplan::LlamaCppSettings& s) {
    s.type_k = s.type_v = &kvplan::ggml_type_by_name("q8_0");
    s.flash_attn = kvplan::LlamaCppFlashAttn::on;
  });
  CHECK(q8.caches[4].k_bytes == 2ull * (128 / 32 * 34) * 1024 * 2);
  CHECK(q8.compressor_state_bytes == 229'376);

  using kvplan::testing::gguf_load_outcome;
  CHECK(gguf_load_outcome(deepseek4_keys({0, 4, 128, 4})).first == kvplan::ExitCode::ok);
  CHECK_THAT(gguf_load_outcome(deepseek4_keys({0, 4, 64, 4})).second, Catch::Contains("0, 4, and 128"));
  CHECK_THAT(gguf_load_outcome(deepseek4_keys({0, 4, 128})).second, Catch::Contains("shorter than block_count"));
  CHECK_THAT(gguf_load_outcome(deepseek4_keys({0, 128, 128, 0})).second, Catch::Contains("SIGFPE"));
  CHECK_THAT(gguf_load_outcome(deepseek4_keys({0, 4, 128, 4}, 2)).second, Catch::Contains("one K head per token"));
  CHECK_THAT(gguf_load_outcome(deepseek4_keys({0, 4, 128, 4}, 1, 96)).second, Catch::Contains("Hadamard"));
  CHECK(gguf_load_outcome(deepseek4_keys({0, 4, 128, 4}, 1, 128, 1)).first == kvplan::ExitCode::unsupported_architecture);
  // A longer array is fine (the converter writes the MTP layer's ratio too).
  CHECK(gguf_load_outcome(deepseek4_keys({0, 4, 128, 4, 4})).first == kvplan::ExitCode::ok);

  // Only the llama.cpp profile has read llama_kv_cache_dsv4: every other engine says so (exit 3).
  for (const char* runtime : {"generic", "vllm", "sglang", "trtllm", "ollama"}) {
    INFO(runtime);
    const auto [code, message] = kvplan::testing::plan_outcome(m.spec, runtime);
    CHECK(code == kvplan::ExitCode::unsupported_architecture);
    CHECK_THAT(message, Catch::Contains("add runtime llama.cpp"));  // the library's name for the setting
  }
}
