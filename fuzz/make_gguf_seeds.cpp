// Writes small GGUF files into a directory, as the seed corpus of the GGUF fuzzers: every value
// type, nested arrays, both versions, and model headers for a few architectures llama.cpp reads
// (llama, qwen2 with a tokenizer, gemma2 with sliding layers, deepseek2 with MLA).
// Usage: kvplan_fuzz_gguf_seeds <directory>

#include <cstdio>
#include <filesystem>
#include <string>

#include "kvplan/error.h"
#include "support/deepseek4_keys.h"
#include "support/gguf_writer.h"

using kvplan::testing::ByteWriter;
using kvplan::testing::GgufWriter;

namespace {

constexpr std::uint32_t kF32 = 0;
constexpr std::uint32_t kF16 = 1;
constexpr std::uint32_t kQ8_0 = 8;

/// A decoder of `layers` blocks with the tensors llama.cpp names, each tiny.
void add_blocks(GgufWriter& w, int layers, std::uint64_t embd, std::uint64_t kv_width) {
  w.add_tensor("token_embd.weight", kQ8_0, {embd, 8});
  for (int i = 0; i < layers; ++i) {
    const std::string blk = "blk." + std::to_string(i) + ".";
    w.add_tensor(blk + "attn_norm.weight", kF32, {embd});
    w.add_tensor(blk + "attn_q.weight", kQ8_0, {embd, embd});
    w.add_tensor(blk + "attn_k.weight", kQ8_0, {embd, kv_width});
    w.add_tensor(blk + "attn_v.weight", kQ8_0, {embd, kv_width});
    w.add_tensor(blk + "attn_output.weight", kQ8_0, {embd, embd});
    w.add_tensor(blk + "ffn_up.weight", kQ8_0, {embd, 2 * embd});
  }
  w.add_tensor("output_norm.weight", kF32, {embd});
  w.add_tensor("output.weight", kF16, {embd, 8});
}

void add_tokenizer(GgufWriter& w) {
  w.add_string("tokenizer.ggml.model", "gpt2");
  w.add_array_string("tokenizer.ggml.tokens", {"<s>", "</s>", "a", "b", "c", "ab", "bc", "abc"});
  w.add_array_float32("tokenizer.ggml.scores", {0, 0, -1, -1, -1, -2, -2, -3});
  w.add_array_int32("tokenizer.ggml.token_type", {3, 3, 1, 1, 1, 1, 1, 1});
  w.add_array_string("tokenizer.ggml.merges", {"a b", "b c", "ab c"});
}

GgufWriter llama() {
  GgufWriter w;
  w.add_string("general.architecture", "llama");
  w.add_string("general.name", "seed llama");
  w.add_uint32("general.alignment", 32);
  w.add_uint32("llama.block_count", 2);
  w.add_uint32("llama.context_length", 4096);
  w.add_uint32("llama.embedding_length", 64);
  w.add_uint32("llama.feed_forward_length", 128);
  w.add_uint32("llama.attention.head_count", 4);
  w.add_uint32("llama.attention.head_count_kv", 2);
  w.add_float32("llama.rope.freq_base", 500000.0f);
  w.add_float32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  add_tokenizer(w);
  add_blocks(w, 2, 64, 32);
  return w;
}

GgufWriter qwen2() {
  GgufWriter w;
  w.add_string("general.architecture", "qwen2");
  w.add_uint32("qwen2.block_count", 2);
  w.add_uint32("qwen2.context_length", 32768);
  w.add_uint32("qwen2.embedding_length", 64);
  w.add_uint32("qwen2.attention.head_count", 4);
  w.add_array_int32("qwen2.attention.head_count_kv", {2, 1});
  w.add_uint32("qwen2.attention.key_length", 16);
  w.add_uint32("qwen2.attention.value_length", 16);
  add_tokenizer(w);
  add_blocks(w, 2, 64, 32);
  return w;
}

GgufWriter gemma2() {
  GgufWriter w;
  w.add_string("general.architecture", "gemma2");
  w.add_uint32("gemma2.block_count", 4);
  w.add_uint32("gemma2.context_length", 8192);
  w.add_uint32("gemma2.embedding_length", 64);
  w.add_uint32("gemma2.attention.head_count", 4);
  w.add_uint32("gemma2.attention.head_count_kv", 2);
  w.add_uint32("gemma2.attention.key_length", 32);
  w.add_uint32("gemma2.attention.value_length", 32);
  w.add_uint32("gemma2.attention.sliding_window", 1024);
  w.add_float32("gemma2.attn_logit_softcapping", 50.0f);
  add_blocks(w, 4, 64, 64);
  return w;
}

GgufWriter deepseek2() {
  GgufWriter w;
  w.add_string("general.architecture", "deepseek2");
  w.add_uint32("deepseek2.block_count", 2);
  w.add_uint32("deepseek2.context_length", 163840);
  w.add_uint32("deepseek2.embedding_length", 64);
  w.add_uint32("deepseek2.attention.head_count", 4);
  w.add_uint32("deepseek2.attention.head_count_kv", 1);
  w.add_uint32("deepseek2.attention.kv_lora_rank", 32);
  w.add_uint32("deepseek2.attention.key_length", 48);
  w.add_uint32("deepseek2.attention.value_length", 32);
  w.add_uint32("deepseek2.attention.key_length_mla", 48);
  w.add_uint32("deepseek2.attention.value_length_mla", 32);
  w.add_uint32("deepseek2.rope.dimension_count", 16);
  w.add_uint32("deepseek2.leading_dense_block_count", 1);
  w.add_uint32("deepseek2.expert_count", 4);
  w.add_uint32("deepseek2.expert_used_count", 2);
  add_blocks(w, 2, 64, 64);
  return w;
}

/// deepseek4: the keys its reader checks, and the compress ratios that add its compressed caches
/// (one more than the layers, as the converter writes them).
GgufWriter deepseek4() {
  GgufWriter w;
  w.add_string("general.architecture", "deepseek4");
  w.add_uint32("deepseek4.block_count", 4);
  w.add_uint32("deepseek4.context_length", 1048576);
  w.add_uint32("deepseek4.embedding_length", 64);
  w.add_uint32("deepseek4.attention.head_count", 4);
  kvplan::testing::add_deepseek4_keys(w, {{0, 4, 128, 4, 0}});
  add_blocks(w, 4, 64, 64);
  return w;
}

GgufWriter every_type() {
  GgufWriter w(2);
  w.add_uint8("u8", 200);
  w.add_int8("i8", -3);
  w.add_uint16("u16", 65535);
  w.add_int16("i16", -32768);
  w.add_uint32("u32", 4000000000u);
  w.add_int32("i32", -7);
  w.add_uint64("u64", 1ull << 63);
  w.add_int64("i64", -(1ll << 62));
  w.add_float32("f32", 0.1f);
  w.add_float64("f64", 1e300);
  w.add_bool("b", true);
  w.add_string("s", "hello");
  w.add_array_bool("a_bool", {true, false});
  w.add_array_uint64("a_u64", {1, 2});
  w.add_array_float64("a_f64", {0.5});
  // An array of two arrays of int32.
  ByteWriter nested;
  nested.type(kvplan::GgufType::array);
  nested.u64(2);
  for (int i = 0; i < 2; ++i) {
    nested.type(kvplan::GgufType::int32);
    nested.u64(2);
    nested.i32(i);
    nested.i32(-i);
  }
  w.add_raw_value("nested", kvplan::GgufType::array, nested.bytes);
  w.add_tensor("t", kF32, {4, 2});
  return w;
}

/// The shapes of issue #11, small on disk: a count declared far beyond the file (2^37 strings,
/// 8 million keys), boundary values in the model's keys, an architecture with an escape sequence
/// and a long name. The fuzzer mutates from them towards the sizes random bytes rarely reach.
GgufWriter huge_string_array() {
  GgufWriter w = llama();
  ByteWriter array;
  array.type(kvplan::GgufType::string);
  array.u64(std::uint64_t{1} << 37);
  for (int i = 0; i < 4; ++i) array.str("");
  w.add_raw_value("tokenizer.ggml.added", kvplan::GgufType::array, array.bytes);
  return w;
}

GgufWriter boundary_values() {
  GgufWriter w;
  w.add_string("general.architecture", "llama");
  w.add_uint64("llama.block_count", 4294967296ull);
  w.add_uint64("llama.context_length", 18446744073709551615ull);
  w.add_uint64("llama.embedding_length", 9007199254740993ull);
  w.add_uint32("llama.attention.head_count", 4294967295u);
  w.add_int64("llama.attention.head_count_kv", -1);
  w.add_uint64("llama.attention.key_length", 2147483648ull);
  w.add_uint64("llama.attention.value_length", 2147483648ull);
  w.add_uint64("llama.attention.sliding_window", 9223372036854775808ull);
  w.add_uint64("llama.vocab_size", 4294967296ull);
  add_blocks(w, 1, 64, 32);
  return w;
}

GgufWriter hostile_strings() {
  GgufWriter w;
  w.add_string("general.architecture", "\x1b[2J");
  w.add_string("general.name", std::string(26000, 'a') + ".gguf");
  w.add_uint32("\x1b[2J.block_count", 2);
  add_blocks(w, 2, 64, 32);
  return w;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: kvplan_fuzz_gguf_seeds <directory>\n");
    return 2;
  }
  const std::filesystem::path directory(argv[1]);
  std::filesystem::create_directories(directory);
  try {
    GgufWriter().write((directory / "empty.gguf").string());
    llama().write((directory / "llama.gguf").string());
    qwen2().write((directory / "qwen2.gguf").string());
    gemma2().write((directory / "gemma2.gguf").string());
    deepseek2().write((directory / "deepseek2.gguf").string());
    deepseek4().write((directory / "deepseek4.gguf").string());
    every_type().write((directory / "every-type-v2.gguf").string());
    huge_string_array().write((directory / "strings-2p37.gguf").string());
    boundary_values().write((directory / "boundary-values.gguf").string());
    hostile_strings().write((directory / "hostile-strings.gguf").string());
    GgufWriter many_keys = llama();
    many_keys.set_kv_count(8000000);
    many_keys.write((directory / "keys-8m-declared.gguf").string());
  } catch (const kvplan::Error& error) {
    std::fprintf(stderr, "kvplan_fuzz_gguf_seeds: %s\n", error.what());
    return 1;
  }
  return 0;
}
