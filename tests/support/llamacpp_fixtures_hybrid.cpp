// Fixtures of the hybrid architectures that create_memory's default branch gives a
// llama_memory_hybrid: recurrent layers keep state (f32), the others KV cells. plamo2's recurrent
// layers (head_count_kv 0) are Mamba-2; bailingmoe3's and kimi-k3's are Kimi Delta Attention beside
// MLA layers (kimi-linear's caches); minimax-01's are lightning attention (full_attention_interval). Each writes exactly
// the tensors its load_arch_tensors creates in llama.cpp v0.4.0 (src/models/<arch>.cpp).

#include "support/llamacpp_fixture_parts.h"

namespace kvplan::testing::fixture_parts {

namespace {

/// The keys every layer layout here starts from: `blocks` layers (4), 4 query heads, n_ff.
GgufWriter plain_keys_without_layers(const std::string& arch, std::uint32_t blocks = 4) {
  GgufWriter w;
  common_keys(w, arch, blocks);
  w.add_uint32(arch + ".feed_forward_length", kFf);
  return w;
}

/// plamo2: layers 0 and 2 Mamba-2 (inner 128 in 4 heads, state 16, conv 4, no groups), 1 and 3
/// attention (2 KV heads of 32, fused qkv, per-head q/k norms); llama.cpp's dt width is
/// max(64, n_embd / 16) = 64. Several norms are written without a .weight suffix, as its converter
/// names them.
GgufWriter plamo2() {
  GgufWriter w = plain_keys_without_layers("plamo2");
  w.add_array_int32("plamo2.attention.head_count_kv", {0, 2, 0, 2});
  w.add_uint32("plamo2.ssm.conv_kernel", 4);
  w.add_uint32("plamo2.ssm.inner_size", 128);
  w.add_uint32("plamo2.ssm.state_size", 16);
  w.add_uint32("plamo2.ssm.time_step_rank", 4);
  w.add_uint32("plamo2.ssm.group_count", 0);
  embeddings(w, false);
  for (std::uint32_t i = 0; i < 4; ++i) {
    w.add_tensor(blk(i, "attn_norm.weight"), kF32, {kEmbd});
    if (i % 2 == 0) {
      w.add_tensor(blk(i, "ssm_in.weight"), kF32, {kEmbd, 256});
      w.add_tensor(blk(i, "ssm_conv1d.weight"), kF32, {4, 128});
      w.add_tensor(blk(i, "ssm_x.weight"), kF32, {128, 64 + 2 * 16});
      w.add_tensor(blk(i, "ssm_dt.weight"), kF32, {64, 4});
      w.add_tensor(blk(i, "ssm_dt.bias"), kF32, {4});
      w.add_tensor(blk(i, "ssm_a"), kF32, {4});
      w.add_tensor(blk(i, "ssm_d"), kF32, {4});
      w.add_tensor(blk(i, "ssm_out.weight"), kF32, {128, kEmbd});
      w.add_tensor(blk(i, "ssm_dt_norm"), kF32, {64});
      w.add_tensor(blk(i, "ssm_b_norm"), kF32, {16});
      w.add_tensor(blk(i, "ssm_c_norm"), kF32, {16});
    } else {
      w.add_tensor(blk(i, "attn_qkv.weight"), kF32, {kEmbd, kEmbd + 2 * 64});
      w.add_tensor(blk(i, "attn_q_norm.weight"), kF32, {32, 4});
      w.add_tensor(blk(i, "attn_k_norm.weight"), kF32, {32, 2});
      w.add_tensor(blk(i, "attn_output.weight"), kF32, {kEmbd, kEmbd});
    }
    w.add_tensor(blk(i, "post_attention_norm"), kF32, {kEmbd});
    w.add_tensor(blk(i, "ffn_norm.weight"), kF32, {kEmbd});
    w.add_tensor(blk(i, "ffn_down.weight"), kF32, {kFf, kEmbd});
    w.add_tensor(blk(i, "ffn_up.weight"), kF32, {kEmbd, 2 * kFf});
    w.add_tensor(blk(i, "post_ffw_norm"), kF32, {kEmbd});
  }
  return w;
}

/// The keys bailingmoe3 and kimi-k3 share with kimi-linear: layers 0-2 KDA (4 heads of `kda_head`),
/// layer 3 MLA (a latent of 64 and a rope key of 32 cached, K only, one KV head), every layer dense
/// (leading_dense_block_count 4, no experts). With `nextn`, a fifth block is a nextn (MTP) layer of
/// one KV head that the file leaves out (a trunk-only file, as llama.cpp loads without MTP).
GgufWriter kda_mla_keys(const std::string& arch, std::uint32_t kda_head, bool nextn = false) {
  GgufWriter w = plain_keys_without_layers(arch, nextn ? 5 : 4);
  if (nextn) {
    w.add_uint32(arch + ".nextn_predict_layers", 1);
    w.add_array_int32(arch + ".attention.head_count_kv", {0, 0, 0, 1, 1});
  } else {
    w.add_array_int32(arch + ".attention.head_count_kv", {0, 0, 0, 1});
  }
  w.add_uint32(arch + ".attention.kv_lora_rank", 64);
  w.add_uint32(arch + ".rope.dimension_count", 32);
  w.add_uint32(arch + ".attention.key_length", 96);
  w.add_uint32(arch + ".attention.key_length_mla", 64);  // nope 32 + rope 32
  w.add_uint32(arch + ".attention.value_length_mla", 32);
  w.add_uint32(arch + ".ssm.conv_kernel", 4);
  w.add_uint32(arch + ".kda.head_dim", kda_head);
  w.add_uint32(arch + ".expert_feed_forward_length", 32);
  w.add_uint32(arch + ".expert_shared_count", 1);
  w.add_uint32(arch + ".leading_dense_block_count", 4);
  w.add_uint32(arch + ".expert_gating_func", 2);  // sigmoid
  w.add_float32(arch + ".kda.gate_lower_bound", -5.0f);
  embeddings(w, true);
  return w;
}

/// A KDA layer's tensors both share (q/k/v convolutions and projections, beta, A, dt bias, the
/// output norm and projection), with A of `a_dims`.
void kda_common(GgufWriter& w, std::uint32_t i, std::uint64_t d_inner, std::uint64_t head,
                const std::vector<std::uint64_t>& a_dims) {
  for (const char* conv : {"ssm_conv1d_q.weight", "ssm_conv1d_k.weight", "ssm_conv1d_v.weight"})
    w.add_tensor(blk(i, conv), kF32, {4, 1, d_inner});
  w.add_tensor(blk(i, "attn_q.weight"), kF32, {kEmbd, d_inner});
  w.add_tensor(blk(i, "attn_k.weight"), kF32, {kEmbd, d_inner});
  w.add_tensor(blk(i, "attn_v.weight"), kF32, {kEmbd, d_inner});
  w.add_tensor(blk(i, "ssm_beta.weight"), kF32, {kEmbd, 4});
  w.add_tensor(blk(i, "ssm_a"), kF32, a_dims);
  w.add_tensor(blk(i, "ssm_dt.bias"), kF32, {d_inner});
  w.add_tensor(blk(i, "ssm_norm.weight"), kF32, {head});
  w.add_tensor(blk(i, "attn_output.weight"), kF32, {d_inner, kEmbd});
}

/// The MLA layer both share: a plain q of 4 heads of 64, the latent and rope key (64 + 32), the
/// absorbed k_b / v_b, a head gate of `gate_width`, an output of 4 heads of 32.
void mla_layer(GgufWriter& w, std::uint32_t i, std::uint64_t gate_width) {
  w.add_tensor(blk(i, "attn_q.weight"), kF32, {kEmbd, 4 * 64});
  w.add_tensor(blk(i, "attn_kv_a_mqa.weight"), kF32, {kEmbd, 64 + 32});
  w.add_tensor(blk(i, "attn_kv_a_norm.weight"), kF32, {64});
  w.add_tensor(blk(i, "attn_k_b.weight"), kF32, {32, 64, 4});
  w.add_tensor(blk(i, "attn_v_b.weight"), kF32, {64, 32, 4});
  w.add_tensor(blk(i, "attn_gate.weight"), kF32, {kEmbd, gate_width});
  w.add_tensor(blk(i, "attn_output.weight"), kF32, {4 * 32, kEmbd});
}

/// bailingmoe3 (Ling 3): KDA heads of 32 with full-rank f and g gates, A as {1, heads}; the MLA
/// layer's gate is one value per head. `nextn`: a trunk-only file with one nextn layer, to which
/// the hybrid's default filter still gives K cells.
GgufWriter bailingmoe3(bool nextn) {
  GgufWriter w = kda_mla_keys("bailingmoe3", 32, nextn);
  for (std::uint32_t i = 0; i < 4; ++i) {
    w.add_tensor(blk(i, "attn_norm.weight"), kF32, {kEmbd});
    if (i < 3) {
      kda_common(w, i, 128, 32, {1, 4});
      w.add_tensor(blk(i, "ssm_f_a.weight"), kF32, {kEmbd, 128});
      w.add_tensor(blk(i, "ssm_g_a.weight"), kF32, {kEmbd, 128});
    } else {
      mla_layer(w, i, 4);
    }
    ffn(w, i);
  }
  return w;
}

/// kimi-k3: KDA heads of 16 with a low-rank f gate and a full-rank g, A as {heads}; the MLA layer's
/// gate covers every value head; no attention residual scores (attn_res.block_size 0).
GgufWriter kimi_k3() {
  GgufWriter w = kda_mla_keys("kimi-k3", 16);
  w.add_uint32("kimi-k3.attn_res.block_size", 0);
  w.add_float32("kimi-k3.activation.situ_beta", 1.0f);
  w.add_float32("kimi-k3.activation.situ_linear_beta", 0.0f);
  for (std::uint32_t i = 0; i < 4; ++i) {
    w.add_tensor(blk(i, "attn_norm.weight"), kF32, {kEmbd});
    if (i < 3) {
      kda_common(w, i, 64, 16, {4});
      w.add_tensor(blk(i, "ssm_f_a.weight"), kF32, {kEmbd, 16});
      w.add_tensor(blk(i, "ssm_f_b.weight"), kF32, {16, 64});
      w.add_tensor(blk(i, "ssm_g.weight"), kF32, {kEmbd, 64});
    } else {
      mla_layer(w, i, 4 * 32);
    }
    ffn(w, i);
  }
  return w;
}

/// minimax-01 (MiniMax-Text-01): full_attention_interval 2, so layers 0 and 2 are lightning
/// attention (fused qkv, a gate, a norm over the heads) and 1 and 3 softmax (2 KV heads of 32);
/// every layer 2 experts of n_ff.
GgufWriter minimax_01() {
  GgufWriter w = plain_keys_without_layers("minimax-01");
  w.add_uint32("minimax-01.attention.head_count_kv", 2);
  w.add_float32("minimax-01.residual_scale", 1.0f);
  w.add_uint32("minimax-01.expert_count", 2);
  w.add_uint32("minimax-01.expert_used_count", 1);
  w.add_uint32("minimax-01.full_attention_interval", 2);
  embeddings(w, false);
  for (std::uint32_t i = 0; i < 4; ++i) {
    w.add_tensor(blk(i, "attn_norm.weight"), kF32, {kEmbd});
    if (i % 2 == 0) {
      w.add_tensor(blk(i, "attn_norm_2.weight"), kF32, {kEmbd});
      w.add_tensor(blk(i, "attn_qkv.weight"), kF32, {kEmbd, 3 * kEmbd});
      w.add_tensor(blk(i, "attn_gate.weight"), kF32, {kEmbd, kEmbd});
    } else {
      w.add_tensor(blk(i, "attn_q.weight"), kF32, {kEmbd, kEmbd});
      w.add_tensor(blk(i, "attn_k.weight"), kF32, {kEmbd, 64});
      w.add_tensor(blk(i, "attn_v.weight"), kF32, {kEmbd, 64});
    }
    w.add_tensor(blk(i, "attn_output.weight"), kF32, {kEmbd, kEmbd});
    w.add_tensor(blk(i, "ffn_norm.weight"), kF32, {kEmbd});
    w.add_tensor(blk(i, "ffn_gate_inp.weight"), kF32, {kEmbd, 2});
    w.add_tensor(blk(i, "ffn_gate_exps.weight"), kF32, {kEmbd, kFf, 2});
    w.add_tensor(blk(i, "ffn_down_exps.weight"), kF32, {kFf, kEmbd, 2});
    w.add_tensor(blk(i, "ffn_up_exps.weight"), kF32, {kEmbd, kFf, 2});
  }
  return w;
}

/// minimax-m3 (MiniMax Sparse Attention): 2 KV heads of 32 with q/k norms on every layer; layer 0
/// dense, 1-3 MoE (2 experts of 64, a shared one) with the indexer's projections (2 heads of 64,
/// as many as the KV heads: the sparse path asserts it). The output head is required.
GgufWriter minimax_m3() {
  GgufWriter w = plain_keys_without_layers("minimax-m3");
  w.add_uint32("minimax-m3.attention.head_count_kv", 2);
  w.add_uint32("minimax-m3.rope.dimension_count", 16);
  w.add_uint32("minimax-m3.leading_dense_block_count", 1);
  w.add_uint32("minimax-m3.expert_count", 2);
  w.add_uint32("minimax-m3.expert_used_count", 1);
  w.add_uint32("minimax-m3.expert_feed_forward_length", 64);
  w.add_uint32("minimax-m3.expert_shared_count", 1);
  w.add_uint32("minimax-m3.expert_gating_func", 2);
  w.add_uint32("minimax-m3.attention.indexer.head_count", 2);
  w.add_uint32("minimax-m3.attention.indexer.key_length", 64);
  w.add_uint32("minimax-m3.attention.indexer.top_k", 4);
  w.add_uint32("minimax-m3.attention.indexer.block_size", 16);
  w.add_uint32("minimax-m3.attention.indexer.local_blocks", 1);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2, true);
    w.add_tensor(blk(i, "ffn_norm.weight"), kF32, {kEmbd});
    if (i == 0) {
      ffn(w, i, false);
      continue;
    }
    biased_moe_2x64(w, i);
    w.add_tensor(blk(i, "indexer.q_proj.weight"), kF32, {kEmbd, 2 * 64});
    w.add_tensor(blk(i, "indexer.k_proj.weight"), kF32, {kEmbd, 64});
    w.add_tensor(blk(i, "indexer.q_norm.weight"), kF32, {64});
    w.add_tensor(blk(i, "indexer.k_norm.weight"), kF32, {64});
  }
  return w;
}

/// qwen4exp: full_attention_interval 2 (layers 0 and 2 Gated DeltaNet: 2 key groups and 4 value
/// heads of 32, conv 4; 1 and 3 gated attention with q/k norms and the indexer's projections, 2
/// heads of 64), 2 hyper-connections of rank 4 around every block and the output, 2 experts of 64
/// and a gated shared expert on every layer; tied output, no output norm.
GgufWriter qwen4exp() {
  GgufWriter w = plain_keys_without_layers("qwen4exp");
  w.add_uint32("qwen4exp.attention.head_count_kv", 2);
  w.add_array_int32("qwen4exp.rope.dimension_sections", {6, 5, 5, 0});
  w.add_uint32("qwen4exp.ssm.conv_kernel", 4);
  w.add_uint32("qwen4exp.ssm.inner_size", 128);
  w.add_uint32("qwen4exp.ssm.state_size", 32);
  w.add_uint32("qwen4exp.ssm.time_step_rank", 4);
  w.add_uint32("qwen4exp.ssm.group_count", 2);
  w.add_uint32("qwen4exp.hyper_connection.count", 2);
  w.add_uint32("qwen4exp.hyper_connection.low_rank", 4);
  w.add_uint32("qwen4exp.attention.indexer.head_count", 2);
  w.add_uint32("qwen4exp.attention.indexer.key_length", 64);
  w.add_uint32("qwen4exp.attention.indexer.top_k", 4);
  w.add_uint32("qwen4exp.expert_count", 2);
  w.add_uint32("qwen4exp.expert_used_count", 1);
  w.add_uint32("qwen4exp.expert_feed_forward_length", 64);
  w.add_uint32("qwen4exp.expert_shared_feed_forward_length", 64);
  w.add_uint32("qwen4exp.full_attention_interval", 2);
  constexpr std::uint64_t hc_dim = 2 * kEmbd;
  const auto hyper_connection = [&w](const std::string& prefix) {
    w.add_tensor(prefix + "_norm.weight", kF32, {hc_dim});
    w.add_tensor(prefix + "_down.weight", kF32, {hc_dim, 4});
    w.add_tensor(prefix + "_up.weight", kF32, {4, hc_dim});
  };
  w.add_tensor("token_embd.weight", kF32, {kEmbd, kVocab});
  hyper_connection("output_hc");
  for (std::uint32_t i = 0; i < 4; ++i) {
    for (const char* part : {"hc_attn", "hc_ffn"}) {
      hyper_connection(blk(i, part));
      w.add_tensor(blk(i, std::string(part) + "_inject.weight"), kF32, {hc_dim, 2});
    }
    w.add_tensor(blk(i, "ffn_gate_inp.weight"), kF32, {kEmbd, 2});
    w.add_tensor(blk(i, "ffn_down_exps.weight"), kF32, {64, kEmbd, 2});
    w.add_tensor(blk(i, "ffn_gate_exps.weight"), kF32, {kEmbd, 64, 2});
    w.add_tensor(blk(i, "ffn_up_exps.weight"), kF32, {kEmbd, 64, 2});
    w.add_tensor(blk(i, "ffn_gate_inp_shexp.weight"), kF32, {kEmbd});
    w.add_tensor(blk(i, "ffn_gate_shexp.weight"), kF32, {kEmbd, 64});
    w.add_tensor(blk(i, "ffn_up_shexp.weight"), kF32, {kEmbd, 64});
    w.add_tensor(blk(i, "ffn_down_shexp.weight"), kF32, {64, kEmbd});
    if (i % 2 == 1) {
      w.add_tensor(blk(i, "attn_q.weight"), kF32, {kEmbd, 2 * kEmbd});  // the query and its gate
      w.add_tensor(blk(i, "attn_k.weight"), kF32, {kEmbd, 64});
      w.add_tensor(blk(i, "attn_v.weight"), kF32, {kEmbd, 64});
      w.add_tensor(blk(i, "attn_output.weight"), kF32, {kEmbd, kEmbd});
      w.add_tensor(blk(i, "attn_q_norm.weight"), kF32, {32});
      w.add_tensor(blk(i, "attn_k_norm.weight"), kF32, {32});
      w.add_tensor(blk(i, "indexer.q_proj.weight"), kF32, {kEmbd, 2 * 64});
      w.add_tensor(blk(i, "indexer.k_proj.weight"), kF32, {kEmbd, 64});
      w.add_tensor(blk(i, "indexer.q_norm.weight"), kF32, {64});
      w.add_tensor(blk(i, "indexer.k_norm.weight"), kF32, {64});
    } else {
      w.add_tensor(blk(i, "attn_qkv.weight"), kF32, {kEmbd, 2 * 64 + 128});  // 2 key groups x 32 twice, values 128
      w.add_tensor(blk(i, "attn_gate.weight"), kF32, {kEmbd, 128});
      w.add_tensor(blk(i, "ssm_conv1d.weight"), kF32, {4, 256});
      w.add_tensor(blk(i, "ssm_dt.bias"), kF32, {4});
      w.add_tensor(blk(i, "ssm_a"), kF32, {4});
      w.add_tensor(blk(i, "ssm_beta.weight"), kF32, {kEmbd, 4});
      w.add_tensor(blk(i, "ssm_alpha.weight"), kF32, {kEmbd, 4});
      w.add_tensor(blk(i, "ssm_norm.weight"), kF32, {32});
      w.add_tensor(blk(i, "ssm_out.weight"), kF32, {128, kEmbd});
    }
  }
  return w;
}

/// dots3note: MLA with one KV head on every layer; layers 0 and 2 full (a latent of 64 + a rope key
/// of 16 = key_length 80, and DSA's lightning indexer: 4 heads of 64), 1 and 3 sliding over 128
/// tokens (a latent of 32: key_length_swa 48); layer 0 dense, 1-3 MoE (2 experts of 64, a shared
/// one).
GgufWriter dots3note() {
  GgufWriter w = plain_keys_without_layers("dots3note");
  w.add_uint32("dots3note.attention.head_count_kv", 1);
  w.add_uint32("dots3note.attention.key_length", 80);
  w.add_uint32("dots3note.attention.value_length", 64);
  w.add_uint32("dots3note.attention.key_length_swa", 48);
  w.add_uint32("dots3note.attention.value_length_swa", 32);
  w.add_uint32("dots3note.rope.dimension_count", 16);
  w.add_uint32("dots3note.expert_count", 2);
  w.add_uint32("dots3note.expert_used_count", 1);
  w.add_uint32("dots3note.expert_shared_count", 1);
  w.add_uint32("dots3note.expert_feed_forward_length", 64);
  w.add_uint32("dots3note.leading_dense_block_count", 1);
  w.add_uint32("dots3note.expert_gating_func", 2);
  w.add_uint32("dots3note.attention.q_lora_rank", 64);
  w.add_uint32("dots3note.attention.kv_lora_rank", 64);
  w.add_uint32("dots3note.attention.key_length_mla", 48);
  w.add_uint32("dots3note.attention.value_length_mla", 32);
  w.add_uint32("dots3note.attention.kv_lora_rank_swa", 32);
  w.add_uint32("dots3note.attention.key_length_mla_swa", 48);
  w.add_uint32("dots3note.attention.value_length_mla_swa", 32);
  w.add_uint32("dots3note.attention.sliding_window", 128);
  w.add_float32("dots3note.rope.freq_base_swa", 10000.0f);
  w.add_array_uint32("dots3note.attention.sliding_window_pattern", {0, 1, 0, 1});
  w.add_uint32("dots3note.attention.indexer.head_count", 4);
  w.add_uint32("dots3note.attention.indexer.key_length", 64);
  w.add_uint32("dots3note.attention.indexer.top_k", 8);
  w.add_array_uint32("dots3note.attention.indexer.types", {1, 0, 1, 0});
  embeddings(w, false);
  for (std::uint32_t i = 0; i < 4; ++i) {
    const std::uint64_t latent = i % 2 == 0 ? 64 : 32;
    w.add_tensor(blk(i, "attn_norm.weight"), kF32, {kEmbd});
    w.add_tensor(blk(i, "attn_q_a_norm.weight"), kF32, {64});
    w.add_tensor(blk(i, "attn_kv_a_norm.weight"), kF32, {latent});
    w.add_tensor(blk(i, "attn_k_norm.weight"), kF32, {16});
    w.add_tensor(blk(i, "attn_q_a.weight"), kF32, {kEmbd, 64});
    w.add_tensor(blk(i, "attn_q_b.weight"), kF32, {64, 4 * 48});
    w.add_tensor(blk(i, "attn_kv_a_mqa.weight"), kF32, {kEmbd, latent + 16});
    w.add_tensor(blk(i, "attn_k_b.weight"), kF32, {32, latent, 4});
    w.add_tensor(blk(i, "attn_v_b.weight"), kF32, {latent, 32, 4});
    w.add_tensor(blk(i, "attn_output.weight"), kF32, {4 * 32, kEmbd});
    w.add_tensor(blk(i, "attn_gate.weight"), kF32, {kEmbd, 4});
    w.add_tensor(blk(i, "ffn_norm.weight"), kF32, {kEmbd});
    if (i % 2 == 0) {
      w.add_tensor(blk(i, "indexer.k_norm.weight"), kF32, {64});
      w.add_tensor(blk(i, "indexer.k_norm.bias"), kF32, {64});
      w.add_tensor(blk(i, "indexer.proj.weight"), kF32, {kEmbd, 4});
      w.add_tensor(blk(i, "indexer.attn_k.weight"), kF32, {kEmbd, 64});
      w.add_tensor(blk(i, "indexer.attn_q_b.weight"), kF32, {64, 4 * 64});
    }
    if (i == 0) {
      ffn(w, i, false);
      continue;
    }
    biased_moe_2x64(w, i);
  }
  return w;
}

}  // namespace

std::vector<FixtureRecipe> hybrid_recipes() {
  return {
      {{"plamo2", "plamo2: Mamba-2 on layers 0 and 2 (no groups), attention with 2 KV heads on 1 and 3"},
       [] { return plamo2(); }},
      {{"bailingmoe3", "bailingmoe3: KDA on layers 0-2 (heads of 32), MLA on layer 3 (K only, 96 wide)"},
       [] { return bailingmoe3(false); }},
      {{"bailingmoe3-nextn", "bailingmoe3: a trunk-only file with a nextn layer, which keeps K cells too"},
       [] { return bailingmoe3(true); }},
      {{"kimi-k3", "kimi-k3: KDA on layers 0-2 (heads of 16), MLA on layer 3 (K only, 96 wide)"},
       [] { return kimi_k3(); }},
      {{"minimax-01", "minimax-01: lightning attention on layers 0 and 2 (state 32 x 32 x 4), softmax on 1 and 3"},
       [] { return minimax_01(); }},
      {{"minimax-m3", "minimax-m3: K/V on 4 layers, an indexer cache (key 64, V 32) on layers 1-3"},
       [] { return minimax_m3(); }},
      {{"qwen4exp", "qwen4exp: Gated DeltaNet on layers 0 and 2, attention and an indexer cache on 1 and 3"},
       [] { return qwen4exp(); }},
      {{"dots3note", "dots3note: MLA and DSA's indexer on layers 0 and 2, K-only sliding MLA on 1 and 3"},
       [] { return dots3note(); }},
  };
}

}  // namespace kvplan::testing::fixture_parts
