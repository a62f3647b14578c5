#pragma once
/// The SGLang profile: how SGLang's `launch_server` sizes its token pool at startup, per GPU. A
/// pure function: no I/O. The rules (staging/engines/sglang.md, shared/reference/
/// engine-rules-serving.md §1, read from SGLang's source) come in two kinds, and every result says
/// which is which:
///
/// Exact, given the free memory SGLang reads before and after loading the weights:
///   rest      = avail_after_load - free_before_load x (1 - mem_fraction_static)   (GiB, floats)
///   available = int(rest x 2^30);  #tokens = available // cell_size, capped by --max-total-tokens,
///               floored to the page, MIN over pipeline stages
///   cell_size = per token per rank, summed over the stage's layers: MHA/GQA
///               max(1, kv_heads // tp) x (k + v) x bytes; MLA the latent on every rank; DSA the
///               fp8 latent layout + the indexer key; hybrid SWA and Mamba pools split the memory
///   K size    = layers x (#tokens + page) x heads x k_head_dim x bytes (the extra page per buffer)
///
/// Estimated (SGLang measures them):
///   free_before_load = the card's CUDA-visible memory - the CUDA context - NCCL buffers
///   what loading took = the weights per rank

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvplan/dtype.h"
#include "kvplan/gpu.h"
#include "kvplan/model_spec.h"
#include "engines/sglang/speculative.h"

namespace kvplan {

/// An SGLang release as 0.MINOR.PATCH, compared as MINOR x 1000 + PATCH ("0.5.4" -> 5004).
struct SglangVersion {
  std::uint32_t number = 5016;  ///< "latest": the newest rules kvplan knows (0.5.16 and later)

  /// --mem-fraction-static's default: G1 (to 0.4.9), G2 (0.4.10 - 0.5.3), G3 (0.5.4 on).
  int mfs_generation() const { return number < 4010 ? 1 : number < 5004 ? 2 : 3; }
  /// 0.5.16 on: KVCacheConfigurator / pool_configurator.py (single-floor SWA split, 2026 log lines).
  bool configurator() const { return number >= 5016; }
  /// 0.5.14 on: "Loaded weights leave no GPU memory for the KV cache" is raised before sizing.
  bool value_error_on_no_memory() const { return number >= 5014; }
};

/// "0.4.9", "0.5", "0.5.14", "latest"; Error naming `flag` otherwise.
SglangVersion parse_sglang_version(std::string_view text, std::string_view flag);
std::string to_string(SglangVersion version);

/// SGLang's flags, with SGLang's defaults where a field is empty.
struct SglangSettings {
  std::uint32_t tp = 1;                         ///< --tp-size
  std::uint32_t pp = 1;                         ///< --pp-size
  std::uint64_t context_length = 0;             ///< --context-length; 0 = the model's trained context
  const Dtype* kv_dtype = nullptr;              ///< --kv-cache-dtype; nullptr = auto
  std::optional<double> mem_fraction_static;    ///< --mem-fraction-static; empty = SGLang's default
  std::uint32_t page_size = 0;                  ///< --page-size; 0 = 1, or what the backend forces
  std::string attention_backend;                ///< --attention-backend; empty = SGLang's choice
  bool words = true;                            ///< false: SglangResult::rules left empty (a probe's are never read)
  std::optional<std::uint64_t> max_total_tokens;       ///< --max-total-tokens
  std::optional<std::uint64_t> max_running_requests;   ///< --max-running-requests
  std::optional<std::uint64_t> chunked_prefill_size;   ///< --chunked-prefill-size
  std::optional<std::uint64_t> cuda_graph_max_bs;      ///< --cuda-graph-max-bs (in the 0.5.4+ default fraction)
  bool piecewise_cuda_graph = true;                     ///< false: --disable-piecewise-cuda-graph (0.5.10+)
  double swa_full_tokens_ratio = 0.8;           ///< --swa-full-tokens-ratio
  SglangVersion version;
  /// The free memory SGLang printed ("Load weight begin/end. avail mem="), per GPU; empty: estimated.
  std::optional<std::uint64_t> free_before_load;
  std::optional<std::uint64_t> free_after_load;
  /// Memory other processes hold on each GPU (--used, or the card less --free): SGLang measures
  /// free memory at start-up, so it comes out of the estimate of what SGLang sees.
  std::uint64_t co_tenant_bytes = 0;
  /// --speculative-algorithm and its draft (speculative.h); empty: none.
  std::optional<SglangSpeculative> speculative;
};

/// What SGLang reads before sizing the pool, per GPU (the MIN over all ranks).
struct SglangBudget {
  std::uint64_t cuda_total = 0;          ///< the card's CUDA-visible memory (the smallest card)
  bool cuda_total_known = false;         ///< false: the driver's total less an estimated 0.46 GiB
  std::uint64_t free_before_load = 0;    ///< pre_model_load_memory, in bytes
  bool before_measured = false;          ///< given (SGLang's log), not estimated
  std::uint64_t free_after_load = 0;     ///< avail_after_load
  bool after_measured = false;
  std::uint64_t weights = 0;             ///< per rank of the fullest stage: what loading took, estimated
  double mem_fraction_static = 0;
  bool mfs_default = false;              ///< the fraction is SGLang's default for the GPU
  std::string mfs_rule;                  ///< how the default was computed
  double rest_gib = 0;                   ///< after - before x (1 - mfs), before the Mamba pool
  double mamba_gib = 0;                  ///< the Mamba pool taken from rest
  std::int64_t available = 0;            ///< int(rest x 2^30) after the Mamba pool: the token pool's bytes
  std::uint64_t static_bytes = 0;        ///< free_before_load x mfs: weights + pools must fit in it
  std::uint64_t headroom_bytes = 0;      ///< free_before_load x (1 - mfs): activations, graphs, request pool
};

/// The speculative draft beside the target, per GPU (speculative.h says which era pays for what).
struct SglangDraftResult {
  std::string algorithm;                 ///< as given: "EAGLE", "EAGLE3", "NEXTN", "STANDALONE"
  SglangSpeculativeEra era = SglangSpeculativeEra::inside;
  std::string name;                      ///< the draft checkpoint
  bool own_layers = false;               ///< NEXTN: the target's own MTP layers
  LayerKind kind = LayerKind::full;      ///< what the draft's pool caches: full attention, or MLA latents (MTP)
  std::uint32_t layers = 0;              ///< the draft's attention layers, in its own pool
  std::uint64_t weights = 0;             ///< the draft's weights per rank as built (its embeddings included)
  std::uint64_t cell_bytes = 0;          ///< the draft pool's bytes per token per rank (its K + V)
  std::uint64_t k_bytes_per_token = 0;   ///< the K buffers' (MLA: the latent as allocated)
  std::uint64_t v_bytes_per_token = 0;
  std::uint64_t indexer_bytes_per_token = 0;  ///< DSA: the MTP layer's indexer key
  std::uint64_t scaled_cell_bytes = 0;   ///< 0.5.16+: int(target cell x (1 + draft layers / target layers))
  std::uint32_t target_layers = 0;       ///< 0.5.16+: the target's attention layers in that ratio
  std::uint64_t extra_tokens = 0;        ///< 0.4.10 - 0.5.6: R x steps x topk + R x draft tokens + 100
  /// 0.4.10 - 0.5.6: the slots a request counts in extra_tokens. slots_per_request, but the fewer
  /// of SGLang's two auto choices' where which it takes is not certain (GLM-4.5's to 0.5.6, read from
  /// a secondary quote): the extra tokens at the fewer, the pool slots at the more.
  std::uint64_t headroom_slots_per_request = 0;
  std::uint64_t k_bytes = 0;             ///< the draft pool's K and V buffers (#tokens + page rows)
  std::uint64_t v_bytes = 0;
  std::uint64_t indexer_bytes = 0;       ///< DSA: its indexer key buffer
  std::uint64_t slots_per_request = 0;   ///< steps x topk + draft tokens a running request holds
  std::uint64_t from_headroom = 0;       ///< what the draft takes from the share --mem-fraction-static leaves
  std::uint64_t num_steps = 0, eagle_topk = 0, num_draft_tokens = 0;
};

/// One pipeline stage's share: all its TP ranks are alike.
struct SglangStage {
  std::uint32_t stage = 0;
  std::uint32_t first_layer = 0;
  std::uint32_t layers = 0;             ///< decoder layers on the stage
  std::uint64_t weights = 0;            ///< per rank
  std::uint64_t cell_bytes = 0;         ///< the profiling cell: bytes per token per rank, this stage
  std::uint64_t pool_bytes_per_token = 0;  ///< what the buffers really hold per token (DSA's fp8 layout)
  std::uint64_t full_bytes_per_token = 0;  ///< SWA: full-attention layers' part (F x n_full)
  std::uint64_t swa_bytes_per_token = 0;   ///< SWA: sliding layers' part (S x n_swa)
  std::uint64_t k_bytes_per_token = 0;     ///< the K buffers (MHA) or the latent (MLA) of the stage
  std::uint64_t v_bytes_per_token = 0;
  std::uint64_t indexer_bytes_per_token = 0;
  std::uint64_t mamba_bytes_per_request = 0;
  std::uint64_t tokens = 0;             ///< this stage's #tokens before the MIN over stages
};

struct SglangResult {
  std::uint32_t tp = 1;
  std::uint32_t pp = 1;
  std::uint64_t context_length = 0;
  const Dtype* dtype = nullptr;         ///< the cache dtype resolved ("auto" made concrete)
  std::string kv_dtype;                 ///< as SGLang names it
  std::string torch_dtype;              ///< "torch.bfloat16", as the 2026 log line prints it
  bool dtype_supported = true;          ///< false: SGLang has no such cache (dtype_reason says why)
  std::string dtype_reason;
  enum class Layout { mha, mla, dsa, swa, mamba } layout = Layout::mha;
  std::uint32_t page_size = 1;
  std::uint64_t chunked_prefill_size = 0;
  SglangBudget budget;
  std::vector<SglangStage> stages;
  std::uint32_t decisive_stage = 0;      ///< the stage whose #tokens is the MIN

  std::uint64_t max_total_num_tokens = 0;  ///< the printed #tokens (SWA: full_layer_tokens)
  std::uint64_t swa_tokens = 0;            ///< swa_layer_tokens
  std::uint64_t window = 0;                ///< SWA: the sliding window
  std::uint64_t mamba_slots = 0;           ///< max_mamba_cache_size
  std::uint64_t max_running_requests = 0;
  std::uint64_t req_to_token_bytes = 0;    ///< int32 [max_running_requests, context_len + 4]
  std::uint64_t k_bytes = 0;               ///< K buffers of the decisive stage, padding page included
  std::uint64_t v_bytes = 0;
  std::uint64_t kv_bytes = 0;              ///< MLA: the one latent buffer
  std::uint64_t swa_k_bytes = 0;           ///< SWA pool's K buffers
  std::uint64_t swa_v_bytes = 0;
  std::uint64_t indexer_bytes = 0;
  std::uint64_t mamba_bytes = 0;
  std::uint64_t pool_bytes = 0;            ///< everything the pools allocate on one GPU of that stage
  std::optional<SglangDraftResult> draft;  ///< the speculative draft, when one is set

  bool starts = false;
  std::string refusal;                     ///< SGLang's error when it does not start
  std::vector<std::string> log_lines;      ///< the startup lines as SGLang prints them
  std::vector<std::string> rules;          ///< every rule applied, in words
  std::vector<std::string> assumptions;    ///< what is taken for granted (estimates, inferred rules)
};

/// The budget step alone (KVCacheConfigurator._profile_available_bytes, ModelRunnerKVCacheMixin.
/// profile_max_num_token): free memory readings in bytes, float32 when `distributed`; the refusal
/// text when nothing is left. Exposed so that a log whose model kvplan cannot read still checks.
struct SglangRest {
  double rest_gib = 0;
  bool refused = false;
  std::string refusal;
};
SglangRest sglang_rest(std::uint64_t free_before_load, std::uint64_t free_after_load, double mem_fraction_static,
                       bool distributed, SglangVersion version);

/// --mem-fraction-static's default for `gpu_mib` (nvidia-smi's total, the smallest card) at TP x PP,
/// by generation, and the chunked-prefill default that goes with it. `chunked` is the user's value.
struct SglangDefaults {
  double mem_fraction_static = 0.88;
  std::uint64_t chunked_prefill_size = 0;
  std::string rule;
};
/// `draft_reserve_mib` is what a speculative draft adds to the reservation (speculative.h);
/// `cuda_graph_max_bs` the user's --cuda-graph-max-bs (0.5.4 on it replaces the card's bucket).
/// From 0.5.10 piecewise CUDA graphs (on unless `piecewise` is false) reserve 8 MiB a capture size,
/// their largest size the chunked prefill, or 2,048 tokens for an MLA model (`mla`).
struct SglangGraphs {
  std::optional<std::uint64_t> cuda_graph_max_bs;
  bool piecewise = true;
  bool mla = false;
};
SglangDefaults sglang_defaults(std::uint64_t gpu_mib, std::uint32_t tp, std::uint32_t pp,
                               std::optional<std::uint64_t> chunked, SglangVersion version,
                               std::uint64_t draft_reserve_mib = 0, const SglangGraphs& graphs = {});

/// The piecewise CUDA-graph capture sizes up to `max_tokens`: the longer of the two lists SGLang's
/// server_args.py _generate_piecewise_cuda_graph_tokens has held (steps of 128 then 256 beyond 512
/// tokens; steps of 64, 256 and 512), so that the reservation is never under SGLang's.
std::uint64_t sglang_piecewise_capture_sizes(std::uint64_t max_tokens);

/// Prices `model` under SGLang on `gpus` (tp x pp cards, rank order stage-major). Throws Error
/// (exit 2) for settings SGLang refuses outright, and an unsupported-architecture Error (exit 3)
/// for a layout the profile does not model.
SglangResult plan_sglang(const ModelSpec& model, const std::vector<GpuSpec>& gpus, const SglangSettings& settings);

/// Why plan_sglang(model, gpus, settings) would mark its cache dtype unsupported (its `dtype_reason`),
/// without the rest of the plan; nullopt when the dtype is supported.
std::optional<std::string> sglang_cache_refusal(const ModelSpec& model, const std::vector<GpuSpec>& gpus,
                                              const SglangSettings& settings);

}  // namespace kvplan
