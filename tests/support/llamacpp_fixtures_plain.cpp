// Fixtures of the architectures whose cache llama.cpp v0.4.0 lays out as llama's: create_memory's
// default branch, no window, no recurrent layer, K and V of head_count_kv heads on every layer.
// What differs is only which tensors load_arch_tensors creates (src/models/<arch>.cpp) and which
// keys load_arch_hparams requires; each recipe writes exactly those, since llama.cpp refuses a file
// with a tensor it did not create ("wrong number of tensors").

#include <optional>

#include "support/llamacpp_fixture_parts.h"

namespace kvplan::testing::fixture_parts {

namespace {

constexpr std::uint64_t kKvWidth = 64;  // 2 KV heads of 32

/// The keys of a plain-attention fixture: 4 layers, 4 query heads of 32, 2 KV heads.
GgufWriter plain_keys(const std::string& arch) {
  GgufWriter w;
  common_keys(w, arch, 4);
  w.add_uint32(arch + ".feed_forward_length", kFf);
  w.add_uint32(arch + ".attention.head_count_kv", 2);
  return w;
}

/// Layer norms with biases (LLM_KV_ATTENTION_LAYERNORM_EPS, read as required by these archs).
void layer_norm_eps(GgufWriter& w, const std::string& arch) {
  w.add_float32(arch + ".attention.layer_norm_epsilon", 1e-5f);
}

void norm_with_bias(GgufWriter& w, const std::string& name) {
  w.add_tensor(name + ".weight", kF32, {kEmbd});
  w.add_tensor(name + ".bias", kF32, {kEmbd});
}

/// A two-matrix MLP (up, down), with biases when `bias`.
void mlp(GgufWriter& w, std::uint32_t i, bool bias) {
  w.add_tensor(blk(i, "ffn_up.weight"), kF32, {kEmbd, kFf});
  w.add_tensor(blk(i, "ffn_down.weight"), kF32, {kFf, kEmbd});
  if (!bias) return;
  w.add_tensor(blk(i, "ffn_up.bias"), kF32, {kFf});
  w.add_tensor(blk(i, "ffn_down.bias"), kF32, {kEmbd});
}

/// One fused attn_qkv of n_embd + 2 x the KV width, with its bias when `bias`.
void fused_qkv(GgufWriter& w, std::uint32_t i, bool bias) {
  w.add_tensor(blk(i, "attn_qkv.weight"), kF32, {kEmbd, kEmbd + 2 * kKvWidth});
  if (bias) w.add_tensor(blk(i, "attn_qkv.bias"), kF32, {kEmbd + 2 * kKvWidth});
}

/// Layers exactly as llama's (q/k/v/o, a gated MLP): mistral3, exaone, internlm2, minicpm; with
/// q/k norms for qwen3vl; and the rope sections the multimodal-rope archs require.
GgufWriter llama_layers(const std::string& arch, bool output_head, bool qk_norm, bool rope_sections) {
  GgufWriter w = plain_keys(arch);
  if (rope_sections) w.add_array_int32(arch + ".rope.dimension_sections", {8, 4, 4, 0});
  embeddings(w, output_head);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2, qk_norm);
    ffn(w, i);
  }
  return w;
}

/// qwen3vlmoe: q/k norms, 4 routed experts of kFf (expert_feed_forward_length), rope sections.
GgufWriter qwen3vlmoe() {
  GgufWriter w = plain_keys("qwen3vlmoe");
  w.add_array_int32("qwen3vlmoe.rope.dimension_sections", {8, 4, 4, 0});
  w.add_uint32("qwen3vlmoe.expert_count", 4);
  w.add_uint32("qwen3vlmoe.expert_used_count", 2);
  w.add_uint32("qwen3vlmoe.expert_feed_forward_length", kFf);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2, true);
    experts(w, i, kFf);
  }
  return w;
}

/// glm4 (GLM-4-0414): post-attention and post-FFN norms, gate and up fused in one ffn_up.
GgufWriter glm4() {
  GgufWriter w = plain_keys("glm4");
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2, false, true);
    w.add_tensor(blk(i, "post_attention_norm.weight"), kF32, {kEmbd});
    w.add_tensor(blk(i, "ffn_norm.weight"), kF32, {kEmbd});
    w.add_tensor(blk(i, "ffn_up.weight"), kF32, {kEmbd, 2 * kFf});
    w.add_tensor(blk(i, "ffn_down.weight"), kF32, {kFf, kEmbd});
    w.add_tensor(blk(i, "post_ffw_norm.weight"), kF32, {kEmbd});
  }
  return w;
}

/// chatglm (ChatGLM3, GLM-4-9B-chat): q/k/v biases, gate and up fused in one ffn_up.
GgufWriter chatglm() {
  GgufWriter w = plain_keys("chatglm");
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2, false, true);
    w.add_tensor(blk(i, "ffn_norm.weight"), kF32, {kEmbd});
    w.add_tensor(blk(i, "ffn_up.weight"), kF32, {kEmbd, 2 * kFf});
    w.add_tensor(blk(i, "ffn_down.weight"), kF32, {kFf, kEmbd});
  }
  return w;
}

/// phi2: one layer norm with bias feeding attention and MLP in parallel; biases everywhere.
GgufWriter phi2() {
  GgufWriter w = plain_keys("phi2");
  layer_norm_eps(w, "phi2");
  w.add_tensor("token_embd.weight", kF32, {kEmbd, kVocab});
  norm_with_bias(w, "output_norm");
  w.add_tensor("output.weight", kF32, {kEmbd, kVocab});
  w.add_tensor("output.bias", kF32, {kVocab});
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2, false, true);
    w.add_tensor(blk(i, "attn_norm.bias"), kF32, {kEmbd});
    w.add_tensor(blk(i, "attn_output.bias"), kF32, {kEmbd});
    mlp(w, i, true);
  }
  return w;
}

/// stablelm and orion: llama's layers with LayerNorms (weights and biases) instead of RMSNorms.
GgufWriter layer_norm_llama(const std::string& arch) {
  GgufWriter w = plain_keys(arch);
  layer_norm_eps(w, arch);
  embeddings(w, true);
  w.add_tensor("output_norm.bias", kF32, {kEmbd});
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2);
    w.add_tensor(blk(i, "attn_norm.bias"), kF32, {kEmbd});
    ffn(w, i);
    w.add_tensor(blk(i, "ffn_norm.bias"), kF32, {kEmbd});
  }
  return w;
}

/// gptneox (Pythia), starcoder and gpt2 (learned positions), falcon: fused qkv, layer norms with
/// biases, a two-matrix MLP.
enum class FusedArch { gptneox, starcoder, gpt2, falcon };

GgufWriter fused_qkv_model(FusedArch kind) {
  const std::string arch = kind == FusedArch::gptneox     ? "gptneox"
                           : kind == FusedArch::starcoder ? "starcoder"
                           : kind == FusedArch::gpt2      ? "gpt2"
                                                          : "falcon";
  const bool biases = kind != FusedArch::falcon;
  GgufWriter w = plain_keys(arch);
  layer_norm_eps(w, arch);
  if (kind == FusedArch::gptneox) w.add_bool("gptneox.use_parallel_residual", true);
  w.add_tensor("token_embd.weight", kF32, {kEmbd, kVocab});
  if (kind == FusedArch::starcoder || kind == FusedArch::gpt2)
    w.add_tensor("position_embd.weight", kF32, {kEmbd, 8192});
  norm_with_bias(w, "output_norm");
  w.add_tensor("output.weight", kF32, {kEmbd, kVocab});
  for (std::uint32_t i = 0; i < 4; ++i) {
    norm_with_bias(w, blk(i, "attn_norm"));
    fused_qkv(w, i, biases);
    w.add_tensor(blk(i, "attn_output.weight"), kF32, {kEmbd, kEmbd});
    if (biases) w.add_tensor(blk(i, "attn_output.bias"), kF32, {kEmbd});
    if (biases) norm_with_bias(w, blk(i, "ffn_norm"));
    mlp(w, i, biases);
  }
  return w;
}

/// olmo (OLMo 1): non-parametric layer norms, so no norm tensors at all; tied output.
GgufWriter olmo() {
  GgufWriter w = plain_keys("olmo");
  layer_norm_eps(w, "olmo");
  w.add_tensor("token_embd.weight", kF32, {kEmbd, kVocab});
  for (std::uint32_t i = 0; i < 4; ++i) {
    w.add_tensor(blk(i, "attn_q.weight"), kF32, {kEmbd, kEmbd});
    w.add_tensor(blk(i, "attn_k.weight"), kF32, {kEmbd, kKvWidth});
    w.add_tensor(blk(i, "attn_v.weight"), kF32, {kEmbd, kKvWidth});
    w.add_tensor(blk(i, "attn_output.weight"), kF32, {kEmbd, kEmbd});
    ffn(w, i, false);
  }
  return w;
}

/// nemotron (Minitron, Nemotron-4): layer norms with biases, a two-matrix MLP.
GgufWriter nemotron() {
  GgufWriter w = plain_keys("nemotron");
  layer_norm_eps(w, "nemotron");
  embeddings(w, true);
  w.add_tensor("output_norm.bias", kF32, {kEmbd});
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2);
    w.add_tensor(blk(i, "attn_norm.bias"), kF32, {kEmbd});
    norm_with_bias(w, blk(i, "ffn_norm"));
    mlp(w, i, false);
  }
  return w;
}

/// phimoe (Phi-3.5-MoE): layer norms with biases, 4 experts of kFf, an output bias.
GgufWriter phimoe() {
  GgufWriter w = plain_keys("phimoe");
  w.add_uint32("phimoe.expert_count", 4);
  w.add_uint32("phimoe.expert_used_count", 2);
  embeddings(w, true);
  w.add_tensor("output_norm.bias", kF32, {kEmbd});
  w.add_tensor("output.bias", kF32, {kVocab});
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2);
    w.add_tensor(blk(i, "attn_norm.bias"), kF32, {kEmbd});
    w.add_tensor(blk(i, "attn_output.bias"), kF32, {kEmbd});
    experts(w, i, kFf);
    w.add_tensor(blk(i, "ffn_norm.bias"), kF32, {kEmbd});
  }
  return w;
}

/// minimax-m2: full-width q and k norms, 4 experts with a selection bias.
GgufWriter minimax_m2() {
  GgufWriter w = plain_keys("minimax-m2");
  w.add_uint32("minimax-m2.expert_count", 4);
  w.add_uint32("minimax-m2.expert_used_count", 2);
  w.add_uint32("minimax-m2.expert_feed_forward_length", kFf);
  // Optional to the loader, but without it the graph aborts ("fatal error" choosing the gating).
  w.add_uint32("minimax-m2.expert_gating_func", 2);  // sigmoid, as MiniMax-M2's files say
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2);
    w.add_tensor(blk(i, "attn_q_norm.weight"), kF32, {kEmbd});
    w.add_tensor(blk(i, "attn_k_norm.weight"), kF32, {kKvWidth});
    experts(w, i, kFf);
    w.add_tensor(blk(i, "exp_probs_b.bias"), kF32, {4});
  }
  return w;
}

/// bailingmoe2 (Ling 2.0): fused qkv, q/k norms, 1 dense layer then experts with a shared one.
GgufWriter bailingmoe2() {
  GgufWriter w = plain_keys("bailingmoe2");
  w.add_uint32("bailingmoe2.expert_count", 4);
  w.add_uint32("bailingmoe2.expert_used_count", 2);
  w.add_uint32("bailingmoe2.expert_feed_forward_length", 32);
  w.add_uint32("bailingmoe2.expert_shared_feed_forward_length", 64);
  w.add_uint32("bailingmoe2.expert_shared_count", 1);
  w.add_uint32("bailingmoe2.expert_gating_func", 2);  // sigmoid
  w.add_uint32("bailingmoe2.leading_dense_block_count", 1);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    w.add_tensor(blk(i, "attn_norm.weight"), kF32, {kEmbd});
    fused_qkv(w, i, false);
    w.add_tensor(blk(i, "attn_output.weight"), kF32, {kEmbd, kEmbd});
    w.add_tensor(blk(i, "attn_q_norm.weight"), kF32, {32});
    w.add_tensor(blk(i, "attn_k_norm.weight"), kF32, {32});
    dense_first_moe(w, i, true);
  }
  return w;
}

/// deepseek (DeepSeek-MoE 16B, V1): 1 dense layer, then 4 experts of 32 and a shared expert.
GgufWriter deepseek() {
  GgufWriter w = plain_keys("deepseek");
  w.add_uint32("deepseek.expert_count", 4);
  w.add_uint32("deepseek.expert_used_count", 2);
  w.add_uint32("deepseek.expert_feed_forward_length", 32);
  w.add_uint32("deepseek.expert_shared_count", 2);
  w.add_uint32("deepseek.leading_dense_block_count", 1);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2);
    dense_first_moe(w, i, false);
  }
  return w;
}

/// dbrx: fused qkv, a norm after attention, 4 experts of kFf; clamp_kqv is required.
GgufWriter dbrx() {
  GgufWriter w = plain_keys("dbrx");
  layer_norm_eps(w, "dbrx");
  w.add_float32("dbrx.attention.clamp_kqv", 8.0f);
  w.add_uint32("dbrx.expert_count", 4);
  w.add_uint32("dbrx.expert_used_count", 2);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    w.add_tensor(blk(i, "attn_norm.weight"), kF32, {kEmbd});
    fused_qkv(w, i, false);
    w.add_tensor(blk(i, "attn_output.weight"), kF32, {kEmbd, kEmbd});
    w.add_tensor(blk(i, "attn_output_norm.weight"), kF32, {kEmbd});
    w.add_tensor(blk(i, "ffn_gate_inp.weight"), kF32, {kEmbd, 4});
    w.add_tensor(blk(i, "ffn_gate_exps.weight"), kF32, {kEmbd, kFf, 4});
    w.add_tensor(blk(i, "ffn_up_exps.weight"), kF32, {kEmbd, kFf, 4});
    w.add_tensor(blk(i, "ffn_down_exps.weight"), kF32, {kFf, kEmbd, 4});
  }
  return w;
}


/// qwen (Qwen 1): fused qkv of 3 x n_embd (no GQA: 4 KV heads), a gated MLP of n_ff / 2.
GgufWriter qwen1() {
  GgufWriter w;
  common_keys(w, "qwen", 4);
  w.add_uint32("qwen.feed_forward_length", 2 * kFf);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    w.add_tensor(blk(i, "attn_norm.weight"), kF32, {kEmbd});
    w.add_tensor(blk(i, "attn_qkv.weight"), kF32, {kEmbd, 3 * kEmbd});
    w.add_tensor(blk(i, "attn_qkv.bias"), kF32, {3 * kEmbd});
    w.add_tensor(blk(i, "attn_output.weight"), kF32, {kEmbd, kEmbd});
    ffn(w, i);
  }
  return w;
}

/// codeshell: the output head is required (token_embd may be its duplicate: written here),
/// layer norms and a two-matrix MLP with biases.
GgufWriter codeshell() {
  GgufWriter w = plain_keys("codeshell");
  layer_norm_eps(w, "codeshell");
  w.add_tensor("token_embd.weight", kF32, {kEmbd, kVocab});
  norm_with_bias(w, "output_norm");
  w.add_tensor("output.weight", kF32, {kEmbd, kVocab});
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2, false, true);
    w.add_tensor(blk(i, "attn_norm.bias"), kF32, {kEmbd});
    w.add_tensor(blk(i, "attn_output.bias"), kF32, {kEmbd});
    norm_with_bias(w, blk(i, "ffn_norm"));
    mlp(w, i, true);
  }
  return w;
}

/// mpt and bloom: fused qkv, layer norms and MLP with biases (bloom also norms the embeddings,
/// a tensor llama.cpp keeps with layer 0); ALiBi, so no rope.
GgufWriter alibi_model(const std::string& arch) {
  GgufWriter w = plain_keys(arch);
  layer_norm_eps(w, arch);
  w.add_tensor("token_embd.weight", kF32, {kEmbd, kVocab});
  if (arch == "bloom") norm_with_bias(w, "token_embd_norm");
  norm_with_bias(w, "output_norm");
  w.add_tensor("output.weight", kF32, {kEmbd, kVocab});
  for (std::uint32_t i = 0; i < 4; ++i) {
    norm_with_bias(w, blk(i, "attn_norm"));
    fused_qkv(w, i, true);
    w.add_tensor(blk(i, "attn_output.weight"), kF32, {kEmbd, kEmbd});
    w.add_tensor(blk(i, "attn_output.bias"), kF32, {kEmbd});
    norm_with_bias(w, blk(i, "ffn_norm"));
    mlp(w, i, true);
  }
  return w;
}

/// jais: fused qkv, layer norms with biases, a gated MLP with biases.
GgufWriter jais() {
  GgufWriter w = plain_keys("jais");
  layer_norm_eps(w, "jais");
  w.add_tensor("token_embd.weight", kF32, {kEmbd, kVocab});
  norm_with_bias(w, "output_norm");
  w.add_tensor("output.weight", kF32, {kEmbd, kVocab});
  for (std::uint32_t i = 0; i < 4; ++i) {
    norm_with_bias(w, blk(i, "attn_norm"));
    fused_qkv(w, i, true);
    w.add_tensor(blk(i, "attn_output.weight"), kF32, {kEmbd, kEmbd});
    w.add_tensor(blk(i, "attn_output.bias"), kF32, {kEmbd});
    norm_with_bias(w, blk(i, "ffn_norm"));
    w.add_tensor(blk(i, "ffn_gate.weight"), kF32, {kEmbd, kFf});
    w.add_tensor(blk(i, "ffn_gate.bias"), kF32, {kFf});
    mlp(w, i, true);
  }
  return w;
}

/// grok: a norm after attention and after the experts, 4 experts of kFf.
GgufWriter grok() {
  GgufWriter w = plain_keys("grok");
  w.add_uint32("grok.expert_count", 4);
  w.add_uint32("grok.expert_used_count", 2);
  w.add_uint32("grok.expert_feed_forward_length", kFf);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2);
    w.add_tensor(blk(i, "attn_output_norm.weight"), kF32, {kEmbd});
    experts(w, i, kFf);
    w.add_tensor(blk(i, "post_ffw_norm.weight"), kF32, {kEmbd});
  }
  return w;
}

/// arctic: a dense residual MLP of n_embd beside 4 experts of kFf with their own norm.
GgufWriter arctic() {
  GgufWriter w = plain_keys("arctic");
  w.add_uint32("arctic.expert_count", 4);
  w.add_uint32("arctic.expert_used_count", 2);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2);
    w.add_tensor(blk(i, "ffn_gate.weight"), kF32, {kEmbd, kEmbd});
    w.add_tensor(blk(i, "ffn_up.weight"), kF32, {kEmbd, kEmbd});
    w.add_tensor(blk(i, "ffn_down.weight"), kF32, {kEmbd, kEmbd});
    experts(w, i, kFf);
    w.add_tensor(blk(i, "ffn_norm_exps.weight"), kF32, {kEmbd});
  }
  return w;
}

/// bitnet (BitNet b1.58): sub-norms inside attention and the MLP; the output is token_embd.
GgufWriter bitnet() {
  GgufWriter w = plain_keys("bitnet");
  w.add_tensor("token_embd.weight", kF32, {kEmbd, kVocab});
  w.add_tensor("output_norm.weight", kF32, {kEmbd});
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2);
    w.add_tensor(blk(i, "attn_sub_norm.weight"), kF32, {kEmbd});
    ffn(w, i);
    w.add_tensor(blk(i, "ffn_sub_norm.weight"), kF32, {kFf});
  }
  return w;
}


/// Plain keys with no GQA: head_count_kv 4, for architectures whose K and V are as wide as Q.
GgufWriter full_heads_keys(const std::string& arch) {
  GgufWriter w;
  common_keys(w, arch, 4);
  w.add_uint32(arch + ".feed_forward_length", kFf);
  return w;
}

/// q/k/v/o all n_embd x n_embd (4 KV heads of 32).
void full_attention(GgufWriter& w, std::uint32_t i) {
  for (const char* name : {"attn_q.weight", "attn_k.weight", "attn_v.weight", "attn_output.weight"})
    w.add_tensor(blk(i, name), kF32, {kEmbd, kEmbd});
}

/// jais2: layer norms with biases, q/k/v/o biases of n_embd (no GQA), a two-matrix MLP.
GgufWriter jais2() {
  GgufWriter w = full_heads_keys("jais2");
  layer_norm_eps(w, "jais2");
  w.add_tensor("token_embd.weight", kF32, {kEmbd, kVocab});
  norm_with_bias(w, "output_norm");
  w.add_tensor("output.weight", kF32, {kEmbd, kVocab});
  for (std::uint32_t i = 0; i < 4; ++i) {
    norm_with_bias(w, blk(i, "attn_norm"));
    full_attention(w, i);
    for (const char* name : {"attn_q.bias", "attn_k.bias", "attn_v.bias", "attn_output.bias"})
      w.add_tensor(blk(i, name), kF32, {kEmbd});
    norm_with_bias(w, blk(i, "ffn_norm"));
    mlp(w, i, true);
  }
  return w;
}

/// openelm: per-layer heads (query 4, KV 1, 2, 2, 1) and MLP widths, fused qkv, q/k norms, the
/// output tied to token_embd.
GgufWriter openelm() {
  GgufWriter w;
  common_keys(w, "openelm", 4, false);
  w.add_array_int32("openelm.attention.head_count", {4, 4, 4, 4});
  w.add_array_int32("openelm.attention.head_count_kv", {1, 2, 2, 1});
  w.add_array_int32("openelm.feed_forward_length", {128, 256, 256, 128});
  w.add_uint32("openelm.attention.key_length", 32);
  w.add_uint32("openelm.attention.value_length", 32);
  w.add_tensor("token_embd.weight", kF32, {kEmbd, kVocab});
  w.add_tensor("output_norm.weight", kF32, {kEmbd});
  const std::uint64_t kv[] = {1, 2, 2, 1};
  const std::uint64_t ff[] = {128, 256, 256, 128};
  for (std::uint32_t i = 0; i < 4; ++i) {
    w.add_tensor(blk(i, "attn_norm.weight"), kF32, {kEmbd});
    w.add_tensor(blk(i, "attn_qkv.weight"), kF32, {kEmbd, (2 * kv[i] + 4) * 32});
    w.add_tensor(blk(i, "attn_q_norm.weight"), kF32, {32});
    w.add_tensor(blk(i, "attn_k_norm.weight"), kF32, {32});
    w.add_tensor(blk(i, "attn_output.weight"), kF32, {kEmbd, kEmbd});
    w.add_tensor(blk(i, "ffn_norm.weight"), kF32, {kEmbd});
    w.add_tensor(blk(i, "ffn_gate.weight"), kF32, {kEmbd, ff[i]});
    w.add_tensor(blk(i, "ffn_up.weight"), kF32, {kEmbd, ff[i]});
    w.add_tensor(blk(i, "ffn_down.weight"), kF32, {ff[i], kEmbd});
  }
  return w;
}

/// pangu-embedded: llama's layers with an o_proj bias.
GgufWriter pangu_embedded() {
  GgufWriter w = plain_keys("pangu-embedded");
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2);
    w.add_tensor(blk(i, "attn_output.bias"), kF32, {kEmbd});
    ffn(w, i);
  }
  return w;
}

/// plamo (PLaMo 1): attention and MLP side by side from one norm (no ffn_norm).
GgufWriter plamo() {
  GgufWriter w = plain_keys("plamo");
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2);
    ffn(w, i, false);
  }
  return w;
}

/// talkie: no norm weights, a per-head q scale, a per-layer output scale; logit_scale required.
GgufWriter talkie() {
  GgufWriter w = plain_keys("talkie");
  w.add_float32("talkie.logit_scale", 1.0f);
  w.add_tensor("token_embd.weight", kF32, {kEmbd, kVocab});
  w.add_tensor("output.weight", kF32, {kEmbd, kVocab});
  for (std::uint32_t i = 0; i < 4; ++i) {
    w.add_tensor(blk(i, "attn_q.weight"), kF32, {kEmbd, kEmbd});
    w.add_tensor(blk(i, "attn_k.weight"), kF32, {kEmbd, kKvWidth});
    w.add_tensor(blk(i, "attn_v.weight"), kF32, {kEmbd, kKvWidth});
    w.add_tensor(blk(i, "attn_output.weight"), kF32, {kEmbd, kEmbd});
    w.add_tensor(blk(i, "attn_q_norm.weight"), kF32, {1, 4});
    ffn(w, i, false);
    w.add_tensor(blk(i, "layer_output_scale.weight"), kF32, {1});
  }
  return w;
}

/// cogvlm: fused qkv (no GQA) and a visual expert's copy of attention and MLP in every layer.
GgufWriter cogvlm() {
  GgufWriter w = full_heads_keys("cogvlm");
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    w.add_tensor(blk(i, "attn_norm.weight"), kF32, {kEmbd});
    for (const char* prefix : {"attn_", "vis_attn_"}) {
      w.add_tensor(blk(i, std::string(prefix) + "qkv.weight"), kF32, {kEmbd, 3 * kEmbd});
      w.add_tensor(blk(i, std::string(prefix) + "output.weight"), kF32, {kEmbd, kEmbd});
    }
    ffn(w, i);
    w.add_tensor(blk(i, "vis_gate.weight"), kF32, {kEmbd, kFf});
    w.add_tensor(blk(i, "vis_up.weight"), kF32, {kEmbd, kFf});
    w.add_tensor(blk(i, "vis_down.weight"), kF32, {kFf, kEmbd});
  }
  return w;
}

/// deepseek2-ocr: deepseek2's MoE without MLA (no GQA): 1 dense layer, then 4 experts of 32 and
/// a shared expert.
GgufWriter deepseek2_ocr() {
  GgufWriter w = full_heads_keys("deepseek2-ocr");
  w.add_uint32("deepseek2-ocr.expert_count", 4);
  w.add_uint32("deepseek2-ocr.expert_used_count", 2);
  w.add_uint32("deepseek2-ocr.expert_feed_forward_length", 32);
  w.add_uint32("deepseek2-ocr.expert_shared_count", 2);
  w.add_uint32("deepseek2-ocr.leading_dense_block_count", 1);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    w.add_tensor(blk(i, "attn_norm.weight"), kF32, {kEmbd});
    full_attention(w, i);
    dense_first_moe(w, i, false);
  }
  return w;
}


/// deci (Nemotron Super/Ultra): per-layer heads and MLP widths. Layer 0 attention (2 KV heads),
/// layer 1 a linear replacement (4 heads, 0 KV heads: attn_norm and attn_output only), layer 2 no
/// attention at all (0 heads), layer 3 attention without an MLP (n_ff 0). llama.cpp's cache still
/// holds layers 1 and 2, 0 wide.
GgufWriter deci() {
  GgufWriter w;
  common_keys(w, "deci", 4, false);
  w.add_array_int32("deci.attention.head_count", {4, 4, 0, 4});
  w.add_array_int32("deci.attention.head_count_kv", {2, 0, 0, 2});
  w.add_array_int32("deci.feed_forward_length", {static_cast<std::int32_t>(kFf), static_cast<std::int32_t>(kFf),
                                                 static_cast<std::int32_t>(kFf), 0});
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    if (i == 0 || i == 3) attention(w, i, 32, 2);
    if (i == 1) {
      w.add_tensor(blk(i, "attn_norm.weight"), kF32, {kEmbd});
      w.add_tensor(blk(i, "attn_output.weight"), kF32, {kEmbd, kEmbd});
    }
    if (i != 3) ffn(w, i);
  }
  return w;
}

/// plm: a latent rank 32 that the graph expands to full K (32 nope + 16 rope dims) and V (32) per
/// head before the cache, so the cache is llama's (4 KV heads, K 48 and V 32 wide); tied output,
/// a two-matrix MLP.
GgufWriter plm() {
  GgufWriter w = full_heads_keys("plm");
  w.add_uint32("plm.attention.head_count_kv", 4);
  w.add_uint32("plm.attention.key_length", 48);
  w.add_uint32("plm.attention.value_length", 32);
  w.add_uint32("plm.rope.dimension_count", 16);
  w.add_uint32("plm.attention.kv_lora_rank", 32);
  embeddings(w, false);
  for (std::uint32_t i = 0; i < 4; ++i) {
    w.add_tensor(blk(i, "attn_norm.weight"), kF32, {kEmbd});
    w.add_tensor(blk(i, "attn_q.weight"), kF32, {kEmbd, 4 * 48});
    w.add_tensor(blk(i, "attn_kv_a_mqa.weight"), kF32, {kEmbd, 32 + 16});
    w.add_tensor(blk(i, "attn_kv_a_norm.weight"), kF32, {32});
    w.add_tensor(blk(i, "attn_kv_b.weight"), kF32, {32, 4 * (32 + 32)});
    w.add_tensor(blk(i, "attn_output.weight"), kF32, {4 * 32, kEmbd});
    w.add_tensor(blk(i, "ffn_norm.weight"), kF32, {kEmbd});
    mlp(w, i, false);
  }
  return w;
}

/// grovemoe (GroveMoE): q/k norms, 4 experts of 32 and, per group of 2 experts, a chunk expert
/// of 16 (2 of them).
GgufWriter grovemoe() {
  GgufWriter w = plain_keys("grovemoe");
  w.add_uint32("grovemoe.expert_count", 4);
  w.add_uint32("grovemoe.expert_used_count", 2);
  w.add_uint32("grovemoe.expert_feed_forward_length", 32);
  w.add_uint32("grovemoe.expert_chunk_feed_forward_length", 16);
  w.add_float32("grovemoe.expert_group_scale", 0.05f);
  w.add_uint32("grovemoe.experts_per_group", 2);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2, true);
    experts(w, i, 32);
    w.add_tensor(blk(i, "ffn_gate_chexps.weight"), kF32, {kEmbd, 16, 2});
    w.add_tensor(blk(i, "ffn_up_chexps.weight"), kF32, {kEmbd, 16, 2});
    w.add_tensor(blk(i, "ffn_down_chexps.weight"), kF32, {16, kEmbd, 2});
  }
  return w;
}

/// nanbeige: 2 blocks of llama's layers run twice (num_loops 2): 4 cache layers over 2 layers of
/// weights.
GgufWriter nanbeige() {
  GgufWriter w;
  common_keys(w, "nanbeige", 2);
  w.add_uint32("nanbeige.feed_forward_length", kFf);
  w.add_uint32("nanbeige.attention.head_count_kv", 2);
  w.add_uint32("nanbeige.num_loops", 2);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 2; ++i) {
    attention(w, i, 32, 2);
    ffn(w, i);
  }
  return w;
}

/// graniteswitch: fused qkv, one embedded adapter of rank 4 (2 slots, slot 0 the base) with LoRA
/// pairs on q, k, v, o, gate, up and down; token 5 activates it, token 1 substitutes. llama.cpp adds
/// a router layer to the cache: 5 cache layers, the fifth 1 KV head of 32.
GgufWriter granite_switch() {
  GgufWriter w = plain_keys("graniteswitch");
  w.add_float32("graniteswitch.logit_scale", 1.0f);
  w.add_uint32("graniteswitch.adapters.count", 1);
  w.add_uint32("graniteswitch.adapters.lora_rank", 4);
  w.add_array_int32("graniteswitch.adapters.token_ids_activate", {5});
  w.add_array_int32("graniteswitch.adapters.token_ids_substitute", {1});
  embeddings(w, true);
  const auto lora = [&w](std::uint32_t i, const std::string& name, std::uint64_t in, std::uint64_t out) {
    w.add_tensor(blk(i, name + ".lora_a"), kF32, {in, 4, 2});
    w.add_tensor(blk(i, name + ".lora_b"), kF32, {4, out, 2});
  };
  for (std::uint32_t i = 0; i < 4; ++i) {
    w.add_tensor(blk(i, "attn_norm.weight"), kF32, {kEmbd});
    fused_qkv(w, i, false);
    w.add_tensor(blk(i, "attn_output.weight"), kF32, {kEmbd, kEmbd});
    ffn(w, i);
    lora(i, "attn_q", kEmbd, kEmbd);
    lora(i, "attn_k", kEmbd, kKvWidth);
    lora(i, "attn_v", kEmbd, kKvWidth);
    lora(i, "attn_output", kEmbd, kEmbd);
    lora(i, "ffn_gate", kEmbd, kFf);
    lora(i, "ffn_up", kEmbd, kFf);
    lora(i, "ffn_down", kFf, kEmbd);
  }
  return w;
}

/// chameleon: q/k norms per head ({head, heads}), tied output. Its graph writes -inf over the
/// logits of image tokens 4 to 8,195, so the vocabulary must reach 8,196: 8,200 tokens here.
GgufWriter chameleon() {
  constexpr std::uint32_t kChameleonVocab = 8200;
  GgufWriter w;
  common_keys(w, "chameleon", 4, true, 8192, kChameleonVocab);
  w.add_uint32("chameleon.feed_forward_length", kFf);
  w.add_uint32("chameleon.attention.head_count_kv", 2);
  w.add_tensor("token_embd.weight", kF32, {kEmbd, kChameleonVocab});
  w.add_tensor("output_norm.weight", kF32, {kEmbd});
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2);
    w.add_tensor(blk(i, "attn_q_norm.weight"), kF32, {32, 4});
    w.add_tensor(blk(i, "attn_k_norm.weight"), kF32, {32, 2});
    ffn(w, i);
  }
  return w;
}

}  // namespace

std::vector<FixtureRecipe> plain_attention_recipes() {
  return {
      {{"mistral3", "mistral3: llama's layers (Mistral Small 3, Devstral)"},
       [] { return llama_layers("mistral3", true, false, false); }},
      {{"exaone", "exaone (EXAONE 3.x): llama's layers, tied output"},
       [] { return llama_layers("exaone", false, false, false); }},
      {{"internlm2", "internlm2: llama's layers"}, [] { return llama_layers("internlm2", true, false, false); }},
      {{"minicpm", "minicpm: llama's layers, tied output"},
       [] { return llama_layers("minicpm", false, false, false); }},
      {{"qwen2vl", "qwen2vl: llama's layers, rope sections"},
       [] { return llama_layers("qwen2vl", true, false, true); }},
      {{"qwen3vl", "qwen3vl: q/k norms, rope sections"}, [] { return llama_layers("qwen3vl", true, true, true); }},
      {{"qwen3vlmoe", "qwen3vlmoe: q/k norms, 4 experts of 256, rope sections"}, [] { return qwen3vlmoe(); }},
      {{"glm4", "glm4: post-attention and post-FFN norms, fused gate/up"}, [] { return glm4(); }},
      {{"chatglm", "chatglm: q/k/v biases, fused gate/up"}, [] { return chatglm(); }},
      {{"phi2", "phi2: parallel block, biases everywhere"}, [] { return phi2(); }},
      {{"stablelm", "stablelm: layer norms with biases"}, [] { return layer_norm_llama("stablelm"); }},
      {{"gptneox", "gptneox: fused qkv, parallel residual"}, [] { return fused_qkv_model(FusedArch::gptneox); }},
      {{"starcoder", "starcoder: fused qkv, learned positions"}, [] { return fused_qkv_model(FusedArch::starcoder); }},
      {{"gpt2", "gpt2: fused qkv, learned positions"}, [] { return fused_qkv_model(FusedArch::gpt2); }},
      {{"falcon", "falcon: fused qkv, no biases"}, [] { return fused_qkv_model(FusedArch::falcon); }},
      {{"olmo", "olmo: no norm tensors, tied output"}, [] { return olmo(); }},
      {{"nemotron", "nemotron: layer norms with biases, two-matrix MLP"}, [] { return nemotron(); }},
      {{"phimoe", "phimoe: 4 experts, biases"}, [] { return phimoe(); }},
      {{"minimax-m2", "minimax-m2: full-width q/k norms, 4 experts"}, [] { return minimax_m2(); }},
      {{"bailingmoe2", "bailingmoe2: fused qkv, 1 dense + 3 MoE layers with a shared expert"},
       [] { return bailingmoe2(); }},
      {{"deepseek", "deepseek (V1 MoE): 1 dense + 3 MoE layers with 2 shared experts"}, [] { return deepseek(); }},
      {{"dbrx", "dbrx: fused qkv, 4 experts of 256"}, [] { return dbrx(); }},
      {{"qwen", "qwen (Qwen 1): fused qkv, no GQA (4 KV heads)"}, [] { return qwen1(); }},
      {{"baichuan", "baichuan: llama's layers, ALiBi"}, [] { return llama_layers("baichuan", true, false, false); }},
      {{"orion", "orion: layer norms with biases"}, [] { return layer_norm_llama("orion"); }},
      {{"xverse", "xverse: llama's layers"}, [] { return llama_layers("xverse", true, false, false); }},
      {{"refact", "refact: llama's layers, ALiBi, tied output"},
       [] { return llama_layers("refact", false, false, false); }},
      {{"codeshell", "codeshell: biases everywhere, two-matrix MLP"}, [] { return codeshell(); }},
      {{"mpt", "mpt: fused qkv, ALiBi, biases"}, [] { return alibi_model("mpt"); }},
      {{"bloom", "bloom: fused qkv, ALiBi, a norm on the embeddings"}, [] { return alibi_model("bloom"); }},
      {{"jais", "jais: fused qkv, gated MLP with biases"}, [] { return jais(); }},
      {{"grok", "grok: 4 experts, norms after attention and experts"}, [] { return grok(); }},
      {{"arctic", "arctic: a dense MLP beside 4 experts"}, [] { return arctic(); }},
      {{"bitnet", "bitnet: sub-norms, output tied to token_embd"}, [] { return bitnet(); }},
      {{"maincoder", "maincoder: q/k norms"}, [] { return llama_layers("maincoder", false, true, false); }},
      {{"jais2", "jais2: no GQA, biases everywhere"}, [] { return jais2(); }},
      {{"openelm", "openelm: per-layer KV heads 1, 2, 2, 1 and MLP widths, fused qkv"}, [] { return openelm(); }},
      {{"pangu-embedded", "pangu-embedded: an o_proj bias"}, [] { return pangu_embedded(); }},
      {{"plamo", "plamo: a parallel block without ffn_norm"}, [] { return plamo(); }},
      {{"talkie", "talkie: no norm weights, q and output scales"}, [] { return talkie(); }},
      {{"hunyuan_vl", "hunyuan_vl: q/k norms"}, [] { return llama_layers("hunyuan_vl", true, true, false); }},
      {{"cogvlm", "cogvlm: fused qkv, a visual expert per layer"}, [] { return cogvlm(); }},
      {{"deepseek2-ocr", "deepseek2-ocr: no MLA, 1 dense + 3 MoE layers"}, [] { return deepseek2_ocr(); }},
      {{"paddleocr", "paddleocr: ernie4_5's layers, rope sections, tied output"},
       [] { return llama_layers("paddleocr", false, false, true); }},
      {{"plm", "plm: a latent rank expanded to full K and V per head before the cache"}, [] { return plm(); }},
      {{"grovemoe", "grovemoe: q/k norms, 4 experts of 32, 2 chunk experts of 16"}, [] { return grovemoe(); }},
      {{"chameleon", "chameleon: per-head q/k norms, 8,200 tokens, tied output"}, [] { return chameleon(); }},
      {{"nanbeige", "nanbeige: 2 blocks looped twice (num_loops 2), 4 cache layers"}, [] { return nanbeige(); }},
      {{"graniteswitch", "graniteswitch: one embedded adapter, a router layer of 1 KV head in the cache"},
       [] { return granite_switch(); }},
      {{"deci", "deci: attention, a linear replacement, no attention, attention without MLP (0-wide cache layers)"},
       [] { return deci(); }},
  };
}

}  // namespace kvplan::testing::fixture_parts
