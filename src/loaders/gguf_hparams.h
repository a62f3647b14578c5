#pragma once
/// What llama.cpp reads of a GGUF file's `<arch>.*` keys before it allocates a cache: the reader
/// that remembers which keys were read, the hyperparameters as llama.cpp's llama_hparams hold them,
/// and each architecture's load_arch_hparams (src/models/<arch>.cpp in llama.cpp v0.4.0). The
/// tensors and the spec are gguf_model.cpp's.
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "kvplan/error.h"
#include "loaders/gguf.h"

namespace kvplan::gguf_keys {

/// LLAMA_MAX_LAYERS in llama-hparams.h.
constexpr std::uint64_t kLlamaCppMaxLayers = 512;

inline bool starts_with(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && text.substr(0, prefix.size()) == prefix;
}

/// A metadata value in one phrase for messages: "128", "true", "[6 values]".
std::string value_text(const GgufValue& v);

/// Reads `<arch>.*` keys as llama.cpp's llama_model_loader does, remembering which it read.
class KeyReader {
 public:
  KeyReader(const GgufHeader& header, std::string arch) : h_(header), arch_(std::move(arch)) {}

  const GgufHeader& header() const { return h_; }
  const std::string& arch() const { return arch_; }
  std::string key(std::string_view suffix) const { return fmt::format("{}.{}", arch_, suffix); }
  bool has(std::string_view suffix) const { return h_.find(key(suffix)) != nullptr; }
  const std::set<std::string, std::less<>>& read() const { return read_; }

  [[noreturn]] void fail(std::string_view suffix, std::string_view problem) const {
    throw Error(fmt::format("{}: metadata '{}' {}", h_.path, key(suffix), problem));
  }

  /// A scalar of any integer type that fits in 32 bits (llama.cpp's fields are uint32_t).
  std::optional<std::uint32_t> u32(std::string_view suffix) {
    const std::string k = key(suffix);
    read_.insert(k);
    const std::optional<std::uint64_t> v = h_.get_uint(k);
    if (!v) return std::nullopt;
    if (*v > std::numeric_limits<std::uint32_t>::max()) fail(suffix, fmt::format("is {}, more than 2^32 - 1", *v));
    return static_cast<std::uint32_t>(*v);
  }

  std::uint32_t required_u32(std::string_view suffix, std::string_view why) {
    const std::optional<std::uint32_t> v = u32(suffix);
    if (!v) fail(suffix, fmt::format("is missing ({})", why));
    return *v;
  }

  /// llama.cpp's get_key_or_arr: a scalar applied to every layer, or an array of exactly `n`.
  std::optional<std::vector<std::uint32_t>> per_layer(std::string_view suffix, std::uint32_t n) {
    const std::string k = key(suffix);
    const GgufValue* v = h_.find(k);
    if (v == nullptr) {
      read_.insert(k);
      return std::nullopt;
    }
    if (!v->is_array()) return std::vector<std::uint32_t>(n, *u32(suffix));
    read_.insert(k);
    if (v->count != n)
      fail(suffix, fmt::format("has {} elements, but block_count is {} (one per layer)", v->count, n));
    const std::vector<std::uint64_t> values = *h_.get_uint_array(k);
    std::vector<std::uint32_t> out;
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (values[i] > std::numeric_limits<std::uint32_t>::max())
        fail(suffix, fmt::format("element {} is {}, more than 2^32 - 1", i, values[i]));
      out.push_back(static_cast<std::uint32_t>(values[i]));
    }
    return out;
  }

  /// A per-layer flag array of exactly `n` (bools or integers), or a scalar applied to every layer.
  std::optional<std::vector<bool>> per_layer_flags(std::string_view suffix, std::uint32_t n) {
    const std::string k = key(suffix);
    read_.insert(k);
    const GgufValue* v = h_.find(k);
    if (v == nullptr) return std::nullopt;
    if (!v->is_array()) {
      const bool flag = v->type == GgufType::boolean ? *h_.get_bool(k) : *h_.get_uint(k) != 0;
      return std::vector<bool>(n, flag);
    }
    if (v->count != n)
      fail(suffix, fmt::format("has {} elements, but block_count is {} (one per layer)", v->count, n));
    return *h_.get_bool_array(k);
  }

  void mark_read(std::string_view suffix) { read_.insert(key(suffix)); }

 private:
  const GgufHeader& h_;
  std::string arch_;
  std::set<std::string, std::less<>> read_;
};

/// What llama.cpp's hparams say about the cache, per layer (n_layer_all entries).
struct Hparams {
  std::uint32_t n_layer_all = 0;  ///< block_count
  std::uint32_t n_layer = 0;      ///< without the nextn (MTP) layers
  std::uint32_t n_nextn = 0;
  std::uint32_t n_embd = 0;
  std::uint32_t n_ctx_train = 0;
  std::vector<std::uint32_t> n_head, n_head_kv, n_ff;
  std::uint32_t head_k = 0, head_v = 0, head_k_swa = 0, head_v_swa = 0;
  std::uint32_t n_rot = 0;
  std::vector<bool> swa, recr;
  std::vector<bool> no_cache;  ///< layers with neither cells nor state (nemotron_h's MLP layers)
  bool parallel_state = false;  ///< every attention layer also keeps Mamba-2 state (falcon-h1)
  std::uint32_t n_swa = 0;
  bool chunked = false;  ///< swa layers are LLAMA_SWA_TYPE_CHUNKED (llama4), not a sliding window
  bool router_layer = false;  ///< one more cache layer after the last block, 1 KV head (graniteswitch)
  /// hparams.n_layer_kv_from_start: layers from here on reuse an earlier layer's cells (gemma3n).
  std::optional<std::uint32_t> kv_from_start;
  bool mla = false;
  /// A sparse-attention indexer's key width (attention.indexer.key_length) and the trunk layers
  /// whose keys its cache holds (llama_kv_cache_dsa's second cache; minimax-m3's and qwen4exp's,
  /// which add a V of one head); 0 and empty without an indexer.
  std::uint32_t indexer_head = 0;
  std::vector<bool> indexer;
  /// deepseek4's attention.compress_ratios per trunk layer: 0 (the window only), 4 (CSA, with the
  /// lightning indexer) or 128 (HCA); empty for every other architecture.
  std::vector<std::uint32_t> compress_ratio;
  std::uint64_t n_embd_r = 0, n_embd_s = 0;
  std::uint32_t ssm_heads = 0;
  std::uint32_t n_expert = 0, n_expert_used = 0;
  std::vector<std::string> notes;
};

/// nanbeige's num_loops: the block_count layers run that many times, each pass with cells of its
/// own.
void read_loops(KeyReader& r, Hparams& hp);

/// The per-architecture part of llama.cpp's load_hparams: layer kinds, windows, state and
/// indexer sizes into `hp`; exit 2 for what llama.cpp refuses or aborts on.
void read_architecture(KeyReader& r, Hparams& hp);

/// Exit 3 for any cache-changing `<arch>.*` key that llama.cpp does not read for this architecture.
void reject_unread_cache_keys(const KeyReader& r);

}  // namespace kvplan::gguf_keys
