#pragma once
// The engine-neutral cost of a model's cache: what an engine that exploits every layer's
// structure fully must hold. The generic profile prices rows with it; other profiles use it for
// the parts their engine does the same way.

#include <array>
#include <cstddef>
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

/// A model's layers grouped by shape (layers alike in every field the cache reads), in order of
/// first appearance: what cache_cost works out from the layers before pricing a row, worked out
/// once so that a profile can keep it for all its rows. Points into the model's layers. `count` 0:
/// more shapes than it groups, and cache_cost then goes layer by layer.
struct LayerShapes {
  struct Shape {
    const LayerSpec* layer = nullptr;
    std::uint32_t count = 0;
  };
  static constexpr std::size_t kMax = 32;
  std::array<Shape, kMax> shapes{};
  std::size_t count = 0;
};
LayerShapes layer_shapes(const ModelSpec& model);

/// The cache of `batch` sequences of `ctx` tokens with `cache` dtypes, counting `mtp_layers` MTP
/// layers as copies of mtp_cache_layer(model). Throws Error when a product overflows 64 bits.
/// With `tensor_parallel` ranks it is one rank's cache: KV heads split (at least one a rank, so
/// replicated once the ranks outnumber them); MLA latents, indexer keys and recurrent state whole
/// on every rank.
CacheCost cache_cost(const ModelSpec& model, std::uint64_t ctx, std::uint64_t batch, const CacheDtypes& cache,
                     std::uint32_t mtp_layers, std::uint32_t tensor_parallel = 1);
/// The same, with the model's layer_shapes(model) worked out beforehand.
CacheCost cache_cost(const ModelSpec& model, const LayerShapes& shapes, std::uint64_t ctx, std::uint64_t batch,
                     const CacheDtypes& cache, std::uint32_t mtp_layers, std::uint32_t tensor_parallel = 1);

/// The same, its breakdown written into `reused` (emptied first; its buffer kept): a sweep's rows.
CacheCost cache_cost(std::vector<KvBreakdownItem>&& reused, const ModelSpec& model, const LayerShapes& shapes,
                     std::uint64_t ctx, std::uint64_t batch, const CacheDtypes& cache, std::uint32_t mtp_layers,
                     std::uint32_t tensor_parallel = 1);

/// Bytes of one layer's fixed state (its tensors at their own dtypes, partial blocks rounded up).
std::uint64_t layer_state_bytes(const LayerSpec& layer);

/// What the report says about the model's state, indexer and shared layers.
CacheFacts cache_facts(const ModelSpec& model);

}  // namespace kvplan
