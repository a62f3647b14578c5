#pragma once
/// The vLLM profile: how vLLM's V1 engine sizes its KV cache at startup, per GPU. A pure function:
/// no I/O. The rules (shared/reference/vllm-rules.md, read from vLLM's source and checked against
/// real startup logs) come in two kinds, and every result says which is which:
///
/// Exact, given the memory vLLM makes available (its "Available KV cache memory" line):
///   page       = block_size x kv_heads_per_gpu x (k_head_dim + v_head_dim) x bytes, per layer
///                (MLA: one latent, replicated on every TP rank; kv_cache_interface.py)
///   groups     = one per layer type, or, for hybrids, cdiv(layers of a type, group_size) each
///                (kv_cache_utils.py, _get_kv_cache_groups_uniform_page_size)
///   num_blocks = floor(available / page / layers per block)
///   per request: full cdiv(max_len, B) (a rank under -dcp: cdiv(cdiv(max_len, dcp), B));
///                sliding cdiv(min(w - 1 + max_num_batched_tokens, max_len), B) + 1;
///                chunked cdiv(min(c + max_num_batched_tokens, max_len), B); Mamba 1 (2 with prefix caching)
///   "Maximum concurrency" = num_blocks / per-request blocks, summed over groups
///   "GPU KV cache size"   = num_blocks // groups x block_size [x dcp] (<= 0.20), int(concurrency x max_len) (>= 0.21)
///
/// Estimated (vLLM measures them by running the model):
///   available  = total x gpu_memory_utilization - weights / TP - activation peak - non-torch memory
///                [- CUDA graphs, from 0.21]

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kvplan/dtype.h"
#include "kvplan/gpu.h"
#include "kvplan/model_spec.h"
#include "engines/vllm/rotary_tables.h"
#include "engines/vllm/sampler.h"
#include "engines/vllm/speculative.h"

namespace kvplan {

/// The vLLM releases whose rules differ in what kvplan computes.
enum class VllmVersion {
  v0_10,     ///< 0.10.x: NCCL init memory inside the budget
  v0_11,     ///< 0.11 - 0.20: CUDA graphs outside the budget, "GPU KV cache size" = blocks // groups x B
  v0_21,     ///< 0.21 and later: the CUDA-graph estimate subtracted, "GPU KV cache size" = concurrency x max_len
};

/// "0.10", "0.11" ... "0.20" (-> v0_11), "0.21", "0.24", "latest" (-> v0_21); Error naming `flag` otherwise.
VllmVersion parse_vllm_version(std::string_view text, std::string_view flag);
std::string_view to_string(VllmVersion version);

/// The minor release of a version parse_vllm_version takes: 19 for "0.19.1"; "latest" is above
/// every release. Error naming `flag` for what parse_vllm_version refuses.
unsigned vllm_minor_version(std::string_view text, std::string_view flag);

/// The first minor release with max_model_len -1 ("auto"): PR #29431 (kv_cache_utils.py,
/// _auto_fit_max_model_len), merged 2025-11-25, first released in 0.14.0.
inline constexpr unsigned kVllmAutoFitMinor = 14;

/// What keeps the vLLM profile from answering for a model (exit 3; the caller words it in its flags).
enum class VllmUnmodelled {
  none,
  mxfp4_layout,  ///< mxfp4 experts whose padded size is not derived on a card (vllm_mxfp4_experts says why)
};

/// Whether the profile answers for `model` on `cards` (a stage's each) at `tensor_parallel`: an
/// mxfp4 checkpoint needs its loaded size derived on every card (vllm_mxfp4_experts) or given
/// (weights_are_given). `why`, when given, receives the reason an mxfp4 layout is not derived (the
/// first card's that refuses it).
VllmUnmodelled vllm_unmodelled(const ModelSpec& model, std::span<const GpuSpec> cards, std::uint32_t tensor_parallel,
                               std::string* why = nullptr);

/// vLLM's --dtype: what it computes in, and loads the checkpoint's unquantized tensors at.
enum class VllmDtype { automatic, float16, bfloat16, float32 };

/// "auto", "half", "float16", "bfloat16", "float", "float32", any case (vLLM lowercases it); an
/// Error naming `flag` otherwise.
VllmDtype parse_vllm_dtype(std::string_view text, std::string_view flag);

/// The dtype vLLM runs a model at on a card, and why (config/model.py, _get_and_verify_dtype).
struct VllmModelDtype {
  const Dtype* weights = nullptr;  ///< bf16, fp16 or fp32: the unquantized tensors' width
  std::string torch_name;          ///< as vLLM logs it: "bfloat16", "float16", "float32"
  std::string rule;                ///< the rule in words
};

/// --dtype resolved as vLLM resolves it on `gpu`. Throws Error (exit 2) where vLLM refuses: float16
/// for the model types it excludes (gemma2, gemma3, gemma3_text, plamo2, glm4), bfloat16 on a card
/// below compute capability 8.0; an unsupported-architecture Error (exit 3) for float32 with a
/// quantized checkpoint (which of its tensors widen is not known).
VllmModelDtype resolve_vllm_dtype(const ModelSpec& model, const GpuSpec& gpu, VllmDtype requested);

/// The words of the Error plan_vllm throws for a cache of `kv_dtype` (--kv-cache-dtype); nullopt
/// when vLLM stores its cache at that dtype.
std::optional<std::string> vllm_cache_dtype_error(const Dtype& kv_dtype);

/// "bfloat16", "float16", "float32" for kvplan's bf16, fp16, fp32; the kvplan name otherwise.
std::string dtype_torch_name(const Dtype& dtype);

/// vLLM's flags, with vLLM's defaults where a field is 0 / empty.
struct VllmSettings {
  /// The model's rotary tables (vllm_rotary_tables) when the caller has them for the same model and
  /// --dtype (a profile keeps its first plan's: they do not change from row to row); null: sized here.
  std::shared_ptr<const VllmRotary> rotary;
  std::uint32_t tensor_parallel = 1;         ///< -tp
  std::uint32_t pipeline_parallel = 1;       ///< -pp
  /// -dcp: the tensor-parallel ranks that split each request's tokens between them (decode context
  /// parallelism reuses the TP ranks: no more GPUs).
  std::uint32_t decode_context_parallel = 1;
  /// VLLM_PP_LAYER_PARTITION: decoder layers per stage; empty = get_pp_indices' even split.
  std::vector<std::uint32_t> layer_partition;
  /// vLLM 0.14 and 0.15 checked one request of the WHOLE model against each stage's memory (the
  /// regression of PR #29431, fixed by PR #33698); other versions check each stage's own layers.
  bool pp_whole_model_check = false;
  /// From 0.14 the startup check counts a hybrid's groups at the group size, padding layers
  /// included (_max_memory_usage_bytes_from_groups); before, only the real layers.
  bool check_counts_padding = true;
  VllmDtype dtype = VllmDtype::automatic;    ///< --dtype
  std::uint64_t max_model_len = 0;           ///< --max-model-len; 0 = the model's trained context
  /// max_model_len -1 (0.14+): the longest length whose one request fits every worker's memory,
  /// at most `max_model_len` (vLLM's derived maximum: the model's trained context).
  bool auto_fit_max_model_len = false;
  const Dtype* kv_dtype = nullptr;           ///< --kv-cache-dtype; nullptr = auto (the model's dtype)
  std::uint32_t block_size = 0;              ///< --block-size; 0 = vLLM's choice for the backend
  std::uint64_t max_num_batched_tokens = 0;  ///< 0 = vLLM's default for the GPU (8192 or 2048)
  std::uint32_t max_num_seqs = 0;            ///< 0 = vLLM's default for the GPU (1024 or 256)
  std::uint32_t utilization_millionths = 900'000;  ///< --gpu-memory-utilization (vLLM: 0.9)
  std::optional<std::uint64_t> kv_cache_memory_bytes;  ///< --kv-cache-memory: skips profiling
  VllmVersion version = VllmVersion::v0_21;
  /// The kernel the sampler filters top-k and top-p with (vllm_sampler: the release and
  /// VLLM_USE_FLASHINFER_SAMPLER); it sets the warm-up's peak.
  VllmSampler sampler = VllmSampler::flashinfer;  ///< the latest release's
  bool hybrid_kv_cache_manager = true;  ///< false: --disable-hybrid-kv-cache-manager
  bool prefix_caching = false;          ///< --enable-prefix-caching (Mamba layers then keep 2 blocks)
  bool enforce_eager = false;           ///< --enforce-eager: no CUDA graphs are captured
  /// vLLM 0.11.0 made --kv-cache-dtype auto fp8_ds_mla for DSA models (DeepSeek-V3.2); later
  /// releases keep auto at the model dtype.
  bool dsa_auto_is_fp8 = false;
  /// --speculative-config: the draft's layers join the cache, Mamba layers keep k more blocks.
  std::optional<VllmSpeculative> speculative;
};

/// One KV-cache group: layers of one kind sharing a block table.
struct VllmGroup {
  LayerKind kind = LayerKind::full;  ///< full, sliding, chunked, mla or linear (Mamba-style state)
  std::uint64_t window = 0;          ///< sliding window or chunk, in tokens
  std::uint32_t layers = 0;          ///< real layers in the group
  std::uint32_t padding_layers = 0;  ///< slots allocated for layers the group does not have
  std::uint32_t block_size = 0;      ///< tokens per block (after page-size unification)
  std::uint64_t blocks_per_request = 0;  ///< at max_model_len
};

/// What vLLM measures before sizing the cache, per GPU. Only `available` is exact when it comes
/// from --kv-cache-memory; otherwise every term but `requested` is an estimate.
struct VllmBudget {
  std::uint64_t total = 0;           ///< CUDA-visible memory of one GPU
  bool total_is_cuda_visible = false;  ///< false: the driver's (nvidia-smi) total, ~0.5 GiB more
  std::uint64_t requested = 0;       ///< total x gpu_memory_utilization
  std::uint64_t weights = 0;         ///< weights / TP, and the rotary tables (every rank holds them)
  std::uint64_t rotary_tables = 0;   ///< of `weights`: vLLM's cos/sin tables (rotary_tables.h)
  std::uint64_t mxfp4_padding = 0;   ///< of `weights`: what the MoE backend's padding of mxfp4 experts adds (mxfp4_experts.h)
  bool mxfp4_estimate = false;       ///< `mxfp4_padding` is an upper estimate (Hopper's Triton backend)
  std::uint64_t draft_weights = 0;   ///< of `weights`: an EAGLE-3 draft's, on this GPU
  std::uint64_t activation = 0;      ///< estimate: the sampler's warm-up peak (seqs x vocab x its bytes an entry), + moe_workspace
  VllmSampler sampler = VllmSampler::flashinfer;  ///< whose warm-up `activation` prices (sampler_for_rows)
  std::uint64_t moe_workspace = 0;   ///< of `activation`: the fused-MoE buffers the forward pass keeps
  std::uint64_t non_torch = 0;       ///< estimate: per version and TP, from vLLM's logs
  std::uint64_t cuda_graphs = 0;     ///< estimate: 0.45 GiB + 0.014 GiB per layer
  bool cuda_graphs_subtracted = false;  ///< from 0.21
  bool from_kv_cache_memory = false;    ///< --kv-cache-memory given: profiling skipped
  std::int64_t available = 0;        ///< for the KV cache; negative when nothing is left
};

/// One pipeline stage, per GPU of it (its TP ranks are alike).
struct VllmStage {
  std::uint32_t stage = 0;
  std::string gpu;                       ///< the card of the stage's ranks (the smallest, when unlike)
  std::uint32_t first_layer = 0;
  std::uint32_t layers = 0;              ///< decoder layers on the stage
  bool embedding = false;                ///< the first stage holds the token embeddings
  bool lm_head = false;                  ///< the last stage holds the final norm and the output head
  std::uint64_t weights = 0;             ///< per GPU of the stage, the rotary tables included
  std::uint64_t kv_bytes_per_token = 0;  ///< per GPU, the stage's layers
  std::uint64_t block_bytes = 0;         ///< one block across the stage's layers
  std::uint64_t requested = 0;           ///< the card's total x gpu_memory_utilization
  std::int64_t available = 0;            ///< "Available KV cache memory" of the stage's workers
  std::uint64_t num_blocks = 0;          ///< the stage's own, before vLLM takes the minimum
  std::uint64_t request_bytes = 0;       ///< one max_model_len request, as the startup check counts it
};

/// What decided the length under max_model_len -1 (_auto_fit_max_model_len).
enum class VllmAutoFit {
  off,           ///< a length was given
  model_max,     ///< the model's whole derived length fits: kept
  memory,        ///< reduced to the longest that fits the memory
  nothing_fits,  ///< not even one token fits: vLLM raises "Cannot auto-fit max_model_len"
};
std::string_view to_string(VllmAutoFit bound);  ///< "off", "model_max", "memory", "nothing_fits"

struct VllmResult {
  std::uint32_t tensor_parallel = 1;
  std::uint32_t pipeline_parallel = 1;
  std::uint32_t decode_context_parallel = 1;  ///< -dcp: each rank holds 1/dcp of a request's tokens
  std::string dtype;                       ///< the model dtype as vLLM names it ("bfloat16")
  const Dtype* model_dtype = nullptr;      ///< the same as kvplan's weight dtype (bf16, fp16, fp32)
  std::vector<VllmStage> stages;           ///< one per pipeline stage (one without -pp)
  std::uint32_t decisive_stage = 0;        ///< the stage with the fewest blocks: every stage gets that many
  std::uint64_t max_model_len = 0;
  std::uint64_t max_num_batched_tokens = 0;
  std::uint32_t max_num_seqs = 0;
  std::string kv_dtype;                    ///< as vLLM names it: "auto" resolved to the model's, or "fp8"
  std::uint64_t kv_bytes_per_token = 0;    ///< per GPU, all layers that hold tokens (before paging)
  std::uint64_t page_bytes = 0;            ///< one block of one layer, after unification
  std::uint32_t layers_per_block = 0;      ///< layers a block spans: all (one group) or the group size
  bool uniform = true;                     ///< one group, or layers of one type with different sizes
  std::vector<VllmGroup> groups;
  VllmBudget budget;
  std::shared_ptr<const VllmRotary> rotary;  ///< the cos/sin tables, in every stage's weights (never null)

  std::uint64_t num_blocks = 0;            ///< 0 when nothing is available
  std::uint64_t blocks_per_request = 0;    ///< summed over groups
  std::uint64_t gpu_kv_cache_tokens = 0;   ///< the "GPU KV cache size: N tokens" line
  std::uint64_t cache_bytes = 0;           ///< the pool vLLM allocates: num_blocks x page x layers per block (groups share it)
  std::uint64_t request_bytes = 0;         ///< one max_model_len request: what the startup check needs
  bool starts = false;                     ///< vLLM starts: available > 0 and one request fits
  std::optional<std::uint64_t> estimated_max_model_len;  ///< when one request does not fit: vLLM's suggestion
  VllmAutoFit auto_fit = VllmAutoFit::off;  ///< under max_model_len -1: what decided max_model_len
  std::uint64_t auto_fit_cap = 0;           ///< under max_model_len -1: the derived maximum searched up to

  /// num_blocks / blocks_per_request, vLLM's "Maximum concurrency for N tokens per request: X.XXx".
  double max_concurrency() const;

  std::optional<VllmSpeculative> speculative;  ///< --speculative-config, as read
  std::uint32_t draft_layers = 0;          ///< of the layers in `groups`: the draft's (MTP) layers

  std::vector<std::string> rules;  ///< every rule applied, in words, in the order applied
};

/// Prices `model` under vLLM, per GPU: `stage_cards` holds the card of each pipeline stage (its TP
/// ranks are alike), or one card for every stage. The budget, the KV-cache figures and `weights` of
/// the result are the decisive stage's. Throws Error (exit 2) for settings vLLM refuses (a KV dtype
/// it has no kernel for, TP that does not divide the KV heads, a layer partition that does not add
/// up, a -dcp vLLM's checks refuse), and an unsupported-architecture Error (exit 3) for a layout the
/// profile does not model (DSA indexer caches, recurrent state under TP > 1, hybrid layouts under
/// PP > 1, chunked-local or recurrent layers under -dcp).
VllmResult plan_vllm(const ModelSpec& model, std::span<const GpuSpec> stage_cards, const VllmSettings& settings);
inline VllmResult plan_vllm(const ModelSpec& model, const GpuSpec& gpu, const VllmSettings& settings) {
  return plan_vllm(model, std::span<const GpuSpec>(&gpu, 1), settings);
}

/// Decoder layers of each stage (distributed/utils.py, get_pp_indices): `partition` when given (it
/// must have `pp` entries adding up to `layers`), else layers // pp each, the remainder one more on
/// the second-to-last, third-to-last, ... stage (never the last). Error (exit 2) otherwise.
std::vector<std::uint32_t> vllm_pp_partition(std::uint32_t layers, std::uint32_t pp,
                                             const std::vector<std::uint32_t>& partition);

}  // namespace kvplan
