#include "engines/vllm/rules.h"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "engines/core/serving.h"
#include "engines/core/state_split.h"
#include "engines/vllm/moe_workspace.h"
#include "engines/vllm/mxfp4_experts.h"
#include "kvplan/plan.h"
#include "kvplan/error.h"
#include "kvplan/units.h"
#include "model/checked.h"
#include "model/wide_int.h"
#include "model/text.h"

// Every rule names the vLLM source it follows (vllm-project/vllm, V1 engine; shared/reference/
// vllm-rules.md has the versions and the log records each was checked against).

namespace kvplan {

namespace {


std::string gib(std::uint64_t bytes) { return format_gib(static_cast<std::int64_t>(bytes)); }

/// The pages of one kind of layer, before the groups are formed.
struct LayerType {
  LayerKind kind = LayerKind::full;
  std::uint64_t window = 0;
  std::uint64_t bytes_per_token = 0;  ///< attention layers: one token of one layer on one GPU
  std::uint64_t state_bytes = 0;      ///< linear layers: the whole state of one sequence
  std::uint32_t layers = 0;
  std::uint32_t block_size = 0;
  std::uint64_t page = 0;
  std::vector<std::uint32_t> members;  ///< the model's layers of this type, in model order
  bool indexer = false;                ///< DSA indexer keys (a cache spec beside the layer's latent)
};

}  // namespace

std::optional<std::string> vllm_cache_dtype_error(const Dtype& kv_dtype) {
  const std::string_view name = kv_dtype.name;
  if (name == "fp16" || name == "bf16" || name == "fp32" || name == "fp8" || name == "fp8_e5m2") return std::nullopt;
  return fmt::format("--kv-cache-dtype {}: vLLM stores the KV cache as auto (the model's dtype), bfloat16, float16, fp8, "
                     "fp8_e4m3 or fp8_e5m2",
                     name);
}

namespace {

/// vLLM's cache dtypes: auto (the model's), bfloat16/float16, fp8 (e4m3, e5m2). kvplan's other
/// types (int8, int4, llama.cpp's blocks) have no vLLM kernel.
const Dtype& vllm_cache_dtype(const ModelSpec& model, const VllmModelDtype& model_dtype, const VllmSettings& settings) {
  // CacheConfig.cache_dtype "auto": the cache is kept at the model dtype --dtype resolved to.
  if (settings.kv_dtype == nullptr) return parse_kv_dtype(model_dtype.weights->name, *model.weight_dtype);
  if (std::optional<std::string> error = vllm_cache_dtype_error(*settings.kv_dtype)) throw Error(std::move(*error));
  return *settings.kv_dtype;
}

/// KV heads one TP rank holds (ModelConfig.get_num_kv_heads): split, or replicated once TP
/// exceeds them. vLLM refuses a TP that neither divides nor is a multiple of the heads.
std::uint64_t kv_heads_per_rank(std::uint64_t heads, std::uint32_t tp) {
  if (heads >= tp) {
    if (heads % tp != 0)
      throw Error(fmt::format("-tp {}: vLLM needs the {} KV heads to be divisible by the tensor-parallel size", tp, heads));
    return heads / tp;
  }
  if (tp % heads != 0)
    throw Error(fmt::format("-tp {}: vLLM needs the tensor-parallel size to be a multiple of the {} KV heads", tp, heads));
  return 1;
}

/// The attention block size: --block-size, else 16 (FlashAttention, FlashInfer, Triton). MLA
/// backends force theirs (platforms/cuda.py): FlashMLA on Hopper 64, CUTLASS MLA on Blackwell 128.
std::uint32_t attention_block_size(const GpuSpec& gpu, const VllmSettings& settings, bool mla, bool dsa,
                                   std::vector<std::string>& rules) {
  const std::uint32_t chosen = settings.block_size ? settings.block_size : 16;
  // DSA models (index_topk in the config): 64 on CUDA (platforms/cuda.py), the only block size of
  // the sparse MLA and indexer kernels, which need Hopper or Blackwell.
  if (dsa) {
    const unsigned cc = compute_capability(gpu);
    if (cc < 90)
      throw unsupported_architecture(fmt::format("vLLM profile: a DSA model (sparse MLA with an indexer) on sm_{}", cc),
                                     "its kernels run on Hopper and Blackwell: not modelled here");
    rules.push_back(fmt::format("block size 64: vLLM forces it for DSA models (the sparse MLA and indexer kernels){}",
                                settings.block_size && settings.block_size != 64 ? " (--block-size ignored)" : ""));
    return 64;
  }
  if (!mla) {
    rules.push_back(settings.block_size ? fmt::format("block size {} (--block-size)", chosen)
                                        : "block size 16 (vLLM's default for the CUDA attention backends)");
    return chosen;
  }
  const unsigned cc = compute_capability(gpu);
  const std::uint32_t forced = cc == 90 ? 64 : cc >= 100 ? 128 : 0;
  if (forced == 0) {
    rules.push_back(fmt::format("MLA block size {} (no MLA backend forces one on this GPU)", chosen));
    return chosen;
  }
  rules.push_back(fmt::format("MLA block size {}: vLLM forces it for {} on sm_{}{}", forced,
                              cc == 90 ? "FlashMLA" : "CUTLASS MLA", cc,
                              settings.block_size && settings.block_size != forced ? " (--block-size ignored)" : ""));
  return forced;
}

/// Bytes one token of an attention layer keeps on one GPU (0 for layers without a KV spec).
std::uint64_t attention_bytes_per_token(const LayerSpec& layer, const Dtype& dtype, std::uint32_t tp) {
  switch (layer.kind) {
    case LayerKind::full:
    case LayerKind::sliding:
    case LayerKind::chunked:
      return dtype_bytes(dtype, (Checked(kv_heads_per_rank(layer.kv_heads, tp), "KV bytes per token") *
                                 (Checked(layer.k_head_dim, "KV bytes per token") + layer.v_head_dim))
                                    .value());
    case LayerKind::mla: return dtype_bytes(dtype, layer.k_head_dim);
    default: return 0;
  }
}

/// `type` for one more layer `index`: the layer type of its shape, a new one when none is.
void add_layer_type(std::vector<LayerType>& types, const LayerType& type, std::uint32_t index) {
  auto same = std::find_if(types.begin(), types.end(), [&](const LayerType& t) {
    return t.kind == type.kind && t.window == type.window && t.bytes_per_token == type.bytes_per_token &&
           t.state_bytes == type.state_bytes && t.indexer == type.indexer;
  });
  if (same == types.end()) {
    types.push_back(type);
    types.back().layers = 0;
    types.back().members.clear();
    same = std::prev(types.end());
  }
  ++same->layers;
  same->members.push_back(index);
}

/// A DSA model's MLA latent (DeepseekV32ForCausalLM.verify_and_update_config): at an fp8 cache
/// dtype vLLM stores it as fp8_ds_mla, the kv_lora_rank values in fp8 with a 4 B fp32 scale a
/// 128, and the rope part kept in bf16 (656 B for DeepSeek-V3.2's 512 + 64); at 16 bits as any
/// MLA latent.
std::uint64_t dsa_latent_bytes_per_token(const LayerSpec& layer, const Dtype& dtype, const VllmSettings& settings) {
  const bool fp8 = dtype.name == "fp8" || dtype.name == "fp8_e4m3" || (settings.kv_dtype == nullptr && settings.dsa_auto_is_fp8);
  if (dtype.name == "fp8_e5m2")
    throw unsupported_architecture("vLLM profile: a DSA model's cache at fp8_e5m2", "vLLM stores it as fp8_ds_mla (e4m3)");
  if (!fp8) return attention_bytes_per_token(layer, dtype, settings.tensor_parallel);
  const std::uint64_t rank = layer.k_head_dim - layer.mla_rope_dim;
  return rank + rank / 128 * 4 + std::uint64_t{layer.mla_rope_dim} * 2;
}

/// What each layer keeps per GPU, grouped into types of equal shape.
std::vector<LayerType> layer_types(const ModelSpec& model, const Dtype& dtype, const VllmSettings& settings,
                                   std::vector<std::string>& rules) {
  const bool merge_windows = !settings.hybrid_kv_cache_manager;
  bool chunked_as_full = false;
  std::uint64_t fp8_ds_mla = 0;  // a DSA latent's bytes a token when stored as fp8_ds_mla
  std::vector<LayerType> types;
  for (std::uint32_t index = 0; index < model.layers.size(); ++index) {
    const LayerSpec& layer = model.layers[index];
    LayerType type;
    type.kind = layer.kind;
    type.window = layer.window;
    switch (layer.kind) {
      case LayerKind::full:
      case LayerKind::sliding:
      case LayerKind::chunked: {
        if (!layer.state.empty())
          throw unsupported_architecture("vLLM profile: attention with recurrent state in the same layer (Falcon-H1)",
                                         "not modelled");
        type.bytes_per_token = attention_bytes_per_token(layer, dtype, settings.tensor_parallel);
        // unify_hybrid_kv_cache_specs: without the hybrid manager every layer keeps every token.
        // Chunked-local layers needed VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE, off
        // before 0.21 (envs.py).
        const bool chunked_off = layer.kind == LayerKind::chunked && settings.version != VllmVersion::v0_21;
        if (layer.kind != LayerKind::full && (merge_windows || chunked_off)) {
          chunked_as_full = chunked_as_full || chunked_off;
          type.kind = LayerKind::full;
          type.window = 0;
        }
        break;
      }
      case LayerKind::mla:
        // MLAAttentionSpec: one latent per token, not split across TP ranks.
        type.bytes_per_token = attention_bytes_per_token(layer, dtype, settings.tensor_parallel);
        break;
      case LayerKind::linear:
        // MambaSpec: each rank's share of the state (MambaStateShapeCalculator, state_split.h).
        type.state_bytes = checked_add(type.state_bytes, state_bytes_per_rank(layer, settings.tensor_parallel, "-tp"), "state");
        break;
      case LayerKind::none:
      case LayerKind::shared: continue;  // no KV spec: nothing allocated
      case LayerKind::cross:
        throw unsupported_architecture("vLLM profile: cross-attention layers (Llama 3.2 Vision)",
                                       "MllamaForConditionalGeneration was removed from vLLM after 0.10.2");
    }
    if (layer.index_head_dim) {
      type.bytes_per_token = dsa_latent_bytes_per_token(layer, dtype, settings);
      if (type.bytes_per_token != attention_bytes_per_token(layer, dtype, settings.tensor_parallel)) fp8_ds_mla = type.bytes_per_token;
      add_layer_type(types, type, index);
      // The layer's indexer keys: a cache of their own (DeepseekV32IndexerCache, an
      // MLAAttentionSpec of one head) of 128 fp8 values and a 4 B fp32 scale a 128, whatever the
      // KV dtype; vLLM counts it as a layer of its own in the same group.
      type.bytes_per_token = layer.index_head_dim + layer.index_head_dim / 128 * 4;
      type.indexer = true;
    }
    add_layer_type(types, type, index);
  }
  if (fp8_ds_mla)
    rules.push_back(fmt::format("MLA latents as fp8_ds_mla, {} B a token: fp8 values with an fp32 scale a 128 and the rope "
                                "part in bf16 (DeepseekV32ForCausalLM's cache dtype for {})",
                                fp8_ds_mla, settings.kv_dtype ? "fp8" : "auto in vLLM 0.11.0"));
  if (merge_windows) rules.push_back("--disable-hybrid-kv-cache-manager: sliding and chunked layers keep every token");
  else if (chunked_as_full)
    rules.push_back("chunked-local layers keep every token: before 0.21 VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE "
                    "is off, so vLLM turns them into full attention");
  return types;
}

/// The blocks a Mamba-style layer keeps beyond its state for speculative decoding: k, every method
/// (model_executor/layers/mamba/abstract.py, MambaBase.get_kv_cache_spec: num_speculative_blocks =
/// speculative_config.num_speculative_tokens; MambaSpec then holds 1 + that many pages a request).
std::uint32_t speculative_blocks(const VllmSettings& settings) {
  return settings.speculative ? settings.speculative->num_speculative_tokens : 0;
}

/// Blocks one request of `max_len` tokens needs in a group on one rank (kv_cache_interface.py,
/// max_memory_usage_bytes / page), with `mnbt` tokens a step. Under -dcp a full-attention or MLA
/// rank keeps every dcp-th token of the request (FullAttentionSpec: cdiv(max_model_len, dcp x pcp)
/// before the blocks); the other kinds never reach here with dcp > 1 (check_decode_context_parallel).
/// Mamba-style layers keep speculative_blocks() more.
std::uint64_t blocks_per_request(const VllmGroup& group, std::uint64_t max_len, std::uint64_t mnbt,
                                 const VllmSettings& settings) {
  const std::uint32_t dcp = settings.decode_context_parallel;
  switch (group.kind) {
    // Saturating sums: a window near 2^64 holds every token (a wrapped sum held almost none).
    case LayerKind::sliding: return ceil_div(std::min(saturating_add(group.window - 1, mnbt), max_len), group.block_size) + 1;
    case LayerKind::chunked: return ceil_div(std::min(saturating_add(group.window, mnbt), max_len), group.block_size);
    case LayerKind::linear: return (settings.prefix_caching ? 2 : 1) + std::uint64_t{speculative_blocks(settings)};
    default: return ceil_div(dcp > 1 ? ceil_div(max_len, dcp) : max_len, group.block_size);
  }
}

/// Decode context parallelism (-dcp), as vLLM checks it, and what it splits. The dcp ranks are
/// the TP ranks (config/parallel.py, ParallelConfig._validate_parallel_config: "DCP reuses the TP
/// ranks when PCP is disabled"), so the GPUs, the weights, the page and the blocks per rank are
/// those without -dcp; what changes is that each rank keeps 1/dcp of every request's tokens
/// (kv_cache_interface.py, FullAttentionSpec.max_memory_usage_bytes; MLAAttentionSpec inherits it).
/// Read at vllm-project/vllm 001cabc1 (kv_cache_interface.py, kv_cache_utils.py), 0052a5b8
/// (config/model.py) and 00193b82 (config/parallel.py).
void check_decode_context_parallel(const ModelSpec& model, const VllmSettings& settings, std::vector<std::string>& rules) {
  const std::uint32_t dcp = settings.decode_context_parallel;
  const std::uint32_t tp = settings.tensor_parallel;
  if (dcp == 0) throw Error("-dcp: must be at least 1");
  if (dcp == 1) return;
  // Without -dcp every rank keeps every token: an upper bound of the memory, never a false fit.
  const auto not_modelled = [&](std::string_view what) {
    return Error(fmt::format("-dcp {}: the vLLM profile does not model decode context parallelism {}; plan without -dcp "
                             "for an upper bound (every rank keeping every token)",
                             dcp, what),
                 ExitCode::unsupported_architecture);
  };
  if (settings.version == VllmVersion::v0_10)
    throw not_modelled("under the 0.10 rules (it arrived with PR #23734; give --vllm-version 0.11 or later)");
  // How a stage's ranks split the tokens beside pipeline stages was not read in vLLM's source.
  if (settings.pipeline_parallel > 1) throw not_modelled(fmt::format("with pipeline parallelism (-pp {})", settings.pipeline_parallel));
  // ParallelConfig._validate_parallel_config (pcp == 1).
  if (tp % dcp != 0) throw Error(fmt::format("-dcp {}: vLLM refuses it: tp_size={} must be divisible by dcp_size={}.", dcp, tp, dcp));
  bool mla = false, full = false, sliding = false;
  std::uint32_t kv_heads = 0;
  for (const LayerSpec& layer : model.layers) {
    // Whether a dcp rank keeps all of a request's indexer keys (the top-k runs over every token)
    // or a share was not read.
    if (layer.index_head_dim) throw not_modelled("with DSA indexer caches (DeepseekV32IndexerCache)");
    switch (layer.kind) {
      case LayerKind::mla: mla = true; break;
      case LayerKind::full: full = true; break;
      case LayerKind::sliding: sliding = true; break;
      // ChunkedLocalAttentionSpec.max_memory_usage_bytes does not read dcp, and MambaSpec's state
      // is per sequence: whether a dcp rank keeps all of it or a share is not stated in the source.
      case LayerKind::chunked: throw not_modelled("with chunked-local attention layers (ChunkedLocalAttentionSpec)");
      case LayerKind::linear: throw not_modelled("with recurrent (Mamba-style) state layers (MambaSpec)");
      default: break;
    }
    if (layer.kind == LayerKind::full || layer.kind == LayerKind::sliding) {
      if (kv_heads != 0 && layer.kv_heads != kv_heads) throw not_modelled("with layers of different KV head counts");
      kv_heads = layer.kv_heads;
    }
  }
  // SlidingWindowSpec.max_memory_usage_bytes asserts dcp == 1, and the startup check calls it.
  // Without the hybrid manager, sliding layers beside full ones become FullAttentionSpec
  // (unify_hybrid_kv_cache_specs) and are split like them.
  if (sliding && (settings.hybrid_kv_cache_manager || !full))
    throw Error(fmt::format("-dcp {}: vLLM stops at startup on sliding-window layers (\"DCP not support sliding window.\", "
                            "SlidingWindowSpec)",
                            dcp));
  if (mla && (full || sliding)) throw not_modelled("with MLA and standard attention layers in one model");
  if (!mla) {
    // ModelConfig.verify_with_parallel_config: GQA/MQA needs each KV head replicated over at least
    // dcp ranks, so that the replicas split the tokens instead.
    if (model.attention_heads == 0 || kv_heads == 0 || model.attention_heads % kv_heads != 0)
      throw not_modelled("without the model's attention and KV head counts (vLLM checks -dcp against both)");
    if (tp <= kv_heads)
      throw Error(fmt::format("-dcp {}: vLLM refuses it: tensor parallel size {} must be greater than total num kv heads {} "
                              "when enable decode context parallel for GQA/MQA",
                              dcp, tp, kv_heads));
    if (dcp > tp / kv_heads)
      throw Error(fmt::format("-dcp {}: vLLM refuses it: decode context parallel size must less than or equal to (tensor "
                              "parallel size {} // total num kv heads {}) = {}, but got {}",
                              dcp, tp, kv_heads, tp / kv_heads, dcp));
    const std::uint32_t q_per_kv = model.attention_heads / kv_heads;
    if (q_per_kv % dcp != 0)
      throw Error(fmt::format("-dcp {}: vLLM refuses it: Total number of q per kv attn heads ({}) must be divisible by dcp "
                              "world size when enable decode context parallel for GQA ({}).",
                              dcp, q_per_kv, dcp));
  }
  rules.push_back(fmt::format(
      "-dcp {}: the {} TP ranks form {} decode-context group{} of {}; each rank keeps 1/{} of every request's tokens{}, so a "
      "request needs cdiv(cdiv(max_model_len, {}), block size) blocks a rank (FullAttentionSpec.max_memory_usage_bytes); "
      "the page, the weights and the blocks of a rank are as without -dcp",
      dcp, tp, tp / dcp, tp / dcp == 1 ? "" : "s", dcp, dcp,
      mla ? " (the MLA latent, otherwise whole on every TP rank)" : " (each KV head's replicas split its tokens)", dcp));
}

/// Where the MTP layers' weights come from when vLLM drafts with them: the weights figure (--weights,
/// vLLM's own; a safetensors total, which holds them with copies of the embeddings and head the
/// draft frees: an upper bound), kvplan's count of them (added to a figure computed from the
/// parameters, which leaves them out), or nowhere.
enum class MtpWeights { given, checkpoint_total, counted, unknown };
MtpWeights mtp_weights_source(const ModelSpec& model) {
  if (weights_are_given(model)) return MtpWeights::given;
  if (model.weights_source.rfind("safetensors total_size", 0) == 0) return MtpWeights::checkpoint_total;
  return model.mtp_weights_bytes ? MtpWeights::counted : MtpWeights::unknown;
}

/// The model vLLM allocates for under --speculative-config: `model` itself, or (MTP) `model` with the
/// draft's layers in `storage`. The draft (DeepSeekMTP, Glm4MoeMTP) builds one decoder layer per
/// num_nextn_predict_layers, whatever k (spec_step_idx % num_mtp_layers picks the layer), each an
/// attention layer of the target's kind: get_kv_cache_spec sees them beside the target's and the
/// groups and pages are formed over both (llm_base_proposer.py, load_model: the draft's attention
/// layers are those the target does not have). Their weights are in the checkpoint (the
/// model.layers.N tensors past num_hidden_layers); the draft's embeddings and output head are the
/// target's (_maybe_share_embeddings, _maybe_share_lm_head: "Detected MTP model").
const ModelSpec& add_draft_layers(const ModelSpec& model, const VllmSettings& settings, ModelSpec& storage, VllmResult& r) {
  r.speculative = settings.speculative;
  if (!settings.speculative) return model;
  const VllmSpeculative& spec = *settings.speculative;
  if (settings.pipeline_parallel > 1)
    throw Error(fmt::format("--speculative-config with -pp {}: where vLLM places the draft among the pipeline stages is "
                            "not modelled; plan with -pp 1",
                            settings.pipeline_parallel),
                ExitCode::unsupported_architecture);
  if (spec.draft_layers == 0) {
    r.rules.push_back(fmt::format("--speculative-config {}, {} speculative token{}: no draft model, no draft weights or "
                                  "KV cache",
                                  spec.method, spec.num_speculative_tokens, spec.num_speculative_tokens == 1 ? "" : "s"));
    return model;
  }
  // Whether the draft's layers split their tokens over the dcp ranks as the target's do was not read.
  if (settings.decode_context_parallel > 1)
    throw Error(fmt::format("--speculative-config method {} with -dcp {}: how the draft's layers are split under decode "
                            "context parallelism is not modelled; plan without -dcp for an upper bound",
                            spec.method, settings.decode_context_parallel),
                ExitCode::unsupported_architecture);
  // A draft checkpoint (EAGLE-3's head, a draft model): its own layers, registered after the
  // target's (Eagle3LlamaForCausalLM: layers.{num_hidden_layers}...; a draft model under the
  // "draft_model" prefix), which get_kv_cache_spec sees beside the target's.
  if (spec.draft) {
    const ModelSpec& draft = spec.draft->spec;
    storage = model;
    storage.layers.insert(storage.layers.end(), draft.layers.begin(), draft.layers.end());
    r.draft_layers = spec.draft_layers;
    const LayerSpec& first = draft.layers.front();
    r.rules.push_back(fmt::format(
        "--speculative-config {}, {} speculative token{}: the draft {} builds {} layer{} of its own (the first {} with "
        "{} KV heads of {}), cached beside the target's, grouped with them as vLLM groups layers; its weights are "
        "loaded beside the target's",
        spec.method, spec.num_speculative_tokens, spec.num_speculative_tokens == 1 ? "" : "s",
        draft.id.empty() ? draft.name : draft.id, spec.draft_layers, spec.draft_layers == 1 ? "" : "s",
        to_string(first.kind), first.kv_heads, first.k_head_dim));
    return storage;
  }
  const LayerSpec* like = mtp_cache_layer(model);
  if (like == nullptr) throw Error("--speculative-config: the model has no attention layer for the MTP layers to copy");
  // The MTP layers' weights must be in the figure or counted (draft_weights adds the count).
  const MtpWeights weights = mtp_weights_source(model);
  if (weights == MtpWeights::unknown)
    throw Error(fmt::format("--speculative-config method mtp: the weights of {}'s {} MTP layer{} (vLLM loads them for the "
                            "draft) are not in its weights figure ({}) and kvplan did not count them; give --weights "
                            "with the checkpoint's size including them (its safetensors total), or its config.json with "
                            "the safetensors index",
                            model.id.empty() ? model.name : model.id, spec.draft_layers, spec.draft_layers == 1 ? "" : "s",
                            model.weights_source.empty() ? "not stated" : model.weights_source),
                ExitCode::unsupported_architecture);
  storage = model;
  // A DSA model's MTP layer is a whole decoder layer with an indexer of its own, whichever of the
  // target's layers share theirs (DeepseekV32MTP; IndexCache never skips it).
  LayerSpec mtp_layer = *like;
  for (const LayerSpec& layer : model.layers) mtp_layer.index_head_dim = std::max(mtp_layer.index_head_dim, layer.index_head_dim);
  storage.layers.insert(storage.layers.end(), spec.draft_layers, mtp_layer);
  r.draft_layers = spec.draft_layers;
  r.rules.push_back(fmt::format(
      "--speculative-config mtp, {} speculative token{}: the draft builds the checkpoint's {} MTP layer{} ({}), each a "
      "{} attention layer with a KV cache like the target's, in the same groups and pages; weights: {}",
      spec.num_speculative_tokens, spec.num_speculative_tokens == 1 ? "" : "s", spec.draft_layers,
      spec.draft_layers == 1 ? "" : "s",
      spec.num_speculative_tokens > spec.draft_layers ? "run again for each further token" : "one per token",
      to_string(like->kind),
      weights == MtpWeights::given     ? "--weights is taken to include them"
      : weights == MtpWeights::counted ? "counted from the config and added (below)"
                                       : "the safetensors total includes them (and the draft's copies of the embeddings "
                                         "and head, which vLLM frees to share the target's: an upper bound)"));
  return storage;
}

/// Page sizes made equal and layers grouped (kv_cache_utils.py). Fills the result's page,
/// layers per block and groups; plan_vllm then counts each group's blocks per request. Returns
/// each of the `layer_count` layers' group (-1 for a layer without a cache spec: none, shared), for
/// the pipeline stages to project the groups onto.
std::vector<std::int32_t> form_groups(std::vector<LayerType>& types, std::size_t layer_count, const GpuSpec& gpu,
                                      const VllmSettings& settings, VllmResult& r) {
  std::vector<std::int32_t> group_of(layer_count, -1);
  const bool mla = std::any_of(types.begin(), types.end(), [](const LayerType& t) { return t.kind == LayerKind::mla; });
  const bool dsa = std::any_of(types.begin(), types.end(), [](const LayerType& t) { return t.indexer; });
  const std::uint32_t block = attention_block_size(gpu, settings, mla, dsa, r.rules);
  if (dsa) {
    std::uint32_t indexers = 0;
    std::uint64_t bytes = 0;
    for (const LayerType& type : types)
      if (type.indexer) {
        indexers += type.layers;
        bytes = type.bytes_per_token;
      }
    r.rules.push_back(fmt::format("{} DSA indexer caches (DeepseekV32IndexerCache: {} B a token, fp8 keys and their "
                                  "scales whatever the KV dtype), each a layer of its own in the group",
                                  indexers, bytes));
  }
  std::vector<LayerType*> attention;
  LayerType* linear = nullptr;
  for (LayerType& type : types) {
    if (type.kind == LayerKind::linear) linear = &type;
    else attention.push_back(&type);
    r.kv_bytes_per_token = (Checked(type.bytes_per_token, "KV bytes per token") * type.layers + r.kv_bytes_per_token).value();
  }
  if (attention.empty()) throw unsupported_architecture("vLLM profile: a model without attention layers", "not modelled");
  for (LayerType* type : attention) {
    type->block_size = block;
    type->page = checked_mul(block, type->bytes_per_token, "KV page");
  }

  if (linear) {
    // HybridAttentionMambaModelConfig: the attention block grows until its page holds the state,
    // B = 16 x cdiv(state, 16 x bytes per token), and the state is padded to that page.
    const std::uint64_t per_token = attention.front()->bytes_per_token;
    for (const LayerType* type : attention)
      if (type->bytes_per_token != per_token)
        throw unsupported_architecture("vLLM profile: attention layers of different sizes beside recurrent state",
                                       "not modelled");
    const std::uint64_t grown = checked_mul(16, ceil_div(linear->state_bytes, checked_mul(16, per_token, "KV page")), "KV page");
    if (grown > std::numeric_limits<std::uint32_t>::max())
      throw Error(fmt::format("vLLM cannot fit {} B of recurrent state in attention blocks of {} B a token",
                              linear->state_bytes, per_token));
    for (LayerType* type : attention) {
      type->block_size = static_cast<std::uint32_t>(grown);
      type->page = checked_mul(grown, per_token, "KV page");
    }
    linear->block_size = static_cast<std::uint32_t>(grown);
    linear->page = checked_mul(grown, per_token, "KV page");
    r.rules.push_back(fmt::format("attention block size {} tokens: 16 x cdiv({} B of recurrent state, 16 x {} B per token); "
                                  "the state page padded from {} B to {} B",
                                  grown, format_thousands(linear->state_bytes), format_thousands(per_token),
                                  format_thousands(linear->state_bytes), format_thousands(linear->page)));
  }

  // One type: a single group spanning every layer (or, same kind but different sizes,
  // UniformTypeKVCacheSpecs: one block holds a page of each layer).
  const bool one_kind = std::all_of(types.begin(), types.end(), [&](const LayerType& t) {
    return t.kind == types.front().kind && t.window == types.front().window;
  });
  if (one_kind) {
    r.uniform = true;
    std::uint64_t page_sum = 0;
    std::uint32_t layers = 0;
    for (const LayerType& type : types) {
      page_sum = (Checked(type.page, "KV page") * type.layers + page_sum).value();
      layers += type.layers;  // at most kMaxLayers
    }
    const LayerType& first = types.front();
    r.page_bytes = types.size() == 1 ? first.page : page_sum;
    r.layers_per_block = types.size() == 1 ? layers : 1;
    r.groups.push_back({first.kind, first.window, layers, 0, first.block_size, 0});
    r.rules.push_back(types.size() == 1
                          ? fmt::format("one KV-cache group of {} layers, a page of {} B each", layers, format_thousands(first.page))
                          : fmt::format("one KV-cache group of {} layers of different sizes: a block holds {} B", layers,
                                        format_thousands(page_sum)));
    for (const LayerType& type : types)
      for (const std::uint32_t layer : type.members) group_of[layer] = 0;
    return group_of;
  }

  // Hybrid: unify_kv_cache_spec_page_size multiplies the smaller pages' block size up to the
  // largest page (it must divide), then _get_kv_cache_groups_uniform_page_size groups the layers.
  r.uniform = false;
  std::uint64_t page = 0;
  for (const LayerType& type : types) page = std::max(page, type.page);
  for (LayerType& type : types) {
    if (type.page == page) continue;
    if (page % type.page != 0)
      throw Error(fmt::format("vLLM cannot unify page sizes {} B and {} B (not a multiple): it refuses this model",
                              type.page, page));
    const std::uint64_t grown = std::uint64_t{type.block_size} * (page / type.page);
    if (grown > std::numeric_limits<std::uint32_t>::max()) throw Error("vLLM cannot unify these page sizes: blocks too large");
    type.block_size = static_cast<std::uint32_t>(grown);
    type.page = page;
  }
  std::uint32_t fewest = types.front().layers, most = types.front().layers;
  for (const LayerType& type : types) {
    fewest = std::min(fewest, type.layers);
    most = std::max(most, type.layers);
  }
  const std::uint32_t group_size = 2 * most < 3 * fewest ? most : fewest;
  r.page_bytes = page;
  r.layers_per_block = group_size;
  std::uint32_t padding_total = 0;
  // From 0.11 (PR #23974) a kind's layers are dealt to its groups in turn (layers[i::count]), so
  // that each pipeline stage holds a share of every group: 52 sliding layers in 6 groups are
  // 9, 9, 9, 9, 8, 8. 0.10 cut them in runs of the group size (10, 10, 10, 10, 10, 2).
  const bool dealt = settings.version != VllmVersion::v0_10;
  for (const LayerType& type : types) {
    const std::uint32_t count = static_cast<std::uint32_t>(ceil_div(type.layers, group_size));
    const auto base = static_cast<std::int32_t>(r.groups.size());
    std::vector<std::uint32_t> real(count, 0);
    for (std::uint32_t rank = 0; rank < type.members.size(); ++rank) {
      const std::uint32_t g = dealt ? rank % count : rank / group_size;
      group_of[type.members[rank]] = base + static_cast<std::int32_t>(g);
      ++real[g];
    }
    for (const std::uint32_t layers : real) {
      r.groups.push_back({type.kind, type.window, layers, group_size - layers, type.block_size, 0});
      padding_total += group_size - layers;
    }
  }
  r.rules.push_back(fmt::format("{} KV-cache groups of {} layers (group size: the fewest layers of a kind, or the most when "
                                "within 1.5x){}; every page {} B",
                                r.groups.size(), group_size,
                                padding_total ? fmt::format(", {} padding layer{} allocated", padding_total,
                                                            padding_total == 1 ? "" : "s")
                                              : "",
                                format_thousands(page)));
  return group_of;
}

/// The target's hidden width as an EAGLE-3 head reads it: fc takes three of the target's hidden
/// states (3 x width in, the head's width out); 0 for a head without fc or a draft model.
std::uint64_t eagle3_target_width(const ModelSpec& head) {
  std::uint64_t fc_params = 0;
  for (const ModelPart& part : head.parts) fc_params += part.params;
  return head.hidden_size ? fc_params / 3 / head.hidden_size : 0;
}

/// Estimates of what vLLM measures while profiling (vllm-rules.md §8.5), per GPU of a card whose
/// ranks hold `weights` each. The rules go to `rules` when given (the decisive stage's).
VllmBudget estimate_budget(const ModelSpec& model, const GpuSpec& gpu, const VllmSettings& settings, std::uint64_t weights,
                           const VllmResult& r, std::vector<std::string>* rules) {
  VllmBudget b;
  b.total_is_cuda_visible = gpu.cuda_total_bytes.has_value();
  b.total = gpu.cuda_total_bytes.value_or(gpu.memory_bytes);
  b.requested = scale_by_millionths(b.total, settings.utilization_millionths);
  if (rules)
    rules->push_back(fmt::format("budget {} = {} x gpu_memory_utilization {:.2f}{}", gib(b.requested), gib(b.total),
                                 static_cast<double>(settings.utilization_millionths) / 1e6,
                                 b.total_is_cuda_visible ? " (the CUDA-visible total vLLM sees on this GPU)"
                                                         : " (the driver's total: vLLM sees a little less, ~0.46 GiB on an H100)"));
  const std::uint64_t world = std::uint64_t{settings.tensor_parallel} * settings.pipeline_parallel;
  b.weights = weights;
  b.rotary_tables = r.rotary->bytes;
  if (model.vocab_size == 0)
    throw Error("the vLLM profile estimates the sampler's memory from the vocabulary size, which this model does not "
                "state (vocab_size)",
                ExitCode::unsupported_architecture);
  // The torch peak of profile_run is the dummy sampler's top-k and top-p on max_num_seqs rows of
  // the vocabulary, at its kernel's bytes an entry (sampler.h: 39 B for the full sort, 16 B
  // without one); the forward pass is smaller for dense models. It does not shrink with TP. Under
  // PP only the last stage samples; the others are given the same peak (an over-estimate of their
  // use, never of their cache).
  // With speculative decoding the warm-up also runs the rejection sampler on k draft tokens a
  // sequence (gpu_model_runner, _dummy_sampler_run): beside the fp32 logits it holds the target's
  // fp32 logits and probabilities of seqs x k rows, 4 + 8k B a vocabulary entry, taken when larger.
  const std::uint64_t k = settings.speculative ? settings.speculative->num_speculative_tokens : 0;
  const std::uint64_t rows = std::min<std::uint64_t>(r.max_num_seqs, r.max_num_batched_tokens);
  b.sampler = sampler_for_rows(settings.sampler, rows);
  const std::uint64_t sampler_entry = sampler_bytes_per_entry(b.sampler);
  const std::uint64_t per_entry = std::max<std::uint64_t>(sampler_entry, 4 + 8 * k);
  b.activation = checked_mul(checked_mul(per_entry, rows, "activation estimate"), model.vocab_size, "activation estimate");
  // A MoE model's forward pass leaves its fused-MoE workspace allocated beneath that peak.
  b.moe_workspace = moe_workspace_bytes(model, *r.model_dtype, r.max_num_batched_tokens, settings.tensor_parallel);
  b.activation = checked_add(b.activation, b.moe_workspace, "activation estimate");
  // EAGLE-3: the target's forward keeps three of its hidden states for the head (the aux hidden
  // states fc reads) beside its own peak, max_num_batched_tokens of them at the model dtype
  // (inferred from gpu_model_runner's profile run; fc's width is 3 x the target's hidden size).
  std::uint64_t aux_states = 0;
  if (settings.speculative && settings.speculative->method == "eagle3" && settings.speculative->draft) {
    const std::uint64_t width = eagle3_target_width(settings.speculative->draft->spec);
    aux_states = dtype_bytes(*r.model_dtype, (Checked(width, "activation estimate") * 3 * r.max_num_batched_tokens).value());
    b.activation = checked_add(b.activation, aux_states, "activation estimate");
  }
  // Non-torch memory allocated during profiling, as vLLM's logs show it (H100): NCCL buffers once
  // more than one GPU serves the model (tensor or pipeline parallel).
  const double non_torch_gib = settings.version == VllmVersion::v0_10 ? (world > 1 ? 0.1 : 0.0) : (world > 1 ? 2.1 : 0.25);
  b.non_torch = static_cast<std::uint64_t>(non_torch_gib * static_cast<double>(GiB));
  // CUDA graphs: budgeted from 0.21 (profile_cudagraph_memory), roughly 0.45 GiB + 0.014 GiB a layer.
  // --enforce-eager captures none, so there is nothing to profile or subtract.
  b.cuda_graphs = settings.enforce_eager
                      ? 0
                      : static_cast<std::uint64_t>((0.45 + 0.014 * model.layer_count()) * static_cast<double>(GiB));
  b.cuda_graphs_subtracted = settings.version == VllmVersion::v0_21 && !settings.enforce_eager;
  if (settings.enforce_eager && rules) rules->push_back("--enforce-eager: no CUDA graphs, none in the budget");
  const std::uint64_t used = checked_add(checked_add(b.weights, b.activation, "vLLM memory"),
                                         checked_add(b.non_torch, b.cuda_graphs_subtracted ? b.cuda_graphs : 0, "vLLM memory"),
                                         "vLLM memory");
  if (settings.kv_cache_memory_bytes) {
    // The pool is what the flag says; weights, activations and graphs still need the card.
    b.from_kv_cache_memory = true;
    if (*settings.kv_cache_memory_bytes > (std::uint64_t{1} << 62)) throw Error("--kv-cache-memory: too large");
    b.available = static_cast<std::int64_t>(*settings.kv_cache_memory_bytes);
    if (rules)
      rules->push_back(fmt::format("--kv-cache-memory {}: vLLM skips profiling and allocates that much for the KV cache; "
                                   "weights {}, activation ~{}, non-torch ~{}{} still need the card's {}",
                                   gib(*settings.kv_cache_memory_bytes), gib(b.weights), gib(b.activation), gib(b.non_torch),
                                   b.cuda_graphs_subtracted ? " and CUDA graphs ~" + gib(b.cuda_graphs) : "", gib(b.total)));
    return b;
  }
  if (b.requested > (std::uint64_t{1} << 62) || used > (std::uint64_t{1} << 62)) throw Error("vLLM budget: too large");
  b.available = static_cast<std::int64_t>(b.requested) - static_cast<std::int64_t>(used);
  if (rules)
    rules->push_back(fmt::format("estimate: available = budget - weights/TP {} - sampler peak {} ({} B x {} seqs x {} vocab: {}) "
                                 "{}{}- non-torch {}{}",
                                 gib(b.weights), gib(b.activation - b.moe_workspace - aux_states), per_entry, rows,
                                 model.vocab_size,
                                 per_entry > sampler_entry ? fmt::format("the rejection sampler's 4 + 8 x {} B", k)
                                                           : std::string(sampler_rule(b.sampler)),
                                 b.moe_workspace ? fmt::format("- MoE workspace {} ({} tokens x {} experts a token, kept from the "
                                                               "forward pass) ",
                                                               gib(b.moe_workspace), r.max_num_batched_tokens,
                                                               model.routed_experts->per_token)
                                                 : "",
                                 aux_states ? fmt::format("- EAGLE-3 hidden states {} (3 x the target's width x {} tokens, "
                                                          "ESTIMATED) ",
                                                          gib(aux_states), r.max_num_batched_tokens)
                                            : "",
                                 gib(b.non_torch),
                                 b.cuda_graphs_subtracted ? fmt::format(" - CUDA graphs {}", gib(b.cuda_graphs))
                                                          : " (CUDA graphs, ~" + gib(b.cuda_graphs) +
                                                                ", live outside the budget before 0.21)"));
  return b;
}

/// Whether vLLM pads the model's experts as it loads them: an mxfp4 checkpoint whose loaded size
/// is not given.
bool mxfp4_experts_padded(const ModelSpec& model) {
  return model.weight_dtype && model.weight_dtype->name == "mxfp4" && !weights_are_given(model);
}

/// What the padding of an mxfp4 checkpoint's experts adds to each GPU.
struct Mxfp4Padding {
  std::uint64_t bytes = 0;
  bool estimate = false;  ///< an upper estimate (vllm_mxfp4_experts)

  /// Into the budget estimate_budget made, which does not know it.
  void record_in(VllmBudget& budget) const {
    budget.mxfp4_padding = bytes;
    budget.mxfp4_estimate = estimate;
  }
};

/// The padding of an mxfp4 checkpoint's experts on `card` (none for any other checkpoint);
/// unsupported_architecture where it is not derived. Its rule joins `rules` once.
Mxfp4Padding mxfp4_padding(const ModelSpec& model, const GpuSpec& card, std::uint32_t tp, std::vector<std::string>& rules) {
  if (!mxfp4_experts_padded(model)) return {};
  VllmMxfp4Experts experts = vllm_mxfp4_experts(model, card, tp);
  if (!experts.extra_bytes) throw unsupported_architecture("vLLM profile: mxfp4 experts", std::move(experts.rule));
  if (std::find(rules.begin(), rules.end(), experts.rule) == rules.end()) rules.push_back(std::move(experts.rule));
  return {*experts.extra_bytes, experts.estimate};
}

/// The bytes of `params` values at `dtype`.
std::uint64_t params_bytes(std::uint64_t params, const Dtype& dtype) {
  return checked_mul(ceil_div(params, dtype.block_elements), dtype.block_bytes, "weight size");
}

/// The whole checkpoint as vLLM loads it at `model_dtype`: unchanged when that is the checkpoint's
/// own dtype (or the checkpoint is quantized: its quantized tensors stay, and the rest is taken to
/// be at that 16-bit dtype already); otherwise every tensor, towers and projectors too, cast to it
/// (vLLM builds the whole model under set_default_torch_dtype(model_config.dtype)).
WeightsEstimate vllm_checkpoint(const ModelSpec& model, const VllmModelDtype& model_dtype) {
  const std::string_view own = model.weight_dtype->name;
  const bool floating = own == "fp32" || own == "fp16" || own == "bf16";
  if (!floating || own == model_dtype.weights->name) return estimate_weights(model, nullptr);
  WeightsEstimate estimate = estimate_weights(model, model_dtype.weights);
  std::uint64_t bytes = estimate.bytes - std::min(estimate.bytes, parts_bytes(model));
  for (const ModelPart& part : model.parts)
    bytes = checked_add(bytes, part.params ? params_bytes(part.params, *model_dtype.weights) : part.bytes, "weight size");
  estimate.bytes = bytes;
  estimate.rule = fmt::format("the {} checkpoint loaded as {}: {}", own, model_dtype.torch_name, estimate.rule);
  return estimate;
}

/// The target's embedding and head shapes as a draft head compares its own with them: its own
/// counts, else its vocabulary at its width (a MoE spec states no width: `fallback_width` gives it).
struct TargetTensors {
  std::uint64_t embedding = 0;
  std::uint64_t head = 0;
};
TargetTensors target_tensors(const ModelSpec& target, std::uint64_t fallback_width) {
  const std::uint64_t hidden = target.hidden_size ? target.hidden_size : fallback_width;
  TargetTensors t;
  t.embedding = target.embedding_params ? target.embedding_params : checked_mul(target.vocab_size, hidden, "draft weights");
  t.head = target.lm_head_params ? target.lm_head_params : t.embedding;
  return t;
}

/// A draft's embeddings (or head) in words: the target's, or its own and why.
std::string draft_tensor_state(std::optional<bool> stores, bool shared, bool same_shape, std::string_view what) {
  if (shared) return fmt::format("the target's {} (the checkpoint has none)", what);
  if (!same_shape) return fmt::format("its own {} (not the target's shape)", what);
  if (!stores) return fmt::format("its {} counted (its safetensors were not read: an upper bound where vLLM shares the target's)", what);
  return fmt::format("its own {} (counted: vLLM shares the target's only where they are equal)", what);
}

/// A draft head's own rotary table: LlamaAttention always builds one, and a config that states no
/// rope has LlamaConfig's default.
VllmRotary draft_rotary(const ModelSpec& draft, const Dtype& dtype) {
  if (draft.rope || draft.layers.empty()) return vllm_rotary_tables(draft, dtype);
  ModelSpec with_rope = draft;
  with_rope.rope = RotarySpec{.rotary_dim = draft.layers.front().k_head_dim};
  return vllm_rotary_tables(with_rope, dtype);
}

/// An EAGLE-3 draft's weights on one rank, as vLLM loads them beside the target: the drafter is
/// loaded inside the same measurement, so "Model loading took" counts both (gpu_model_runner
/// load_model). Every tensor at the target's dtype (the draft's model config takes it), split over
/// the target's ranks but fc (ReplicatedLinear), whole on each; draft_id_to_target_id (int64, a row
/// per draft token); the draft's own rotary table (its max_position_embeddings: a second table when
/// its rope differs from the target's, an over-count of one table when it does not). The draft
/// builds embed_tokens and lm_head, then (_maybe_share_embeddings, _maybe_share_lm_head) deletes
/// them for the target's where the shapes match and the checkpoint has none of its own (or, from
/// PR #28549, one equal to the target's, which kvplan cannot see: counted, an upper bound); the
/// head only from 0.11. Checked on a 0.11 log: Llama 3.1 8B with its EAGLE-3 head, 15.8114 GiB.
std::uint64_t eagle3_head_weights(const DraftModel& head, const ModelSpec& target, const VllmModelDtype& model_dtype,
                                  const VllmSettings& settings, std::vector<std::string>& rules) {
  const ModelSpec& draft = head.spec;
  const Dtype& dtype = *model_dtype.weights;
  const TargetTensors target_shape = target_tensors(target, eagle3_target_width(draft));
  const bool embeddings_shared = head.stores_embeddings == false && draft.embedding_params == target_shape.embedding;
  const bool head_shared = settings.version != VllmVersion::v0_10 && head.stores_lm_head == false &&
                           draft.lm_head_params == target_shape.head;
  const WeightsEstimate whole = vllm_checkpoint(draft, model_dtype);
  std::uint64_t replicated = 0;
  for (const ModelPart& part : draft.parts) replicated = checked_add(replicated, params_bytes(part.params, dtype), "draft weights");
  const std::uint64_t shared = (embeddings_shared ? params_bytes(draft.embedding_params, dtype) : 0) +
                               (head_shared ? params_bytes(draft.lm_head_params, dtype) : 0);
  const std::uint64_t split = whole.bytes - std::min(whole.bytes, replicated + shared);
  const std::uint64_t draft_vocab = draft.hidden_size ? draft.lm_head_params / draft.hidden_size : 0;
  const std::uint64_t token_map = checked_mul(draft_vocab, 8, "draft weights");
  const VllmRotary rotary = draft_rotary(draft, dtype);
  const std::uint32_t tp = settings.tensor_parallel;
  const std::uint64_t bytes = (Checked(ceil_div(split, tp), "draft weights") + replicated + token_map + rotary.bytes).value();
  rules.push_back(fmt::format(
      "the EAGLE-3 draft {}: {} of tensors at {}{}{}, {}, {}, + its token map {} + its rotary table {} = {} a GPU",
      draft.id.empty() ? draft.name : draft.id, gib(whole.bytes - std::min(whole.bytes, shared)), model_dtype.torch_name,
      tp > 1 ? fmt::format(" / {} ranks", tp) : "", replicated ? fmt::format(" (fc {} whole on each)", gib(replicated)) : "",
      draft_tensor_state(head.stores_embeddings, embeddings_shared, draft.embedding_params == target_shape.embedding,
                         "embeddings"),
      settings.version == VllmVersion::v0_10
          ? std::string("its own output head (0.10 shares none)")
          : draft_tensor_state(head.stores_lm_head, head_shared, draft.lm_head_params == target_shape.head, "output head"),
      vllm_rotary_size(token_map), vllm_rotary_size(rotary.bytes), gib(bytes)));
  return bytes;
}

/// An EAGLE-1 draft's weights on one rank, as vLLM builds EagleLlamaForCausalLM (models/
/// llama_eagle.py) from a Llama config: embed_tokens, num_hidden_layers LlamaDecoderLayers (the
/// first without its input RMSNorm), fc (2 x hidden in, hidden out, no bias; torch.nn.Linear, whole
/// on every rank); no final norm and no lm_head (the target's serves it). The embeddings are the
/// target's where the shapes match and the checkpoint has none (as for EAGLE-3; its safetensors
/// unread: counted, an upper bound). At the target's dtype, with its own rotary table.
std::uint64_t eagle1_head_weights(const DraftModel& head, const ModelSpec& target, const VllmModelDtype& model_dtype,
                                  const VllmSettings& settings, std::vector<std::string>& rules) {
  const ModelSpec& draft = head.spec;
  const Dtype& dtype = *model_dtype.weights;
  const std::uint64_t hidden = draft.hidden_size;
  const TargetTensors target_shape = target_tensors(target, hidden);
  const bool embeddings_shared = head.stores_embeddings == false && draft.embedding_params == target_shape.embedding;
  // The config's count less what EagleLlamaForCausalLM does not build: its head, its final norm
  // and layer 0's input norm.
  const std::uint64_t not_built = (Checked(draft.lm_head_params, "draft weights") + hidden + hidden).value();
  const std::uint64_t built = draft.params - std::min(draft.params, not_built);
  const std::uint64_t split_params = built - (embeddings_shared ? std::min(built, draft.embedding_params) : 0);
  const std::uint64_t fc = params_bytes(checked_mul(2 * hidden, hidden, "draft weights"), dtype);
  const VllmRotary rotary = draft_rotary(draft, dtype);
  const std::uint32_t tp = settings.tensor_parallel;
  const std::uint64_t bytes =
      (Checked(ceil_div(params_bytes(split_params, dtype), tp), "draft weights") + fc + rotary.bytes).value();
  rules.push_back(fmt::format(
      "the EAGLE draft {} (EagleLlamaForCausalLM): {} layer{} at {}{} (no input norm on the first, no final norm, the "
      "target's output head), {}, fc {} whole on each GPU, + its rotary table {} = {} a GPU",
      draft.id.empty() ? draft.name : draft.id, draft.layer_count(), draft.layer_count() == 1 ? "" : "s",
      model_dtype.torch_name, tp > 1 ? fmt::format(" / {} ranks", tp) : "",
      draft_tensor_state(head.stores_embeddings, embeddings_shared, draft.embedding_params == target_shape.embedding,
                         "embeddings"),
      gib(fc), vllm_rotary_size(rotary.bytes), gib(bytes)));
  return bytes;
}

/// A draft model's weights on one rank (DraftModelProposer.load_model: get_model with the draft's
/// own config, at the target's dtype and on its ranks): the checkpoint as vllm_checkpoint loads a
/// model, over the ranks, and its own rotary tables.
std::uint64_t draft_model_weights(const ModelSpec& draft, const VllmModelDtype& model_dtype, std::uint32_t tp,
                                  std::vector<std::string>& rules) {
  const WeightsEstimate whole = vllm_checkpoint(draft, model_dtype);
  const VllmRotary rotary = vllm_rotary_tables(draft, *model_dtype.weights);
  const std::uint64_t bytes = (Checked(ceil_div(whole.bytes, tp), "draft weights") + rotary.bytes).value();
  rules.push_back(fmt::format("the draft model {}: {} ({}){} + its rotary tables {} = {} a GPU",
                              draft.id.empty() ? draft.name : draft.id, gib(whole.bytes), whole.rule,
                              tp > 1 ? fmt::format(" / {} ranks", tp) : "", vllm_rotary_size(rotary.bytes), gib(bytes)));
  return bytes;
}

/// The draft checkpoint's weights on one rank: an EAGLE-3 or EAGLE-1 head's, or a draft model's.
std::uint64_t draft_weights(const VllmSpeculative& spec, const ModelSpec& target, const VllmModelDtype& model_dtype,
                            const VllmSettings& settings, std::vector<std::string>& rules) {
  if (spec.method == "mtp" && mtp_weights_source(target) == MtpWeights::counted) {
    // The MTP layers as counted (add_draft_layers checked that nothing else holds them): the input
    // projection (DeepSeek's and GLM's eh_proj, Qwen's fc) whole on every rank, the rest split. A
    // checkpoint's copies of the embeddings and head (DeepSeek, GLM) are in it, though vLLM frees
    // them to share the target's: an upper bound.
    const std::uint64_t bytes = *mtp_weights_per_rank(target, settings.tensor_parallel);
    rules.push_back(fmt::format("the MTP {} weights: {} a GPU (computed from the config: {} B, the input projection's "
                                "{} B whole on each rank, the rest split; an upper bound: with the copies of the "
                                "embeddings and head a checkpoint stores beside them, which vLLM frees)",
                                target.mtp_layers == 1 ? "layer's" : "layers'", format_gib(static_cast<std::int64_t>(bytes)),
                                format_thousands(*target.mtp_weights_bytes), format_thousands(target.mtp_replicated_bytes)));
    return bytes;
  }
  if (!spec.draft) return 0;
  if (spec.method == "eagle3") return eagle3_head_weights(*spec.draft, target, model_dtype, settings, rules);
  if (spec.method == "eagle") return eagle1_head_weights(*spec.draft, target, model_dtype, settings, rules);
  return draft_model_weights(spec.draft->spec, model_dtype, settings.tensor_parallel, rules);
}

/// One stage's weights, before TP: its share of the decoder layers (in proportion to their number:
/// an estimate when the layers differ), the token embeddings on the first stage and the output head
/// on the last (the models' PPMissingLayer pattern: embed_tokens on the first rank, or on the last
/// too when tied, and lm_head on the last), and the towers and projectors of a multimodal model on
/// every stage (an over-estimate for the stages that do not build them).
std::uint64_t stage_weights(const ModelSpec& model, std::uint64_t checkpoint, const Dtype& dtype, const VllmStage& stage,
                            std::uint32_t pp) {
  const std::uint64_t parts = [&] {
    std::uint64_t sum = 0;
    for (const ModelPart& part : model.parts)
      sum = checked_add(sum, part.params && dtype.name != model.weight_dtype->name ? params_bytes(part.params, dtype) : part.bytes,
                        "weight size");
    return sum;
  }();
  // Embeddings of unknown size (no hidden_size): everything is spread over the layers (plan_vllm
  // says so in the rules).
  const std::uint64_t embedding_params = model.embedding_params     ? model.embedding_params
                                         : model.hidden_size == 0 ? 0
                                                                  : checked_mul(model.vocab_size, model.hidden_size, "weight size");
  const std::uint64_t embedding = params_bytes(embedding_params, dtype);
  // Tied (or unknown whether tied): the last stage builds the embeddings again as its head.
  const std::uint64_t head = model.lm_head_params ? params_bytes(model.lm_head_params, dtype) : embedding;
  const std::uint64_t outside = checked_add(embedding, model.lm_head_params ? head : 0, "weight size");
  const std::uint64_t language = checkpoint - std::min(checkpoint, parts);
  const std::uint64_t layers_total = language - std::min(language, outside);
  // At most layers_total: a stage holds at most every layer.
  const std::uint64_t share = static_cast<std::uint64_t>(
      ceil_div_wide(u128{layers_total} * stage.layers, std::max<std::uint32_t>(model.layer_count(), 1)));
  std::uint64_t bytes = checked_add(share, parts, "weight size");
  if (stage.stage == 0) bytes = checked_add(bytes, embedding, "weight size");
  if (stage.stage + 1 == pp) bytes = checked_add(bytes, head, "weight size");
  return bytes;
}

/// Bytes one request of `len` tokens needs as the startup check (and --max-model-len auto) counts
/// them. Before 0.14, max_memory_usage_bytes over the layers' specs: the real layers of every
/// group. From 0.14, _max_memory_usage_bytes_from_groups (PR #29431): the group size's pools x
/// every group's blocks, so a hybrid's padding layers count too (0.14 to PR #36030, March 2026,
/// counted only the first group's blocks, less than this: the sum is on the safe side).
/// `groups` are a worker's (the whole model's, or a pipeline stage's projection), `group_size`
/// their group size.
std::uint64_t request_bytes_of(const std::vector<VllmGroup>& groups, std::uint32_t group_size, const VllmResult& r,
                               std::uint64_t len, const VllmSettings& settings) {
  const bool padding_counts = settings.check_counts_padding && settings.version != VllmVersion::v0_10;
  std::uint64_t bytes = 0;
  for (const VllmGroup& group : groups) {
    const std::uint64_t blocks = blocks_per_request(group, len, r.max_num_batched_tokens, settings);
    const std::uint64_t layers = r.uniform || padding_counts ? group_size : group.layers;
    bytes = checked_add(bytes, checked_mul(checked_mul(blocks, r.page_bytes, "request"), layers, "request"), "request");
  }
  return bytes;
}

/// request_bytes_of the result's own groups.
std::uint64_t request_bytes_at(const VllmResult& r, std::uint64_t len, const VllmSettings& settings) {
  return request_bytes_of(r.groups, r.layers_per_block, r, len, settings);
}

/// The group size of projected groups: every group is its layers and padding.
std::uint32_t stage_group_size(const std::vector<VllmGroup>& groups) {
  return groups.front().layers + groups.front().padding_layers;
}

/// "22,21": the counts as rules list them.
std::string join_counts(const std::vector<std::uint32_t>& counts) {
  std::string joined;
  for (const std::uint32_t n : counts) joined += (joined.empty() ? "" : ",") + std::to_string(n);
  return joined;
}

}  // namespace

unsigned vllm_minor_version(std::string_view text, std::string_view flag) {
  if (text == "latest") return std::numeric_limits<unsigned>::max();
  // "0.MINOR", then any ".PATCH" parts ("0.10.1.1"): patch releases do not change the rules.
  const auto number = [](std::string_view& rest) -> std::optional<unsigned> {
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
    if (ec != std::errc() || end == rest.data()) return std::nullopt;
    rest.remove_prefix(static_cast<std::size_t>(end - rest.data()));
    return value;
  };
  std::string_view rest = text;
  const std::optional<unsigned> major = number(rest);
  std::optional<unsigned> minor;
  if (major && !rest.empty() && rest.front() == '.') {
    rest.remove_prefix(1);
    minor = number(rest);
  }
  while (minor && !rest.empty() && rest.front() == '.') {
    rest.remove_prefix(1);
    if (!number(rest)) minor.reset();
  }
  if (!major || !minor || !rest.empty() || *major != 0 || *minor < 10)
    throw Error(fmt::format("{}: '{}' is not a vLLM version kvplan knows (0.10 or later, e.g. 0.19, 0.24, latest)", flag,
                            text));
  return *minor;
}

VllmVersion parse_vllm_version(std::string_view text, std::string_view flag) {
  const unsigned minor = vllm_minor_version(text, flag);
  return minor == 10 ? VllmVersion::v0_10 : minor <= 20 ? VllmVersion::v0_11 : VllmVersion::v0_21;
}

std::string_view to_string(VllmAutoFit bound) {
  switch (bound) {
    case VllmAutoFit::off: return "off";
    case VllmAutoFit::model_max: return "model_max";
    case VllmAutoFit::memory: return "memory";
    case VllmAutoFit::nothing_fits: return "nothing_fits";
  }
  return "off";
}

std::string_view to_string(VllmVersion version) {
  switch (version) {
    case VllmVersion::v0_10: return "0.10";
    case VllmVersion::v0_11: return "0.11-0.20";
    case VllmVersion::v0_21: return "0.21+";
  }
  return "?";
}

double VllmResult::max_concurrency() const {
  return blocks_per_request ? static_cast<double>(num_blocks) / static_cast<double>(blocks_per_request) : 0.0;
}

std::string dtype_torch_name(const Dtype& dtype) {
  const std::string_view name = dtype.name;
  return name == "bf16" ? "bfloat16" : name == "fp16" ? "float16" : name == "fp32" ? "float32" : std::string(name);
}

VllmDtype parse_vllm_dtype(std::string_view text, std::string_view flag) {
  const std::string name = ascii_lower(text);
  if (name == "auto") return VllmDtype::automatic;
  if (name == "half" || name == "float16") return VllmDtype::float16;
  if (name == "bfloat16") return VllmDtype::bfloat16;
  if (name == "float" || name == "float32") return VllmDtype::float32;
  throw Error(fmt::format("{} {}: vLLM's dtypes are auto, half, float16, bfloat16, float and float32", flag, text));
}

VllmModelDtype resolve_vllm_dtype(const ModelSpec& model, const GpuSpec& gpu, VllmDtype requested) {
  // config/model.py: _FLOAT16_NOT_SUPPORTED_MODELS (numerical instability), by model_type.
  constexpr std::string_view no_float16[] = {"gemma2", "gemma3", "gemma3_text", "plamo2", "glm4"};
  const bool float16_refused = std::find(std::begin(no_float16), std::end(no_float16), model.architecture) != std::end(no_float16);
  // platforms/cuda.py, supported_dtypes: bf16 from compute capability 8.0, fp16 from 6.0.
  const unsigned cc = compute_capability(gpu);
  const bool cc_known = cc != 0;
  std::vector<std::string_view> supported;
  if (!cc_known || cc >= 80) supported.push_back("bf16");
  if ((!cc_known || cc >= 60) && !float16_refused) supported.push_back("fp16");
  supported.push_back("fp32");
  const auto torch_name = [](std::string_view name) { return dtype_torch_name(parse_weight_dtype(name)); };
  const std::string_view own = model.weight_dtype->name;
  const bool floating = own == "fp32" || own == "fp16" || own == "bf16";
  // A quantized checkpoint's config names its compute dtype (torch_dtype), which kvplan does not
  // keep: taken as bfloat16, as kvplan's cache "auto" takes it.
  const std::string_view config = floating ? own : "bf16";
  const std::string card = cc_known ? fmt::format("{} (sm_{})", gpu.name, cc) : gpu.name;
  std::string_view chosen;
  std::string rule;
  switch (requested) {
    case VllmDtype::automatic: {
      const std::string_view preferred = supported.front();
      const bool config_supported = std::find(supported.begin(), supported.end(), config) != supported.end();
      if (config == "fp32") {
        chosen = preferred;
        rule = fmt::format("--dtype auto: the float32 checkpoint is downcast to {}, the first dtype vLLM supports on {}",
                           torch_name(chosen), card);
      } else if (config_supported) {
        chosen = config;
        rule = fmt::format("--dtype auto: the checkpoint's {}{}", torch_name(chosen),
                           floating ? "" : " (a quantized checkpoint's compute dtype, taken as bfloat16)");
      } else {
        chosen = preferred;
        rule = fmt::format("--dtype auto: {} does not run the checkpoint's {}{}; vLLM falls back to {}", card,
                           torch_name(config), float16_refused && config == "fp16" ? " for " + model.architecture : "",
                           torch_name(chosen));
      }
      if (!cc_known) rule += " (the card's compute capability is not known: bfloat16 support assumed)";
      rule += " (config/model.py, _resolve_auto_dtype)";
      break;
    }
    case VllmDtype::float16:
      if (float16_refused)
        throw Error(fmt::format("--dtype float16: vLLM refuses float16 for model type {} (numerical instability; use "
                                "bfloat16 or float32)",
                                model.architecture));
      chosen = "fp16";
      break;
    case VllmDtype::bfloat16:
      if (cc_known && cc < 80)
        throw Error(fmt::format("--dtype bfloat16: vLLM needs compute capability 8.0 for bfloat16; {} has {}.{} (use "
                                "--dtype half)",
                                gpu.name, cc / 10, cc % 10));
      chosen = "bf16";
      break;
    case VllmDtype::float32: chosen = "fp32"; break;
  }
  if (requested != VllmDtype::automatic) {
    if (!floating && chosen == "fp32")
      throw unsupported_architecture("vLLM profile: --dtype float32 with a quantized checkpoint",
                                     "which of its tensors vLLM widens to float32 is not modelled");
    rule = fmt::format("--dtype {}{}", torch_name(chosen),
                       chosen == config ? "" : fmt::format(": the {} checkpoint is cast to it", torch_name(config)));
  }
  return {&parse_weight_dtype(chosen), torch_name(chosen), rule};
}

std::vector<std::uint32_t> vllm_pp_partition(std::uint32_t layers, std::uint32_t pp, const std::vector<std::uint32_t>& partition) {
  if (pp == 0) throw Error("-pp: must be at least 1");
  if (!partition.empty()) {
    std::uint64_t sum = 0;
    for (const std::uint32_t n : partition) sum += n;
    if (partition.size() != pp)
      throw Error(fmt::format("--pp-layer-partition has {} entries; vLLM needs one per pipeline stage ({})", partition.size(),
                              pp));
    if (sum != layers)
      throw Error(fmt::format("--pp-layer-partition adds up to {} layers; vLLM needs the model's {}", sum, layers));
    return partition;
  }
  if (pp > layers) throw Error(fmt::format("-pp {}: more pipeline stages than the model's {} layers", pp, layers));
  std::vector<std::uint32_t> parts(pp, layers / pp);
  // The remainder goes to the second-to-last stage, then the third-to-last, ...: never the last.
  for (std::uint32_t i = 2; i < layers % pp + 2; ++i) ++parts[pp - i];
  return parts;
}

namespace {

/// vLLM at one max_model_len (the length given, or the model's).
VllmResult plan_vllm_at_length(const ModelSpec& model, std::span<const GpuSpec> stage_cards, const VllmSettings& settings) {
  if (settings.tensor_parallel == 0) throw Error("-tp: must be at least 1");
  if (settings.pipeline_parallel == 0) throw Error("-pp: must be at least 1");
  if (stage_cards.size() != 1 && stage_cards.size() != settings.pipeline_parallel)
    throw Error("vLLM profile: one card for every stage, or one for each");
  const auto card_of = [&](std::uint32_t stage) -> const GpuSpec& { return stage_cards[stage_cards.size() == 1 ? 0 : stage]; };
  const GpuSpec& gpu = card_of(0);
  VllmResult r;
  r.tensor_parallel = settings.tensor_parallel;
  r.pipeline_parallel = settings.pipeline_parallel;
  r.decode_context_parallel = settings.decode_context_parallel;
  r.max_model_len = settings.max_model_len ? settings.max_model_len : model.max_context;
  if (r.max_model_len == 0) throw Error("--max-model-len is required: the model does not state its trained context");
  // EngineArgs.get_batch_defaults (API server): large defaults on >= 70 GiB cards other than the A100.
  const std::uint64_t total = gpu.cuda_total_bytes.value_or(gpu.memory_bytes);
  const bool large = total >= 70 * GiB && gpu.name.find("A100") == std::string::npos;
  r.max_num_batched_tokens = settings.max_num_batched_tokens ? settings.max_num_batched_tokens : large ? 8192 : 2048;
  r.max_num_seqs = settings.max_num_seqs ? settings.max_num_seqs : large ? 1024 : 256;
  // Every stage runs the model at one dtype: the first card decides it (a mix of cards below and
  // above compute capability 8.0 is refused by the smallest's check in vLLM; kvplan takes the first).
  const VllmModelDtype model_dtype = resolve_vllm_dtype(model, gpu, settings.dtype);
  r.dtype = model_dtype.torch_name;
  r.model_dtype = model_dtype.weights;
  const Dtype& dtype = vllm_cache_dtype(model, model_dtype, settings);
  r.kv_dtype = std::string(dtype.name);
  r.rules.push_back(settings.pipeline_parallel == 1
                        ? fmt::format("vLLM {} rules, tensor parallel {}: figures are per GPU", to_string(settings.version),
                                      settings.tensor_parallel)
                        : fmt::format("vLLM {} rules, tensor parallel {} x pipeline parallel {}: figures are per GPU of "
                                      "the decisive stage",
                                      to_string(settings.version), settings.tensor_parallel, settings.pipeline_parallel));
  r.rules.push_back(model_dtype.rule);

  // The draft's layers are attention layers like the target's: they join its KV-cache groups.
  ModelSpec with_draft;
  const ModelSpec& served = add_draft_layers(model, settings, with_draft, r);
  check_decode_context_parallel(served, settings, r.rules);
  std::vector<LayerType> types = layer_types(served, dtype, settings, r.rules);
  const std::vector<std::int32_t> group_of = form_groups(types, served.layers.size(), gpu, settings, r);
  for (VllmGroup& group : r.groups) {
    group.blocks_per_request = blocks_per_request(group, r.max_model_len, r.max_num_batched_tokens, settings);
    r.blocks_per_request = checked_add(r.blocks_per_request, group.blocks_per_request, "blocks per request");
  }
  const WeightsEstimate checkpoint = vllm_checkpoint(model, model_dtype);
  // The rotary tables are built on every rank (replicated buffers), whatever TP and PP; under PP a
  // stage builds only its layers' ropes, and each is given all of them (an over-count, never under).
  r.rotary = settings.rotary ? settings.rotary
                             : std::make_shared<const VllmRotary>(vllm_rotary_tables(model, *model_dtype.weights));
  const std::uint32_t tp = settings.tensor_parallel;
  const std::uint64_t block_bytes = checked_mul(r.page_bytes, r.layers_per_block, "KV block");
  if (block_bytes == 0) throw Error("vLLM profile: a KV block of 0 bytes (a layer whose cache is empty)");

  // Under -pp, a hybrid's groups as projected onto each stage, and the whole model's.
  std::vector<std::vector<VllmGroup>> stage_groups;
  const std::vector<VllmGroup> whole_groups = r.groups;
  const std::uint32_t whole_group_size = r.layers_per_block;
  if (settings.pipeline_parallel == 1) {
    // vLLM reads VLLM_PP_LAYER_PARTITION on one stage too: it must name all the layers.
    if (!settings.layer_partition.empty()) vllm_pp_partition(model.layer_count(), 1, settings.layer_partition);
    const Mxfp4Padding padding = mxfp4_padding(model, gpu, tp, r.rules);
    const std::uint64_t draft =
        settings.speculative ? draft_weights(*settings.speculative, model, model_dtype, settings, r.rules) : 0;
    r.budget = estimate_budget(
        served, gpu, settings,
        (Checked(ceil_div(checkpoint.bytes, tp), "weights") + padding.bytes + r.rotary->bytes + draft).value(), r,
        &r.rules);
    padding.record_in(r.budget);
    r.budget.draft_weights = draft;
    // num_blocks = avail // page // layers per block (get_num_blocks); every rank alike.
    r.num_blocks = r.budget.available > 0 ? static_cast<std::uint64_t>(r.budget.available) / block_bytes : 0;
    r.request_bytes = request_bytes_at(r, r.max_model_len, settings);
    VllmStage only;
    only.gpu = gpu.name;
    only.layers = model.layer_count();
    only.embedding = only.lm_head = true;
    only.weights = r.budget.weights;
    only.kv_bytes_per_token = r.kv_bytes_per_token;
    only.block_bytes = block_bytes;
    only.requested = r.budget.requested;
    only.available = r.budget.available;
    only.num_blocks = r.num_blocks;
    only.request_bytes = r.request_bytes;
    r.stages.push_back(only);
  } else {
    // Pipeline stages (get_kv_cache_configs): each worker sizes its own blocks from its memory and
    // its layers, then every worker gets the fewest any has. A hybrid's groups are formed over the
    // whole model and projected onto each worker (_project_kv_cache_groups_to_worker): a group
    // keeps its layers on that stage, an empty one stays a group, and the stage's blocks are its
    // available memory // page // the most layers any of its groups holds
    // (get_kv_cache_config_from_groups). From 0.11 a kind's layers are dealt to its groups in turn
    // (PR #23974) so that every stage holds a share of each.
    if (!r.uniform && settings.version == VllmVersion::v0_10)
      throw unsupported_architecture("vLLM profile: a hybrid layout (sliding-window, chunked or recurrent layers beside "
                                     "full attention) under pipeline parallelism on vLLM 0.10",
                                     "its groups were cut in runs, not dealt to the stages (PR #23974, 0.11): not modelled");
    if (std::any_of(model.layers.begin(), model.layers.end(), [](const LayerSpec& l) { return l.index_head_dim != 0; }))
      throw unsupported_architecture("vLLM profile: a DSA model (indexer caches beside the MLA latents) under pipeline "
                                     "parallelism",
                                     "each stage's share of the indexer caches is not modelled");
    // A KV-sharing layer reads an earlier layer's cache, which another stage may hold.
    if (std::any_of(model.layers.begin(), model.layers.end(), [](const LayerSpec& l) { return l.kind == LayerKind::shared; }))
      throw unsupported_architecture("vLLM profile: layers that share another layer's KV cache (Gemma 3n) under pipeline "
                                     "parallelism",
                                     "a stage may hold the sharing layers without the cache they read: not modelled");
    const std::vector<std::uint32_t> parts = vllm_pp_partition(model.layer_count(), settings.pipeline_parallel,
                                                               settings.layer_partition);
    const std::uint32_t block = r.groups.front().block_size;
    std::vector<Mxfp4Padding> stage_padding;  // of each stage's weights
    std::uint32_t first = 0;
    for (std::uint32_t s = 0; s < settings.pipeline_parallel; ++s) {
      VllmStage st;
      st.stage = s;
      st.gpu = card_of(s).name;
      st.first_layer = first;
      st.layers = parts[s];
      st.embedding = s == 0;
      st.lm_head = s + 1 == settings.pipeline_parallel;
      std::vector<VllmGroup>& projected = stage_groups.emplace_back(r.groups);
      for (VllmGroup& group : projected) group.layers = 0;
      for (std::uint32_t l = first; l < first + parts[s]; ++l) {
        st.kv_bytes_per_token = checked_add(st.kv_bytes_per_token, attention_bytes_per_token(model.layers[l], dtype, tp),
                                            "KV bytes per token");
        if (group_of[l] >= 0) ++projected[static_cast<std::size_t>(group_of[l])].layers;
      }
      first += parts[s];
      const std::uint32_t most =
          std::max_element(projected.begin(), projected.end(), [](const VllmGroup& a, const VllmGroup& b) {
            return a.layers < b.layers;
          })->layers;
      for (VllmGroup& group : projected) group.padding_layers = most - group.layers;
      st.block_bytes = r.uniform ? checked_mul(block, st.kv_bytes_per_token, "KV block")
                                 : checked_mul(r.page_bytes, most, "KV block");
      // Every layer of an mxfp4 model holds its experts: a stage pads its share of them.
      Mxfp4Padding& padding = stage_padding.emplace_back(mxfp4_padding(model, card_of(s), tp, r.rules));
      padding.bytes = static_cast<std::uint64_t>(
          ceil_div_wide(u128{padding.bytes} * st.layers, std::max(model.layer_count(), 1u)));
      st.weights = (Checked(ceil_div(stage_weights(model, checkpoint.bytes, *model_dtype.weights, st, settings.pipeline_parallel), tp),
                            "weights") +
                    padding.bytes + r.rotary->bytes)
                       .value();
      const VllmBudget b = estimate_budget(model, card_of(s), settings, st.weights, r, nullptr);
      st.requested = b.requested;
      st.available = b.available;
      // A stage without cache layers holds no blocks and bounds nothing.
      st.num_blocks = st.block_bytes == 0               ? std::numeric_limits<std::uint64_t>::max()
                      : b.available > 0 ? static_cast<std::uint64_t>(b.available) / st.block_bytes
                                        : 0;
      if (s == 0 || st.num_blocks < r.stages[r.decisive_stage].num_blocks) r.decisive_stage = s;
      r.stages.push_back(st);
    }
    const VllmStage& decisive = r.stages[r.decisive_stage];
    r.budget = estimate_budget(model, card_of(decisive.stage), settings, decisive.weights, r, &r.rules);
    stage_padding[decisive.stage].record_in(r.budget);
    r.num_blocks = decisive.num_blocks == std::numeric_limits<std::uint64_t>::max() ? 0 : decisive.num_blocks;
    r.kv_bytes_per_token = decisive.kv_bytes_per_token;
    // The decisive stage's view: its layers in the one group (a page of each, or one page of them all
    // when the layers differ in size); a hybrid's groups as projected onto it.
    if (!r.uniform) {
      r.groups = stage_groups[decisive.stage];
      r.layers_per_block = std::max<std::uint32_t>(stage_group_size(r.groups), 1);
      std::string per_stage;
      for (const std::vector<VllmGroup>& projected : stage_groups) {
        std::vector<std::uint32_t> counts;
        for (const VllmGroup& group : projected) counts.push_back(group.layers);
        per_stage += (per_stage.empty() ? "[" : " [") + join_counts(counts) + "]";
      }
      r.rules.push_back(fmt::format("the {} KV-cache groups projected onto each stage (_project_kv_cache_groups_to_worker), "
                                    "layers of each group: {}; a stage's block is a page x the most layers any of its "
                                    "groups holds",
                                    r.groups.size(), per_stage));
    } else if (r.layers_per_block == 1) {
      r.page_bytes = decisive.block_bytes;
    } else {
      r.layers_per_block = std::max<std::uint32_t>(static_cast<std::uint32_t>(decisive.block_bytes / r.page_bytes), 1);
    }
    if (r.uniform) r.groups.front().layers = decisive.layers;
    const std::string split = join_counts(parts);
    r.rules.push_back(settings.layer_partition.empty()
                          ? fmt::format("layers per stage [{}]: {} // {} each, the remainder one more on the stages before "
                                        "the last (get_pp_indices)",
                                        split, model.layer_count(), settings.pipeline_parallel)
                          : fmt::format("layers per stage [{}] (VLLM_PP_LAYER_PARTITION)", split));
    r.rules.push_back(fmt::format("ESTIMATE: a stage's weights are its share of the decoder layers, {}{}",
                                  model.embedding_params || model.hidden_size
                                      ? "the token embeddings on the first stage and the output head on the last"
                                      : "embeddings and head included (their size is not known: the first and last "
                                        "stages hold more than this)",
                                  model.parts.empty() ? "" : ", the vision/audio towers counted on every stage"));
    r.rules.push_back(fmt::format("every stage gets the fewest blocks any stage has: stage {} ({} blocks of {} B)",
                                  decisive.stage, format_thousands(r.num_blocks), format_thousands(decisive.block_bytes)));
  }
  if (r.model_dtype->name != model.weight_dtype->name) r.rules.push_back("weights: " + checkpoint.rule);
  r.rules.push_back(r.rotary->rule);

  const VllmStage& decisive = r.stages[r.decisive_stage];
  // get_kv_cache_config_from_groups: one tensor of num_blocks pages per layer slot of a group (the
  // group size), each shared by one layer of every group; the groups share the blocks, not add to them.
  r.cache_bytes = (Checked(r.num_blocks, "KV cache") * decisive.block_bytes).value();
  if (settings.version == VllmVersion::v0_21) {
    // As vLLM computes it, in floating point; clamped so that absurd inputs cannot overflow the cast.
    r.gpu_kv_cache_tokens = static_cast<std::uint64_t>(
        std::min(r.max_concurrency() * static_cast<double>(r.max_model_len), 1.8e19));
    r.rules.push_back(settings.decode_context_parallel > 1
                          ? "GPU KV cache size = int(max concurrency x max_model_len) (get_kv_cache_capacity): the tokens of "
                            "every rank's share, a request's blocks being its 1/dcp"
                          : "GPU KV cache size = int(max concurrency x max_model_len) (get_kv_cache_capacity)");
  } else {
    std::uint32_t smallest = r.groups.front().block_size;
    for (const VllmGroup& group : r.groups) smallest = std::min(smallest, group.block_size);
    // _report_kv_cache_config multiplies by the context-parallel world size (dcp x pcp) and logs
    // "Multiplying the GPU KV cache size by the cp_world_size".
    r.gpu_kv_cache_tokens = (Checked(r.num_blocks / r.groups.size(), "GPU KV cache size") * smallest *
                             settings.decode_context_parallel)
                                .value();
    r.rules.push_back(r.uniform ? "GPU KV cache size = blocks x block size"
                                : "GPU KV cache size = blocks // groups x smallest block size (not a context capacity "
                                  "for a hybrid model: read the concurrency)");
    if (settings.decode_context_parallel > 1)
      r.rules.back() += fmt::format(", x {} (the cp_world_size: _report_kv_cache_config counts every rank's share)",
                                    settings.decode_context_parallel);
  }

  if (settings.pipeline_parallel == 1) {
    r.starts = r.budget.available > 0 && r.request_bytes <= static_cast<std::uint64_t>(r.budget.available);
    if (r.budget.available > 0 && !r.starts) {
      // estimate_max_model_len: the longest request that fits.
      const auto available = static_cast<std::uint64_t>(r.budget.available);
      r.estimated_max_model_len =
          largest_holding(r.max_model_len, [&](std::uint64_t len) { return request_bytes_at(r, len, settings) <= available; })
              .value_or(0);
    }
    return r;
  }
  // _check_enough_kv_cache_memory, on every worker: one request on the stage's own layers (the
  // whole model's in 0.14 and 0.15).
  const VllmGroup& group = r.groups.front();
  const std::uint64_t whole = block_bytes;
  const auto stage_bytes = [&](const VllmStage& st, std::uint64_t len) {
    // A hybrid's request on the stage's projected groups (the whole model's in 0.14 and 0.15).
    if (!r.uniform) {
      if (settings.pp_whole_model_check) return request_bytes_of(whole_groups, whole_group_size, r, len, settings);
      const std::vector<VllmGroup>& projected = stage_groups[st.stage];
      return request_bytes_of(projected, stage_group_size(projected), r, len, settings);
    }
    return checked_mul(blocks_per_request(group, len, r.max_num_batched_tokens, settings),
                       settings.pp_whole_model_check ? whole : st.block_bytes, "request");
  };
  if (settings.pp_whole_model_check)
    r.rules.push_back("vLLM 0.14 / 0.15: the startup check counts one request of the WHOLE model against each stage's "
                      "memory (fixed in PR #33698)");
  bool any_empty = false;
  r.starts = true;
  for (VllmStage& st : r.stages) {
    st.request_bytes = stage_bytes(st, r.max_model_len);
    if (st.available <= 0) any_empty = true;
    else if (st.request_bytes > static_cast<std::uint64_t>(st.available)) r.starts = false;
  }
  r.request_bytes = r.stages[r.decisive_stage].request_bytes;
  if (any_empty) {
    r.starts = false;
    r.budget.available = std::min<std::int64_t>(r.budget.available, 0);
    return r;
  }
  if (!r.starts) {
    r.estimated_max_model_len = largest_holding(r.max_model_len, [&](std::uint64_t len) {
                                  for (const VllmStage& st : r.stages)
                                    if (stage_bytes(st, len) > static_cast<std::uint64_t>(st.available)) return false;
                                  return true;
                                }).value_or(0);
    for (const VllmStage& st : r.stages)
      if (st.request_bytes > static_cast<std::uint64_t>(st.available)) {
        r.request_bytes = st.request_bytes;
        break;
      }
  }
  return r;
}

}  // namespace

VllmResult plan_vllm(const ModelSpec& model, std::span<const GpuSpec> stage_cards, const VllmSettings& settings) {
  if (!settings.auto_fit_max_model_len) return plan_vllm_at_length(model, stage_cards, settings);
  // _auto_fit_max_model_len (kv_cache_utils.py, 0.14+) runs after profiling, so the memory is the
  // same at every length (nothing kvplan estimates before the cache depends on max_model_len). It
  // binary-searches, per worker, the longest length whose one request fits (the search the startup
  // check's suggestion uses), caps it at the derived maximum, and takes the minimum over workers.
  VllmSettings fixed = settings;
  fixed.auto_fit_max_model_len = false;
  VllmResult whole = plan_vllm_at_length(model, stage_cards, fixed);
  const std::uint64_t cap = whole.max_model_len;
  if (whole.starts) {
    whole.auto_fit = VllmAutoFit::model_max;
    whole.auto_fit_cap = cap;
    whole.rules.push_back(fmt::format("max_model_len -1: the model's whole length {} fits, kept (_auto_fit_max_model_len)",
                                      format_thousands(cap)));
    return whole;
  }
  const std::uint64_t longest = whole.budget.available > 0 ? whole.estimated_max_model_len.value_or(0) : 0;
  if (longest == 0) {
    // vLLM raises before its memory check: "Cannot auto-fit max_model_len: not enough GPU memory
    // available to serve even a single token".
    whole.auto_fit = VllmAutoFit::nothing_fits;
    whole.auto_fit_cap = cap;
    whole.rules.push_back("max_model_len -1: not even one token's request fits: vLLM raises \"Cannot auto-fit "
                          "max_model_len\" (_auto_fit_max_model_len)");
    return whole;
  }
  fixed.max_model_len = longest;
  VllmResult fitted = plan_vllm_at_length(model, stage_cards, fixed);
  fitted.auto_fit = VllmAutoFit::memory;
  fitted.auto_fit_cap = cap;
  fitted.rules.push_back(fmt::format("max_model_len -1: reduced from {} to {}, the longest whose one request fits {} "
                                     "(binary search, _auto_fit_max_model_len)",
                                     format_thousands(cap), format_thousands(longest),
                                     fitted.pipeline_parallel > 1 ? "every stage's memory" : "the available memory"));
  return fitted;
}

VllmUnmodelled vllm_unmodelled(const ModelSpec& model, std::span<const GpuSpec> cards, std::uint32_t tensor_parallel,
                               std::string* why) {
  if (!model.weight_dtype || model.weight_dtype->name != "mxfp4") return VllmUnmodelled::none;
  if (mxfp4_experts_padded(model))
    for (const GpuSpec& card : cards)
      if (VllmMxfp4Experts experts = vllm_mxfp4_experts(model, card, tensor_parallel); !experts.extra_bytes) {
        if (why) *why = std::move(experts.rule);
        return VllmUnmodelled::mxfp4_layout;
      }
  return VllmUnmodelled::none;
}

}  // namespace kvplan
