#include "support/llamacpp_fixtures.h"

#include <functional>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

namespace kvplan::testing {

namespace {

constexpr std::uint32_t kF32 = 0;
constexpr std::uint64_t kEmbd = 128;
constexpr std::uint64_t kFf = 256;
constexpr std::uint64_t kVocab = 8;

/// The keys every fixture has: architecture, the smallest workable gpt2 vocabulary, sizes.
void common_keys(GgufWriter& w, const std::string& arch, std::uint32_t layers, bool heads = true) {
  w.add_string("general.architecture", arch);
  w.add_string("general.name", "kvplan fixture " + arch);
  w.add_string("tokenizer.ggml.model", "gpt2");
  w.add_string("tokenizer.ggml.pre", "default");
  w.add_array_string("tokenizer.ggml.tokens", {"<|endoftext|>", "a", "b", "c", "d", "e", "f", "\xC4\x8A"});
  w.add_array_int32("tokenizer.ggml.token_type", {3, 1, 1, 1, 1, 1, 1, 1});
  w.add_array_string("tokenizer.ggml.merges", {});
  w.add_uint32("tokenizer.ggml.bos_token_id", 0);
  w.add_uint32("tokenizer.ggml.eos_token_id", 0);
  w.add_uint32(arch + ".context_length", 8192);
  w.add_uint32(arch + ".embedding_length", kEmbd);
  w.add_uint32(arch + ".block_count", layers);
  w.add_float32(arch + ".attention.layer_norm_rms_epsilon", 1e-6f);
  if (heads) w.add_uint32(arch + ".attention.head_count", 4);
}

std::string blk(std::uint32_t i, std::string_view rest) { return fmt::format("blk.{}.{}", i, rest); }

void embeddings(GgufWriter& w, bool output_head) {
  w.add_tensor("token_embd.weight", kF32, {kEmbd, kVocab});
  w.add_tensor("output_norm.weight", kF32, {kEmbd});
  if (output_head) w.add_tensor("output.weight", kF32, {kEmbd, kVocab});
}

/// attn_norm + q/k/v/o with `head` dims, 4 query heads and `kv_heads` KV heads.
void attention(GgufWriter& w, std::uint32_t i, std::uint64_t head, std::uint64_t kv_heads, bool qk_norm = false,
               bool bias = false) {
  const std::uint64_t q = head * 4, kv = head * kv_heads;
  w.add_tensor(blk(i, "attn_norm.weight"), kF32, {kEmbd});
  w.add_tensor(blk(i, "attn_q.weight"), kF32, {kEmbd, q});
  w.add_tensor(blk(i, "attn_k.weight"), kF32, {kEmbd, kv});
  w.add_tensor(blk(i, "attn_v.weight"), kF32, {kEmbd, kv});
  w.add_tensor(blk(i, "attn_output.weight"), kF32, {q, kEmbd});
  if (bias) {
    w.add_tensor(blk(i, "attn_q.bias"), kF32, {q});
    w.add_tensor(blk(i, "attn_k.bias"), kF32, {kv});
    w.add_tensor(blk(i, "attn_v.bias"), kF32, {kv});
  }
  if (qk_norm) {
    w.add_tensor(blk(i, "attn_q_norm.weight"), kF32, {head});
    w.add_tensor(blk(i, "attn_k_norm.weight"), kF32, {head});
  }
}

void ffn(GgufWriter& w, std::uint32_t i, bool norm = true) {
  if (norm) w.add_tensor(blk(i, "ffn_norm.weight"), kF32, {kEmbd});
  w.add_tensor(blk(i, "ffn_gate.weight"), kF32, {kEmbd, kFf});
  w.add_tensor(blk(i, "ffn_up.weight"), kF32, {kEmbd, kFf});
  w.add_tensor(blk(i, "ffn_down.weight"), kF32, {kFf, kEmbd});
}

void experts(GgufWriter& w, std::uint32_t i, std::uint64_t n_ff_exp) {
  w.add_tensor(blk(i, "ffn_norm.weight"), kF32, {kEmbd});
  w.add_tensor(blk(i, "ffn_gate_inp.weight"), kF32, {kEmbd, 4});
  w.add_tensor(blk(i, "ffn_gate_exps.weight"), kF32, {kEmbd, n_ff_exp, 4});
  w.add_tensor(blk(i, "ffn_up_exps.weight"), kF32, {kEmbd, n_ff_exp, 4});
  w.add_tensor(blk(i, "ffn_down_exps.weight"), kF32, {n_ff_exp, kEmbd, 4});
}

GgufWriter llama(bool sliding_key, bool moe) {
  GgufWriter w;
  common_keys(w, "llama", 4);
  w.add_uint32("llama.feed_forward_length", kFf);
  w.add_uint32("llama.attention.head_count_kv", 2);
  if (sliding_key) w.add_uint32("llama.attention.sliding_window", 128);
  if (moe) {
    w.add_uint32("llama.expert_count", 4);
    w.add_uint32("llama.expert_used_count", 2);
  }
  embeddings(w, !sliding_key);  // the sliding fixture ties its output head to token_embd
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2);
    if (moe) experts(w, i, kFf);
    else ffn(w, i);
  }
  return w;
}

GgufWriter qwen2() {
  GgufWriter w;
  common_keys(w, "qwen2", 4);
  w.add_uint32("qwen2.feed_forward_length", kFf);
  w.add_uint32("qwen2.attention.head_count_kv", 2);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2, false, true);
    ffn(w, i);
  }
  return w;
}

GgufWriter qwen3(bool moe) {
  const std::string arch = moe ? "qwen3moe" : "qwen3";
  GgufWriter w;
  common_keys(w, arch, 4);
  w.add_uint32(arch + ".feed_forward_length", kFf);
  w.add_uint32(arch + ".attention.head_count_kv", 2);
  w.add_uint32(arch + ".attention.key_length", 64);
  w.add_uint32(arch + ".attention.value_length", 64);
  if (moe) {
    w.add_uint32(arch + ".expert_count", 4);
    w.add_uint32(arch + ".expert_used_count", 2);
    w.add_uint32(arch + ".expert_feed_forward_length", 32);
  }
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 64, 2, true);
    if (moe) experts(w, i, 32);
    else ffn(w, i);
  }
  return w;
}

/// gemma2 (window 256, llama.cpp's period 2) and gemma3 (window 512, period 6 or `pattern`).
GgufWriter gemma(int version, std::uint32_t layers, std::optional<std::uint32_t> pattern) {
  const std::string arch = version == 2 ? "gemma2" : "gemma3";
  GgufWriter w;
  common_keys(w, arch, layers);
  w.add_uint32(arch + ".feed_forward_length", kFf);
  w.add_uint32(arch + ".attention.head_count_kv", 2);
  w.add_uint32(arch + ".attention.key_length", 64);
  w.add_uint32(arch + ".attention.value_length", 64);
  w.add_uint32(arch + ".attention.sliding_window", version == 2 ? 256 : 512);
  if (pattern) w.add_uint32(arch + ".attention.sliding_window_pattern", *pattern);
  embeddings(w, false);  // gemma2 never reads output.weight: the head is tied
  for (std::uint32_t i = 0; i < layers; ++i) {
    attention(w, i, 64, 2, version == 3);
    w.add_tensor(blk(i, "post_attention_norm.weight"), kF32, {kEmbd});
    ffn(w, i);
    w.add_tensor(blk(i, "post_ffw_norm.weight"), kF32, {kEmbd});
  }
  return w;
}

GgufWriter deepseek2() {
  GgufWriter w;
  common_keys(w, "deepseek2", 4);
  w.add_uint32("deepseek2.feed_forward_length", kFf);
  w.add_uint32("deepseek2.attention.head_count_kv", 1);
  w.add_uint32("deepseek2.attention.kv_lora_rank", 96);
  w.add_uint32("deepseek2.attention.q_lora_rank", 0);
  w.add_uint32("deepseek2.rope.dimension_count", 32);
  w.add_uint32("deepseek2.attention.key_length", 128);    // kv_lora_rank + rope: the cached row
  w.add_uint32("deepseek2.attention.value_length", 96);   // kv_lora_rank
  w.add_uint32("deepseek2.attention.key_length_mla", 64); // nope 32 + rope 32
  w.add_uint32("deepseek2.attention.value_length_mla", 32);
  w.add_uint32("deepseek2.leading_dense_block_count", 4);
  w.add_uint32("deepseek2.expert_feed_forward_length", 32);
  w.add_uint32("deepseek2.expert_shared_count", 0);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    w.add_tensor(blk(i, "attn_norm.weight"), kF32, {kEmbd});
    w.add_tensor(blk(i, "attn_kv_a_norm.weight"), kF32, {96});
    w.add_tensor(blk(i, "attn_q.weight"), kF32, {kEmbd, 4 * 64});
    w.add_tensor(blk(i, "attn_kv_a_mqa.weight"), kF32, {kEmbd, 96 + 32});
    w.add_tensor(blk(i, "attn_k_b.weight"), kF32, {32, 96, 4});
    w.add_tensor(blk(i, "attn_v_b.weight"), kF32, {96, 32, 4});
    w.add_tensor(blk(i, "attn_output.weight"), kF32, {4 * 32, kEmbd});
    ffn(w, i);
  }
  return w;
}

GgufWriter lfm2(bool sliding) {
  GgufWriter w;
  common_keys(w, "lfm2", 4);
  w.add_uint32("lfm2.feed_forward_length", kFf);
  w.add_array_int32("lfm2.attention.head_count_kv", {0, 2, 0, 2});
  w.add_uint32("lfm2.shortconv.l_cache", 3);
  if (sliding) w.add_uint32("lfm2.attention.sliding_window", 128);
  w.add_tensor("token_embd.weight", kF32, {kEmbd, kVocab});
  w.add_tensor("token_embd_norm.weight", kF32, {kEmbd});  // lfm2's output norm
  for (std::uint32_t i = 0; i < 4; ++i) {
    w.add_tensor(blk(i, "attn_norm.weight"), kF32, {kEmbd});
    if (i % 2 == 1) {
      w.add_tensor(blk(i, "attn_q_norm.weight"), kF32, {32});
      w.add_tensor(blk(i, "attn_k_norm.weight"), kF32, {32});
      w.add_tensor(blk(i, "attn_q.weight"), kF32, {kEmbd, kEmbd});
      w.add_tensor(blk(i, "attn_k.weight"), kF32, {kEmbd, 64});
      w.add_tensor(blk(i, "attn_v.weight"), kF32, {kEmbd, 64});
      w.add_tensor(blk(i, "attn_output.weight"), kF32, {kEmbd, kEmbd});
    } else {
      w.add_tensor(blk(i, "shortconv.conv.weight"), kF32, {3, kEmbd});
      w.add_tensor(blk(i, "shortconv.in_proj.weight"), kF32, {kEmbd, 3 * kEmbd});
      w.add_tensor(blk(i, "shortconv.out_proj.weight"), kF32, {kEmbd, kEmbd});
    }
    ffn(w, i);
  }
  return w;
}

void ssm_keys(GgufWriter& w, const std::string& arch, std::uint32_t inner, std::uint32_t groups) {
  w.add_uint32(arch + ".ssm.conv_kernel", 4);
  w.add_uint32(arch + ".ssm.inner_size", inner);
  w.add_uint32(arch + ".ssm.state_size", 16);
  w.add_uint32(arch + ".ssm.time_step_rank", 4);
  w.add_uint32(arch + ".ssm.group_count", groups);
}

/// A Mamba-2 mixer: inner 128 (mamba2) or 256 (granitehybrid), 1 group, state 16, 4 heads.
void mamba_layer(GgufWriter& w, std::uint32_t i, std::uint64_t inner) {
  const std::uint64_t conv_dim = inner + 2 * 16;
  w.add_tensor(blk(i, "ssm_in.weight"), kF32, {kEmbd, inner + conv_dim + 4});
  w.add_tensor(blk(i, "ssm_conv1d.weight"), kF32, {4, conv_dim});
  w.add_tensor(blk(i, "ssm_conv1d.bias"), kF32, {conv_dim});
  w.add_tensor(blk(i, "ssm_dt.bias"), kF32, {4});
  w.add_tensor(blk(i, "ssm_a"), kF32, {1, 4});
  w.add_tensor(blk(i, "ssm_d"), kF32, {1, 4});
  w.add_tensor(blk(i, "ssm_norm.weight"), kF32, {inner, 1});
  w.add_tensor(blk(i, "ssm_out.weight"), kF32, {inner, kEmbd});
}

GgufWriter mamba2() {
  GgufWriter w;
  common_keys(w, "mamba2", 4, false);
  ssm_keys(w, "mamba2", 128, 1);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    w.add_tensor(blk(i, "attn_norm.weight"), kF32, {kEmbd});
    mamba_layer(w, i, 128);
  }
  return w;
}

GgufWriter granitehybrid() {
  GgufWriter w;
  common_keys(w, "granitehybrid", 4);
  w.add_uint32("granitehybrid.feed_forward_length", kFf);
  w.add_array_int32("granitehybrid.attention.head_count_kv", {0, 0, 0, 2});
  ssm_keys(w, "granitehybrid", 256, 1);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    if (i == 3) {
      attention(w, i, 32, 2);
    } else {
      w.add_tensor(blk(i, "attn_norm.weight"), kF32, {kEmbd});
      // granite's in-projection holds z, x, B, C and dt: 2 x inner + 2 x groups x state + heads
      const std::uint64_t conv_dim = 256 + 2 * 16;
      w.add_tensor(blk(i, "ssm_in.weight"), kF32, {kEmbd, 2 * 256 + 2 * 16 + 4});
      w.add_tensor(blk(i, "ssm_conv1d.weight"), kF32, {4, conv_dim});
      w.add_tensor(blk(i, "ssm_conv1d.bias"), kF32, {conv_dim});
      w.add_tensor(blk(i, "ssm_dt.bias"), kF32, {4});
      w.add_tensor(blk(i, "ssm_a"), kF32, {1, 4});
      w.add_tensor(blk(i, "ssm_d"), kF32, {1, 4});
      w.add_tensor(blk(i, "ssm_norm.weight"), kF32, {256, 1});
      w.add_tensor(blk(i, "ssm_out.weight"), kF32, {256, kEmbd});
    }
    ffn(w, i);
  }
  return w;
}

GgufWriter qwen3next() {
  GgufWriter w;
  common_keys(w, "qwen3next", 4);
  w.add_uint32("qwen3next.feed_forward_length", kFf);
  w.add_uint32("qwen3next.attention.head_count_kv", 2);
  w.add_uint32("qwen3next.attention.key_length", 64);
  w.add_uint32("qwen3next.attention.value_length", 64);
  ssm_keys(w, "qwen3next", 64, 2);
  w.add_uint32("qwen3next.expert_count", 4);
  w.add_uint32("qwen3next.expert_used_count", 2);
  w.add_uint32("qwen3next.expert_feed_forward_length", 32);
  w.add_uint32("qwen3next.expert_shared_feed_forward_length", 32);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    w.add_tensor(blk(i, "attn_norm.weight"), kF32, {kEmbd});
    w.add_tensor(blk(i, "post_attention_norm.weight"), kF32, {kEmbd});
    if ((i + 1) % 4 == 0) {
      w.add_tensor(blk(i, "attn_q.weight"), kF32, {kEmbd, 64 * 4 * 2});
      w.add_tensor(blk(i, "attn_k.weight"), kF32, {kEmbd, 128});
      w.add_tensor(blk(i, "attn_v.weight"), kF32, {kEmbd, 128});
      w.add_tensor(blk(i, "attn_output.weight"), kF32, {256, kEmbd});
      w.add_tensor(blk(i, "attn_q_norm.weight"), kF32, {64});
      w.add_tensor(blk(i, "attn_k_norm.weight"), kF32, {64});
    } else {
      w.add_tensor(blk(i, "ssm_in.weight"), kF32, {kEmbd, 192});
      w.add_tensor(blk(i, "ssm_conv1d.weight"), kF32, {4, 128});
      w.add_tensor(blk(i, "ssm_dt.bias"), kF32, {4});
      w.add_tensor(blk(i, "ssm_a"), kF32, {4});
      w.add_tensor(blk(i, "ssm_ba.weight"), kF32, {kEmbd, 8});
      w.add_tensor(blk(i, "ssm_norm.weight"), kF32, {16});
      w.add_tensor(blk(i, "ssm_out.weight"), kF32, {64, kEmbd});
    }
    w.add_tensor(blk(i, "ffn_gate_inp.weight"), kF32, {kEmbd, 4});
    w.add_tensor(blk(i, "ffn_gate_exps.weight"), kF32, {kEmbd, 32, 4});
    w.add_tensor(blk(i, "ffn_up_exps.weight"), kF32, {kEmbd, 32, 4});
    w.add_tensor(blk(i, "ffn_down_exps.weight"), kF32, {32, kEmbd, 4});
    w.add_tensor(blk(i, "ffn_gate_inp_shexp.weight"), kF32, {kEmbd});
    w.add_tensor(blk(i, "ffn_gate_shexp.weight"), kF32, {kEmbd, 32});
    w.add_tensor(blk(i, "ffn_up_shexp.weight"), kF32, {kEmbd, 32});
    w.add_tensor(blk(i, "ffn_down_shexp.weight"), kF32, {32, kEmbd});
  }
  return w;
}

struct Entry {
  LlamaCppFixture fixture;
  std::function<GgufWriter()> make;
};

const std::vector<Entry>& entries() {
  static const std::vector<Entry> list = {
      {{"llama", "plain attention, 4 layers, 2 KV heads of 32"}, [] { return llama(false, false); }},
      {{"llama-swa-ignored", "llama with attention.sliding_window 128: llama.cpp ignores it; tied output"},
       [] { return llama(true, false); }},
      {{"llama-moe", "llama with 4 experts, 2 used (Mixtral style)"}, [] { return llama(false, true); }},
      {{"qwen2", "qwen2 with q/k/v biases"}, [] { return qwen2(); }},
      {{"qwen3", "qwen3: head size 64 from key_length"}, [] { return qwen3(false); }},
      {{"qwen3moe", "qwen3moe: 4 experts of 32"}, [] { return qwen3(true); }},
      {{"gemma2", "gemma2 iSWA: window 256, llama.cpp's period 2"}, [] { return gemma(2, 4, std::nullopt); }},
      {{"gemma3", "gemma3 iSWA: window 512, llama.cpp's period 6 (5 sliding : 1 global)"},
       [] { return gemma(3, 6, std::nullopt); }},
      {{"gemma3-allswa", "gemma3 with sliding_window_pattern 0: every layer sliding (arch llama would ignore the window)"},
       [] { return gemma(3, 4, 0u); }},
      {{"deepseek2", "deepseek2 MLA: K only, 96 latent + 32 rope"}, [] { return deepseek2(); }},
      {{"lfm2", "lfm2 hybrid: short-conv layers 0 and 2, attention 1 and 3"}, [] { return lfm2(false); }},
      {{"lfm2-swa", "lfm2 hybrid with sliding_window 128: recurrent + SWA-only attention"}, [] { return lfm2(true); }},
      {{"mamba2", "mamba2: every layer recurrent, no KV cache"}, [] { return mamba2(); }},
      {{"granitehybrid", "granitehybrid: 3 mamba2 layers + 1 attention layer"}, [] { return granitehybrid(); }},
      {{"qwen3next", "qwen3next: gated delta net, attention every 4th layer, MoE"}, [] { return qwen3next(); }},
  };
  return list;
}

}  // namespace

const std::vector<LlamaCppFixture>& llamacpp_fixtures() {
  static const std::vector<LlamaCppFixture> list = [] {
    std::vector<LlamaCppFixture> out;
    for (const Entry& e : entries()) out.push_back(e.fixture);
    return out;
  }();
  return list;
}

GgufWriter make_llamacpp_fixture(std::string_view name) {
  for (const Entry& e : entries())
    if (e.fixture.name == name) return e.make();
  throw std::invalid_argument(fmt::format("unknown fixture '{}'", name));
}

}  // namespace kvplan::testing
