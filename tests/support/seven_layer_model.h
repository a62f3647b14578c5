#pragma once
// The hand-built model of the RAM-offload tests (ram_offload_test, ram_limits_test): small enough
// that every byte of llama.cpp's layer split is worked out by hand in those tests' comments.

#include "kvplan/dtype.h"
#include "kvplan/model_spec.h"
#include "kvplan/units.h"

namespace kvplan::testing {

/// 7 llama layers, 8 KV heads of 128 (f16: 8 x 128 x 2 B x 2 (K, V) = 4 KiB per token per layer,
/// x 4,096 cells = 16 MiB a layer), 8 GiB of weights and no GGUF: llama.cpp's n_layer + 1 = 8
/// offloadable layers take 1 GiB each (the even split of rules.cpp).
inline ModelSpec seven_layer_model() {
  ModelSpec spec;
  spec.id = spec.name = "hand-built";
  spec.architecture = "llama";
  spec.attention_heads = 32;
  spec.params = 1'000'000;
  spec.weight_dtype = &parse_weight_dtype("bf16");
  spec.weights_bytes = 8 * GiB;
  spec.max_context = 4096;
  for (int i = 0; i < 7; ++i) {
    LayerSpec layer;
    layer.kv_heads = 8;
    layer.k_head_dim = 128;
    layer.v_head_dim = 128;
    spec.layers.push_back(layer);
  }
  return spec;
}

}  // namespace kvplan::testing
