// Fixtures of the 2025-2026 architectures with an interleaved sliding window, most of them MoE
// (exaone-moe, afmoe, laguna, smallthinker, mellum, ...; muse-glimmer is dense): 4 layers of 2 KV
// heads of 32, 4 experts of 32. Each writes exactly the tensors its load_arch_tensors creates in
// llama.cpp v0.4.0 (src/models/<arch>.cpp).

#include "support/llamacpp_fixture_parts.h"

namespace kvplan::testing::fixture_parts {

namespace {

/// The keys of every fixture here: 4 experts (2 used) of 32, a window of 128 unless `window` is 0.
GgufWriter windowed_moe_keys(const std::string& arch, std::uint32_t window, std::uint32_t blocks = 4) {
  GgufWriter w;
  common_keys(w, arch, blocks);
  w.add_uint32(arch + ".feed_forward_length", kFf);
  w.add_uint32(arch + ".attention.head_count_kv", 2);
  w.add_uint32(arch + ".expert_count", 4);
  w.add_uint32(arch + ".expert_used_count", 2);
  w.add_uint32(arch + ".expert_feed_forward_length", 32);
  if (window > 0) w.add_uint32(arch + ".attention.sliding_window", window);
  return w;
}

/// exaone-moe (K-EXAONE): window 128 required, period 4; q/k norms; layer 0 dense, then experts
/// with a selection bias and a shared expert.
GgufWriter exaone_moe() {
  GgufWriter w = windowed_moe_keys("exaone-moe", 128);
  w.add_uint32("exaone-moe.expert_gating_func", 2);  // sigmoid
  w.add_uint32("exaone-moe.expert_shared_count", 1);
  w.add_uint32("exaone-moe.expert_shared_feed_forward_length", 64);
  w.add_uint32("exaone-moe.leading_dense_block_count", 1);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2, true);
    dense_first_moe(w, i, true);
  }
  return w;
}

/// afmoe (Arcee Trinity): window 128, period 4; an attention gate, post-attention and post-FFN
/// norms; layer 0 dense, then experts with a selection bias and a shared expert.
GgufWriter afmoe() {
  GgufWriter w = windowed_moe_keys("afmoe", 128);
  w.add_uint32("afmoe.expert_shared_count", 1);  // one shared expert as wide as a routed one
  w.add_uint32("afmoe.leading_dense_block_count", 1);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2, true);
    w.add_tensor(blk(i, "post_attention_norm.weight"), kF32, {kEmbd});
    w.add_tensor(blk(i, "attn_gate.weight"), kF32, {kEmbd, kEmbd});
    w.add_tensor(blk(i, "post_ffw_norm.weight"), kF32, {kEmbd});
    if (i == 0) {
      ffn(w, i);
      continue;
    }
    experts(w, i, 32);
    w.add_tensor(blk(i, "exp_probs_b.bias"), kF32, {4});
    w.add_tensor(blk(i, "ffn_gate_shexp.weight"), kF32, {kEmbd, 32});
    w.add_tensor(blk(i, "ffn_up_shexp.weight"), kF32, {kEmbd, 32});
    w.add_tensor(blk(i, "ffn_down_shexp.weight"), kF32, {32, kEmbd});
  }
  return w;
}

/// laguna: window 128, period 4 with the first of each global (dense_first); q/k norms and a
/// per-head attention gate; layer 0 dense, then experts with a selection bias and a shared expert.
GgufWriter laguna() {
  GgufWriter w = windowed_moe_keys("laguna", 128);
  w.add_uint32("laguna.expert_shared_feed_forward_length", 64);
  w.add_uint32("laguna.leading_dense_block_count", 1);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2, true);
    w.add_tensor(blk(i, "attn_gate.weight"), kF32, {kEmbd, 4});  // one gate per head
    dense_first_moe(w, i, true);
  }
  return w;
}

/// smallthinker: a window key (here 512) switches on llama.cpp's own 4096-token window, period 4
/// with the first of each global; experts on every layer.
GgufWriter smallthinker() {
  GgufWriter w = windowed_moe_keys("smallthinker", 512);
  w.add_uint32("smallthinker.expert_gating_func", 1);  // softmax
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2);
    experts(w, i, 32);
  }
  return w;
}

/// mellum: window 128 on the layers a per-layer pattern marks (0 and 2); q/k norms; experts on
/// every layer.
GgufWriter mellum() {
  GgufWriter w = windowed_moe_keys("mellum", 128);
  w.add_array_bool("mellum.attention.sliding_window_pattern", {true, false, true, false});
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2, true);
    experts(w, i, 32);
  }
  return w;
}

/// mimo2 (MiMo-V2-Flash): window 128 on the layers a required pattern marks (1-3), attention
/// sinks, experts with a selection bias on every layer. `nextn`: a fifth block declared as a nextn
/// (MTP) layer whose tensors the file leaves out (a trunk-only file, which llama.cpp accepts): the
/// main context's cache filters it out.
GgufWriter mimo2(bool nextn) {
  GgufWriter w = windowed_moe_keys("mimo2", 128, nextn ? 5 : 4);
  if (nextn) w.add_uint32("mimo2.nextn_predict_layers", 1);
  w.add_array_int32("mimo2.attention.sliding_window_pattern", {0, 1, 1, 1});
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2);
    w.add_tensor(blk(i, "attn_sinks.weight"), kF32, {4});
    experts(w, i, 32);
    w.add_tensor(blk(i, "exp_probs_b.bias"), kF32, {4});
  }
  return w;
}

/// step35 (Step 3.5): window 128 on the layers a required pattern marks (0 and 2), q/k norms, a
/// per-head attention gate, experts with a shared one.
GgufWriter step35() {
  GgufWriter w = windowed_moe_keys("step35", 128);
  w.add_array_bool("step35.attention.sliding_window_pattern", {true, false, true, false});
  w.add_uint32("step35.expert_shared_feed_forward_length", 64);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2, true);
    w.add_tensor(blk(i, "attn_gate.weight"), kF32, {kEmbd, 4});
    experts(w, i, 32);
    shared_expert_64(w, i);
  }
  return w;
}


/// cohere2moe: window 128 with a scalar period 4, the first of each global; layer 0 dense, then
/// experts with a shared one; logit_scale required.
GgufWriter cohere2moe() {
  GgufWriter w = windowed_moe_keys("cohere2moe", 128);
  w.add_uint32("cohere2moe.attention.sliding_window_pattern", 4);
  w.add_float32("cohere2moe.logit_scale", 0.25f);
  w.add_uint32("cohere2moe.leading_dense_block_count", 1);
  w.add_uint32("cohere2moe.expert_shared_count", 1);
  w.add_uint32("cohere2moe.expert_shared_feed_forward_length", 64);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2);
    if (i == 0) {
      ffn(w, i, false);
      continue;
    }
    w.add_tensor(blk(i, "ffn_gate_inp.weight"), kF32, {kEmbd, 4});
    w.add_tensor(blk(i, "ffn_gate_exps.weight"), kF32, {kEmbd, 32, 4});
    w.add_tensor(blk(i, "ffn_up_exps.weight"), kF32, {kEmbd, 32, 4});
    w.add_tensor(blk(i, "ffn_down_exps.weight"), kF32, {32, kEmbd, 4});
    shared_expert_64(w, i);
  }
  return w;
}

/// granite_swa (Granite 4.1 style): window 128 on the layers a required array marks (0, 1, 2),
/// attention sinks, a dense MLP; logit_scale required.
GgufWriter granite_swa() {
  GgufWriter w;
  common_keys(w, "granite_swa", 4);
  w.add_uint32("granite_swa.feed_forward_length", kFf);
  w.add_uint32("granite_swa.attention.head_count_kv", 2);
  w.add_uint32("granite_swa.attention.sliding_window", 128);
  w.add_array_bool("granite_swa.attention.sliding_window_pattern", {true, true, true, false});
  w.add_float32("granite_swa.logit_scale", 8.0f);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2);
    w.add_tensor(blk(i, "attn_sinks.weight"), kF32, {4});
    ffn(w, i);
  }
  return w;
}

/// muse-glimmer: dense, window 128 on a required scalar period 2 (layers 0 and 2 sliding, the last
/// of each period global); post-attention and post-FFN norms, q/k norms, an attention output
/// gate; logit_scale required.
GgufWriter muse_glimmer() {
  GgufWriter w;
  common_keys(w, "muse-glimmer", 4);
  w.add_uint32("muse-glimmer.feed_forward_length", kFf);
  w.add_uint32("muse-glimmer.attention.head_count_kv", 2);
  w.add_uint32("muse-glimmer.attention.sliding_window", 128);
  w.add_uint32("muse-glimmer.attention.sliding_window_pattern", 2);
  w.add_float32("muse-glimmer.logit_scale", 1.0f);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2, true);
    w.add_tensor(blk(i, "post_attention_norm.weight"), kF32, {kEmbd});
    w.add_tensor(blk(i, "attn_gate.weight"), kF32, {kEmbd, kEmbd});
    ffn(w, i);
    w.add_tensor(blk(i, "post_ffw_norm.weight"), kF32, {kEmbd});
  }
  return w;
}

/// plamo3 (PLaMo 3): window 128, llama.cpp's period 8 (4 layers: all sliding); fused qkv, q/k norms,
/// post-attention and post-FFN norms written without a .weight suffix, fused gate/up.
GgufWriter plamo3() {
  GgufWriter w;
  common_keys(w, "plamo3", 4);
  w.add_uint32("plamo3.feed_forward_length", kFf);
  w.add_uint32("plamo3.attention.head_count_kv", 2);
  w.add_uint32("plamo3.attention.sliding_window", 128);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    w.add_tensor(blk(i, "attn_norm.weight"), kF32, {kEmbd});
    w.add_tensor(blk(i, "attn_qkv.weight"), kF32, {kEmbd, kEmbd + 2 * 64});
    w.add_tensor(blk(i, "attn_q_norm.weight"), kF32, {32});
    w.add_tensor(blk(i, "attn_k_norm.weight"), kF32, {32});
    w.add_tensor(blk(i, "attn_output.weight"), kF32, {kEmbd, kEmbd});
    w.add_tensor(blk(i, "post_attention_norm"), kF32, {kEmbd});
    w.add_tensor(blk(i, "ffn_norm.weight"), kF32, {kEmbd});
    w.add_tensor(blk(i, "post_ffw_norm"), kF32, {kEmbd});
    w.add_tensor(blk(i, "ffn_up.weight"), kF32, {kEmbd, 2 * kFf});
    w.add_tensor(blk(i, "ffn_down.weight"), kF32, {kFf, kEmbd});
  }
  return w;
}

/// hy_v3: no window (its cache is llama's); q/k norms, layer 0 dense, then experts with a
/// selection bias (`blk.N.exp_probs_b`, no suffix) and a shared expert; a trunk-only nextn layer.
GgufWriter hy_v3() {
  GgufWriter w = windowed_moe_keys("hy_v3", 0, 5);
  w.add_uint32("hy_v3.nextn_predict_layers", 1);
  w.add_uint32("hy_v3.expert_shared_feed_forward_length", 64);
  embeddings(w, true);
  for (std::uint32_t i = 0; i < 4; ++i) {
    attention(w, i, 32, 2, true);
    if (i == 0) {
      ffn(w, i);
      continue;
    }
    experts(w, i, 32);
    w.add_tensor(blk(i, "exp_probs_b"), kF32, {4});
    shared_expert_64(w, i);
  }
  return w;
}

}  // namespace

std::vector<FixtureRecipe> windowed_moe_recipes() {
  return {
      {{"exaone-moe", "exaone-moe: window 128 on 3 of 4 layers, 1 dense + 3 MoE layers with a shared expert"},
       [] { return exaone_moe(); }},
      {{"afmoe", "afmoe: window 128 on 3 of 4 layers, attention gate, 1 dense + 3 MoE layers"}, [] { return afmoe(); }},
      {{"laguna", "laguna: window 128 on layers 1-3 (the first of 4 global), 1 dense + 3 MoE layers"},
       [] { return laguna(); }},
      {{"smallthinker", "smallthinker: llama.cpp's 4096 window (the file says 512) on layers 1-3, experts"},
       [] { return smallthinker(); }},
      {{"mellum", "mellum: window 128 on layers 0 and 2 by a per-layer pattern, experts"}, [] { return mellum(); }},
      {{"mimo2", "mimo2: window 128 on layers 1-3 by a required pattern, sinks, experts"}, [] { return mimo2(false); }},
      {{"mimo2-nextn", "mimo2 with a nextn layer (trunk-only file): no cells for it in the main context"},
       [] { return mimo2(true); }},
      {{"step35", "step35: window 128 on layers 0 and 2 by a required pattern, attention gate, experts"},
       [] { return step35(); }},
      {{"cohere2moe", "cohere2moe: window 128 on layers 1-3 (scalar period, the first global), 1 dense + 3 MoE layers"},
       [] { return cohere2moe(); }},
      {{"granite_swa", "granite_swa: window 128 on layers 0-2 by a required array, attention sinks"},
       [] { return granite_swa(); }},
      {{"muse-glimmer", "muse-glimmer: window 128 on layers 0 and 2 (scalar period 2, the last global), gated attention"},
       [] { return muse_glimmer(); }},
      {{"plamo3", "plamo3: window 128, llama.cpp's period 8 (every one of 4 layers sliding)"}, [] { return plamo3(); }},
      {{"hy_v3", "hy_v3: no window, 1 dense + 3 MoE layers, a trunk-only nextn layer the cache filters out"},
       [] { return hy_v3(); }},
  };
}

}  // namespace kvplan::testing::fixture_parts
