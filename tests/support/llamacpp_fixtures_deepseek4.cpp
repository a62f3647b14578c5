// deepseek4 (DeepSeek-V4): every layer a sliding window over a K-only latent, beside compressed
// caches of 1 in 4 tokens (CSA, with a lightning indexer) or 1 in 128 (HCA) and their compressor
// states (llama_kv_cache_dsv4). Its keys and tensors are load_arch_tensors' in
// src/models/deepseek4.cpp of the pinned llama.cpp.

#include "support/llamacpp_fixture_parts.h"

namespace kvplan::testing::fixture_parts {

namespace {

/// Layer 0 raw (the window only), 1 and 3 CSA (ratio 4, indexer key 128), 2 HCA (ratio 128).
/// K is one head of 64 (value_length must equal it); 4 query heads in 4 output groups, rank 16;
/// hyper-connections of 4 (the graph asserts 4); 2 experts of 64 and a shared one, sqrt-softplus
/// gating (the loader requires it), no hash layers.
GgufWriter deepseek4() {
  GgufWriter w;
  common_keys(w, "deepseek4", 4);
  const auto key = [](std::string_view rest) { return "deepseek4." + std::string(rest); };
  w.add_uint32(key("attention.head_count_kv"), 1);
  w.add_uint32(key("attention.key_length"), 64);
  w.add_uint32(key("attention.value_length"), 64);
  w.add_uint32(key("rope.dimension_count"), 32);
  w.add_uint32(key("attention.q_lora_rank"), 32);
  w.add_uint32(key("attention.sliding_window"), 128);
  w.add_uint32(key("expert_count"), 2);
  w.add_uint32(key("expert_used_count"), 1);
  w.add_uint32(key("expert_shared_count"), 1);
  w.add_uint32(key("expert_feed_forward_length"), 64);
  w.add_float32(key("expert_weights_scale"), 1.0f);
  w.add_bool(key("expert_weights_norm"), true);
  w.add_uint32(key("expert_gating_func"), 4);
  w.add_float32(key("swiglu_clamp_exp"), 10.0f);
  w.add_uint32(key("attention.indexer.head_count"), 4);
  w.add_uint32(key("attention.indexer.key_length"), 128);
  w.add_uint32(key("attention.indexer.top_k"), 8);
  w.add_uint32(key("attention.output_group_count"), 4);
  w.add_uint32(key("attention.output_lora_rank"), 16);
  w.add_float32(key("attention.compress_rope_freq_base"), 160000.0f);
  w.add_array_uint32(key("attention.compress_ratios"), {0, 4, 128, 4});
  w.add_uint32(key("hyper_connection.count"), 4);
  w.add_uint32(key("hyper_connection.sinkhorn_iterations"), 2);
  w.add_float32(key("hyper_connection.epsilon"), 1e-6f);
  w.add_uint32(key("hash_layer_count"), 0);
  embeddings(w, true);
  w.add_tensor("output_hc_fn.weight", kF32, {4 * kEmbd, 4});
  w.add_tensor("output_hc_base.weight", kF32, {4});
  w.add_tensor("output_hc_scale.weight", kF32, {1});
  constexpr std::uint32_t kRatios[4] = {0, 4, 128, 4};
  for (std::uint32_t i = 0; i < 4; ++i) {
    w.add_tensor(blk(i, "attn_norm.weight"), kF32, {kEmbd});
    w.add_tensor(blk(i, "attn_sinks.weight"), kF32, {4});
    w.add_tensor(blk(i, "attn_q_a.weight"), kF32, {kEmbd, 32});
    w.add_tensor(blk(i, "attn_q_a_norm.weight"), kF32, {32});
    w.add_tensor(blk(i, "attn_q_b.weight"), kF32, {32, 4 * 64});
    w.add_tensor(blk(i, "attn_kv.weight"), kF32, {kEmbd, 64});
    w.add_tensor(blk(i, "attn_kv_a_norm.weight"), kF32, {64});
    w.add_tensor(blk(i, "attn_output_a.weight"), kF32, {64, 16, 4});
    w.add_tensor(blk(i, "attn_output_b.weight"), kF32, {4 * 16, kEmbd});
    for (const char* part : {"attn", "ffn"}) {
      w.add_tensor(blk(i, std::string("hc_") + part + "_fn.weight"), kF32, {4 * kEmbd, 24});
      w.add_tensor(blk(i, std::string("hc_") + part + "_base.weight"), kF32, {24});
      w.add_tensor(blk(i, std::string("hc_") + part + "_scale.weight"), kF32, {3});
    }
    w.add_tensor(blk(i, "ffn_norm.weight"), kF32, {kEmbd});
    biased_moe_2x64(w, i);
    const std::uint32_t ratio = kRatios[i];
    if (ratio == 0) continue;
    const std::uint64_t width = (ratio == 4 ? 2 : 1) * 64;  // a CSA compressor keeps two halves
    w.add_tensor(blk(i, "attn_compressor_kv.weight"), kF32, {kEmbd, width});
    w.add_tensor(blk(i, "attn_compressor_gate.weight"), kF32, {kEmbd, width});
    w.add_tensor(blk(i, "attn_compressor_ape.weight"), kF32, {width, ratio});
    w.add_tensor(blk(i, "attn_compressor_norm.weight"), kF32, {64});
    if (ratio != 4) continue;
    w.add_tensor(blk(i, "indexer.proj.weight"), kF32, {kEmbd, 4});
    w.add_tensor(blk(i, "indexer.attn_q_b.weight"), kF32, {32, 4 * 128});
    w.add_tensor(blk(i, "indexer_compressor_kv.weight"), kF32, {kEmbd, 2 * 128});
    w.add_tensor(blk(i, "indexer_compressor_gate.weight"), kF32, {kEmbd, 2 * 128});
    w.add_tensor(blk(i, "indexer_compressor_ape.weight"), kF32, {2 * 128, 4});
    w.add_tensor(blk(i, "indexer_compressor_norm.weight"), kF32, {128});
  }
  return w;
}

}  // namespace

std::vector<FixtureRecipe> deepseek4_recipes() {
  return {
      {{"deepseek4", "deepseek4: a K-only window on 4 layers; CSA (1 in 4, indexer key 128) on 1 and 3, HCA (1 in 128) on 2"},
       [] { return deepseek4(); }},
  };
}

}  // namespace kvplan::testing::fixture_parts
