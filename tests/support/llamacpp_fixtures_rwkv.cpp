// Fixtures of the RWKV architectures (rwkv6, rwkv7, and arwkv7 on Qwen 2's layers): every layer
// recurrent, no KV cache. llama.cpp
// v0.4.0 keeps per sequence and layer a token-shift state of token_shift_count x n_embd and a WKV
// state of n_embd x wkv.head_size, both f32 (llama_hparams::n_embd_r / n_embd_s). The tensors are
// exactly those src/models/rwkv6.cpp and rwkv7.cpp create: 4 layers of 128, heads of 32.

#include "support/llamacpp_fixture_parts.h"

namespace kvplan::testing::fixture_parts {

namespace {

constexpr std::uint64_t kHead = 32;
constexpr std::uint64_t kLora = 16;

/// The keys and the tensors outside the layers both share: a LayerNorm on the embeddings
/// (token_embd_norm, kept with layer 0) and one before the output head.
GgufWriter rwkv_common(const std::string& arch) {
  GgufWriter w;
  common_keys(w, arch, 4, false);
  w.add_uint32(arch + ".feed_forward_length", kFf);
  w.add_uint32(arch + ".wkv.head_size", kHead);
  w.add_float32(arch + ".attention.layer_norm_epsilon", 1e-5f);
  w.add_tensor("token_embd.weight", kF32, {kEmbd, kVocab});
  w.add_tensor("token_embd_norm.weight", kF32, {kEmbd});
  w.add_tensor("token_embd_norm.bias", kF32, {kEmbd});
  w.add_tensor("output_norm.weight", kF32, {kEmbd});
  w.add_tensor("output_norm.bias", kF32, {kEmbd});
  w.add_tensor("output.weight", kF32, {kEmbd, kVocab});
  return w;
}

/// Both norms of a block (with biases), the time mix's key/value/receptance/output and its
/// LayerNorm, and the channel mix's key and value.
void rwkv_block_common(GgufWriter& w, std::uint32_t i) {
  for (const char* norm : {"attn_norm", "attn_norm_2", "time_mix_ln"}) {
    w.add_tensor(blk(i, std::string(norm) + ".weight"), kF32, {kEmbd});
    w.add_tensor(blk(i, std::string(norm) + ".bias"), kF32, {kEmbd});
  }
  for (const char* name : {"time_mix_key", "time_mix_value", "time_mix_receptance", "time_mix_output"})
    w.add_tensor(blk(i, std::string(name) + ".weight"), kF32, {kEmbd, kEmbd});
  w.add_tensor(blk(i, "channel_mix_lerp_k.weight"), kF32, {kEmbd, 1, 1});
  w.add_tensor(blk(i, "channel_mix_key.weight"), kF32, {kEmbd, kFf});
  w.add_tensor(blk(i, "channel_mix_value.weight"), kF32, {kFf, kEmbd});
}

/// RWKV-6's data-dependent token shift (lerp with a low-rank mix of 5) and decay (a low-rank
/// pair), with the bonus time_mix_first where `first` (rwkv6qwen2 has none: the "qrwkv" path).
void rwkv6_data_dependent_mix(GgufWriter& w, std::uint32_t i, bool first) {
  w.add_tensor(blk(i, "time_mix_w1.weight"), kF32, {kEmbd, kLora * 5});
  w.add_tensor(blk(i, "time_mix_w2.weight"), kF32, {kLora, kEmbd, 5});
  w.add_tensor(blk(i, "time_mix_lerp_x.weight"), kF32, {kEmbd, 1, 1});
  w.add_tensor(blk(i, "time_mix_lerp_fused.weight"), kF32, {kEmbd, 1, 1, 5});
  if (first) w.add_tensor(blk(i, "time_mix_first.weight"), kF32, {kHead, kEmbd / kHead});
  w.add_tensor(blk(i, "time_mix_decay.weight"), kF32, {kEmbd});
  w.add_tensor(blk(i, "time_mix_decay_w1.weight"), kF32, {kEmbd, kLora});
  w.add_tensor(blk(i, "time_mix_decay_w2.weight"), kF32, {kLora, kEmbd});
}

/// rwkv6 (Finch): data-dependent token shift (lerp with a low-rank mix of 5) and decay.
GgufWriter rwkv6() {
  GgufWriter w = rwkv_common("rwkv6");
  w.add_uint32("rwkv6.time_mix_extra_dim", kLora);
  w.add_uint32("rwkv6.time_decay_extra_dim", kLora);
  for (std::uint32_t i = 0; i < 4; ++i) {
    rwkv_block_common(w, i);
    rwkv6_data_dependent_mix(w, i, true);
    w.add_tensor(blk(i, "time_mix_gate.weight"), kF32, {kEmbd, kEmbd});
    w.add_tensor(blk(i, "channel_mix_lerp_r.weight"), kF32, {kEmbd, 1, 1});
    w.add_tensor(blk(i, "channel_mix_receptance.weight"), kF32, {kEmbd, kEmbd});
  }
  return w;
}

/// RWKV-7's low-rank sizes (rwkv7, arwkv7): decay, in-context learning rate and gate of 16, the
/// value residual of 8.
void rwkv7_ranks(GgufWriter& w, const std::string& arch) {
  w.add_uint32(arch + ".attention.decay_lora_rank", kLora);
  w.add_uint32(arch + ".attention.iclr_lora_rank", kLora);
  w.add_uint32(arch + ".attention.value_residual_mix_lora_rank", 8);
  w.add_uint32(arch + ".attention.gate_lora_rank", kLora);
}

/// RWKV-7's time-mix vectors and low-rank pairs; layer 0's value mix takes the ICLR rank, the
/// others the value-residual rank; 6 fused lerps (there is a gate).
void rwkv7_time_mix(GgufWriter& w, std::uint32_t i) {
  const std::uint64_t value_rank = i == 0 ? kLora : 8;
  for (const char* vec : {"time_mix_w0", "time_mix_a0", "time_mix_v0", "time_mix_k_k", "time_mix_k_a", "time_mix_r_k"})
    w.add_tensor(blk(i, std::string(vec) + ".weight"), kF32, {kEmbd});
  w.add_tensor(blk(i, "time_mix_w1.weight"), kF32, {kEmbd, kLora});
  w.add_tensor(blk(i, "time_mix_w2.weight"), kF32, {kLora, kEmbd});
  w.add_tensor(blk(i, "time_mix_a1.weight"), kF32, {kEmbd, kLora});
  w.add_tensor(blk(i, "time_mix_a2.weight"), kF32, {kLora, kEmbd});
  w.add_tensor(blk(i, "time_mix_v1.weight"), kF32, {kEmbd, value_rank});
  w.add_tensor(blk(i, "time_mix_v2.weight"), kF32, {value_rank, kEmbd});
  w.add_tensor(blk(i, "time_mix_g1.weight"), kF32, {kEmbd, kLora});
  w.add_tensor(blk(i, "time_mix_g2.weight"), kF32, {kLora, kEmbd});
  w.add_tensor(blk(i, "time_mix_lerp_fused.weight"), kF32, {kEmbd, 1, 1, 6});
}

/// rwkv7 (Goose): low-rank decay, in-context learning rate, value residual and gate; the first
/// layer's value mix takes the ICLR rank.
GgufWriter rwkv7() {
  GgufWriter w = rwkv_common("rwkv7");
  rwkv7_ranks(w, "rwkv7");
  for (std::uint32_t i = 0; i < 4; ++i) {
    rwkv_block_common(w, i);
    rwkv7_time_mix(w, i);
  }
  return w;
}

/// A Qwen 2 MLP after an RMSNorm (arwkv7: RWKV time mixing on Qwen 2.5's layers).
void qwen2_mlp(GgufWriter& w, std::uint32_t i) {
  w.add_tensor(blk(i, "attn_norm.weight"), kF32, {kEmbd});
  w.add_tensor(blk(i, "time_mix_output.weight"), kF32, {kEmbd, kEmbd});
  ffn(w, i);
}

/// The output of the Qwen-based RWKV: an RMSNorm and the head (no embedding norm).
GgufWriter rwkv_qwen_common(const std::string& arch) {
  GgufWriter w;
  common_keys(w, arch, 4, false);
  w.add_uint32(arch + ".feed_forward_length", kFf);
  w.add_uint32(arch + ".wkv.head_size", kHead);
  w.add_uint32(arch + ".token_shift_count", 1);
  embeddings(w, true);
  return w;
}

/// arwkv7 (Qwen 2.5 with RWKV-7 time mixing): one token to shift, a gate (so 6 fused lerps).
GgufWriter arwkv7() {
  GgufWriter w = rwkv_qwen_common("arwkv7");
  rwkv7_ranks(w, "arwkv7");
  for (std::uint32_t i = 0; i < 4; ++i) {
    qwen2_mlp(w, i);
    rwkv7_time_mix(w, i);
    for (const char* name : {"time_mix_key", "time_mix_value", "time_mix_receptance"})
      w.add_tensor(blk(i, std::string(name) + ".weight"), kF32, {kEmbd, kEmbd});
  }
  return w;
}

/// rwkv6qwen2 (RWKV-6 time mixing on Qwen 2.5's layers): one token to shift, no time_mix_first
/// (the "qrwkv" path), key and value for 2 KV heads of 32 repeated to the 4 WKV heads.
GgufWriter rwkv6qwen2() {
  GgufWriter w = rwkv_qwen_common("rwkv6qwen2");
  w.add_uint32("rwkv6qwen2.attention.head_count_kv", 2);
  w.add_uint32("rwkv6qwen2.time_mix_extra_dim", kLora);
  w.add_uint32("rwkv6qwen2.time_decay_extra_dim", kLora);
  for (std::uint32_t i = 0; i < 4; ++i) {
    qwen2_mlp(w, i);
    rwkv6_data_dependent_mix(w, i, false);
    w.add_tensor(blk(i, "time_mix_key.weight"), kF32, {kEmbd, 2 * kHead});
    w.add_tensor(blk(i, "time_mix_value.weight"), kF32, {kEmbd, 2 * kHead});
    w.add_tensor(blk(i, "time_mix_receptance.weight"), kF32, {kEmbd, kEmbd});
    w.add_tensor(blk(i, "time_mix_gate.weight"), kF32, {kEmbd, kEmbd});
  }
  return w;
}

}  // namespace

std::vector<FixtureRecipe> rwkv_recipes() {
  return {
      {{"rwkv6", "rwkv6: every layer recurrent, token shift 2 x 128 and WKV 128 x 32 per sequence"},
       [] { return rwkv6(); }},
      {{"rwkv7", "rwkv7: every layer recurrent, token shift 2 x 128 and WKV 128 x 32 per sequence"},
       [] { return rwkv7(); }},
      {{"arwkv7", "arwkv7: RWKV-7 time mixing on Qwen 2 layers, token shift 1 x 128"}, [] { return arwkv7(); }},
      {{"rwkv6qwen2", "rwkv6qwen2: RWKV-6 time mixing on Qwen 2 layers, 2 KV heads, token shift 1 x 128"},
       [] { return rwkv6qwen2(); }},
  };
}

}  // namespace kvplan::testing::fixture_parts
