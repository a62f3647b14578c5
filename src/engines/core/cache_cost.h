#pragma once
// The engine-neutral cost of a model's cache: what an engine that exploits every layer's
// structure fully must hold. The generic profile prices rows with it; other profiles use it for
// the parts their engine does the same way.

#include <cstdint>
#include <vector>

#include "kvplan/model_spec.h"
#include "kvplan/plan.h"

namespace kvplan {

struct CacheCost {
  std::uint64_t kv_bytes_per_token = 0;  ///< K+V (and indexer) bytes one token adds in every token-holding layer
  std::uint64_t kv_bytes = 0;            ///< all sequences, fixed state included
  std::uint64_t state_bytes = 0;         ///< the fixed recurrent state, all sequences
  std::vector<KvBreakdownItem> breakdown;
};

/// The cache of `batch` sequences of `ctx` tokens with `cache` dtypes, counting `mtp_layers` MTP
/// layers as copies of mtp_cache_layer(model). Throws Error when a product overflows 64 bits.
/// With `tensor_parallel` ranks it is one rank's cache: KV heads split (at least one a rank, so
/// replicated once the ranks outnumber them); MLA latents, indexer keys and recurrent state whole
/// on every rank.
CacheCost cache_cost(const ModelSpec& model, std::uint64_t ctx, std::uint64_t batch, const CacheDtypes& cache,
                     std::uint32_t mtp_layers, std::uint32_t tensor_parallel = 1);

/// Bytes of one layer's fixed state (its tensors at their own dtypes, partial blocks rounded up).
std::uint64_t layer_state_bytes(const LayerSpec& layer);

/// What the report says about the model's state, indexer and shared layers.
CacheFacts cache_facts(const ModelSpec& model);

}  // namespace kvplan
