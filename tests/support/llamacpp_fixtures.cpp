#include "support/llamacpp_fixtures.h"

#include "support/llamacpp_fixture_parts.h"

#include <functional>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

namespace kvplan::testing {

namespace {

using namespace fixture_parts;

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
    sandwich_layer(w, i, 64, 2, version == 3);
  }
  return w;
}

GgufWriter deepseek2(const std::string& arch = "deepseek2") {
  GgufWriter w;
  common_keys(w, arch, 4);
  w.add_uint32(arch + ".feed_forward_length", kFf);
  w.add_uint32(arch + ".attention.head_count_kv", 1);
  w.add_uint32(arch + ".attention.kv_lora_rank", 96);
  w.add_uint32(arch + ".attention.q_lora_rank", 0);
  w.add_uint32(arch + ".rope.dimension_count", 32);
  w.add_uint32(arch + ".attention.key_length", 128);    // kv_lora_rank + rope: the cached row
  w.add_uint32(arch + ".attention.value_length", 96);   // kv_lora_rank
  w.add_uint32(arch + ".attention.key_length_mla", 64); // nope 32 + rope 32
  w.add_uint32(arch + ".attention.value_length_mla", 32);
  w.add_uint32(arch + ".leading_dense_block_count", 4);
  w.add_uint32(arch + ".expert_feed_forward_length", 32);
  w.add_uint32(arch + ".expert_shared_count", 0);
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

/// lfm2: short-conv layers 0 and 2, attention 1 and 3; `sliding` adds a window of 128 (lfm2
/// only). lfm2moe: the same mixers, layer 0's MLP dense, the others 4 experts of 32 with a
/// selection bias.
GgufWriter lfm2(bool sliding, bool moe = false) {
  const std::string arch = moe ? "lfm2moe" : "lfm2";
  GgufWriter w;
  common_keys(w, arch, 4);
  w.add_uint32(arch + ".feed_forward_length", kFf);
  w.add_array_int32(arch + ".attention.head_count_kv", {0, 2, 0, 2});
  w.add_uint32(arch + ".shortconv.l_cache", 3);
  if (sliding) w.add_uint32(arch + ".attention.sliding_window", 128);
  if (moe) {
    w.add_uint32(arch + ".expert_count", 4);
    w.add_uint32(arch + ".expert_used_count", 2);
    w.add_uint32(arch + ".expert_feed_forward_length", 32);
    w.add_uint32(arch + ".expert_gating_func", 2);  // sigmoid
    w.add_uint32(arch + ".leading_dense_block_count", 1);
  }
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
    if (moe && i > 0) {
      experts(w, i, 32);
      w.add_tensor(blk(i, "exp_probs_b.bias"), kF32, {4});
    } else {
      ffn(w, i);
    }
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

/// A Mamba-1 mixer (mamba, jamba) of inner width 2 x n_embd, state 16, dt rank 8, conv 4;
/// jamba's also normalises dt, B and C.
void mamba1_layer(GgufWriter& w, std::uint32_t i, bool jamba) {
  constexpr std::uint64_t inner = 2 * kEmbd, state = 16, dt_rank = 8;
  w.add_tensor(blk(i, "ssm_in.weight"), kF32, {kEmbd, 2 * inner});
  w.add_tensor(blk(i, "ssm_conv1d.weight"), kF32, {4, inner});
  w.add_tensor(blk(i, "ssm_conv1d.bias"), kF32, {inner});
  w.add_tensor(blk(i, "ssm_x.weight"), kF32, {inner, dt_rank + 2 * state});
  w.add_tensor(blk(i, "ssm_dt.weight"), kF32, {dt_rank, inner});
  w.add_tensor(blk(i, "ssm_dt.bias"), kF32, {inner});
  w.add_tensor(blk(i, "ssm_a"), kF32, {state, inner});
  w.add_tensor(blk(i, "ssm_d"), kF32, {inner});
  w.add_tensor(blk(i, "ssm_out.weight"), kF32, {inner, kEmbd});
  if (!jamba) return;
  w.add_tensor(blk(i, "ssm_dt_norm.weight"), kF32, {dt_rank});
  w.add_tensor(blk(i, "ssm_b_norm.weight"), kF32, {state});
  w.add_tensor(blk(i, "ssm_c_norm.weight"), kF32, {state});
}

void mamba1_keys(GgufWriter& w, const std::string& arch) {
  w.add_uint32(arch + ".ssm.conv_kernel", 4);
  w.add_uint32(arch + ".ssm.inner_size", 2 * kEmbd);
  w.add_uint32(arch + ".ssm.state_size", 16);
  w.add_uint32(arch + ".ssm.time_step_rank", 8);
}

/// mamba (Mamba-1, falcon-mamba): every layer recurrent, no attention heads.
GgufWriter mamba1() {
  GgufWriter w;
  common_keys(w, "mamba", 4, false);
  mamba1_keys(w, "mamba");
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    w.add_tensor(blk(i, "attn_norm.weight"), kF32, {kEmbd});
    mamba1_layer(w, i, false);
  }
  return w;
}

/// jamba: Mamba-1 layers 0, 1 and 3 (head_count_kv 0), attention on layer 2; experts on layers
/// 1 and 3, a gated MLP on the others.
GgufWriter jamba() {
  GgufWriter w;
  common_keys(w, "jamba", 4);
  mamba1_keys(w, "jamba");
  w.add_uint32("jamba.feed_forward_length", kFf);
  w.add_array_int32("jamba.attention.head_count_kv", {0, 0, 2, 0});
  w.add_uint32("jamba.expert_count", 4);
  w.add_uint32("jamba.expert_used_count", 2);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    w.add_tensor(blk(i, "attn_norm.weight"), kF32, {kEmbd});
    if (i == 2) {
      w.add_tensor(blk(i, "attn_q.weight"), kF32, {kEmbd, kEmbd});
      w.add_tensor(blk(i, "attn_k.weight"), kF32, {kEmbd, 64});
      w.add_tensor(blk(i, "attn_v.weight"), kF32, {kEmbd, 64});
      w.add_tensor(blk(i, "attn_output.weight"), kF32, {kEmbd, kEmbd});
    } else {
      mamba1_layer(w, i, true);
    }
    if (i % 2 == 1) experts(w, i, kFf);
    else ffn(w, i);
  }
  return w;
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

/// qwen35 (Qwen3.5, dense) and qwen35moe: qwen3next's layout and state (attention every 4th layer)
/// with their own tensors: a fused attn_qkv and attn_gate per gated-delta-net layer, separate
/// ssm_beta and ssm_alpha, and the rope sections llama.cpp requires. `moe`: qwen35moe's routed
/// experts and gated shared expert on every layer instead of the dense FFN.
GgufWriter qwen35(bool moe) {
  GgufWriter w;
  const std::string arch = moe ? "qwen35moe" : "qwen35";
  common_keys(w, arch, 4);
  w.add_uint32(arch + ".feed_forward_length", kFf);
  w.add_uint32(arch + ".attention.head_count_kv", 2);
  w.add_uint32(arch + ".attention.key_length", 64);
  w.add_uint32(arch + ".attention.value_length", 64);
  w.add_uint32(arch + ".rope.dimension_count", 64);
  w.add_array_int32(arch + ".rope.dimension_sections", {11, 11, 10, 0});
  // state 16 x 2 key heads = key_dim 32; 4 value heads x 16 = value_dim 64 (the inner size);
  // conv_dim = 2 x 32 + 64 = 128.
  ssm_keys(w, arch, 64, 2);
  if (moe) {
    w.add_uint32(arch + ".expert_count", 4);
    w.add_uint32(arch + ".expert_used_count", 2);
    w.add_uint32(arch + ".expert_feed_forward_length", 32);
    w.add_uint32(arch + ".expert_shared_feed_forward_length", 32);
  }
  embeddings(w, false);
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
      w.add_tensor(blk(i, "attn_qkv.weight"), kF32, {kEmbd, 128});
      w.add_tensor(blk(i, "attn_gate.weight"), kF32, {kEmbd, 64});
      w.add_tensor(blk(i, "ssm_conv1d.weight"), kF32, {4, 128});
      w.add_tensor(blk(i, "ssm_dt.bias"), kF32, {4});
      w.add_tensor(blk(i, "ssm_a"), kF32, {4});
      w.add_tensor(blk(i, "ssm_beta.weight"), kF32, {kEmbd, 4});
      w.add_tensor(blk(i, "ssm_alpha.weight"), kF32, {kEmbd, 4});
      w.add_tensor(blk(i, "ssm_norm.weight"), kF32, {16});
      w.add_tensor(blk(i, "ssm_out.weight"), kF32, {64, kEmbd});
    }
    if (moe) {
      w.add_tensor(blk(i, "ffn_gate_inp.weight"), kF32, {kEmbd, 4});
      w.add_tensor(blk(i, "ffn_gate_exps.weight"), kF32, {kEmbd, 32, 4});
      w.add_tensor(blk(i, "ffn_up_exps.weight"), kF32, {kEmbd, 32, 4});
      w.add_tensor(blk(i, "ffn_down_exps.weight"), kF32, {32, kEmbd, 4});
      w.add_tensor(blk(i, "ffn_gate_inp_shexp.weight"), kF32, {kEmbd});
      w.add_tensor(blk(i, "ffn_gate_shexp.weight"), kF32, {kEmbd, 32});
      w.add_tensor(blk(i, "ffn_up_shexp.weight"), kF32, {kEmbd, 32});
      w.add_tensor(blk(i, "ffn_down_shexp.weight"), kF32, {32, kEmbd});
    } else {
      w.add_tensor(blk(i, "ffn_gate.weight"), kF32, {kEmbd, kFf});
      w.add_tensor(blk(i, "ffn_up.weight"), kF32, {kEmbd, kFf});
      w.add_tensor(blk(i, "ffn_down.weight"), kF32, {kFf, kEmbd});
    }
  }
  return w;
}

/// gpt-oss (llama.cpp's openai-moe): sinks, biased attention and experts, window 128 on layers
/// 0 and 2 (period 2).
GgufWriter gpt_oss() {
  GgufWriter w;
  common_keys(w, "gpt-oss", 4);
  w.add_uint32("gpt-oss.attention.head_count_kv", 2);
  w.add_uint32("gpt-oss.attention.sliding_window", 128);
  w.add_uint32("gpt-oss.expert_count", 4);
  w.add_uint32("gpt-oss.expert_used_count", 2);
  w.add_uint32("gpt-oss.expert_feed_forward_length", 32);
  embeddings(w, true);  // gpt-oss requires output.weight
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2, false, true);
    w.add_tensor(blk(i, "attn_output.bias"), kF32, {kEmbd});
    w.add_tensor(blk(i, "attn_sinks.weight"), kF32, {4});
    w.add_tensor(blk(i, "post_attention_norm.weight"), kF32, {kEmbd});
    w.add_tensor(blk(i, "ffn_gate_inp.weight"), kF32, {kEmbd, 4});
    w.add_tensor(blk(i, "ffn_gate_exps.weight"), kF32, {kEmbd, 32, 4});
    w.add_tensor(blk(i, "ffn_up_exps.weight"), kF32, {kEmbd, 32, 4});
    w.add_tensor(blk(i, "ffn_down_exps.weight"), kF32, {32, kEmbd, 4});
    w.add_tensor(blk(i, "ffn_gate_inp.bias"), kF32, {4});
    w.add_tensor(blk(i, "ffn_gate_exps.bias"), kF32, {32, 4});
    w.add_tensor(blk(i, "ffn_up_exps.bias"), kF32, {32, 4});
    w.add_tensor(blk(i, "ffn_down_exps.bias"), kF32, {kEmbd, 4});
  }
  return w;
}

/// llama4: chunked attention (llama.cpp's fixed 8192-token chunks, layers 0-2 chunked, 3 global);
/// dense layers 0 and 2, MoE with a shared expert on 1 and 3 (interleave step 2). `window_zero`:
/// attention.sliding_window = 0 turns chunking off.
GgufWriter llama4(bool window_zero) {
  GgufWriter w;
  common_keys(w, "llama4", 4);
  w.add_uint32("llama4.feed_forward_length", kFf);
  w.add_uint32("llama4.attention.head_count_kv", 2);
  w.add_uint32("llama4.expert_count", 4);
  w.add_uint32("llama4.expert_used_count", 1);
  w.add_uint32("llama4.expert_feed_forward_length", 32);
  w.add_uint32("llama4.interleave_moe_layer_step", 2);
  if (window_zero) w.add_uint32("llama4.attention.sliding_window", 0);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2);
    if ((i + 1) % 2 == 0) {
      experts(w, i, 32);
      w.add_tensor(blk(i, "ffn_gate_shexp.weight"), kF32, {kEmbd, 32});
      w.add_tensor(blk(i, "ffn_up_shexp.weight"), kF32, {kEmbd, 32});
      w.add_tensor(blk(i, "ffn_down_shexp.weight"), kF32, {32, kEmbd});
    } else {
      ffn(w, i);
    }
  }
  return w;
}

/// glm4moe (GLM-4.5): layer 0 dense, 1-3 MoE with a shared expert and expert bias, q/k norms.
GgufWriter glm4moe() {
  GgufWriter w;
  common_keys(w, "glm4moe", 4);
  w.add_uint32("glm4moe.feed_forward_length", kFf);
  w.add_uint32("glm4moe.attention.head_count_kv", 2);
  w.add_uint32("glm4moe.attention.key_length", 64);
  w.add_uint32("glm4moe.attention.value_length", 64);
  w.add_uint32("glm4moe.expert_count", 4);
  w.add_uint32("glm4moe.expert_used_count", 2);
  w.add_uint32("glm4moe.expert_shared_count", 1);
  w.add_uint32("glm4moe.expert_feed_forward_length", 32);
  w.add_uint32("glm4moe.leading_dense_block_count", 1);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 64, 2, true, true);
    w.add_tensor(blk(i, "post_attention_norm.weight"), kF32, {kEmbd});
    if (i == 0) {
      ffn(w, i, false);
    } else {
      w.add_tensor(blk(i, "ffn_gate_inp.weight"), kF32, {kEmbd, 4});
      w.add_tensor(blk(i, "exp_probs_b.bias"), kF32, {4});
      w.add_tensor(blk(i, "ffn_gate_exps.weight"), kF32, {kEmbd, 32, 4});
      w.add_tensor(blk(i, "ffn_up_exps.weight"), kF32, {kEmbd, 32, 4});
      w.add_tensor(blk(i, "ffn_down_exps.weight"), kF32, {32, kEmbd, 4});
      w.add_tensor(blk(i, "ffn_gate_shexp.weight"), kF32, {kEmbd, 32});
      w.add_tensor(blk(i, "ffn_up_shexp.weight"), kF32, {kEmbd, 32});
      w.add_tensor(blk(i, "ffn_down_shexp.weight"), kF32, {32, kEmbd});
    }
  }
  return w;
}

/// gemma3n: window 128, period 5 (layer il sliding iff il % 5 < 4); `layers` 22 puts layers 20
/// and 21 past llama.cpp's n_layer_kv_from_start = 20, where they reuse layer 18 / 19's cells.
/// Altup (4 inputs), laurel (rank 64) and per-layer embeddings (256) are llama.cpp's fixed sizes.
GgufWriter gemma3n(std::uint32_t layers) {
  GgufWriter w;
  common_keys(w, "gemma3n", layers);
  w.add_uint32("gemma3n.feed_forward_length", kFf);
  w.add_uint32("gemma3n.attention.head_count_kv", 2);
  w.add_uint32("gemma3n.attention.key_length", 64);
  w.add_uint32("gemma3n.attention.value_length", 64);
  w.add_uint32("gemma3n.attention.sliding_window", 128);
  constexpr std::uint64_t altup = 4, laurel = 64, per_layer = 256;
  w.add_tensor("token_embd.weight", kF32, {kEmbd, kVocab});
  w.add_tensor("altup_proj.weight", kF32, {kEmbd, kEmbd, altup - 1});
  w.add_tensor("altup_unembd_proj.weight", kF32, {kEmbd, kEmbd, altup - 1});
  w.add_tensor("per_layer_token_embd.weight", kF32, {per_layer * layers, kVocab});
  w.add_tensor("per_layer_model_proj.weight", kF32, {kEmbd, per_layer * layers});
  w.add_tensor("per_layer_proj_norm.weight", kF32, {per_layer});
  w.add_tensor("output_norm.weight", kF32, {kEmbd});
  for (std::uint32_t i = 0; i < layers; ++i) {
    sandwich_layer(w, i, 64, 2, true);
    w.add_tensor(blk(i, "inp_gate.weight"), kF32, {kEmbd, per_layer});
    w.add_tensor(blk(i, "proj.weight"), kF32, {per_layer, kEmbd});
    w.add_tensor(blk(i, "post_norm.weight"), kF32, {kEmbd});
    w.add_tensor(blk(i, "altup_correct_coef.weight"), kF32, {altup, altup});
    w.add_tensor(blk(i, "altup_correct_scale.weight"), kF32, {kEmbd});
    w.add_tensor(blk(i, "altup_predict_coef.weight"), kF32, {altup, altup * altup});
    w.add_tensor(blk(i, "altup_router.weight"), kF32, {kEmbd, altup});
    w.add_tensor(blk(i, "altup_router_norm.weight"), kF32, {kEmbd});
    w.add_tensor(blk(i, "laurel_l.weight"), kF32, {kEmbd, laurel});
    w.add_tensor(blk(i, "laurel_r.weight"), kF32, {laurel, kEmbd});
    w.add_tensor(blk(i, "laurel_post_norm.weight"), kF32, {kEmbd});
  }
  return w;
}

/// gemma4: 6 layers, window 128 on the even layers (the pattern is a per-layer bool array),
/// global layers with 1 K/V head of 64 and sliding ones 2 of 32; the last 2 layers share cells
/// (shared_kv_layers 2: layer 4 reads layer 2, layer 5 reads layer 3). No per-layer embeddings
/// (embedding_length_per_layer_input 0, a required key).
GgufWriter gemma4() {
  GgufWriter w;
  common_keys(w, "gemma4", 6);
  w.add_uint32("gemma4.feed_forward_length", kFf);
  w.add_array_int32("gemma4.attention.head_count_kv", {2, 1, 2, 1, 2, 1});
  w.add_uint32("gemma4.attention.key_length", 64);
  w.add_uint32("gemma4.attention.value_length", 64);
  w.add_uint32("gemma4.attention.key_length_swa", 32);
  w.add_uint32("gemma4.attention.value_length_swa", 32);
  w.add_uint32("gemma4.rope.dimension_count_swa", 32);
  w.add_uint32("gemma4.attention.sliding_window", 128);
  w.add_array_bool("gemma4.attention.sliding_window_pattern", {true, false, true, false, true, false});
  w.add_uint32("gemma4.attention.shared_kv_layers", 2);
  w.add_uint32("gemma4.embedding_length_per_layer_input", 0);
  embeddings(w, false);
  // The global layers' proportional-rope factors: one tensor, n_embd_head / 2 wide.
  w.add_tensor("rope_freqs.weight", kF32, {32});
  for (std::uint32_t i = 0; i < 6; ++i) {
    const bool sliding = i % 2 == 0;
    sandwich_layer(w, i, sliding ? 32 : 64, sliding ? 2 : 1, true);
  }
  return w;
}

/// kimi-linear (Kimi Linear): layers 0-2 Kimi Delta Attention (head_count_kv 0), layer 3 MLA with
/// 1 KV head (the converter's MQA form): kv_lora_rank 64 + rope 32 = key_length 96, the cached K row;
/// no q_lora (a plain attn_q). KDA: 4 heads of kda.head_dim 16 (d_inner 64), conv kernel 4. Layer 0
/// a dense FFN (leading_dense_block_count 1), layers 1-3 4 experts of 32, 2 used, one shared expert.
GgufWriter kimi_linear() {
  GgufWriter w;
  common_keys(w, "kimi-linear", 4);
  w.add_uint32("kimi-linear.feed_forward_length", kFf);
  w.add_array_int32("kimi-linear.attention.head_count_kv", {0, 0, 0, 1});
  w.add_uint32("kimi-linear.attention.kv_lora_rank", 64);
  w.add_uint32("kimi-linear.rope.dimension_count", 32);
  w.add_uint32("kimi-linear.attention.key_length", 96);
  w.add_uint32("kimi-linear.attention.key_length_mla", 64);  // nope 32 + rope 32
  w.add_uint32("kimi-linear.attention.value_length_mla", 32);
  w.add_uint32("kimi-linear.ssm.conv_kernel", 4);
  w.add_uint32("kimi-linear.kda.head_dim", 16);
  w.add_uint32("kimi-linear.expert_count", 4);
  w.add_uint32("kimi-linear.expert_used_count", 2);
  w.add_uint32("kimi-linear.expert_feed_forward_length", 32);
  w.add_uint32("kimi-linear.expert_shared_count", 1);
  w.add_uint32("kimi-linear.leading_dense_block_count", 1);
  w.add_uint32("kimi-linear.expert_gating_func", 2);  // sigmoid, as Kimi's router
  embeddings(w, true);
  constexpr std::uint64_t d_inner = 4 * 16;
  for (std::uint32_t i = 0; i < 4; ++i) {
    w.add_tensor(blk(i, "attn_norm.weight"), kF32, {kEmbd});
    if (i < 3) {
      for (const char* conv : {"ssm_conv1d_q.weight", "ssm_conv1d_k.weight", "ssm_conv1d_v.weight"})
        w.add_tensor(blk(i, conv), kF32, {4, 1, d_inner});
      w.add_tensor(blk(i, "attn_q.weight"), kF32, {kEmbd, d_inner});
      w.add_tensor(blk(i, "attn_k.weight"), kF32, {kEmbd, d_inner});
      w.add_tensor(blk(i, "attn_v.weight"), kF32, {kEmbd, d_inner});
      w.add_tensor(blk(i, "ssm_f_a.weight"), kF32, {kEmbd, 16});
      w.add_tensor(blk(i, "ssm_f_b.weight"), kF32, {16, d_inner});
      w.add_tensor(blk(i, "ssm_beta.weight"), kF32, {kEmbd, 4});
      w.add_tensor(blk(i, "ssm_a"), kF32, {1, 4});
      w.add_tensor(blk(i, "ssm_dt.bias"), kF32, {d_inner});
      w.add_tensor(blk(i, "ssm_g_a.weight"), kF32, {kEmbd, 16});
      w.add_tensor(blk(i, "ssm_g_b.weight"), kF32, {16, d_inner});
      w.add_tensor(blk(i, "ssm_norm.weight"), kF32, {16});
      w.add_tensor(blk(i, "attn_output.weight"), kF32, {d_inner, kEmbd});
    } else {
      w.add_tensor(blk(i, "attn_kv_a_norm.weight"), kF32, {64});
      w.add_tensor(blk(i, "attn_q.weight"), kF32, {kEmbd, 4 * 64});
      w.add_tensor(blk(i, "attn_kv_a_mqa.weight"), kF32, {kEmbd, 64 + 32});
      w.add_tensor(blk(i, "attn_k_b.weight"), kF32, {32, 64, 4});
      w.add_tensor(blk(i, "attn_v_b.weight"), kF32, {64, 32, 4});
      w.add_tensor(blk(i, "attn_output.weight"), kF32, {4 * 32, kEmbd});
    }
    if (i == 0) {
      ffn(w, i);
    } else {
      experts(w, i, 32);
      w.add_tensor(blk(i, "ffn_gate_shexp.weight"), kF32, {kEmbd, 32});
      w.add_tensor(blk(i, "ffn_up_shexp.weight"), kF32, {kEmbd, 32});
      w.add_tensor(blk(i, "ffn_down_shexp.weight"), kF32, {32, kEmbd});
      w.add_tensor(blk(i, "exp_probs_b.bias"), kF32, {4});
    }
  }
  return w;
}

/// deepseek32 (DeepSeek-V3.2) and glm-dsa (GLM-5): deepseek2's MLA (96 latent + 32 rope, cached K
/// only) with a q_lora of 64 and the DSA lightning indexer: 2 heads of key_length 64, whose key (one
/// head) llama_kv_cache_dsa keeps per cell in a second K-only cache. deepseek32 indexes every layer;
/// glm-dsa only layers 0 and 2 (attention.indexer.types: 1 and 3 reuse the previous full layer's
/// top-k and have no indexer tensors, which glm-dsa does not require); glm-dsa without the key and
/// with a trained context of 1,048,576 (GLM 5.2) takes llama.cpp's built-in table: layers 0, 1
/// and 2 full, 3 shared. 5 blocks, the last a nextn
/// (MTP) layer whose tensors are not in the file (a trunk-only GGUF: llama.cpp then loads none of
/// them) and which both caches filter out. All dense (leading_dense_block_count 5: a MoE block
/// needs experts even when its tensors are optional).
enum class DsaFixture { deepseek32, glm_types, glm_table };

GgufWriter dsa_fixture(DsaFixture kind) {
  const bool glm = kind != DsaFixture::deepseek32;
  const std::string arch = glm ? "glm-dsa" : "deepseek32";
  GgufWriter w;
  common_keys(w, arch, 5, true, kind == DsaFixture::glm_table ? 1'048'576 : 8192);
  w.add_uint32(arch + ".nextn_predict_layers", 1);
  w.add_uint32(arch + ".feed_forward_length", kFf);
  w.add_uint32(arch + ".attention.head_count_kv", 1);
  w.add_uint32(arch + ".attention.q_lora_rank", 64);
  w.add_uint32(arch + ".attention.kv_lora_rank", 96);
  w.add_uint32(arch + ".rope.dimension_count", 32);
  w.add_uint32(arch + ".attention.key_length", 128);    // kv_lora_rank + rope: the cached row
  w.add_uint32(arch + ".attention.value_length", 96);   // kv_lora_rank
  w.add_uint32(arch + ".attention.key_length_mla", 64); // nope 32 + rope 32
  w.add_uint32(arch + ".attention.value_length_mla", 32);
  w.add_uint32(arch + ".attention.indexer.head_count", 2);
  w.add_uint32(arch + ".attention.indexer.key_length", 64);
  w.add_uint32(arch + ".attention.indexer.top_k", 16);
  const std::vector<bool> full = kind == DsaFixture::glm_types   ? std::vector<bool>{true, false, true, false}
                                 : kind == DsaFixture::glm_table ? std::vector<bool>{true, true, true, false}
                                                                 : std::vector<bool>(4, true);
  if (kind == DsaFixture::glm_types) w.add_array_bool(arch + ".attention.indexer.types", full);
  w.add_uint32(arch + ".leading_dense_block_count", 5);
  w.add_uint32(arch + ".expert_feed_forward_length", 32);
  w.add_uint32(arch + ".expert_shared_count", 1);
  w.add_uint32(arch + ".expert_gating_func", 2);  // sigmoid, as DeepSeek-V3's and GLM's routers
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    w.add_tensor(blk(i, "attn_norm.weight"), kF32, {kEmbd});
    w.add_tensor(blk(i, "attn_q_a_norm.weight"), kF32, {64});
    w.add_tensor(blk(i, "attn_kv_a_norm.weight"), kF32, {96});
    w.add_tensor(blk(i, "attn_q_a.weight"), kF32, {kEmbd, 64});
    w.add_tensor(blk(i, "attn_q_b.weight"), kF32, {64, 4 * 64});
    w.add_tensor(blk(i, "attn_kv_a_mqa.weight"), kF32, {kEmbd, 96 + 32});
    w.add_tensor(blk(i, "attn_k_b.weight"), kF32, {32, 96, 4});
    w.add_tensor(blk(i, "attn_v_b.weight"), kF32, {96, 32, 4});
    w.add_tensor(blk(i, "attn_output.weight"), kF32, {4 * 32, kEmbd});
    if (full[i]) {
      w.add_tensor(blk(i, "indexer.k_norm.weight"), kF32, {64});
      w.add_tensor(blk(i, "indexer.k_norm.bias"), kF32, {64});
      w.add_tensor(blk(i, "indexer.proj.weight"), kF32, {kEmbd, 2});
      w.add_tensor(blk(i, "indexer.attn_k.weight"), kF32, {kEmbd, 64});
      w.add_tensor(blk(i, "indexer.attn_q_b.weight"), kF32, {64, 2 * 64});
    }
    ffn(w, i);
  }
  return w;
}

/// cohere2 (Command R7B): window 128 on layers 0-2, layer 3 global (period 4); parallel block
/// without ffn_norm, output tied.
GgufWriter cohere2() {
  GgufWriter w;
  common_keys(w, "cohere2", 4);
  w.add_uint32("cohere2.feed_forward_length", kFf);
  w.add_uint32("cohere2.attention.head_count_kv", 2);
  w.add_uint32("cohere2.attention.sliding_window", 128);
  w.add_float32("cohere2.logit_scale", 0.25f);
  w.add_float32("cohere2.attention.layer_norm_epsilon", 1e-5f);
  embeddings(w, false);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2);
    ffn(w, i, false);
  }
  return w;
}

/// olmo2: post-norms, full-width q/k norms; `window` (OLMo 3 style) makes layers 0-2 sliding.
GgufWriter olmo2(std::optional<std::uint32_t> window) {
  GgufWriter w;
  common_keys(w, "olmo2", 4);
  w.add_uint32("olmo2.feed_forward_length", kFf);
  w.add_uint32("olmo2.attention.head_count_kv", 2);
  if (window) w.add_uint32("olmo2.attention.sliding_window", *window);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    w.add_tensor(blk(i, "attn_q.weight"), kF32, {kEmbd, kEmbd});
    w.add_tensor(blk(i, "attn_k.weight"), kF32, {kEmbd, 64});
    w.add_tensor(blk(i, "attn_v.weight"), kF32, {kEmbd, 64});
    w.add_tensor(blk(i, "attn_output.weight"), kF32, {kEmbd, kEmbd});
    w.add_tensor(blk(i, "attn_q_norm.weight"), kF32, {kEmbd});
    w.add_tensor(blk(i, "attn_k_norm.weight"), kF32, {64});
    w.add_tensor(blk(i, "post_attention_norm.weight"), kF32, {kEmbd});
    ffn(w, i, false);
    w.add_tensor(blk(i, "post_ffw_norm.weight"), kF32, {kEmbd});
  }
  return w;
}

/// exaone4: post-norms, q/k norms. llama.cpp slides only at 64 layers, so `layers` 4 with a window
/// key keeps full layers, and `layers` 64 gets window 128 on 3 of every 4 layers.
GgufWriter exaone4(std::uint32_t layers) {
  GgufWriter w;
  common_keys(w, "exaone4", layers);
  w.add_uint32("exaone4.feed_forward_length", kFf);
  w.add_uint32("exaone4.attention.head_count_kv", 2);
  w.add_uint32("exaone4.attention.sliding_window", 128);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < layers; ++i) {
    w.add_tensor(blk(i, "attn_q.weight"), kF32, {kEmbd, kEmbd});
    w.add_tensor(blk(i, "attn_k.weight"), kF32, {kEmbd, 64});
    w.add_tensor(blk(i, "attn_v.weight"), kF32, {kEmbd, 64});
    w.add_tensor(blk(i, "attn_output.weight"), kF32, {kEmbd, kEmbd});
    w.add_tensor(blk(i, "attn_q_norm.weight"), kF32, {32});
    w.add_tensor(blk(i, "attn_k_norm.weight"), kF32, {32});
    w.add_tensor(blk(i, "post_attention_norm.weight"), kF32, {kEmbd});
    ffn(w, i, false);
    w.add_tensor(blk(i, "post_ffw_norm.weight"), kF32, {kEmbd});
  }
  return w;
}

/// ernie4_5 (dense) and ernie4_5-moe: layer 0 dense, 1-3 MoE with a shared expert.
GgufWriter ernie4_5(bool moe) {
  const std::string arch = moe ? "ernie4_5-moe" : "ernie4_5";
  GgufWriter w;
  common_keys(w, arch, 4);
  w.add_uint32(arch + ".feed_forward_length", kFf);
  w.add_uint32(arch + ".attention.head_count_kv", 2);
  if (moe) {
    w.add_uint32(arch + ".expert_count", 4);
    w.add_uint32(arch + ".expert_used_count", 2);
    w.add_uint32(arch + ".expert_feed_forward_length", 32);
    w.add_uint32(arch + ".expert_shared_feed_forward_length", 64);
    w.add_uint32(arch + ".interleave_moe_layer_step", 1);
    w.add_uint32(arch + ".leading_dense_block_count", 1);
  }
  embeddings(w, false);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2);
    if (moe && i > 0) {
      experts(w, i, 32);
      w.add_tensor(blk(i, "ffn_gate_shexp.weight"), kF32, {kEmbd, 64});
      w.add_tensor(blk(i, "ffn_up_shexp.weight"), kF32, {kEmbd, 64});
      w.add_tensor(blk(i, "ffn_down_shexp.weight"), kF32, {64, kEmbd});
    } else {
      ffn(w, i);
    }
  }
  return w;
}

/// hunyuan-moe: 4 experts of n_ff (feed_forward_length is their width) + a shared expert, q/k norms.
GgufWriter hunyuan_moe() {
  GgufWriter w;
  common_keys(w, "hunyuan-moe", 4);
  w.add_uint32("hunyuan-moe.feed_forward_length", 32);
  w.add_uint32("hunyuan-moe.attention.head_count_kv", 2);
  w.add_uint32("hunyuan-moe.expert_count", 4);
  w.add_uint32("hunyuan-moe.expert_used_count", 2);
  w.add_uint32("hunyuan-moe.expert_feed_forward_length", 32);
  w.add_uint32("hunyuan-moe.expert_shared_feed_forward_length", 64);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2, true);
    experts(w, i, 32);
    w.add_tensor(blk(i, "ffn_gate_shexp.weight"), kF32, {kEmbd, 64});
    w.add_tensor(blk(i, "ffn_up_shexp.weight"), kF32, {kEmbd, 64});
    w.add_tensor(blk(i, "ffn_down_shexp.weight"), kF32, {64, kEmbd});
  }
  return w;
}

/// smollm3 and granite: llama-shaped layers (granite requires logit_scale).
GgufWriter llama_shaped(const std::string& arch) {
  GgufWriter w;
  common_keys(w, arch, 4);
  w.add_uint32(arch + ".feed_forward_length", kFf);
  w.add_uint32(arch + ".attention.head_count_kv", 2);
  if (arch == "granite") w.add_float32("granite.logit_scale", 8.0f);
  embeddings(w, arch == "granite");
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2);
    ffn(w, i);
  }
  return w;
}

/// starcoder2: layer norms with biases, a two-matrix MLP with biases, q/k/v biases.
GgufWriter starcoder2() {
  GgufWriter w;
  common_keys(w, "starcoder2", 4);
  w.add_uint32("starcoder2.feed_forward_length", kFf);
  w.add_uint32("starcoder2.attention.head_count_kv", 2);
  w.add_float32("starcoder2.attention.layer_norm_epsilon", 1e-5f);
  embeddings(w, false);
  w.add_tensor("output_norm.bias", kF32, {kEmbd});
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2, false, true);
    w.add_tensor(blk(i, "attn_norm.bias"), kF32, {kEmbd});
    w.add_tensor(blk(i, "attn_output.bias"), kF32, {kEmbd});
    w.add_tensor(blk(i, "ffn_norm.weight"), kF32, {kEmbd});
    w.add_tensor(blk(i, "ffn_norm.bias"), kF32, {kEmbd});
    w.add_tensor(blk(i, "ffn_up.weight"), kF32, {kEmbd, kFf});
    w.add_tensor(blk(i, "ffn_up.bias"), kF32, {kFf});
    w.add_tensor(blk(i, "ffn_down.weight"), kF32, {kFf, kEmbd});
    w.add_tensor(blk(i, "ffn_down.bias"), kF32, {kEmbd});
  }
  return w;
}

/// command-r (Command R, below 64 layers: no q/k norms): parallel block, tied output.
GgufWriter command_r() {
  GgufWriter w;
  common_keys(w, "command-r", 4);
  w.add_uint32("command-r.feed_forward_length", kFf);
  w.add_uint32("command-r.attention.head_count_kv", 2);
  w.add_float32("command-r.logit_scale", 0.0625f);
  w.add_float32("command-r.attention.layer_norm_epsilon", 1e-5f);
  embeddings(w, false);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2);
    ffn(w, i, false);
  }
  return w;
}

/// phi3: fused qkv, gate and up in one ffn_up of 2 x n_ff; `window` 128 is read and disabled.
GgufWriter phi3(bool window) {
  GgufWriter w;
  common_keys(w, "phi3", 4);
  w.add_uint32("phi3.feed_forward_length", kFf);
  w.add_uint32("phi3.attention.head_count_kv", 2);
  if (window) w.add_uint32("phi3.attention.sliding_window", 128);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    w.add_tensor(blk(i, "attn_norm.weight"), kF32, {kEmbd});
    w.add_tensor(blk(i, "attn_qkv.weight"), kF32, {kEmbd, kEmbd + 2 * 64});
    w.add_tensor(blk(i, "attn_output.weight"), kF32, {kEmbd, kEmbd});
    w.add_tensor(blk(i, "ffn_norm.weight"), kF32, {kEmbd});
    w.add_tensor(blk(i, "ffn_up.weight"), kF32, {kEmbd, 2 * kFf});
    w.add_tensor(blk(i, "ffn_down.weight"), kF32, {kFf, kEmbd});
  }
  return w;
}

/// nemotron_h: layers Mamba-2, attention, MLP, Mamba-2 (head_count_kv [0, 2, 0, 0], feed_forward_length
/// [0, 0, 256, 0]); the mixer as granitehybrid's (inner 256, 1 group, state 16, 4 heads).
GgufWriter nemotron_h(bool moe) {
  const std::string arch = moe ? "nemotron_h_moe" : "nemotron_h";
  GgufWriter w;
  common_keys(w, arch, 4);
  w.add_array_int32(arch + ".attention.head_count_kv", {0, 2, 0, 0});
  w.add_float32(arch + ".attention.layer_norm_epsilon", 1e-5f);  // required (the MTP head's norm)
  w.add_array_int32(arch + ".feed_forward_length", {0, 0, static_cast<std::int32_t>(kFf), 0});
  ssm_keys(w, arch, 256, 1);
  if (moe) {
    w.add_uint32(arch + ".expert_count", 4);
    w.add_uint32(arch + ".expert_used_count", 2);
    w.add_uint32(arch + ".expert_feed_forward_length", 32);
    w.add_uint32(arch + ".expert_shared_feed_forward_length", 64);
  }
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    w.add_tensor(blk(i, "attn_norm.weight"), kF32, {kEmbd});
    if (i == 1) {
      w.add_tensor(blk(i, "attn_q.weight"), kF32, {kEmbd, 128});
      w.add_tensor(blk(i, "attn_k.weight"), kF32, {kEmbd, 64});
      w.add_tensor(blk(i, "attn_v.weight"), kF32, {kEmbd, 64});
      w.add_tensor(blk(i, "attn_output.weight"), kF32, {128, kEmbd});
    } else if (i == 2 && moe) {
      // Nemotron 3's MoE block: a biased router, 4 ungated experts of 32 and an ungated shared one.
      w.add_tensor(blk(i, "ffn_gate_inp.weight"), kF32, {kEmbd, 4});
      w.add_tensor(blk(i, "exp_probs_b.bias"), kF32, {4});
      w.add_tensor(blk(i, "ffn_up_exps.weight"), kF32, {kEmbd, 32, 4});
      w.add_tensor(blk(i, "ffn_down_exps.weight"), kF32, {32, kEmbd, 4});
      w.add_tensor(blk(i, "ffn_up_shexp.weight"), kF32, {kEmbd, 64});
      w.add_tensor(blk(i, "ffn_down_shexp.weight"), kF32, {64, kEmbd});
    } else if (i == 2) {
      w.add_tensor(blk(i, "ffn_up.weight"), kF32, {kEmbd, kFf});
      w.add_tensor(blk(i, "ffn_down.weight"), kF32, {kFf, kEmbd});
    } else {
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
  }
  return w;
}

/// falcon-h1: attention and a Mamba-2 mixer (inner 256, 1 group, state 16, 4 heads) in every layer.
GgufWriter falcon_h1() {
  GgufWriter w;
  common_keys(w, "falcon-h1", 4);
  w.add_uint32("falcon-h1.feed_forward_length", kFf);
  w.add_uint32("falcon-h1.attention.head_count_kv", 2);
  ssm_keys(w, "falcon-h1", 256, 1);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    const std::uint64_t conv_dim = 256 + 2 * 16;
    w.add_tensor(blk(i, "ssm_in.weight"), kF32, {kEmbd, 256 + conv_dim + 4});
    w.add_tensor(blk(i, "ssm_conv1d.weight"), kF32, {4, conv_dim});
    w.add_tensor(blk(i, "ssm_conv1d.bias"), kF32, {conv_dim});
    w.add_tensor(blk(i, "ssm_dt.bias"), kF32, {4});
    w.add_tensor(blk(i, "ssm_a"), kF32, {1, 4});
    w.add_tensor(blk(i, "ssm_d"), kF32, {1, 4});
    w.add_tensor(blk(i, "ssm_norm.weight"), kF32, {256, 1});
    w.add_tensor(blk(i, "ssm_out.weight"), kF32, {256, kEmbd});
    attention(w, i, 32, 2);
    w.add_tensor(blk(i, "ffn_norm"), kF32, {kEmbd});  // LLM_TENSOR_FFN_NORM without a suffix
    ffn(w, i, false);
  }
  return w;
}

/// olmoe: 4 experts of n_ff, full-width q/k norms (4 KV heads: the K norm is n_embd wide).
GgufWriter olmoe() {
  GgufWriter w;
  common_keys(w, "olmoe", 4);
  w.add_uint32("olmoe.feed_forward_length", 32);
  w.add_uint32("olmoe.attention.head_count_kv", 4);
  w.add_uint32("olmoe.expert_count", 4);
  w.add_uint32("olmoe.expert_used_count", 2);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 4);
    w.add_tensor(blk(i, "attn_q_norm.weight"), kF32, {kEmbd});
    w.add_tensor(blk(i, "attn_k_norm.weight"), kF32, {kEmbd});
    experts(w, i, 32);
  }
  return w;
}

/// seed_oss: q/k/v biases, post_attention_norm as the FFN's norm.
GgufWriter seed_oss() {
  GgufWriter w;
  common_keys(w, "seed_oss", 4);
  w.add_uint32("seed_oss.feed_forward_length", kFf);
  w.add_uint32("seed_oss.attention.head_count_kv", 2);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2, false, true);
    w.add_tensor(blk(i, "post_attention_norm.weight"), kF32, {kEmbd});
    ffn(w, i, false);
  }
  return w;
}

/// The shared expert of qwen2moe, dots1 and bailingmoe: gate/up/down `width` wide.
void shared_expert(GgufWriter& w, std::uint32_t i, std::uint64_t width) {
  w.add_tensor(blk(i, "ffn_gate_shexp.weight"), kF32, {kEmbd, width});
  w.add_tensor(blk(i, "ffn_up_shexp.weight"), kF32, {kEmbd, width});
  w.add_tensor(blk(i, "ffn_down_shexp.weight"), kF32, {width, kEmbd});
}

/// qwen2moe: 4 experts of 32 and a gated shared expert of 64 on every layer, q/k/v biases.
GgufWriter qwen2moe() {
  GgufWriter w;
  common_keys(w, "qwen2moe", 4);
  w.add_uint32("qwen2moe.feed_forward_length", kFf);
  w.add_uint32("qwen2moe.attention.head_count_kv", 2);
  w.add_uint32("qwen2moe.expert_count", 4);
  w.add_uint32("qwen2moe.expert_used_count", 2);
  w.add_uint32("qwen2moe.expert_feed_forward_length", 32);
  w.add_uint32("qwen2moe.expert_shared_feed_forward_length", 64);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2, false, true);
    experts(w, i, 32);
    w.add_tensor(blk(i, "ffn_gate_inp_shexp.weight"), kF32, {kEmbd});
    shared_expert(w, i, 64);
  }
  return w;
}

/// granitemoe: experts feed_forward_length wide, logit_scale (required), tied output.
GgufWriter granitemoe() {
  GgufWriter w;
  common_keys(w, "granitemoe", 4);
  w.add_uint32("granitemoe.feed_forward_length", 32);
  w.add_uint32("granitemoe.attention.head_count_kv", 2);
  w.add_uint32("granitemoe.expert_count", 4);
  w.add_uint32("granitemoe.expert_used_count", 2);
  w.add_float32("granitemoe.logit_scale", 8.0f);
  embeddings(w, false);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2);
    experts(w, i, 32);
  }
  return w;
}

/// minicpm3: low-rank q and kv projections; K heads 64 wide (48 nope + 16 rope), V heads 32, and
/// all 4 heads cached (no latent): K and V rows of different widths. Both are multiples of 32, as
/// MiniCPM3-4B's 96 and 64 are: llama.cpp refuses a quantized cache whose block does not divide them.
GgufWriter minicpm3() {
  GgufWriter w;
  common_keys(w, "minicpm3", 4);
  w.add_uint32("minicpm3.feed_forward_length", kFf);
  w.add_uint32("minicpm3.attention.key_length", 64);
  w.add_uint32("minicpm3.attention.value_length", 32);
  w.add_uint32("minicpm3.rope.dimension_count", 16);
  w.add_uint32("minicpm3.attention.q_lora_rank", 64);
  w.add_uint32("minicpm3.attention.kv_lora_rank", 64);
  embeddings(w, false);
  for (std::uint32_t i = 0; i < 4; ++i) {
    w.add_tensor(blk(i, "attn_norm.weight"), kF32, {kEmbd});
    w.add_tensor(blk(i, "attn_q_a_norm.weight"), kF32, {64});
    w.add_tensor(blk(i, "attn_kv_a_norm.weight"), kF32, {64});
    w.add_tensor(blk(i, "attn_q_a.weight"), kF32, {kEmbd, 64});
    w.add_tensor(blk(i, "attn_q_b.weight"), kF32, {64, 4 * 64});
    w.add_tensor(blk(i, "attn_kv_a_mqa.weight"), kF32, {kEmbd, 64 + 16});
    w.add_tensor(blk(i, "attn_kv_b.weight"), kF32, {64, 4 * (48 + 32)});
    w.add_tensor(blk(i, "attn_output.weight"), kF32, {4 * 32, kEmbd});
    ffn(w, i);
  }
  return w;
}

/// hunyuan-dense: q/k norms, plain FFN, its own output head.
GgufWriter hunyuan_dense() {
  GgufWriter w;
  common_keys(w, "hunyuan-dense", 4);
  w.add_uint32("hunyuan-dense.feed_forward_length", kFf);
  w.add_uint32("hunyuan-dense.attention.head_count_kv", 2);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2, true);
    ffn(w, i);
  }
  return w;
}

/// dots1: 1 dense layer then experts with a shared one, q/k norms; its q/k/v are all n_head wide,
/// so K/V heads = query heads (4).
GgufWriter dots1() {
  GgufWriter w;
  common_keys(w, "dots1", 4);
  w.add_uint32("dots1.feed_forward_length", kFf);
  w.add_uint32("dots1.attention.head_count_kv", 4);
  w.add_uint32("dots1.leading_dense_block_count", 1);
  w.add_uint32("dots1.expert_count", 4);
  w.add_uint32("dots1.expert_used_count", 2);
  w.add_uint32("dots1.expert_feed_forward_length", 32);
  w.add_uint32("dots1.expert_shared_count", 1);
  w.add_uint32("dots1.expert_gating_func", 2);  // sigmoid: llama.cpp's default (none) cannot route
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 4, true);
    if (i == 0) {
      ffn(w, i);
      continue;
    }
    experts(w, i, 32);
    w.add_tensor(blk(i, "exp_probs_b.bias"), kF32, {4});
    shared_expert(w, i, 32);
  }
  return w;
}

/// bailingmoe: experts with a shared one on every layer.
GgufWriter bailingmoe() {
  GgufWriter w;
  common_keys(w, "bailingmoe", 4);
  w.add_uint32("bailingmoe.feed_forward_length", kFf);
  w.add_uint32("bailingmoe.attention.head_count_kv", 2);
  w.add_uint32("bailingmoe.expert_count", 4);
  w.add_uint32("bailingmoe.expert_used_count", 2);
  w.add_uint32("bailingmoe.expert_feed_forward_length", 32);
  w.add_uint32("bailingmoe.expert_shared_count", 1);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2);
    experts(w, i, 32);
    shared_expert(w, i, 32);
  }
  return w;
}

/// apertus: xIELU constants per layer (required, under "xielu." without the arch), q/k norms, a
/// two-matrix MLP.
GgufWriter apertus() {
  GgufWriter w;
  common_keys(w, "apertus", 4);
  w.add_uint32("apertus.feed_forward_length", kFf);
  w.add_uint32("apertus.attention.head_count_kv", 2);
  w.add_array_float32("xielu.alpha_n", {0.8f, 0.8f, 0.8f, 0.8f});
  w.add_array_float32("xielu.alpha_p", {0.8f, 0.8f, 0.8f, 0.8f});
  w.add_array_float32("xielu.beta", {0.5f, 0.5f, 0.5f, 0.5f});
  w.add_array_float32("xielu.eps", {-1e-6f, -1e-6f, -1e-6f, -1e-6f});
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2, true);
    w.add_tensor(blk(i, "ffn_norm.weight"), kF32, {kEmbd});
    w.add_tensor(blk(i, "ffn_up.weight"), kF32, {kEmbd, kFf});
    w.add_tensor(blk(i, "ffn_down.weight"), kF32, {kFf, kEmbd});
  }
  return w;
}

/// arcee: llama-shaped with a two-matrix MLP, tied output.
GgufWriter arcee() {
  GgufWriter w;
  common_keys(w, "arcee", 4);
  w.add_uint32("arcee.feed_forward_length", kFf);
  w.add_uint32("arcee.attention.head_count_kv", 2);
  embeddings(w, false);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2);
    w.add_tensor(blk(i, "ffn_norm.weight"), kF32, {kEmbd});
    w.add_tensor(blk(i, "ffn_up.weight"), kF32, {kEmbd, kFf});
    w.add_tensor(blk(i, "ffn_down.weight"), kF32, {kFf, kEmbd});
  }
  return w;
}

const std::vector<FixtureRecipe>& entries() {
  static const std::vector<FixtureRecipe> list = [] {
    std::vector<FixtureRecipe> all = {
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
        {{"gpt-oss", "gpt-oss: window 128 on every 2nd layer, sinks, biased experts"}, [] { return gpt_oss(); }},
        {{"llama4", "llama4: chunked attention (8192-token chunks) on 3 of 4 layers, interleaved MoE"},
         [] { return llama4(false); }},
        {{"llama4-nochunk", "llama4 with attention.sliding_window 0: every layer full"}, [] { return llama4(true); }},
        {{"glm4moe", "glm4moe: 1 dense + 3 MoE layers with a shared expert, q/k norms, biases"},
         [] { return glm4moe(); }},
        {{"gemma3n", "gemma3n: 22 layers, window 128 with period 5; layers 20 and 21 reuse 18 and 19"},
         [] { return gemma3n(22); }},
        {{"cohere2", "cohere2: window 128 on 3 of 4 layers, tied output"}, [] { return cohere2(); }},
        {{"olmo2", "olmo2: no window, every layer full"}, [] { return olmo2(std::nullopt); }},
        {{"olmo2-swa", "olmo2 with a window of 128 (OLMo 3): 3 sliding : 1 global"}, [] { return olmo2(128u); }},
        {{"exaone4", "exaone4 with 4 layers: the window key is ignored below 64 layers"}, [] { return exaone4(4); }},
        {{"exaone4-64", "exaone4 with 64 layers: window 128 on 3 of every 4 layers"}, [] { return exaone4(64); }},
        {{"ernie4_5", "ernie4_5: plain attention, tied output"}, [] { return ernie4_5(false); }},
        {{"ernie4_5-moe", "ernie4_5-moe: 1 dense + 3 MoE layers with a shared expert"}, [] { return ernie4_5(true); }},
        {{"hunyuan-moe", "hunyuan-moe: 4 experts + a shared expert on every layer, q/k norms"},
         [] { return hunyuan_moe(); }},
        {{"smollm3", "smollm3: llama-shaped (NoPE every 4th layer changes no cache)"},
         [] { return llama_shaped("smollm3"); }},
        {{"granite", "granite: llama-shaped with logit_scale"}, [] { return llama_shaped("granite"); }},
        {{"starcoder2", "starcoder2: biases everywhere, two-matrix MLP, tied output"}, [] { return starcoder2(); }},
        {{"command-r", "command-r: parallel block, tied output"}, [] { return command_r(); }},
        {{"phi3", "phi3: fused qkv and gate/up"}, [] { return phi3(false); }},
        {{"phi3-swa-disabled", "phi3 with sliding_window 128: llama.cpp disables it"}, [] { return phi3(true); }},
        {{"nemotron_h", "nemotron_h hybrid: Mamba-2, attention, MLP (no cache), Mamba-2"}, [] { return nemotron_h(false); }},
        {{"mamba", "mamba (Mamba-1): every layer recurrent, conv 3 x 256 and state 16 x 256 per sequence"},
         [] { return mamba1(); }},
        {{"jamba", "jamba: Mamba-1 layers 0, 1, 3 and attention on 2; experts on odd layers"}, [] { return jamba(); }},
        {{"lfm2moe", "lfm2moe (LFM2-8B-A1B): lfm2's mixers, 1 dense + 3 MoE layers"}, [] { return lfm2(false, true); }},
        {{"mistral4", "mistral4: deepseek2's class (its hparams and tensors), the MLA cache"},
         [] { return deepseek2("mistral4"); }},
        {{"nemotron_h_moe", "nemotron_h_moe (Nemotron 3): nemotron_h with a MoE block (4 experts, a shared one) for the MLP"},
         [] { return nemotron_h(true); }},
        {{"falcon-h1", "falcon-h1 parallel hybrid: attention and Mamba-2 state in every layer"},
         [] { return falcon_h1(); }},
        {{"olmoe", "olmoe: 4 experts, full-width q/k norms"}, [] { return olmoe(); }},
        {{"seed_oss", "seed_oss: q/k/v biases, post-attention norm"}, [] { return seed_oss(); }},
        {{"qwen2moe", "qwen2moe: 4 experts of 32, a gated shared expert, q/k/v biases"}, [] { return qwen2moe(); }},
        {{"granitemoe", "granitemoe: 4 experts, logit_scale, tied output"}, [] { return granitemoe(); }},
        {{"minicpm3", "minicpm3: low-rank q/kv, full K (64) and V (32) heads cached"}, [] { return minicpm3(); }},
        {{"hunyuan-dense", "hunyuan-dense: q/k norms, plain FFN"}, [] { return hunyuan_dense(); }},
        {{"dots1", "dots1: 1 dense + 3 MoE layers with a shared expert, 4 KV heads"}, [] { return dots1(); }},
        {{"bailingmoe", "bailingmoe: experts and a shared expert on every layer"}, [] { return bailingmoe(); }},
        {{"apertus", "apertus: xIELU constants per layer, q/k norms, two-matrix MLP"}, [] { return apertus(); }},
        {{"arcee", "arcee: two-matrix MLP, tied output"}, [] { return arcee(); }},
        {{"qwen35", "qwen35: gated delta net, attention every 4th layer, dense FFN"}, [] { return qwen35(false); }},
        {{"gemma4", "gemma4: 6 layers, window 128 on even layers by a bool pattern, K/V heads 2x32 sliding and 1x64 global; layers 4 and 5 reuse 2 and 3"},
         [] { return gemma4(); }},
        {{"qwen35moe", "qwen35moe: qwen35 with routed experts and a gated shared expert"}, [] { return qwen35(true); }},
        {{"kimi-linear", "kimi-linear: 3 KDA layers (4 heads of 16, conv 4) + 1 MLA layer (64 latent + 32 rope), MoE"},
         [] { return kimi_linear(); }},
        {{"deepseek32", "deepseek32: MLA (96 latent + 32 rope) and a DSA indexer key of 64 on 4 layers; 1 nextn layer"},
         [] { return dsa_fixture(DsaFixture::deepseek32); }},
        {{"glm-dsa", "glm-dsa: deepseek32's layers, the indexer full on layers 0 and 2 only (attention.indexer.types)"},
         [] { return dsa_fixture(DsaFixture::glm_types); }},
        {{"glm-dsa-table", "glm-dsa without indexer.types, trained on 1,048,576: llama.cpp's GLM 5.2 table (0-2 full)"},
         [] { return dsa_fixture(DsaFixture::glm_table); }},
    };
    for (FixtureRecipe& recipe : plain_attention_recipes()) all.push_back(std::move(recipe));
    for (FixtureRecipe& recipe : windowed_moe_recipes()) all.push_back(std::move(recipe));
    for (FixtureRecipe& recipe : rwkv_recipes()) all.push_back(std::move(recipe));
    for (FixtureRecipe& recipe : hybrid_recipes()) all.push_back(std::move(recipe));
    for (FixtureRecipe& recipe : deepseek4_recipes()) all.push_back(std::move(recipe));
    return all;
  }();
  return list;
}

}  // namespace

const std::vector<LlamaCppFixture>& llamacpp_fixtures() {
  static const std::vector<LlamaCppFixture> list = [] {
    std::vector<LlamaCppFixture> out;
    for (const FixtureRecipe& e : entries()) out.push_back(e.fixture);
    return out;
  }();
  return list;
}

GgufWriter make_llamacpp_fixture(std::string_view name) {
  for (const FixtureRecipe& e : entries())
    if (e.fixture.name == name) return e.make();
  throw std::invalid_argument(fmt::format("unknown fixture '{}'", name));
}

}  // namespace kvplan::testing
