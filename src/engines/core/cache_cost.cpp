#include "engines/core/cache_cost.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "model/checked.h"
#include "kvplan/error.h"
#include "kvplan/units.h"

namespace kvplan {

namespace {

/// Tokens one layer keeps per sequence at context `ctx` (engine-neutral: an engine that exploits
/// the structure fully holds exactly this many).
std::uint64_t tokens_held(const LayerSpec& layer, std::uint64_t ctx) {
  switch (layer.kind) {
    case LayerKind::full:
    case LayerKind::mla: return ctx;
    case LayerKind::sliding:
    case LayerKind::chunked: return std::min(ctx, layer.window);
    case LayerKind::cross: return layer.window;  // the image tokens, whatever the context
    case LayerKind::linear:
    case LayerKind::none:
    case LayerKind::shared: return 0;
  }
  return ctx;
}

/// Bytes one token occupies in one layer: K row plus V row, each at its own dtype, plus the DSA
/// indexer key where the layer has one. The generic profile stores the indexer key at the K cache
/// dtype, as llama.cpp does (llama-kv-cache-dsa.cpp: a second cache of one index_head_dim head,
/// type_k); vLLM instead keeps fp8 values with an fp32 scale per 128, 132 B per token per layer
/// (deepseek_v2.py DeepseekV32IndexerCache).
std::uint64_t indexer_bytes_per_token(const LayerSpec& layer, const CacheDtypes& cache) {
  return layer.index_head_dim ? dtype_bytes(*cache.k, layer.index_head_dim) : 0;
}

/// KV heads one of `tp` ranks holds: split, and at least one (replicated) once the ranks outnumber
/// them. An MLA layer's one latent "head" is whole on every rank.
std::uint64_t heads_per_rank(const LayerSpec& layer, std::uint32_t tp) {
  if (layer.kind == LayerKind::mla || tp <= 1) return layer.kv_heads;
  return ceil_div(layer.kv_heads, tp);
}

std::uint64_t layer_bytes_per_token(const LayerSpec& layer, const CacheDtypes& cache, std::uint32_t tp) {
  if (layer.kind == LayerKind::linear || layer.kind == LayerKind::none || layer.kind == LayerKind::shared) return 0;
  const std::uint64_t heads = heads_per_rank(layer, tp);
  const std::uint64_t k = dtype_bytes(*cache.k, checked_mul(heads, layer.k_head_dim, "cache size"));
  const std::uint64_t v = dtype_bytes(*cache.v, checked_mul(heads, layer.v_head_dim, "cache size"));
  return checked_add(checked_add(k, v, "cache size"), indexer_bytes_per_token(layer, cache), "cache size");
}

}  // namespace

std::uint64_t layer_state_bytes(const LayerSpec& layer) {
  std::uint64_t bytes = 0;
  for (const StateTensor& tensor : layer.state) {
    // State tensors may have odd sizes; engines store them unpacked, so round partial blocks up.
    const std::uint64_t blocks = tensor.elements / tensor.dtype->block_elements +
                                 (tensor.elements % tensor.dtype->block_elements != 0 ? 1 : 0);
    bytes = checked_add(bytes, checked_mul(blocks, tensor.dtype->block_bytes, "state size"), "state size");
  }
  return bytes;
}

namespace {

/// Adds `count` alike layers' cost to the breakdown item of their (kind, window, MTP or not),
/// creating it on first use. `indexer` is the part of `bytes` the layers' DSA indexer keys take.
void add_to_breakdown(std::vector<KvBreakdownItem>& items, const LayerSpec& layer, bool mtp, std::uint32_t count,
                      std::uint64_t tokens, std::uint64_t bytes, std::uint64_t indexer) {
  const std::uint64_t window =
      (layer.kind == LayerKind::sliding || layer.kind == LayerKind::chunked || layer.kind == LayerKind::cross) ? layer.window : 0;
  auto it = std::find_if(items.begin(), items.end(), [&](const KvBreakdownItem& item) {
    return item.kind == layer.kind && item.window == window && item.mtp == mtp;
  });
  if (it == items.end()) {
    KvBreakdownItem item;
    item.kind = layer.kind;
    item.window = window;
    item.tokens_held = tokens;
    item.mtp = mtp;
    it = items.insert(items.end(), item);
  }
  it->layers += count;
  it->bytes = checked_add(it->bytes, bytes, "cache size");
  if (layer.index_head_dim) {
    it->indexer_layers += count;
    it->indexer_bytes = checked_add(it->indexer_bytes, indexer, "cache size");
  }
}

/// True when two layers cost the same in every row: equal in every field that tokens_held,
/// layer_bytes_per_token, layer_state_bytes and add_to_breakdown read (and in the rest of LayerSpec
/// too, to be safe). plan_row prices such layers once and counts them.
bool same_cost(const LayerSpec& a, const LayerSpec& b) {
  // The size on 64-bit hosts; wasm32 lays the struct out differently and is checked by them.
  static_assert(sizeof(void*) != 8 || sizeof(LayerSpec) == 64, "a field was added to LayerSpec: compare it in same_cost");
  if (a.kind != b.kind || a.kv_heads != b.kv_heads || a.k_head_dim != b.k_head_dim || a.v_head_dim != b.v_head_dim ||
      a.mla_rope_dim != b.mla_rope_dim || a.index_head_dim != b.index_head_dim || a.window != b.window ||
      a.compress_ratio != b.compress_ratio ||
      a.state.size() != b.state.size())
    return false;
  for (std::size_t i = 0; i < a.state.size(); ++i)
    if (a.state[i].elements != b.state[i].elements || a.state[i].dtype != b.state[i].dtype ||
        a.state[i].name != b.state[i].name)
      return false;
  return true;
}

/// The model's layers as (first layer of a shape, how many layers have it), in order of first
/// appearance; count 0 when there are more than LayerShapes::kMax shapes (the caller then goes
/// layer by layer).
LayerShapes shapes_of(const std::vector<LayerSpec>& layers) {
  LayerShapes out;
  std::size_t n = 0;
  std::size_t last = 0;  // alike layers usually come in runs: try the last match first
  for (const LayerSpec& layer : layers) {
    if (n > 0 && same_cost(*out.shapes[last].layer, layer)) {
      ++out.shapes[last].count;
      continue;
    }
    std::size_t i = 0;
    while (i < n && !same_cost(*out.shapes[i].layer, layer)) ++i;
    if (i == n) {
      if (n == LayerShapes::kMax) return LayerShapes{};
      out.shapes[n++] = {&layer, 0};
    }
    ++out.shapes[i].count;
    last = i;
  }
  out.count = n;
  return out;
}

}  // namespace

LayerShapes layer_shapes(const ModelSpec& model) { return shapes_of(model.layers); }

CacheCost cache_cost(const ModelSpec& model, std::uint64_t ctx, std::uint64_t batch, const CacheDtypes& cache,
                     std::uint32_t mtp_layers, std::uint32_t tensor_parallel) {
  return cache_cost(model, layer_shapes(model), ctx, batch, cache, mtp_layers, tensor_parallel);
}

CacheCost cache_cost(const ModelSpec& model, const LayerShapes& shapes, std::uint64_t ctx, std::uint64_t batch,
                     const CacheDtypes& cache, std::uint32_t mtp_layers, std::uint32_t tensor_parallel) {
  return cache_cost({}, model, shapes, ctx, batch, cache, mtp_layers, tensor_parallel);
}

CacheCost cache_cost(std::vector<KvBreakdownItem>&& reused, const ModelSpec& model, const LayerShapes& shapes,
                     std::uint64_t ctx, std::uint64_t batch, const CacheDtypes& cache, std::uint32_t mtp_layers,
                     std::uint32_t tensor_parallel) {
  CacheCost cost;
  cost.breakdown = std::move(reused);
  cost.breakdown.clear();
  std::uint64_t per_sequence = 0;
  std::uint64_t state_per_sequence = 0;
  // `count` layers alike `layer`; with a count of 1, exactly the sum as written, one layer at a time.
  const auto add_layers = [&](const LayerSpec& layer, bool mtp, std::uint32_t count) {
    const std::uint64_t per_token = layer_bytes_per_token(layer, cache, tensor_parallel);
    const std::uint64_t tokens = tokens_held(layer, ctx);
    const std::uint64_t state = layer_state_bytes(layer);
    const std::uint64_t layer_bytes = checked_add(checked_mul(per_token, tokens, "cache size"), state, "cache size");
    const std::uint64_t indexer = checked_mul(indexer_bytes_per_token(layer, cache), tokens, "cache size");
    // A cross layer's tokens are the image's, not the sequence's: they add nothing per token.
    if (layer.kind != LayerKind::cross)
      cost.kv_bytes_per_token =
          checked_add(cost.kv_bytes_per_token, checked_mul(per_token, count, "cache size"), "cache size");
    per_sequence = checked_add(per_sequence, checked_mul(layer_bytes, count, "cache size"), "cache size");
    state_per_sequence = checked_add(state_per_sequence, checked_mul(state, count, "state size"), "state size");
    add_to_breakdown(cost.breakdown, layer, mtp, count, tokens,
                     checked_mul(checked_mul(layer_bytes, batch, "cache size"), count, "cache size"),
                     checked_mul(checked_mul(indexer, batch, "cache size"), count, "cache size"));
  };
  // Speculative decoding with the model's own MTP layers caches them like its main attention.
  const LayerSpec* mtp = mtp_layers ? mtp_cache_layer(model) : nullptr;
  const auto require_mtp = [&] {
    if (!mtp) throw Error(fmt::format("{}: no attention layer to count the MTP layers as", model.id));
  };
  const auto add_one_by_one = [&] {
    for (const LayerSpec& layer : model.layers) add_layers(layer, false, 1);
    if (mtp_layers) require_mtp();
    for (std::uint32_t i = 0; i < mtp_layers; ++i) add_layers(*mtp, true, 1);
  };
  // Most models have a few shapes of layer (Llama: one; Gemma 3: sliding and full), so each shape
  // is priced once and multiplied: the same sums, without pricing every layer. Should a sum pass
  // 2^64, the layer-by-layer sum runs instead, so that the error names the same figures as always.
  const std::size_t shape_count = shapes.count;
  try {
    if (shape_count == 0) {
      add_one_by_one();
    } else {
      cost.breakdown.reserve(shape_count + (mtp_layers ? 1 : 0));  // one allocation a row
      for (std::size_t i = 0; i < shape_count; ++i) add_layers(*shapes.shapes[i].layer, false, shapes.shapes[i].count);
      if (mtp_layers) {
        require_mtp();
        add_layers(*mtp, true, mtp_layers);
      }
    }
  } catch (const Error&) {
    if (shape_count == 0) throw;
    cost = CacheCost{};
    per_sequence = 0;
    state_per_sequence = 0;
    add_one_by_one();
  }
  cost.kv_bytes = checked_mul(per_sequence, batch, "cache size");
  cost.state_bytes = checked_mul(state_per_sequence, batch, "state size");
  return cost;
}

CacheFacts cache_facts(const ModelSpec& model) {
  CacheFacts facts;
  for (const LayerSpec& layer : model.layers) {
    if (!layer.state.empty()) {
      if (facts.state_layers++ == 0) facts.state_tensors = layer.state;
      facts.state_bytes_per_sequence = checked_add(facts.state_bytes_per_sequence, layer_state_bytes(layer), "state size");
    }
    if (layer.index_head_dim) {
      ++facts.indexer_layers;
      facts.indexer_head_dim = layer.index_head_dim;
      facts.indexer_compress_ratio = layer.compress_ratio;
    }
    if (layer.kind == LayerKind::shared) ++facts.shared_layers;
  }
  // vLLM's DeepseekV32IndexerCache row: fp8 values and one fp32 scale per 128 of them.
  if (facts.indexer_head_dim) {
    const std::uint64_t row = std::uint64_t{facts.indexer_head_dim} + ceil_div(facts.indexer_head_dim, 128) * 4;
    if (row > UINT32_MAX) throw OverflowError(fmt::format("DSA indexer row overflows 32 bits ({} values)", facts.indexer_head_dim));
    facts.vllm_indexer_bytes_per_token = static_cast<std::uint32_t>(row);
  }
  facts.mtp_like = mtp_cache_layer(model);
  return facts;
}

}  // namespace kvplan
