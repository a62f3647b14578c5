// GGUF -> ModelSpec: every fixture architecture read as llama.cpp v0.4.0 reads it, and hostile
// metadata refused with the key named.

#include <atomic>
#include <filesystem>
#include <functional>
#include <string>

#include <catch2/catch.hpp>
#include <unistd.h>

#include "support/temp_dir.h"
#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "loaders/gguf_model.h"
#include "kvplan/model_loader.h"
#include "support/gguf_writer.h"
#include "support/llamacpp_fixture_model.h"

using kvplan::ExitCode;
using kvplan::GgufModel;
using kvplan::LayerKind;
using kvplan::LayerSpec;
using kvplan::testing::GgufWriter;
using kvplan::testing::load_llamacpp_fixture;
using kvplan::testing::make_llamacpp_fixture;

using kvplan::testing::TempDir;

namespace {


GgufModel load(const GgufWriter& writer) {
  TempDir dir;
  const std::string path = dir.file("model.gguf");
  writer.write(path);
  return kvplan::load_gguf_model(path);
}


/// The Error loading `writer` throws: its exit code and message.
std::pair<ExitCode, std::string> load_error(const GgufWriter& writer) {
  try {
    load(writer);
  } catch (const kvplan::Error& e) {
    return {e.code(), e.what()};
  }
  FAIL("loading did not throw");
  return {ExitCode::ok, ""};
}

/// A llama file with everything the reader needs, minus `skip`, plus `extra`.
GgufWriter minimal_llama(const std::string& skip = "", const std::function<void(GgufWriter&)>& extra = {}) {
  GgufWriter w;
  const auto add_u32 = [&](const std::string& key, std::uint32_t v) {
    if (key != skip) w.add_uint32(key, v);
  };
  if (skip != "general.architecture") w.add_string("general.architecture", "llama");
  add_u32("llama.block_count", 4);
  add_u32("llama.embedding_length", 128);
  add_u32("llama.context_length", 8192);
  add_u32("llama.attention.head_count", 4);
  add_u32("llama.attention.head_count_kv", 2);
  if (extra) extra(w);
  w.add_tensor("token_embd.weight", 0, {128, 8});
  return w;
}

void check_attention(const LayerSpec& layer, LayerKind kind, std::uint32_t kv, std::uint32_t k, std::uint32_t v,
                     std::uint64_t window = 0) {
  CHECK(layer.kind == kind);
  CHECK(layer.kv_heads == kv);
  CHECK(layer.k_head_dim == k);
  CHECK(layer.v_head_dim == v);
  CHECK(layer.window == window);
}

bool has_note(const GgufModel& m, const std::string& text) {
  for (const std::string& note : m.spec.file->notes)
    if (note.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("llama: plain attention, exact weights, params and per-layer bytes", "[gguf_model]") {
  const GgufModel m = load_llamacpp_fixture("llama");
  const kvplan::ModelSpec& s = m.spec;
  CHECK(s.architecture == "llama");
  CHECK(s.name == "kvplan fixture llama");
  CHECK(s.attention_heads == 4);
  CHECK(s.max_context == 8192);
  REQUIRE(s.layers.size() == 4);
  for (const LayerSpec& layer : s.layers) check_attention(layer, LayerKind::full, 2, 32, 32);
  // Per layer, f32: attn_norm 128 + q 128x128 + k 128x64 + v 128x64 + o 128x128 + ffn_norm 128
  // + gate/up/down 3 x 128x256 = 147,712 values = 590,848 bytes.
  CHECK(s.layer_weights_bytes == std::vector<std::uint64_t>(4, 590'848));
  // + token_embd 128x8 + output_norm 128 + output 128x8 = 2,176 values = 8,704 bytes.
  CHECK(s.weights_bytes == 4 * 590'848 + 8'704);
  CHECK(s.params == (4 * 590'848 + 8'704) / 4);
  CHECK(s.active_params == 0);
  CHECK(s.weights_source == "sum of GGUF tensor sizes");
  CHECK(s.weight_dtype->name == "fp32");
  CHECK(m.spec.vocab_size == 8);
  CHECK(m.spec.file->n_embd == 128);
  CHECK_FALSE(m.spec.file->output_tied);
}

TEST_CASE("vocab_size is llama.cpp's n_vocab: <arch>.vocab_size, else the token list, else token_embd rows",
          "[gguf_model]") {
  CHECK(load_llamacpp_fixture("llama").spec.vocab_size == 8);  // the fixtures' 8-token gpt2 vocabulary
  // minimal_llama has no token list: the rows of token_embd {128, 8}.
  CHECK(load(minimal_llama()).spec.vocab_size == 8);
  const GgufModel listed = load(minimal_llama("", [](GgufWriter& w) {
    w.add_array_string("tokenizer.ggml.tokens", {"<s>", "a", "b"});
  }));
  CHECK(listed.spec.vocab_size == 3);
  CHECK(listed.spec.vocab_size == 3);
  const GgufModel keyed = load(minimal_llama("", [](GgufWriter& w) {
    w.add_array_string("tokenizer.ggml.tokens", {"<s>", "a", "b"});
    w.add_uint32("llama.vocab_size", 5);
  }));
  CHECK(keyed.spec.vocab_size == 5);
}

TEST_CASE("llama with a sliding_window key: llama.cpp ignores it, and kvplan says so", "[gguf_model]") {
  const GgufModel m = load_llamacpp_fixture("llama-swa-ignored");
  for (const LayerSpec& layer : m.spec.layers) check_attention(layer, LayerKind::full, 2, 32, 32);
  CHECK(has_note(m, "attention.sliding_window = 128 is ignored by llama.cpp"));
  CHECK(m.spec.file->output_tied);  // no output.weight
  CHECK(m.spec.file->token_embd_bytes == 128 * 8 * 4);
}

TEST_CASE("MoE: active parameters count expert_used_count of expert_count experts", "[gguf_model]") {
  const GgufModel m = load_llamacpp_fixture("llama-moe");
  // Per layer: q/k/v/o 49,152 + attn_norm and ffn_norm 256 + router 512 + 3 expert tensors of
  // 4 x 128 x 256 (393,216 values) = 443,136; + 2,176 outside the layers.
  CHECK(m.spec.params == 4 * 443'136 + 2'176);
  // Routed experts: 4 layers x 393,216 = 1,572,864, of which 2 of 4 are active per token.
  CHECK(m.spec.active_params == m.spec.params - 1'572'864 / 2);
}

TEST_CASE("qwen2, qwen3, qwen3moe: head sizes from key_length/value_length or n_embd / n_head", "[gguf_model]") {
  for (const LayerSpec& layer : load_llamacpp_fixture("qwen2").spec.layers) check_attention(layer, LayerKind::full, 2, 32, 32);
  for (const LayerSpec& layer : load_llamacpp_fixture("qwen3").spec.layers) check_attention(layer, LayerKind::full, 2, 64, 64);
  const GgufModel moe = load_llamacpp_fixture("qwen3moe");
  for (const LayerSpec& layer : moe.spec.layers) check_attention(layer, LayerKind::full, 2, 64, 64);
  CHECK(moe.spec.active_params > 0);
}

TEST_CASE("gemma2: llama.cpp's hard-coded period 2, window from the key", "[gguf_model]") {
  const GgufModel m = load_llamacpp_fixture("gemma2");
  REQUIRE(m.spec.layers.size() == 4);
  check_attention(m.spec.layers[0], LayerKind::sliding, 2, 64, 64, 256);
  check_attention(m.spec.layers[1], LayerKind::full, 2, 64, 64);
  check_attention(m.spec.layers[2], LayerKind::sliding, 2, 64, 64, 256);
  check_attention(m.spec.layers[3], LayerKind::full, 2, 64, 64);
  CHECK(has_note(m, "default period 2"));
  CHECK(m.spec.file->output_tied);
}

TEST_CASE("gemma3: every 6th layer global without a pattern key, pattern 0 makes all sliding", "[gguf_model]") {
  const GgufModel m = load_llamacpp_fixture("gemma3");
  CHECK(kvplan::describe_layers(m.spec) == "5 sliding(512) + 1 full");
  CHECK(m.spec.layers[5].kind == LayerKind::full);
  CHECK(has_note(m, "default period 6"));
  const GgufModel all = load_llamacpp_fixture("gemma3-allswa");
  CHECK(kvplan::describe_layers(all.spec) == "4 sliding(512)");

  // gemma3 reads only a scalar period: an array is skipped and the default stays (llama.cpp's
  // get_key_or_arr(key, uint32_t&) returns false for an array).
  GgufWriter w = make_llamacpp_fixture("gemma3");
  w.add_array_bool("gemma3.attention.sliding_window_pattern", {true, true, false, true, true, false});
  const GgufModel arr = load(w);
  CHECK(kvplan::describe_layers(arr.spec) == "5 sliding(512) + 1 full");
  CHECK(has_note(arr, "is an array"));
}

TEST_CASE("deepseek2 MLA: one K-only head of key_length = kv_lora_rank + rope", "[gguf_model]") {
  const GgufModel m = load_llamacpp_fixture("deepseek2");
  REQUIRE(m.spec.layers.size() == 4);
  for (const LayerSpec& layer : m.spec.layers) {
    CHECK(layer.kind == LayerKind::mla);
    CHECK(layer.kv_heads == 1);
    CHECK(layer.k_head_dim == 128);  // 96 latent + 32 rope
    CHECK(layer.mla_rope_dim == 32);
    CHECK(layer.v_head_dim == 0);
  }
}

TEST_CASE("recurrent layers: state sizes as llama_hparams::n_embd_r / n_embd_s, in f32", "[gguf_model]") {
  SECTION("mamba2: (4 - 1) x (128 + 2 x 1 x 16) = 480 conv, 16 x 128 = 2048 SSM") {
    const GgufModel m = load_llamacpp_fixture("mamba2");
    REQUIRE(m.spec.layers.size() == 4);
    for (const LayerSpec& layer : m.spec.layers) {
      CHECK(layer.kind == LayerKind::linear);
      REQUIRE(layer.state.size() == 2);
      CHECK(layer.state[0].name == "conv");
      CHECK(layer.state[0].elements == 480);
      CHECK(layer.state[0].dtype->name == "fp32");
      CHECK(layer.state[1].elements == 2048);
    }
    CHECK(m.spec.attention_heads == 4);  // no attention heads: the 4 SSM heads stand in
  }
  SECTION("granitehybrid: recurrent where head_count_kv is 0; 3 x (256 + 32) conv, 16 x 256 SSM") {
    const GgufModel m = load_llamacpp_fixture("granitehybrid");
    CHECK(kvplan::describe_layers(m.spec) == "3 linear + 1 full");
    CHECK(m.spec.layers[0].state[0].elements == 864);
    CHECK(m.spec.layers[0].state[1].elements == 4096);
    check_attention(m.spec.layers[3], LayerKind::full, 2, 32, 32);
  }
  SECTION("lfm2: short-conv state n_embd x (l_cache - 1) = 256, no SSM state") {
    const GgufModel m = load_llamacpp_fixture("lfm2");
    CHECK(m.spec.layers[0].kind == LayerKind::linear);
    REQUIRE(m.spec.layers[0].state.size() == 1);
    CHECK(m.spec.layers[0].state[0].elements == 256);
    check_attention(m.spec.layers[1], LayerKind::full, 2, 32, 32);
    const GgufModel swa = load_llamacpp_fixture("lfm2-swa");
    check_attention(swa.spec.layers[1], LayerKind::sliding, 2, 32, 32, 128);
    CHECK(swa.spec.layers[2].kind == LayerKind::linear);
  }
  SECTION("qwen3next: full attention every 4th layer; conv 3 x (64 + 2 x 2 x 16) = 384, SSM 16 x 64") {
    const GgufModel m = load_llamacpp_fixture("qwen3next");
    CHECK(kvplan::describe_layers(m.spec) == "3 linear + 1 full");
    CHECK(m.spec.layers[0].state[0].elements == 384);
    CHECK(m.spec.layers[0].state[1].elements == 1024);
    check_attention(m.spec.layers[3], LayerKind::full, 2, 64, 64);
    CHECK(has_note(m, "(il + 1) % 4 == 0"));
  }
}

TEST_CASE("the model loader reads a GGUF file and sums split files", "[gguf_model]") {
  TempDir dir;
  const std::string path = dir.file("qwen3.gguf");
  make_llamacpp_fixture("qwen3").write(path);
  const kvplan::ModelSpec spec = kvplan::load_model(path, kvplan::builtin_models());
  CHECK(spec.id == path);
  CHECK(spec.architecture == "qwen3");

  // The llama fixture's tensors over two parts: weights are the sum of both.
  const GgufModel whole = load_llamacpp_fixture("llama");
  const auto part = [&](int no) { return dir.file("llama-0000" + std::to_string(no) + "-of-00002.gguf"); };
  GgufWriter first = minimal_llama("", [](GgufWriter& w) {
    w.add_uint32("llama.feed_forward_length", 256);
    w.add_uint16("split.no", 0);
    w.add_uint16("split.count", 2);
    w.add_int32("split.tensors.count", 3);
  });
  first.write(part(1));
  GgufWriter second;
  second.add_uint16("split.no", 1);
  second.add_uint16("split.count", 2);
  second.add_int32("split.tensors.count", 3);
  second.add_tensor("blk.0.attn_q.weight", 0, {128, 128});
  second.add_tensor("blk.3.attn_q.weight", 0, {128, 128});
  second.write(part(2));
  const GgufModel split = kvplan::load_gguf_model(part(2));
  CHECK(split.spec.weights_bytes == 128 * 8 * 4 + 2 * 128 * 128 * 4);
  CHECK(split.spec.layer_weights_bytes == std::vector<std::uint64_t>{65'536, 0, 0, 65'536});
  REQUIRE(split.spec.file->tensors.size() == 3);
  CHECK(split.spec.file->tensors[2].file == 1);
  CHECK(whole.spec.layers.size() == split.spec.layers.size());
}

TEST_CASE("hostile metadata: exit 2 naming the key", "[gguf_model][hostile]") {
  const auto expect_invalid = [](const GgufWriter& w, const std::string& text) {
    const auto [code, message] = load_error(w);
    INFO(message);
    CHECK(code == ExitCode::invalid_input);
    CHECK_THAT(message, Catch::Contains(text));
  };
  expect_invalid(minimal_llama("general.architecture"), "metadata 'general.architecture' is missing");
  expect_invalid(minimal_llama("llama.block_count"), "metadata 'llama.block_count' is missing");
  expect_invalid(minimal_llama("llama.embedding_length"), "metadata 'llama.embedding_length' is missing");
  expect_invalid(minimal_llama("llama.context_length"), "metadata 'llama.context_length' is missing");
  // wrong types
  expect_invalid(minimal_llama("llama.block_count", [](GgufWriter& w) { w.add_string("llama.block_count", "4"); }),
                 "'llama.block_count' is string");
  expect_invalid(minimal_llama("llama.attention.head_count_kv",
                               [](GgufWriter& w) { w.add_float32("llama.attention.head_count_kv", 2.0f); }),
                 "'llama.attention.head_count_kv' is float32");
  expect_invalid(minimal_llama("llama.attention.head_count_kv",
                               [](GgufWriter& w) { w.add_int32("llama.attention.head_count_kv", -2); }),
                 "'llama.attention.head_count_kv' is negative");
  // a per-layer array of the wrong length
  expect_invalid(minimal_llama("llama.attention.head_count_kv",
                               [](GgufWriter& w) { w.add_array_int32("llama.attention.head_count_kv", {2, 2, 2}); }),
                 "metadata 'llama.attention.head_count_kv' has 3 elements, but block_count is 4");
  expect_invalid(minimal_llama("llama.block_count", [](GgufWriter& w) { w.add_uint32("llama.block_count", 0); }),
                 "'llama.block_count' is 0; llama.cpp accepts 1 to 512");
  expect_invalid(minimal_llama("llama.block_count", [](GgufWriter& w) { w.add_uint64("llama.block_count", 1ULL << 40); }),
                 "'llama.block_count' is 1099511627776, more than 2^32 - 1");
  expect_invalid(minimal_llama("", [](GgufWriter& w) { w.add_uint32("llama.nextn_predict_layers", 5); }),
                 "'llama.nextn_predict_layers' is 5, more than block_count 4");
  // a tensor beyond block_count
  GgufWriter beyond = minimal_llama();
  beyond.add_tensor("blk.7.attn_q.weight", 0, {128, 128});
  expect_invalid(beyond, "tensor 'blk.7.attn_q.weight' belongs to block 7, but block_count is 4");
  // recurrent models need their ssm keys
  GgufWriter mamba;
  mamba.add_string("general.architecture", "mamba2");
  mamba.add_uint32("mamba2.block_count", 2);
  mamba.add_uint32("mamba2.embedding_length", 64);
  mamba.add_uint32("mamba2.context_length", 1024);
  expect_invalid(mamba, "metadata 'mamba2.ssm.conv_kernel' is missing (llama.cpp requires it for recurrent layers)");
  // MLA needs both _mla head sizes
  GgufWriter half_mla;
  half_mla.add_string("general.architecture", "deepseek2");
  half_mla.add_uint32("deepseek2.block_count", 2);
  half_mla.add_uint32("deepseek2.embedding_length", 128);
  half_mla.add_uint32("deepseek2.context_length", 1024);
  half_mla.add_uint32("deepseek2.attention.head_count", 4);
  half_mla.add_uint32("deepseek2.attention.kv_lora_rank", 96);
  half_mla.add_uint32("deepseek2.attention.key_length_mla", 64);
  expect_invalid(half_mla, "metadata 'deepseek2.attention.value_length_mla' is missing or zero");
}

TEST_CASE("what kvplan does not understand about the cache: exit 3 naming the field", "[gguf_model][hostile]") {
  const auto expect_unsupported = [](const GgufWriter& w, const std::string& text) {
    const auto [code, message] = load_error(w);
    INFO(message);
    CHECK(code == ExitCode::unsupported_architecture);
    CHECK_THAT(message, Catch::Contains(text));
  };
  GgufWriter unread;
  unread.add_string("general.architecture", "gptj");  // llama.cpp loads it; kvplan has not read its rules
  expect_unsupported(unread, "unsupported architecture: general.architecture = gptj (kvplan reads: llama, qwen2");
  // Cache keys llama.cpp does not read for the architecture: kvplan will not guess.
  expect_unsupported(minimal_llama("", [](GgufWriter& w) { w.add_uint32("llama.attention.sliding_window_pattern", 2); }),
                     "unsupported architecture: llama.attention.sliding_window_pattern = 2");
  expect_unsupported(minimal_llama("", [](GgufWriter& w) { w.add_uint32("llama.ssm.state_size", 16); }),
                     "llama.ssm.state_size = 16 (llama.cpp does not read it for llama");
  GgufWriter shared = make_llamacpp_fixture("gemma3");
  shared.add_uint32("gemma3.attention.shared_kv_layers", 2);
  expect_unsupported(shared, "gemma3.attention.shared_kv_layers = 2");
  GgufWriter kv_lora = make_llamacpp_fixture("qwen3");
  kv_lora.add_uint32("qwen3.attention.kv_lora_rank", 512);
  expect_unsupported(kv_lora, "qwen3.attention.kv_lora_rank = 512");
  // A layer with no KV heads in an architecture without recurrent layers.
  expect_unsupported(minimal_llama("llama.attention.head_count_kv",
                                   [](GgufWriter& w) { w.add_array_int32("llama.attention.head_count_kv", {2, 0, 2, 2}); }),
                     "llama.attention.head_count_kv = 0 for layer 1");
}
