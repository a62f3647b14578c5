#pragma once
/// The TensorRT-LLM profile: how TensorRT-LLM sizes its paged KV cache at startup, per GPU. A
/// pure function: no I/O. The rules (staging/engines/trtllm.md, shared/reference/
/// engine-rules-serving.md §2, read from TensorRT-LLM's source) come in two kinds, and every result
/// says which is which:
///
/// Exact, given the free memory TensorRT-LLM measures after the weights and its dry run:
///   bytes/token = kv_factor x sum over the rank's layers of ceil(kv_heads / tp) x head_dim x bytes
///                 (MLA: one latent of kv_lora_rank + rope, kv_factor 1, on every rank; NVFP4 + 1/16)
///   max_tokens  = min(the creator's tokens for fraction x free, fraction x free / bytes/token,
///                 --max_tokens), MIN over ranks
///   blocks      = ceil (to 0.20) or floor (0.21 on) of max_tokens / tokens_per_block
///   "Allocated X GiB for max tokens in paged KV cache (blocks x tokens_per_block)"
///   VSWA: the pool split in equal shares across the distinct --max_attention_window values
///
/// Estimated (TensorRT-LLM measures it by running the model):
///   free = the CUDA total - weights per rank - the dry run's activation and non-torch peak

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvplan/dtype.h"
#include "kvplan/gpu.h"
#include "kvplan/model_spec.h"

namespace kvplan {

/// The TensorRT-LLM releases whose rules differ in what kvplan computes.
enum class TrtllmVersion {
  engine,       ///< to 0.18: the TensorRT-engine C++ runtime (calculateMaxNumBlocks, blocks rounded up)
  v0_19,        ///< 0.19 - 0.20: PyTorch backend, blocks rounded UP (math.ceil), fraction as float32
  v0_21,        ///< 0.21 - 1.0: PyTorch backend, blocks rounded down, fraction as float32
  v1_1,         ///< 1.1 and later: fraction a Python float, the 2026 log lines
};

/// "0.13", "0.20.0", "0.21.0rc1", "1.0", "1.2", "latest"; Error naming `flag` otherwise.
TrtllmVersion parse_trtllm_version(std::string_view text, std::string_view flag);
std::string_view to_string(TrtllmVersion version);

/// Whether TensorRT-LLM `text` ("1.2", "1.3.0rc5", "latest") may size a hybrid's recurrent state
/// inside fraction x free (the C++ manager of PR #12185) rather than before measuring free memory
/// (MambaHybridCacheManager, 1.0 - 1.2): 1.3 and later, whose release candidates straddle the change.
bool trtllm_state_may_be_pooled(std::string_view text);

/// TensorRT-LLM's settings (trtllm-serve flags and KvCacheConfig fields), with its defaults where empty.
struct TrtllmSettings {
  std::uint32_t tp = 1;                        ///< --tp_size
  std::uint32_t pp = 1;                        ///< --pp_size
  std::uint64_t max_seq_len = 0;               ///< --max_seq_len; 0 = the model's trained context
  std::uint64_t max_batch_size = 2048;         ///< --max_batch_size
  std::uint64_t max_num_tokens = 8192;         ///< --max_num_tokens
  const Dtype* kv_dtype = nullptr;             ///< KvCacheConfig.dtype; nullptr = auto (the checkpoint's)
  std::optional<double> free_gpu_memory_fraction;  ///< --kv_cache_free_gpu_memory_fraction; empty: 0.9
  std::uint32_t tokens_per_block = 0;          ///< --tokens_per_block; 0 = 32 (64 for the TensorRT-engine path)
  std::optional<std::uint64_t> max_tokens;     ///< KvCacheConfig.max_tokens
  std::uint64_t max_gpu_total_bytes = 0;       ///< KvCacheConfig.max_gpu_total_bytes; 0 = none
  std::vector<std::uint64_t> max_attention_window;  ///< KvCacheConfig.max_attention_window, repeated over layers
  TrtllmVersion version = TrtllmVersion::v1_1;
  /// The release may keep a hybrid's recurrent state inside the C++ pool (CppMambaHybridCacheManager,
  /// PR #12185, about April 2026, during 1.3.0rc): trtllm_state_may_be_pooled.
  bool state_may_be_pooled = true;
  /// The free memory the fraction multiplies, per GPU, as TensorRT-LLM measured it; empty: estimated.
  std::optional<std::uint64_t> free_memory;
  /// Memory other processes hold on each GPU (--used, or the card less --free): TensorRT-LLM
  /// measures free memory after its dry run, so it comes out of the estimate of what it sees.
  std::uint64_t co_tenant_bytes = 0;
  bool words = true;  ///< false: TrtllmResult::rules left empty (a probe's are never read)
};

/// One attention-window pool (a single one unless VSWA).
struct TrtllmWindow {
  std::uint64_t window = 0;        ///< tokens, clamped to max_seq_len
  std::uint32_t layers = 0;        ///< the rank's layers with this window
  std::uint64_t bytes_per_token = 0;  ///< those layers' K+V per token (no NVFP4 scales: the VSWA split omits them)
  std::uint64_t pool_bytes_per_token = 0;  ///< as allocated, NVFP4's scales included
  std::uint64_t blocks = 0;        ///< primary blocks
  std::uint64_t blocks_per_sequence = 0;  ///< ceil(window / tokens_per_block)
};

/// One pipeline stage: all its TP ranks are alike.
struct TrtllmStage {
  std::uint32_t stage = 0;
  std::uint32_t first_layer = 0;
  std::uint32_t layers = 0;
  std::uint64_t weights = 0;             ///< per rank
  std::uint64_t estimate_bytes_per_token = 0;  ///< get_cache_size_per_token (the creator's)
  std::uint64_t bytes_per_token = 0;     ///< get_cache_bytes_per_token (the pool's)
  double max_tokens = 0;                 ///< this rank's max_tokens before the MIN over ranks
};

struct TrtllmBudget {
  std::uint64_t cuda_total = 0;
  bool cuda_total_known = false;
  std::uint64_t weights = 0;             ///< per rank, the fullest stage
  std::uint64_t activation = 0;          ///< estimate: the dry run's peak beyond the weights
  std::uint64_t non_torch = 0;           ///< estimate: CUDA context, CUDA graphs, NCCL
  std::uint64_t free_memory = 0;         ///< what the fraction multiplies
  bool measured = false;                 ///< given, not estimated
  double fraction = 0.9;                 ///< as TensorRT-LLM holds it (float32 before 1.1)
  bool fraction_given = false;
  std::uint64_t kv_budget = 0;           ///< int(free x fraction): the creator's max memory
  std::uint64_t mamba_slots = 0;         ///< hybrids: request slots of recurrent state (max_batch_size + 1)
  std::uint64_t mamba_state = 0;         ///< hybrids: their state on one rank, out of the free memory
};

struct TrtllmResult {
  TrtllmVersion version = TrtllmVersion::v1_1;
  std::uint32_t tp = 1;
  std::uint32_t pp = 1;
  std::uint64_t max_seq_len = 0;
  std::uint64_t max_batch_size = 0;
  std::uint64_t max_num_tokens = 0;
  std::uint32_t tokens_per_block = 32;
  const Dtype* dtype = nullptr;         ///< the cache dtype resolved
  std::string kv_dtype;                 ///< as TensorRT-LLM names it: auto, fp8, nvfp4
  bool dtype_supported = true;
  std::string dtype_reason;
  bool mla = false;
  TrtllmBudget budget;
  std::vector<TrtllmStage> stages;
  std::uint32_t decisive_stage = 0;
  std::vector<TrtllmWindow> windows;    ///< one, or one per distinct window (VSWA)
  bool vswa = false;

  std::uint64_t creator_max_tokens = 0;  ///< kv_cache_config.max_tokens as the creator sets it
  double max_tokens = 0;                 ///< after the MIN over ranks
  std::uint64_t blocks = 0;              ///< primary blocks (the largest window's, VSWA)
  std::uint64_t tokens = 0;              ///< blocks x tokens_per_block: the printed token count
  std::uint64_t pool_bytes = 0;          ///< what the pools allocate on one GPU of the decisive stage
  std::uint64_t max_seq_len_bound = 0;   ///< the window upper bound the blocks allow (one sequence)

  bool starts = false;
  std::string refusal;
  std::vector<std::string> log_lines;
  std::vector<std::string> rules;
  std::vector<std::string> assumptions;
};

/// Prices `model` under TensorRT-LLM on `gpus` (tp x pp cards, stage-major). Throws Error (exit 2)
/// for settings it refuses outright, and an unsupported-architecture Error (exit 3) for a layout
/// the profile does not model.
TrtllmResult plan_trtllm(const ModelSpec& model, const std::vector<GpuSpec>& gpus, const TrtllmSettings& settings);

/// Why plan_trtllm(model, gpus, settings) would mark its cache dtype unsupported (its `dtype_reason`),
/// without the rest of the plan; nullopt when the dtype is supported.
std::optional<std::string> trtllm_cache_refusal(const ModelSpec& model, const std::vector<GpuSpec>& gpus,
                                              const TrtllmSettings& settings);

}  // namespace kvplan
