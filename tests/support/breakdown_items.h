#pragma once
// A KvBreakdownItem in one expression: the kind, layers and tokens held that every item has, and
// the rarer fields by name (`{.window = 1024}`), so that a test's breakdown reads as its phrase.

#include <cstdint>
#include <vector>

#include "kvplan/plan.h"

namespace kvplan::testing {

/// The fields a breakdown item has only for some kinds or options.
struct BreakdownExtras {
  std::uint64_t window = 0;
  std::uint64_t bytes = 0;
  std::uint32_t indexer_layers = 0;
  std::uint64_t indexer_bytes = 0;
  bool mtp = false;
};

inline KvBreakdownItem breakdown_item(LayerKind kind, std::uint32_t layers, std::uint64_t tokens_held,
                                      const BreakdownExtras& extras = {}) {
  KvBreakdownItem item;
  item.kind = kind;
  item.window = extras.window;
  item.layers = layers;
  item.tokens_held = tokens_held;
  item.bytes = extras.bytes;
  item.indexer_layers = extras.indexer_layers;
  item.indexer_bytes = extras.indexer_bytes;
  item.mtp = extras.mtp;
  return item;
}

/// One item of every kind a breakdown phrase words differently: a window, the indexer, MTP, image
/// tokens (cross), no tokens (linear).
inline std::vector<KvBreakdownItem> every_kind_breakdown() {
  return {breakdown_item(LayerKind::sliding, 40, 1024, {.window = 1024}),
          breakdown_item(LayerKind::full, 8, 131072, {.indexer_layers = 8}),
          breakdown_item(LayerKind::full, 1, 131072, {.mtp = true}),
          breakdown_item(LayerKind::cross, 20, 6404, {.window = 6404}),
          breakdown_item(LayerKind::linear, 36, 0)};
}

}  // namespace kvplan::testing
