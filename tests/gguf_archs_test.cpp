// The GGUF architectures added for issue #12 (gpt-oss, llama4, glm4moe, gemma3n, cohere2, olmo2,
// exaone4, ernie4_5): their layer layouts as llama.cpp v0.4.0's load_arch_hparams derive them, and
// the cache bytes of its llama.cpp profile for a few settings, by hand. The same fixtures are run
// through the real llama.cpp by tests/llamacpp/crosscheck.mjs.

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "engines/llamacpp/rules.h"
#include "kvplan/error.h"
#include "kvplan/model_spec.h"
#include "loaders/gguf_model.h"
#include "support/llamacpp_fixture_model.h"
#include "support/temp_dir.h"

using kvplan::GgufModel;
using kvplan::LayerKind;
using kvplan::LlamaCppFlashAttn;
using kvplan::LlamaCppResult;
using kvplan::LlamaCppSettings;
using kvplan::testing::load_llamacpp_fixture;

namespace {

bool gguf_archs_note(const GgufModel& m, const std::string& text) {
  for (const std::string& note : m.spec.file->notes)
    if (note.find(text) != std::string::npos) return true;
  return false;
}

/// The harness's CPU run (f16, flash attention off, every layer on the host).
LlamaCppResult gguf_archs_plan(const GgufModel& m, std::uint64_t n_ctx, std::uint32_t seqs, std::uint32_t ubatch) {
  return kvplan::testing::llamacpp_cpu_plan(m, n_ctx, seqs, ubatch);
}

kvplan::ExitCode gguf_archs_load_code(const kvplan::testing::GgufWriter& w) {
  return kvplan::testing::gguf_load_outcome(w).first;
}

/// A file with only the keys every architecture reads (support/llamacpp_fixture_model.h).
kvplan::testing::GgufWriter gguf_archs_bare(const std::string& arch) { return kvplan::testing::gguf_bare_file(arch); }

}  // namespace

TEST_CASE("gpt-oss and cohere2: a required window, period 2 and 4", "[gguf_archs]") {
  const GgufModel oss = load_llamacpp_fixture("gpt-oss");
  CHECK(kvplan::describe_layers(oss.spec) == "2 sliding(128) + 2 full");
  CHECK(oss.spec.layers[0].kind == LayerKind::sliding);  // il % 2 < 1
  CHECK(oss.spec.layers[1].kind == LayerKind::full);
  CHECK(gguf_archs_note(oss, "default period 2"));
  const GgufModel cohere = load_llamacpp_fixture("cohere2");
  CHECK(kvplan::describe_layers(cohere.spec) == "3 sliding(128) + 1 full");
  CHECK(cohere.spec.layers[3].kind == LayerKind::full);  // il % 4 < 3 for 0..2

  // llama.cpp's get_key(LLM_KV_ATTENTION_SLIDING_WINDOW, n_swa) is required for both.
  kvplan::testing::GgufWriter no_window = gguf_archs_bare("gpt-oss");
  CHECK(gguf_archs_load_code(no_window) == kvplan::ExitCode::invalid_input);
}

TEST_CASE("llama4: chunks of 8192 tokens on 3 of 4 layers, none with a window key of 0", "[gguf_archs]") {
  const GgufModel m = load_llamacpp_fixture("llama4");
  REQUIRE(m.spec.layers.size() == 4);
  for (int i = 0; i < 3; ++i) {
    CHECK(m.spec.layers[i].kind == LayerKind::chunked);
    CHECK(m.spec.layers[i].window == 8192);
  }
  CHECK(m.spec.layers[3].kind == LayerKind::full);
  CHECK(gguf_archs_note(m, "8192"));
  // MoE on layers 1 and 3 (interleave step 2): 2 layers x 3 x 128 x 32 x 4 expert elements, one
  // of 4 used: active = params - 98,304 + 24,576.
  CHECK(m.spec.active_params == m.spec.params - 98'304 + 24'576);
  // The routed experts from ffn_up_exps (128 in, 32 wide) and the gate beside it, 1 a token.
  REQUIRE(m.spec.routed_experts);
  CHECK(*m.spec.routed_experts == kvplan::RoutedExperts{1, 128, 32, true});

  // n_ctx 16384, 1 sequence, ubatch 512: chunked cells pad256(min(16384, 8192 + 512)) = 8704.
  // 3 x 8704 x 64 (2 heads x 32) x 2 B x (K + V) + 1 x 16384 x 64 x 2 x 2 = 6,684,672 + 4,194,304
  const LlamaCppResult r = gguf_archs_plan(m, 16384, 1, 512);
  REQUIRE(r.caches.size() == 2);
  CHECK(r.caches[1].cells == 8704);
  CHECK(r.kv_bytes == 6'684'672 + 4'194'304);
  // Below the chunk: every cache holds n_ctx_seq = 4096 cells; 4 x 4096 x 64 x 2 x 2 x 2 streams.
  CHECK(gguf_archs_plan(m, 8192, 2, 512).kv_bytes == 8'388'608);

  const GgufModel off = load_llamacpp_fixture("llama4-nochunk");
  CHECK(kvplan::describe_layers(off.spec) == "4 full");
}

TEST_CASE("gemma3n: period 5, and layers past 20 read layer 18 or 19's cells", "[gguf_archs]") {
  const GgufModel m = load_llamacpp_fixture("gemma3n");
  REQUIRE(m.spec.layers.size() == 22);
  // il % 5 < 4 slides: 0-3, 5-8, 10-13, 15-18 (16 layers); 4, 9, 14, 19 global; 20, 21 shared.
  CHECK(m.spec.layers[19].kind == LayerKind::full);
  CHECK(m.spec.layers[18].kind == LayerKind::sliding);
  CHECK(m.spec.layers[20].kind == LayerKind::shared);
  CHECK(m.spec.layers[21].kind == LayerKind::shared);
  CHECK(gguf_archs_note(m, "first 20 layers"));
  // n_ctx 8192, 2 sequences, ubatch 513: 4 global layers x 4096 cells, 16 sliding x
  // pad256(128 + 513) = 768 cells; 128 (2 x 64) x 2 B x 2 streams x (K + V) per cell and layer.
  const LlamaCppResult r = gguf_archs_plan(m, 8192, 2, 513);
  CHECK(r.kv_bytes == (4 * 4096 + 16 * 768) * 128 * 2 * 2 * 2);
}

TEST_CASE("gemma4: a per-layer bool pattern, head sizes by cache, shared_kv_layers from the end", "[gguf_archs]") {
  const GgufModel m = load_llamacpp_fixture("gemma4");
  REQUIRE(m.spec.layers.size() == 6);
  CHECK(m.spec.layers[0].kind == LayerKind::sliding);
  CHECK(m.spec.layers[0].k_head_dim == 32);
  CHECK(m.spec.layers[0].kv_heads == 2);
  CHECK(m.spec.layers[0].window == 128);
  CHECK(m.spec.layers[1].kind == LayerKind::full);
  CHECK(m.spec.layers[1].k_head_dim == 64);
  CHECK(m.spec.layers[1].kv_heads == 1);
  CHECK(m.spec.layers[4].kind == LayerKind::shared);  // block_count 6 - shared_kv_layers 2 = 4
  CHECK(m.spec.layers[5].kind == LayerKind::shared);
  CHECK(gguf_archs_note(m, "sliding ones read layer 2, global ones layer 3"));
  // n_ctx 4096, 1 sequence, ubatch 512: global layers 1 and 3 x 4096 cells x 64 (1 x 64);
  // sliding layers 0 and 2 x pad256(128 + 512) = 768 cells x 64 (2 x 32); x 2 B x (K + V):
  // (2 x 4096 x 64 + 2 x 768 x 64) x 4 = 2,490,368.
  const LlamaCppResult r = gguf_archs_plan(m, 4096, 1, 512);
  CHECK(r.kv_bytes == 2'490'368);

  // llama_model_gemma4::load_arch_hparams reads the pattern with get_key_or_arr(..., required).
  kvplan::testing::GgufWriter no_pattern = gguf_archs_bare("gemma4");
  no_pattern.add_uint32("gemma4.attention.sliding_window", 128);
  CHECK(gguf_archs_load_code(no_pattern) == kvplan::ExitCode::invalid_input);
}

TEST_CASE("olmo2 slides only with a window, exaone4 only at 64 layers", "[gguf_archs]") {
  CHECK(kvplan::describe_layers(load_llamacpp_fixture("olmo2").spec) == "4 full");
  CHECK(kvplan::describe_layers(load_llamacpp_fixture("olmo2-swa").spec) == "3 sliding(128) + 1 full");
  const GgufModel small = load_llamacpp_fixture("exaone4");
  CHECK(kvplan::describe_layers(small.spec) == "4 full");
  CHECK(gguf_archs_note(small, "ignored by llama.cpp for a 4-layer model"));
  const GgufModel big = load_llamacpp_fixture("exaone4-64");
  CHECK(kvplan::describe_layers(big.spec) == "48 sliding(128) + 16 full");
}

TEST_CASE("glm4moe and ernie4_5: plain caches, experts counted", "[gguf_archs]") {
  const GgufModel glm = load_llamacpp_fixture("glm4moe");
  CHECK(kvplan::describe_layers(glm.spec) == "4 full");
  CHECK(glm.spec.layers[0].k_head_dim == 64);
  CHECK(glm.spec.layers[0].kv_heads == 2);
  // 3 MoE layers x 3 x 128 x 32 x 4 = 147,456 expert elements, 2 of 4 used.
  CHECK(glm.spec.active_params == glm.spec.params - 147'456 + 73'728);
  CHECK(kvplan::describe_layers(load_llamacpp_fixture("ernie4_5").spec) == "4 full");
  const GgufModel ernie = load_llamacpp_fixture("ernie4_5-moe");
  CHECK(ernie.spec.active_params == ernie.spec.params - 147'456 + 73'728);
}

TEST_CASE("docs/engines/llamacpp.md lists exactly the architectures the GGUF loader reads", "[gguf_archs][docs]") {
  std::ifstream in(std::filesystem::path(KVPLAN_SOURCE_DIR) / "docs" / "engines" / "llamacpp.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const std::string head = "Architectures read: ";
  const std::size_t begin = doc.find(head);
  REQUIRE(begin != std::string::npos);
  const std::size_t end = doc.find('.', begin);  // the list ends at its full stop
  std::string listed = doc.substr(begin + head.size(), end - begin - head.size());
  for (char& c : listed)
    if (c == '\n') c = ' ';
  std::string expected;
  for (const std::string_view arch : kvplan::gguf_supported_architectures())
    expected += (expected.empty() ? "" : ", ") + std::string(arch);
  CHECK(listed == expected);
}

TEST_CASE("nemotron_h: Mamba-2 where heads and FFN are 0, attention, and MLP layers without cache", "[gguf_archs]") {
  const GgufModel m = load_llamacpp_fixture("nemotron_h");
  REQUIRE(m.spec.layers.size() == 4);
  CHECK(m.spec.layers[0].kind == LayerKind::linear);
  CHECK(m.spec.layers[1].kind == LayerKind::full);
  CHECK(m.spec.layers[2].kind == LayerKind::none);
  CHECK(m.spec.layers[3].kind == LayerKind::linear);
  // n_ctx 8192, 2 sequences: 1 attention layer x 4096 cells x 64 x 2 B x 2 streams x (K + V)
  // = 2,097,152; state per sequence and Mamba-2 layer: conv 3 x (256 + 2 x 16) = 864 and SSM
  // 16 x 256 = 4096 f32 values, 2 cells x 2 layers x 4 B x 4960 = 79,360.
  const LlamaCppResult r = gguf_archs_plan(m, 8192, 2, 512);
  CHECK(r.kv_bytes == 2'097'152);
  CHECK(r.recurrent_bytes == 79'360);
}

TEST_CASE("falcon-h1: every layer keeps K/V cells and Mamba-2 state", "[gguf_archs]") {
  const GgufModel m = load_llamacpp_fixture("falcon-h1");
  REQUIRE(m.spec.layers.size() == 4);
  CHECK(m.spec.layers[0].kind == LayerKind::full);
  CHECK(m.spec.layers[0].state.size() == 2);
  // n_ctx 8192, 2 sequences: 4 layers x 4096 cells x 64 x 2 B x 2 streams x (K + V) = 8,388,608;
  // state per sequence and layer: conv 3 x (256 + 2 x 16) = 864 and SSM 16 x 256 = 4096 f32
  // values: 2 cells x 4 layers x 4 B x 4960 = 158,720.
  const LlamaCppResult r = gguf_archs_plan(m, 8192, 2, 512);
  CHECK(r.kv_bytes == 8'388'608);
  CHECK(r.recurrent_bytes == 158'720);
  REQUIRE(r.recurrent);
  CHECK(r.recurrent->layers == 4);
}

TEST_CASE("minicpm3: low ranks read, full K (64) and V (32) heads cached for every head", "[gguf_archs]") {
  const GgufModel m = load_llamacpp_fixture("minicpm3");
  CHECK(kvplan::describe_layers(m.spec) == "4 full");
  CHECK(m.spec.layers[0].kv_heads == 4);  // head_count_kv absent: n_head
  CHECK(m.spec.layers[0].k_head_dim == 64);
  CHECK(m.spec.layers[0].v_head_dim == 32);
  CHECK(gguf_archs_note(m, "caches full K and V"));
  // n_ctx 8192, 2 sequences: 4 layers x 4096 cells x 2 streams x (4 x 64 + 4 x 32 = 384) x 2 B
  // = 25,165,824 (the latent rank 64 appears nowhere: llama.cpp caches the expanded heads).
  CHECK(gguf_archs_plan(m, 8192, 2, 512).kv_bytes == 25'165'824);

  // llama_model_minicpm3::load_arch_hparams reads both ranks with get_key(..., required).
  kvplan::testing::GgufWriter no_q_rank = gguf_archs_bare("minicpm3");
  no_q_rank.add_uint32("minicpm3.attention.kv_lora_rank", 64);
  CHECK(gguf_archs_load_code(no_q_rank) == kvplan::ExitCode::invalid_input);
}

TEST_CASE("qwen2moe, granitemoe, dots1, bailingmoe: plain caches, routed experts counted", "[gguf_archs]") {
  // Routed experts per MoE layer: 3 matrices x 128 x 32 x 4 = 49,152 elements, 2 of 4 used; the
  // shared experts (_shexp) always run.
  const GgufModel qwen = load_llamacpp_fixture("qwen2moe");
  CHECK(kvplan::describe_layers(qwen.spec) == "4 full");
  CHECK(qwen.spec.active_params == qwen.spec.params - 4 * 49'152 + 4 * 24'576);
  const GgufModel granite = load_llamacpp_fixture("granitemoe");
  CHECK(granite.spec.active_params == granite.spec.params - 4 * 49'152 + 4 * 24'576);
  const GgufModel bailing = load_llamacpp_fixture("bailingmoe");
  CHECK(bailing.spec.active_params == bailing.spec.params - 4 * 49'152 + 4 * 24'576);
  // dots1: layer 0 dense (leading_dense_block_count 1), 3 MoE layers; 4 K/V heads of 32.
  const GgufModel dots = load_llamacpp_fixture("dots1");
  CHECK(dots.spec.active_params == dots.spec.params - 3 * 49'152 + 3 * 24'576);
  CHECK(dots.spec.layers[0].kv_heads == 4);
  // n_ctx 8192, 1 sequence: 4 layers x 8192 cells x (4 x 32) x 2 B x (K + V) = 16,777,216.
  CHECK(gguf_archs_plan(dots, 8192, 1, 512).kv_bytes == 16'777'216);
}

TEST_CASE("hunyuan-dense, apertus, arcee: one plain cache of 2 K/V heads of 32", "[gguf_archs]") {
  for (const char* name : {"hunyuan-dense", "apertus", "arcee"}) {
    INFO(name);
    const GgufModel m = load_llamacpp_fixture(name);
    CHECK(kvplan::describe_layers(m.spec) == "4 full");
    CHECK(m.spec.layers[0].kv_heads == 2);
    CHECK(m.spec.layers[0].k_head_dim == 32);
    // n_ctx 4096, 1 sequence: 4 layers x 4096 cells x 64 x 2 B x (K + V) = 4,194,304.
    CHECK(gguf_archs_plan(m, 4096, 1, 512).kv_bytes == 4'194'304);
  }
}

TEST_CASE("qwen35: qwen3next's gated delta net state, rope sections required", "[gguf_archs]") {
  const GgufModel m = load_llamacpp_fixture("qwen35");
  REQUIRE(m.spec.layers.size() == 4);
  CHECK(m.spec.layers[0].kind == LayerKind::linear);
  CHECK(m.spec.layers[2].kind == LayerKind::linear);
  CHECK(m.spec.layers[3].kind == LayerKind::full);  // (3 + 1) % 4 == 0
  CHECK(gguf_archs_note(m, "qwen35: layer il is full attention iff (il + 1) % 4 == 0"));
  // n_ctx 8192, 2 sequences: 1 attention layer x 4096 cells x 128 (2 x 64) x 2 B x 2 streams x
  // (K + V) = 4,194,304; state per sequence and recurrent layer: conv 3 x (64 + 2 x 2 x 16) = 384
  // and SSM 16 x 64 = 1024 f32 values: 2 cells x 3 layers x 4 B x 1408 = 33,792.
  const LlamaCppResult r = gguf_archs_plan(m, 8192, 2, 512);
  CHECK(r.kv_bytes == 4'194'304);
  CHECK(r.recurrent_bytes == 33'792);

  // llama_model_qwen35::load_arch_hparams: get_key_or_arr(ROPE_DIMENSION_SECTIONS, ..., true).
  kvplan::testing::GgufWriter no_sections = gguf_archs_bare("qwen35");
  CHECK(gguf_archs_load_code(no_sections) == kvplan::ExitCode::invalid_input);
}

TEST_CASE("qwen35moe: qwen35's state and layers, experts counted as active 2 of 4", "[gguf_archs]") {
  const GgufModel m = load_llamacpp_fixture("qwen35moe");
  REQUIRE(m.spec.layers.size() == 4);
  CHECK(m.spec.layers[1].kind == LayerKind::linear);
  CHECK(m.spec.layers[3].kind == LayerKind::full);
  CHECK(gguf_archs_note(m, "qwen35moe: layer il is full attention iff (il + 1) % 4 == 0"));
  // The same caches as qwen35's fixture (the experts change no cache): 4,194,304 B of K/V and
  // 33,792 B of state at n_ctx 8192, 2 sequences.
  const LlamaCppResult r = gguf_archs_plan(m, 8192, 2, 512);
  CHECK(r.kv_bytes == 4'194'304);
  CHECK(r.recurrent_bytes == 33'792);
  // Routed experts per layer: 3 x 128 x 32 x 4 = 49,152; 2 of 4 active: 4 x 24,576 fewer.
  CHECK(m.spec.active_params == m.spec.params - 4 * 49'152 + 4 * 24'576);

  kvplan::testing::GgufWriter no_sections = gguf_archs_bare("qwen35moe");
  CHECK(gguf_archs_load_code(no_sections) == kvplan::ExitCode::invalid_input);
}

TEST_CASE("kimi-linear: KDA where head_count_kv is 0, K-only MLA elsewhere", "[gguf_archs]") {
  const GgufModel m = load_llamacpp_fixture("kimi-linear");
  REQUIRE(m.spec.layers.size() == 4);
  CHECK(m.spec.layers[0].kind == LayerKind::linear);
  CHECK(m.spec.layers[2].kind == LayerKind::linear);
  CHECK(m.spec.layers[3].kind == LayerKind::mla);
  CHECK(m.spec.layers[3].kv_heads == 1);
  CHECK(m.spec.layers[3].k_head_dim == 96);  // key_length: kv_lora_rank 64 + rope 32
  // llama_hparams::n_embd_r(): 3 x (conv_kernel 4 - 1) x 4 heads x kda.head_dim 16 = 576;
  // n_embd_s(): 16 x 16 x 4 = 1024.
  REQUIRE(m.spec.layers[0].state.size() == 2);
  CHECK(m.spec.layers[0].state[0].elements == 576);
  CHECK(m.spec.layers[0].state[1].elements == 1024);
  CHECK(gguf_archs_note(m, "kimi-linear: layers with head_count_kv 0 are KDA"));
  // n_ctx 8192, 2 sequences: K only, 1 MLA layer x 4096 cells x 96 x 2 B x 2 streams = 1,572,864;
  // state: 2 cells x 3 KDA layers x 4 B x (576 + 1024) = 38,400. The real llama.cpp (fixture,
  // --context-size 4096 --sequences 2) logs K (f16) 1.50 MiB, V 0.00 MiB, R 0.01 MiB, S 0.02 MiB,
  // and its memoryModuleBytesRange [1,611,257, 1,611,361] holds 1,572,864 + 38,400 = 1,611,264.
  const LlamaCppResult r = gguf_archs_plan(m, 8192, 2, 512);
  CHECK(r.kv_bytes == 1'572'864);
  CHECK(r.recurrent_bytes == 38'400);
  // Routed experts on layers 1-3: 3 x 128 x 32 x 4 = 49,152 each; 2 of 4 active.
  CHECK(m.spec.active_params == m.spec.params - 3 * 49'152 + 3 * 24'576);

  // llama_model_kimi_linear::load_arch_hparams reads kda.head_dim with get_key (required).
  kvplan::testing::GgufWriter no_head = gguf_archs_bare("kimi-linear");
  no_head.add_uint32("kimi-linear.attention.kv_lora_rank", 64);
  no_head.add_uint32("kimi-linear.attention.key_length_mla", 64);
  no_head.add_uint32("kimi-linear.attention.value_length_mla", 32);
  no_head.add_uint32("kimi-linear.ssm.conv_kernel", 4);
  CHECK(gguf_archs_load_code(no_head) == kvplan::ExitCode::invalid_input);
  // MLA head sizes of 0 turn llama.cpp's is_mla() off, a cache layout kvplan does not model.
  kvplan::testing::GgufWriter no_mla = gguf_archs_bare("kimi-linear");
  no_mla.add_uint32("kimi-linear.attention.kv_lora_rank", 64);
  no_mla.add_uint32("kimi-linear.attention.key_length_mla", 0);
  no_mla.add_uint32("kimi-linear.attention.value_length_mla", 0);
  CHECK(gguf_archs_load_code(no_mla) == kvplan::ExitCode::unsupported_architecture);

  // Kimi-Linear-48B-A3B's keys as conversion/kimi_linear.py writes them from its config.json
  // (fixture kimi-linear-48b-a3b: 27 layers, MLA at 1-based 4, 8, ..., 24, 27, 32 heads, KDA
  // head_dim 128, conv kernel 4, kv_lora_rank 512 + rope 64). llama.cpp's own comments in
  // n_embd_r() / n_embd_s() give d_inner 32 x 128 = 4096 and a state of 524,288; the conv state is
  // 3 x 3 x 4096 = 36,864 values, as the config.json route counts them (f32 here, bf16 in vLLM).
  kvplan::testing::GgufWriter k48;
  k48.add_string("general.architecture", "kimi-linear");
  k48.add_uint32("kimi-linear.block_count", 27);
  k48.add_uint32("kimi-linear.embedding_length", 2304);
  k48.add_uint32("kimi-linear.context_length", 1048576);
  k48.add_uint32("kimi-linear.attention.head_count", 32);
  std::vector<std::int32_t> kv_heads(27, 0);
  for (const int full : {4, 8, 12, 16, 20, 24, 27}) kv_heads[static_cast<std::size_t>(full - 1)] = 1;
  k48.add_array_int32("kimi-linear.attention.head_count_kv", kv_heads);
  k48.add_uint32("kimi-linear.attention.kv_lora_rank", 512);
  k48.add_uint32("kimi-linear.rope.dimension_count", 64);
  k48.add_uint32("kimi-linear.attention.key_length", 576);
  k48.add_uint32("kimi-linear.attention.key_length_mla", 192);
  k48.add_uint32("kimi-linear.attention.value_length_mla", 128);
  k48.add_uint32("kimi-linear.ssm.conv_kernel", 4);
  k48.add_uint32("kimi-linear.kda.head_dim", 128);
  k48.add_uint32("kimi-linear.expert_feed_forward_length", 1024);
  k48.add_uint32("kimi-linear.expert_shared_count", 1);
  k48.add_uint32("kimi-linear.expert_gating_func", 2);
  k48.add_tensor("token_embd.weight", 0, {2304, 8});
  kvplan::testing::TempDir k48_dir;
  const std::string k48_path = k48_dir.file("kimi-linear-48b.gguf");
  k48.write(k48_path);
  const GgufModel big = kvplan::load_gguf_model(k48_path);
  CHECK(kvplan::describe_layers(big.spec) == "20 linear + 7 mla");
  CHECK(big.spec.layers[3].kind == LayerKind::mla);
  CHECK(big.spec.layers[26].kind == LayerKind::mla);
  CHECK(big.spec.layers[0].state[0].elements == 36'864);
  CHECK(big.spec.layers[0].state[1].elements == 524'288);
  // n_ctx 8192, 1 sequence: K 7 x 576 x 2 B x 8192 = 66,060,288; state 20 x 4 B x (36,864 +
  // 524,288) = 44,892,160.
  const LlamaCppResult big_r = gguf_archs_plan(big, 8192, 1, 512);
  CHECK(big_r.kv_bytes == 66'060'288);
  CHECK(big_r.recurrent_bytes == 44'892'160);
}

TEST_CASE("deepseek32: MLA and the DSA indexer's second K-only cache, nextn filtered", "[gguf_archs]") {
  const GgufModel m = load_llamacpp_fixture("deepseek32");
  REQUIRE(m.spec.layers.size() == 4);  // block_count 5 less nextn_predict_layers 1
  CHECK(m.spec.mtp_layers == 1);
  for (const kvplan::LayerSpec& layer : m.spec.layers) {
    CHECK(layer.kind == LayerKind::mla);
    CHECK(layer.k_head_dim == 128);     // key_length: kv_lora_rank 96 + rope 32
    CHECK(layer.index_head_dim == 64);  // attention.indexer.key_length
  }
  CHECK(gguf_archs_note(m, "deepseek32: MLA (K only, key_length wide) and the DSA indexer's keys, 64 wide"));
  // n_ctx 8192, 2 sequences: 4096 cells x 2 streams. The real llama.cpp (fixture, --context-size
  // 4096 --sequences 2) logs "creating main KV cache" then
  //   size = 8.00 MiB (4096 cells, 4 layers, 2/2 seqs), K (f16): 8.00 MiB, V (f16): 0.00 MiB
  // and "creating indexer KV cache" then
  //   size = 4.00 MiB (4096 cells, 4 layers, 2/2 seqs), K (f16): 4.00 MiB, V (f16): 0.00 MiB
  // with layer 4 "filtered" in both; memoryModuleBytesRange [12,582,857, 12,582,961].
  const LlamaCppResult r = gguf_archs_plan(m, 8192, 2, 512);
  REQUIRE(r.caches.size() == 2);
  CHECK(r.caches[0].role == "main KV");
  CHECK(r.caches[0].layers == 4);
  CHECK(r.caches[0].k_bytes == 8'388'608);  // 4 layers x 4096 x 2 streams x 128 x 2 B
  CHECK(r.caches[0].v_bytes == 0);
  CHECK(r.caches[1].role == "indexer KV");
  CHECK(r.caches[1].layers == 4);
  CHECK(r.caches[1].cells == 4096);
  CHECK(r.caches[1].streams == 2);
  CHECK(r.caches[1].k_bytes == 4'194'304);  // 4 layers x 4096 x 2 streams x 64 (one head) x 2 B
  CHECK(r.caches[1].v_bytes == 0);
  CHECK(r.kv_bytes == 12'582'912);
  CHECK(r.host_cache_bytes == 12'582'912);  // -ngl 0: every layer in host memory

  // The indexer takes the K type: q8_0 rows of 64 are 2 blocks of 34 B = 68 B;
  // 4 x 4096 x 2 x 68 = 2,228,224 (the MLA rows: 128 -> 136 B, 4,456,448).
  LlamaCppSettings q8;
  q8.n_ctx = 8192;
  q8.n_parallel = 2;
  q8.type_k = q8.type_v = &kvplan::ggml_type_by_name("q8_0");
  q8.flash_attn = LlamaCppFlashAttn::on;
  q8.n_gpu_layers = 0;
  const LlamaCppResult rq = kvplan::plan_llamacpp(m.spec, q8, kvplan::llamacpp_facts(m.spec));
  REQUIRE(rq.caches.size() == 2);
  CHECK(rq.caches[1].k_bytes == 2'228'224);
  CHECK(rq.kv_bytes == 4'456'448 + 2'228'224);

  // A config.json's indexer (Hugging Face's layer rule) is not llama.cpp's: still exit 3.
  kvplan::ModelSpec hf = m.spec;
  hf.architecture = "deepseek_v32";
  hf.file.reset();
  try {
    (void)kvplan::plan_llamacpp(hf, q8);
    FAIL("an indexer outside a deepseek32 / glm-dsa GGUF was priced");
  } catch (const kvplan::Error& e) {
    CHECK(e.code() == kvplan::ExitCode::unsupported_architecture);
  }

  // load_arch_tensors throws "DEEPSEEK32 architecture requires MLA" without the _mla head sizes,
  // and load_arch_hparams reads the indexer keys with get_key (required).
  const auto dsa_bare = [] {
    kvplan::testing::GgufWriter w = gguf_archs_bare("deepseek32");
    w.add_uint32("deepseek32.attention.head_count_kv", 1);
    w.add_uint32("deepseek32.attention.q_lora_rank", 64);
    w.add_uint32("deepseek32.attention.kv_lora_rank", 96);
    w.add_uint32("deepseek32.rope.dimension_count", 32);
    w.add_uint32("deepseek32.attention.key_length", 128);
    w.add_uint32("deepseek32.attention.indexer.head_count", 2);
    w.add_uint32("deepseek32.attention.indexer.top_k", 16);
    w.add_uint32("deepseek32.expert_feed_forward_length", 32);
    w.add_uint32("deepseek32.expert_shared_count", 1);
    w.add_uint32("deepseek32.expert_gating_func", 2);
    return w;
  };
  kvplan::testing::GgufWriter no_mla = dsa_bare();
  no_mla.add_uint32("deepseek32.attention.indexer.key_length", 64);
  CHECK(gguf_archs_load_code(no_mla) == kvplan::ExitCode::invalid_input);
  kvplan::testing::GgufWriter no_width = dsa_bare();
  no_width.add_uint32("deepseek32.attention.key_length_mla", 64);
  no_width.add_uint32("deepseek32.attention.value_length_mla", 32);
  CHECK(gguf_archs_load_code(no_width) == kvplan::ExitCode::invalid_input);
  // An indexer head narrower than the rope (16 < 32): the graph's GGML_ASSERT(n_rot <= it).
  kvplan::testing::GgufWriter narrow = no_width;
  narrow.add_uint32("deepseek32.attention.indexer.key_length", 16);
  CHECK(gguf_archs_load_code(narrow) == kvplan::ExitCode::invalid_input);
  kvplan::testing::GgufWriter whole = no_width;
  whole.add_uint32("deepseek32.attention.indexer.key_length", 64);
  CHECK(gguf_archs_load_code(whole) == kvplan::ExitCode::ok);
}

TEST_CASE("glm-dsa: the indexer cache on the layers attention.indexer.types marks full", "[gguf_archs]") {
  const GgufModel m = load_llamacpp_fixture("glm-dsa");
  REQUIRE(m.spec.layers.size() == 4);
  CHECK(m.spec.mtp_layers == 1);
  CHECK(m.spec.layers[0].index_head_dim == 64);
  CHECK(m.spec.layers[1].index_head_dim == 0);  // types [true, false, true, false]
  CHECK(m.spec.layers[2].index_head_dim == 64);
  CHECK(m.spec.layers[3].index_head_dim == 0);
  CHECK(m.spec.layers[3].kind == LayerKind::mla);
  CHECK(gguf_archs_note(m, "on the 2 of 4 trunk layers whose indexer is full (attention.indexer.types)"));
  // The real llama.cpp (fixture, --context-size 4096 --sequences 2) logs
  //   main KV:    size = 8.00 MiB (4096 cells, 4 layers, 2/2 seqs), K (f16): 8.00 MiB, V (f16): 0.00 MiB
  //   indexer KV: size = 2.00 MiB (4096 cells, 2 layers, 2/2 seqs), K (f16): 2.00 MiB, V (f16): 0.00 MiB
  // memoryModuleBytesRange [10,485,705, 10,485,809].
  const LlamaCppResult r = gguf_archs_plan(m, 8192, 2, 512);
  REQUIRE(r.caches.size() == 2);
  CHECK(r.caches[0].k_bytes == 8'388'608);  // 4 x 4096 x 2 streams x 128 x 2 B
  CHECK(r.caches[1].layers == 2);
  CHECK(r.caches[1].k_bytes == 2'097'152);  // 2 x 4096 x 2 x 64 x 2 B
  CHECK(r.kv_bytes == 10'485'760);

  // Without the key and trained on 1,048,576 (GLM 5.2): llama.cpp's GLM_5_2_DEFAULT_INDEXER_TYPES,
  // 1, 1, then 1, 0, 0, 0 from layer 2: layers 0, 1 and 2 full. The real llama.cpp logs the
  // indexer cache with 3 layers, 3.00 MiB (same settings); 3 x 4096 x 2 x 64 x 2 B = 3,145,728.
  const GgufModel table = load_llamacpp_fixture("glm-dsa-table");
  CHECK(table.spec.layers[2].index_head_dim == 64);
  CHECK(table.spec.layers[3].index_head_dim == 0);
  CHECK(gguf_archs_note(table, "llama.cpp's built-in GLM 5.2 table"));
  const LlamaCppResult rt = gguf_archs_plan(table, 8192, 2, 512);
  REQUIRE(rt.caches.size() == 2);
  CHECK(rt.caches[1].layers == 3);
  CHECK(rt.caches[1].k_bytes == 3'145'728);

  // The table at GLM 5.2's own size, 78 layers: 0, 1, 2, 6, ..., 74 are full: 2 + 19 = 21.
  const auto glm_bare = [](std::uint32_t layers, std::uint32_t context) {
    kvplan::testing::GgufWriter w;
    w.add_string("general.architecture", "glm-dsa");
    w.add_uint32("glm-dsa.block_count", layers);
    w.add_uint32("glm-dsa.embedding_length", 128);
    w.add_uint32("glm-dsa.context_length", context);
    w.add_uint32("glm-dsa.attention.head_count", 4);
    w.add_uint32("glm-dsa.attention.head_count_kv", 1);
    w.add_uint32("glm-dsa.attention.q_lora_rank", 64);
    w.add_uint32("glm-dsa.attention.kv_lora_rank", 96);
    w.add_uint32("glm-dsa.rope.dimension_count", 32);
    w.add_uint32("glm-dsa.attention.key_length", 128);
    w.add_uint32("glm-dsa.attention.key_length_mla", 64);
    w.add_uint32("glm-dsa.attention.value_length_mla", 32);
    w.add_uint32("glm-dsa.attention.indexer.head_count", 2);
    w.add_uint32("glm-dsa.attention.indexer.key_length", 64);
    w.add_uint32("glm-dsa.attention.indexer.top_k", 16);
    w.add_uint32("glm-dsa.expert_feed_forward_length", 32);
    w.add_uint32("glm-dsa.expert_shared_count", 1);  // expert_gating_func: glm-dsa defaults it
    w.add_tensor("token_embd.weight", 0, {128, 8});
    return w;
  };
  const auto indexed = [](const kvplan::testing::GgufWriter& w) {
    kvplan::testing::TempDir dir;
    const std::string path = dir.file("glm.gguf");
    w.write(path);
    const GgufModel g = kvplan::load_gguf_model(path);
    std::uint32_t n = 0;
    for (const kvplan::LayerSpec& layer : g.spec.layers) n += layer.index_head_dim != 0;
    return n;
  };
  CHECK(indexed(glm_bare(78, 1'048'576)) == 21);
  CHECK(indexed(glm_bare(78, 202'752)) == 78);  // GLM 5 / 5.1: below 1,048,576, every layer
  CHECK(indexed(glm_bare(90, 1'048'576)) == 21);  // the table is 0 past its 78 entries
  // A shared first layer: the graph asserts a shared indexer layer follows a full one.
  kvplan::testing::GgufWriter shared_first = glm_bare(4, 8192);
  shared_first.add_array_bool("glm-dsa.attention.indexer.types", {false, true, true, true});
  CHECK(gguf_archs_load_code(shared_first) == kvplan::ExitCode::invalid_input);
  kvplan::testing::GgufWriter short_types = glm_bare(4, 8192);
  short_types.add_array_bool("glm-dsa.attention.indexer.types", {true, true, true});
  CHECK(gguf_archs_load_code(short_types) == kvplan::ExitCode::invalid_input);
}
