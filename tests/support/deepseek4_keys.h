#pragma once
// The deepseek4 keys kvplan's reader checks beyond those every architecture has (what
// llama_model_deepseek4::load_arch_hparams requires, with values its graph accepts): shared by the
// GGUF tests and the GGUF fuzzer's seed.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "support/gguf_writer.h"

namespace kvplan::testing {

struct Deepseek4Keys {
  std::vector<std::uint32_t> compress_ratios = {0, 4, 128, 4};
  std::uint32_t kv_heads = 1;
  std::uint32_t indexer_width = 128;
  std::uint32_t nextn = 0;  ///< nextn_predict_layers, written when not 0
};

/// K heads of 64 (value_length equal), a window of 128, one expert of two used, the gating and
/// hyper-connection counts llama.cpp requires, and `keys`.
inline void add_deepseek4_keys(GgufWriter& w, Deepseek4Keys keys = {}) {
  const auto key = [](const char* rest) { return std::string("deepseek4.") + rest; };
  for (const char* name : {"attention.q_lora_rank", "expert_shared_count", "expert_used_count",
                           "hyper_connection.sinkhorn_iterations", "attention.indexer.head_count",
                           "attention.indexer.top_k", "attention.output_lora_rank", "expert_feed_forward_length"})
    w.add_uint32(key(name), 1);
  w.add_uint32(key("expert_count"), 2);
  w.add_uint32(key("hash_layer_count"), 0);
  w.add_uint32(key("expert_gating_func"), 4);
  w.add_uint32(key("hyper_connection.count"), 4);
  w.add_uint32(key("attention.output_group_count"), 4);
  for (const char* name : {"attention.layer_norm_rms_epsilon", "expert_weights_scale", "swiglu_clamp_exp",
                           "attention.compress_rope_freq_base", "hyper_connection.epsilon"})
    w.add_float32(key(name), 1.0f);
  w.add_bool(key("expert_weights_norm"), true);
  w.add_uint32(key("attention.head_count_kv"), keys.kv_heads);
  w.add_uint32(key("attention.key_length"), 64);
  w.add_uint32(key("attention.value_length"), 64);
  w.add_uint32(key("rope.dimension_count"), 32);
  w.add_uint32(key("attention.sliding_window"), 128);
  w.add_uint32(key("attention.indexer.key_length"), keys.indexer_width);
  w.add_array_uint32(key("attention.compress_ratios"), std::move(keys.compress_ratios));
  if (keys.nextn) w.add_uint32(key("nextn_predict_layers"), keys.nextn);
}

}  // namespace kvplan::testing
