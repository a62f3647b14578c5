#pragma once
/// The llama.cpp profile: what llama.cpp (pinned: release v0.4.0, the build inside
/// node-llama-cpp 3.21.1) allocates for a model and a set of its flags. A pure function: no I/O.
///
/// Every figure follows a rule read from that build's source and named in `rules`:
///   n_ctx      = pad256(-c); per sequence n_ctx_seq = pad256(n_ctx / -np) unless --kv-unified
///                (llama-context.cpp, llama_context::llama_context)
///   K, V       = row_size(type, n_embd_{k,v}_gqa(il)) x cells x streams, per cached layer
///                (llama-kv-cache.cpp); V rows padded to the widest layer when flash attention is off
///   SWA cells  = pad256(min(n_ctx_seq, n_swa x (unified ? n_seq : 1) + n_ubatch)) unless --swa-full
///                (llama-kv-cache-iswa.cpp)
///   R, S       = f32 x n_embd_{r,s} x max(1, n_seq) per recurrent layer (llama-memory-recurrent.cpp)
///   deepseek4  = K-only SWA cells on every layer, pad256(max(1, ceil(n_ctx_seq / ratio))) cells of the
///                compressed caches, and f32 compressor state, one stream per sequence whatever
///                --kv-unified says (llama-kv-cache-dsv4.cpp)

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/ggml_type.h"
#include "kvplan/model_spec.h"

namespace kvplan {

/// Where llama.cpp puts one weight tensor: the input layer (always host memory), a repeating layer,
/// or the output layer.
using LlamaCppTensor = ModelFileTensor;

/// The weight tensors summed by layer, so that placing a model for -ngl takes a step per layer instead
/// of one per tensor (a GGUF holds 10 to 30 tensors a layer, and a search places the model many times).
struct LlamaCppLayerWeights {
  /// One file part's share of a layer: from its first tensor's offset to its last tensor's end.
  struct Span {
    bool any = false;
    std::uint64_t first = 0, last = 0;
  };
  std::size_t from_tensors = 0;       ///< how many tensors were summed (0 with the layers: not summed)
  bool exact = false;                 ///< no sum passes 64 bits: by layer, the figures are the tensors' own
  std::uint32_t files = 0;            ///< file parts
  std::vector<std::uint64_t> bytes;   ///< per slot: [0] input, [1] output, [2 + il] layer il
  std::vector<bool> any;              ///< per slot: it holds a tensor (one of 0 bytes still places a span)
  std::vector<Span> spans;            ///< per slot and file part: spans[slot * files + file]
  /// With `exact`, for placing on one device a whole range at a time: layers_from[il] is the bytes of
  /// layers il and up (il <= the layers' count), and layers_below[il * files + file] each part's
  /// span over the layers below il. On one device the layers from one index up are on the GPU.
  std::vector<std::uint64_t> layers_from;
  std::vector<Span> layers_below;
};

/// `tensors` summed by layer. Not exact (plan_llamacpp then places tensor by tensor, so that an
/// overflow names the same figures) when a sum or an end passes 64 bits or the layout is odd.
LlamaCppLayerWeights sum_by_layer(const std::vector<ModelFileTensor>& tensors);

/// A layer as llama.cpp's cache constructors see it.
struct LlamaCppCacheLayer {
  std::uint32_t il = 0;    ///< index in llama.cpp's n_layer_all
  LayerKind kind = LayerKind::full;
  std::uint64_t k_row = 0;  ///< n_embd_k_gqa(il)
  std::uint64_t v_row = 0;  ///< n_embd_v_gqa(il)
  std::uint64_t k_head = 0;
  std::uint64_t v_head = 0;
  std::uint64_t r_row = 0, s_row = 0;  ///< recurrent state elements per cell
  /// The DSA lightning indexer's key per cell (its one head's width) in llama_kv_cache_dsa's second
  /// cache; 0 = the layer has no indexer key.
  std::uint64_t indexer_row = 0;
  /// The V row beside it: 0 for DSA (an MLA model's indexer cache is K only); one head of the
  /// model's value_length for llama_kv_cache_msa (minimax-m3), allocated though nothing writes it.
  std::uint64_t indexer_v_row = 0;
  /// deepseek4's attention.compress_ratios entry (LayerSpec::compress_ratio): 4 puts the layer in the
  /// CSA and lightning-indexer caches (its indexer key is indexer_row), 128 in the HCA cache.
  std::uint32_t compress_ratio = 0;
  /// Gets recurrent state: a linear layer, or an attention layer of a parallel hybrid (Falcon-H1,
  /// whose create_memory filters put every layer in both the KV cache and the recurrent memory).
  bool has_state = false;
};

/// The model's layers as llama.cpp's caches read them. They depend on the spec alone, so a profile
/// reads them once (llamacpp_facts) instead of in every plan: fit plans each model a few thousand
/// times, and reading them was eight loops over the layers per plan.
struct LlamaCppLayout {
  /// The spec read, and its layer counts then: plan_llamacpp reads any other spec itself.
  const ModelSpec* model = nullptr;
  std::size_t spec_layers = 0;
  std::uint32_t spec_mtp_layers = 0;

  std::vector<LlamaCppCacheLayer> layers;  ///< the decoder layers, then the nextn layers that get cells
  std::uint32_t n_layer_all = 0;           ///< decoder + nextn (MTP) layers
  bool any_mla = false;
  bool window_ignored = false;  ///< sliding layers kept as full attention (the architecture ignores the window)
  bool nextn_cached = false;    ///< the nextn layers get cells, shaped like the last attention layer
  std::uint64_t n_swa = 0;      ///< the one window (hparams.n_swa)
  bool any_sliding = false, any_chunked = false;
  std::uint64_t v_row_max = 0;  ///< the widest V row (-fa off pads every row to it)
  bool v_varies = false;
  bool any_attention = false;   ///< a layer with its own K/V cells
  bool any_recurrent = false;
  bool any_indexer = false;     ///< a DSA layer: llama_kv_cache_dsa adds the indexer's K-only cache
  /// deepseek4 (llama_kv_cache_dsv4): the raw iSWA cache of every layer, then the CSA, HCA and
  /// lightning-indexer caches of the `csa`, `hca` and `lid` runs, each with compressor state.
  bool compressed = false;

  /// Consecutive layers of one cache with the same K and V rows: with one GPU a cache is summed a
  /// run at a time. Their layer indices are ils[first, first + count), ascending.
  struct Run {
    std::uint64_t k_row = 0, v_row = 0;
    std::uint32_t first = 0, count = 0;
  };
  static constexpr std::size_t every_cache_layer = 0, non_swa = 1, swa = 2, indexer = 3;  ///< indices of `runs`
  static constexpr std::size_t csa = 4, hca = 5, lid = 6;  ///< deepseek4's compressed caches
  std::array<std::vector<Run>, 7> runs;
  std::vector<std::uint32_t> ils;
};

/// `model`'s layers as llama.cpp numbers them. Throws what plan_llamacpp throws for them (a layout
/// llama.cpp has no cache for: cross-attention, MLA beside plain attention, several windows).
LlamaCppLayout read_llamacpp_layout(const ModelSpec& model);

/// What llama.cpp reads from a model file beyond the per-layer spec. A GGUF file supplies all of it;
/// a catalog or config.json model only its vocabulary, and the figures that need more say so.
struct LlamaCppModelFacts {
  std::uint64_t n_vocab = 0;      ///< rows of the output (logits) buffer; 0 = unknown
  std::uint64_t n_embd = 0;       ///< for the compute-buffer estimate; 0 = unknown
  std::uint64_t n_ff_max = 0;     ///< widest feed-forward, for the compute-buffer estimate
  /// Every weight tensor with its layer: places weights for -ngl and sizes the memory-mapped host
  /// buffer exactly. Empty = unknown (spec.layer_weights_bytes / weights_bytes are used instead).
  std::vector<LlamaCppTensor> tensors;
  bool output_tied = false;            ///< no output.weight: the output layer holds a copy of token_embd
  std::uint64_t token_embd_bytes = 0;  ///< size of that copy
  std::vector<std::string> notes;      ///< how llama.cpp reads this file's keys, in words
  /// `tensors` summed by layer (llamacpp_facts fills it once; when it does not match `tensors`,
  /// plan_llamacpp sums them itself).
  LlamaCppLayerWeights by_layer;
  /// The spec's layers as llama.cpp reads them (llamacpp_facts reads them once; left unread, with
  /// `model` null, when reading throws: plan_llamacpp then throws it itself).
  LlamaCppLayout layout;
};

/// The facts of `model`: its file's layout when it came from a GGUF, and its vocabulary.
LlamaCppModelFacts llamacpp_facts(const ModelSpec& model);

enum class LlamaCppFlashAttn { off, on, automatic };

/// --split-mode: layer (whole layers per device, the default), row (each matrix's rows across the
/// devices), none (the main GPU alone).
enum class LlamaCppSplitMode { layer, row, none };
LlamaCppSplitMode parse_llamacpp_split_mode(std::string_view text);
std::string_view to_string(LlamaCppSplitMode mode);

/// "on", "off", "auto" (also llama.cpp's truthy/falsy spellings: 1/0, true/false, enabled/disabled).
LlamaCppFlashAttn parse_llamacpp_flash_attn(std::string_view text);
std::string_view to_string(LlamaCppFlashAttn mode);

/// The llama.cpp cache types: f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 iq4_nl (case-insensitive;
/// kvplan's spellings fp32/fp16 are accepted). Anything else is an Error naming `flag`.
const GgmlType& parse_llamacpp_cache_type(std::string_view text, std::string_view flag);
/// The words of the Error parse_llamacpp_cache_type throws for `text`; nullopt when it is a cache type.
std::optional<std::string> llamacpp_cache_type_error(std::string_view text, std::string_view flag);

/// llama.cpp's flags, with llama.cpp's defaults.
struct LlamaCppSettings {
  std::uint64_t n_ctx = 0;          ///< -c/--ctx-size: all sequences together; 0 = the trained context
  std::uint32_t n_parallel = 1;     ///< -np/--parallel: sequences (n_seq_max)
  std::uint32_t n_batch = 2048;     ///< -b/--batch-size: logical batch
  std::uint32_t n_ubatch = 512;     ///< -ub/--ubatch-size: physical batch
  bool kv_unified = false;          ///< --kv-unified: one stream shared by all sequences
  bool words = true;                ///< false: LlamaCppResult::rules without the formatted sentences (a probe)
  bool swa_full = false;            ///< --swa-full: SWA layers hold the full context
  LlamaCppFlashAttn flash_attn = LlamaCppFlashAttn::automatic;  ///< -fa (llama.cpp's default: auto)
  const GgmlType* type_k = nullptr; ///< -ctk; nullptr = f16
  const GgmlType* type_v = nullptr; ///< -ctv; nullptr = f16
  std::int64_t n_gpu_layers = -1;   ///< -ngl: layers (of n_layer + 1, the output layer) on the GPU; < 0 = all
  /// The GPUs' free memory, one per device, for the default layer split; empty = one GPU.
  std::vector<std::uint64_t> device_free;
  std::vector<float> tensor_split;  ///< --tensor-split: shares per device; empty or all 0 = by free memory
  LlamaCppSplitMode split_mode = LlamaCppSplitMode::layer;
  std::uint32_t main_gpu = 0;       ///< --main-gpu: the device --split-mode none keeps
};

/// One GPU's part of a layer split.
struct LlamaCppDevice {
  std::uint32_t index = 0;         ///< the device's index in the settings' device list
  float split_point = 1.0f;        ///< its upper bound in the normalized prefix sum of the split
  std::uint32_t layers = 0;        ///< repeating layers on it
  bool output = false;             ///< the output layer is on it
  std::uint64_t weights_bytes = 0; ///< its model buffer
  std::uint64_t cache_bytes = 0;   ///< K+V+R+S of its layers
  std::uint64_t state_bytes = 0;   ///< R+S (and compressor state) of its layers (part of cache_bytes)
};

/// One llama_kv_cache: the plain cache, or the non-SWA / SWA half of an iSWA cache.
struct LlamaCppKvCache {
  std::string role;            ///< "KV", "non-SWA KV", "SWA KV"; DSA: "main KV" and "indexer KV" (K only);
                               ///< deepseek4: "CSA KV", "HCA KV", "LID KV" (compressed, K only)
  std::uint64_t cells = 0;     ///< per stream (kv_size)
  std::uint32_t layers = 0;    ///< cached layers, as llama.cpp logs "N layers"
  std::uint32_t streams = 0;   ///< 1 with --kv-unified, else n_seq_max
  std::uint32_t seqs = 0;      ///< n_seq_max
  std::string k_type, v_type;  ///< ggml type names
  std::uint64_t k_bytes = 0;
  std::uint64_t v_bytes = 0;   ///< 0 for MLA (K only)
  std::uint64_t v_row = 0;     ///< V elements per cell per layer after padding (0 for MLA)
  std::uint32_t compress_ratio = 0;  ///< deepseek4's CSA and LID (4) and HCA (128): tokens per cell
  std::uint32_t gpu_layers = 0;
  std::uint64_t gpu_bytes = 0;   ///< K+V of the layers whose device is the GPU
  std::uint64_t host_bytes = 0;  ///< K+V of the layers left in host memory
};

/// llama_memory_recurrent: the fixed state of recurrent (SSM, short-conv, gated delta net) layers.
struct LlamaCppRecurrent {
  std::uint64_t cells = 0;          ///< max(1, n_seq_max)
  std::uint32_t layers = 0;         ///< layers that hold state tensors
  std::uint32_t logged_layers = 0;  ///< what llama.cpp's log line prints: the model's n_layer
  std::uint32_t seqs = 0;
  std::uint64_t r_row = 0;          ///< n_embd_r: conv state elements per cell per layer
  std::uint64_t s_row = 0;          ///< n_embd_s: SSM state elements per cell per layer
  std::uint64_t r_bytes = 0;        ///< f32
  std::uint64_t s_bytes = 0;        ///< f32
  std::uint32_t gpu_layers = 0;
  std::uint64_t gpu_bytes = 0;
  std::uint64_t host_bytes = 0;
};

/// One of deepseek4's llama_dsv4_comp_state: per layer of its ratio, a kv and a score tensor of
/// f32 [n_embd_state, state_size, planes], whatever the cache types.
struct LlamaCppCompressorState {
  std::string name;                ///< "CSA", "HCA", "LID" (llama.cpp logs csa, hca, lid)
  std::uint32_t ratio = 0;         ///< tokens per compressed entry: 4 or 128
  std::uint64_t state_size = 0;    ///< 2 x ratio for CSA and LID (overlapping windows), ratio for HCA
  std::uint64_t n_embd_state = 0;  ///< 2 x the K head (CSA), the K head (HCA), 2 x the indexer key (LID)
  std::uint32_t planes = 0;        ///< n_seq_max x (1 + n_rs_seq); n_rs_seq is 0 here
  std::uint32_t layers = 0;
  std::uint64_t bytes = 0;         ///< both tensors of every layer
  std::uint32_t gpu_layers = 0;
  std::uint64_t gpu_bytes = 0;
  std::uint64_t host_bytes = 0;
};

struct LlamaCppResult {
  // The context llama.cpp settles on.
  std::uint64_t n_ctx = 0;        ///< after padding (and rounding to a multiple of n_seq_max)
  std::uint64_t n_ctx_seq = 0;    ///< cells per sequence (per stream)
  std::uint32_t n_seq_max = 0;
  std::uint32_t n_batch = 0;
  std::uint32_t n_ubatch = 0;
  bool kv_unified = false;
  bool swa_full = false;
  LlamaCppFlashAttn flash_attn_requested = LlamaCppFlashAttn::automatic;
  bool flash_attn = false;        ///< as the cache is laid out: on unless -fa off
  bool v_trans = false;           ///< V stored transposed (flash attention off)
  std::string type_k, type_v;

  std::vector<LlamaCppKvCache> caches;         ///< 0, 1 (plain), 2 (non-SWA, SWA; or MLA and the DSA indexer)
  std::optional<LlamaCppRecurrent> recurrent;  ///< hybrid and recurrent models
  std::vector<LlamaCppCompressorState> compressor_states;  ///< deepseek4: CSA, HCA, LID; empty otherwise

  // Placement (-ngl).
  std::uint32_t n_layer_all = 0;        ///< repeating layers, MTP/nextn layers included
  std::uint32_t gpu_layers = 0;         ///< of n_layer_all + 1 (the output layer counts as one)
  bool output_on_gpu = false;
  /// Every GPU the layers are split across (one when one GPU is given); their sums are the GPU figures.
  std::vector<LlamaCppDevice> devices;
  LlamaCppSplitMode split_mode = LlamaCppSplitMode::layer;
  std::uint64_t model_gpu_bytes = 0;    ///< weights on the GPU(s)
  std::uint64_t model_host_bytes = 0;   ///< weights in host memory (memory-mapped)
  bool model_host_exact = false;        ///< host figure is the mapped span of the file, not an estimate
  /// The host weights a decode step reads: the repeating and output layers left in host memory
  /// (the token embeddings, always there, are looked up a row at a time). Without a GGUF tensor
  /// list, all of model_host_bytes.
  std::uint64_t model_host_layer_bytes = 0;
  std::optional<std::uint64_t> output_buffer_bytes;   ///< host; nullopt when n_vocab is unknown
  std::optional<std::uint64_t> compute_estimate_bytes;  ///< an ESTIMATE, not llama.cpp's figure

  std::uint64_t kv_bytes = 0;        ///< K+V of every cache, all devices
  std::uint64_t recurrent_bytes = 0; ///< R+S, all devices
  std::uint64_t compressor_state_bytes = 0;  ///< deepseek4's compressor states, all devices
  std::uint64_t gpu_cache_bytes = 0; ///< K+V+R+S (and compressor state) on the GPU
  std::uint64_t host_cache_bytes = 0;

  std::vector<std::string> rules;  ///< every rule applied, in words, in the order applied
};

/// What each offloadable layer puts on the GPU whatever -ngl says (its weights, cache and state),
/// for a caller that searches -ngl on one GPU (Ollama's --fit): each probe is then a sum instead of a
/// plan. plan_llamacpp fills it.
struct LlamaCppLayerLoads {
  /// One GPU, and no probe's sum can pass 64 bits where plan_llamacpp's checked sums would stop.
  bool usable = false;
  /// suffix[il]: the loads of layers il to n_layer_all (the output layer), summed mod 2^64 as the
  /// device's weights + cache are added there; n_layer_all + 2 entries, the last 0.
  std::vector<std::uint64_t> suffix;
  /// Without per-layer sizes: the weights llama.cpp's profile splits evenly over the n_layer + 1
  /// layers (0 otherwise).
  std::uint64_t even_weights = 0;

  /// The one device's weights_bytes + cache_bytes (mod 2^64) with -ngl `ngl` (>= 0).
  std::uint64_t gpu_bytes(std::int64_t ngl) const;
};

/// Prices `model` under llama.cpp with `settings`. Throws Error (exit 2) where llama.cpp itself
/// refuses to create the context, with llama.cpp's wording: a quantized V cache without flash
/// attention, K and V types that differ on an MLA model, a head size the block size does not
/// divide. Throws an unsupported-architecture Error (exit 3) for a layout llama.cpp has no cache for.
/// `loads`, when given, receives each layer's load (LlamaCppLayerLoads).
LlamaCppResult plan_llamacpp(const ModelSpec& model, const LlamaCppSettings& settings,
                             const LlamaCppModelFacts& facts = {}, LlamaCppLayerLoads* loads = nullptr);

}  // namespace kvplan
