#include "engines/sglang/rules.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "engines/core/cache_cost.h"
#include "engines/core/serving.h"
#include "engines/core/state_split.h"
#include "model/checked.h"
#include "kvplan/error.h"
#include "kvplan/plan.h"
#include "kvplan/units.h"
#include "model/wide_int.h"

// Every rule names the SGLang source it follows (sgl-project/sglang, python/sglang/srt/;
// staging/engines/sglang.md has the commits, the versions and which rules were confirmed).
// SGLang computes its budget in Python floats; the arithmetic below does too, in the same order.

namespace kvplan {

namespace {

constexpr double kGiB = 1073741824.0;

/// total += bytes, checked: per-token sums over thousands of layers may pass 2^64.
void add_bytes(std::uint64_t& total, std::uint64_t bytes) { total = checked_add(total, bytes, "KV cache per token"); }

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  const std::int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

std::string gib(std::uint64_t bytes) { return format_gib(static_cast<std::int64_t>(bytes)); }

/// int(x) of a Python float, clamped to what 63 bits hold.
std::int64_t py_int(double x) {
  if (x >= 9.2e18) return std::numeric_limits<std::int64_t>::max();
  if (x <= -9.2e18) return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(x);  // truncation toward zero, as int() does
}

/// KV heads one of `tp` attention ranks holds: ModelConfig.get_num_kv_heads is max(1, heads // tp);
/// QKVParallelLinear splits the heads or replicates them, so the one must divide the other
/// (inferred: the layer's divide() assertions, as in vLLM, from which SGLang's linear.py comes).
std::uint64_t sglang_kv_heads(std::uint64_t heads, std::uint32_t tp) {
  if (heads >= tp) {
    if (heads % tp != 0)
      throw Error(fmt::format("--tp-size {}: SGLang splits the {} KV heads across the tensor-parallel ranks, so it must "
                              "divide them",
                              tp, heads));
    return heads / tp;
  }
  if (tp % heads != 0)
    throw Error(fmt::format("--tp-size {}: SGLang replicates the {} KV heads across the ranks, so the tensor-parallel "
                            "size must be a multiple of them",
                            tp, heads));
  return 1;
}

/// Architectures whose SGLang model enables the hybrid sliding-window pool (is_hybrid_swa): the
/// rules name Gemma 2/3, Command-R (cohere2), MiMo and gpt-oss. Others with sliding layers are
/// refused rather than guessed.
bool hybrid_swa_architecture(std::string_view arch) {
  for (const std::string_view known : {"gemma2", "gemma3", "gemma3_text", "cohere2", "gpt_oss", "mimo", "mimo_v2_flash"})
    if (arch == known) return true;
  return false;
}

/// The cache dtype SGLang uses and whether it has it (server_args.py --kv-cache-dtype choices:
/// auto, fp8_e5m2, fp8_e4m3, bf16/bfloat16, fp4_e2m1; auto = the model dtype, and for a DSA model
/// fp8_e4m3 on sm_100 and later, else bf16: _set_default_nsa_kv_cache_dtype).
struct CacheType {
  const Dtype* dtype = nullptr;
  std::string name;
  std::string torch;
  bool supported = true;
  std::string reason;
};

CacheType cache_type(const ModelSpec& model, const GpuSpec& gpu, const SglangSettings& s, bool dsa) {
  const Dtype& automatic = dsa ? parse_kv_dtype(compute_capability(gpu) >= 100 ? "fp8" : "bf16", *model.weight_dtype)
                               : parse_kv_dtype("auto", *model.weight_dtype);
  CacheType c;
  c.dtype = s.kv_dtype ? s.kv_dtype : &automatic;
  const std::string_view name = c.dtype->name;
  const bool given = s.kv_dtype != nullptr;
  const bool is_auto = !given || s.kv_dtype == &automatic;
  if (name == "fp8") c.name = "fp8_e4m3", c.torch = "torch.float8_e4m3fn";
  else if (name == "fp8_e5m2") c.name = "fp8_e5m2", c.torch = "torch.float8_e5m2";
  else if (name == "bf16") c.name = given ? "bf16" : "auto", c.torch = "torch.bfloat16";
  else if (name == "fp16") c.name = "auto", c.torch = "torch.float16";
  else if (name == "fp32") c.name = "auto", c.torch = "torch.float32";
  else if (name == "nvfp4") c.name = "fp4_e2m1", c.torch = "torch.float4_e2m1fn_x2";
  else c.name = std::string(name), c.torch = "";
  if (c.torch.empty()) {
    c.supported = false;
    c.reason = fmt::format("SGLang has no {} KV cache: --kv-cache-dtype takes auto, fp8_e4m3, fp8_e5m2, bf16 or "
                           "fp4_e2m1 (server_args.py), and it refuses {}",
                           name, name);
  } else if ((name == "fp16" || name == "fp32") && !is_auto) {
    c.supported = false;
    c.reason = fmt::format("SGLang's --kv-cache-dtype has no {} choice: auto caches at the model's dtype, {} here",
                           name, automatic.name);
  } else if (name == "nvfp4" && compute_capability(gpu) < 100) {
    c.supported = false;
    c.reason = fmt::format("SGLang's fp4_e2m1 KV cache needs a Blackwell GPU (sm_100 or later); {} is not one", gpu.name);
  }
  return c;
}

/// The page size: --page-size (default 1), unless the attention backend forces one
/// (server_args.py _handle_page_size / arg_groups overrides _mla_backend_page_constraints).
std::uint32_t page_size(const SglangSettings& s, const GpuSpec& gpu, bool mla, bool dsa, std::vector<std::string>& rules) {
  const std::uint32_t chosen = s.page_size ? s.page_size : 1;
  const std::string& backend = s.attention_backend;
  // DeepSeek DSA models (V3.2, GLM-5) on CUDA: server_args sets page_size = 64 whatever was asked
  // (_handle_model_specific_adjustments, "Setting page size to 64 for DeepSeek DSA."), in every
  // release that runs them; ROCm's legacy path 1 is not modelled here.
  if (dsa && compute_capability(gpu) > 0 && backend != "ascend") {
    if (s.words)
      rules.push_back(fmt::format("page size 64: SGLang sets it for DSA models on CUDA{}",
                                  s.page_size && s.page_size != 64 ? " (--page-size ignored)" : ""));
    return 64;
  }
  std::uint32_t forced = 0;
  if (backend == "flashmla") forced = 64;
  else if (backend == "cutlass_mla") forced = 128;
  else if (backend == "ascend") forced = 128;
  else if (backend == "trtllm_mla") forced = chosen == 32 || chosen == 64 ? chosen : 64;
  else if (backend == "trtllm_mha") forced = chosen == 16 || chosen == 32 || chosen == 64 ? chosen : 64;
  if ((backend == "flashmla" || backend == "cutlass_mla" || backend == "trtllm_mla") && !mla)
    throw Error(fmt::format("--attention-backend {}: an MLA backend, for DeepSeek-style models; this model has no MLA "
                            "layers",
                            backend));
  if (backend == "trtllm_mla" && compute_capability(gpu) < 100)
    throw Error(fmt::format("--attention-backend trtllm_mla: SGLang runs it on Blackwell only; {} is sm_{}", gpu.name,
                            compute_capability(gpu)));
  if (forced) {
    if (s.words)
      rules.push_back(fmt::format("page size {}: the {} attention backend forces it{}", forced, backend,
                                s.page_size && s.page_size != forced ? " (--page-size ignored)" : ""));
    return forced;
  }
  if (s.words)
    rules.push_back(s.page_size ? fmt::format("page size {} (--page-size)", chosen)
                                : "page size 1 (SGLang's default; no --attention-backend that forces one)");
  return chosen;
}

/// Decoder layers of pipeline stage `stage` (distributed/utils.py get_pp_indices): L // pp each,
/// the remainder one more on each of the LAST stages. SGLANG_PP_LAYER_PARTITION is not modelled.
std::pair<std::uint32_t, std::uint32_t> stage_layers(std::uint32_t layers, std::uint32_t stage, std::uint32_t pp) {
  const std::uint32_t base = layers / pp;
  const std::uint32_t extra = layers % pp;
  std::uint32_t first = 0;
  for (std::uint32_t s = 0; s < stage; ++s) first += base + (s >= pp - extra ? 1 : 0);
  return {first, base + (stage >= pp - extra ? 1 : 0)};
}

/// The model's cache layout under SGLang, refused where the profile does not model it.
SglangResult::Layout layout_of(const ModelSpec& model, const SglangSettings& s) {
  bool full = false, sliding = false, mla = false, indexer = false, linear = false;
  std::uint32_t mla_layers = 0, indexer_layers = 0;
  for (const LayerSpec& layer : model.layers) {
    switch (layer.kind) {
      case LayerKind::full: full = true; break;
      case LayerKind::sliding: sliding = true; break;
      case LayerKind::mla:
        mla = true;
        ++mla_layers;
        if (layer.index_head_dim) ++indexer_layers, indexer = true;
        break;
      case LayerKind::linear: linear = true; break;
      case LayerKind::none: break;
      case LayerKind::chunked:
        throw unsupported_architecture("SGLang profile: chunked local attention (Llama 4's attention_chunk_size)",
                                       "not modelled");
      case LayerKind::shared:
        throw unsupported_architecture("SGLang profile: layers that read an earlier layer's cache (KV sharing)",
                                       "not modelled");
      case LayerKind::cross:
        throw unsupported_architecture("SGLang profile: cross-attention layers (Llama 3.2 Vision)", "not modelled");
    }
    if (layer.kind != LayerKind::linear && !layer.state.empty())
      throw unsupported_architecture("SGLang profile: attention with recurrent state in the same layer (Falcon-H1)",
                                     "not modelled");
  }
  if (mla && (full || sliding))
    throw unsupported_architecture("SGLang profile: MLA beside other attention layers", "not modelled");
  if (indexer && indexer_layers != mla_layers)
    throw unsupported_architecture("SGLang profile: a DSA indexer on only some layers (a shared indexer)", "not modelled");
  if (linear) {
    if (sliding) throw unsupported_architecture("SGLang profile: recurrent layers beside sliding-window ones", "not modelled");
    if (indexer) throw unsupported_architecture("SGLang profile: recurrent layers beside a DSA indexer", "not modelled");
    if (s.pp > 1)
      throw unsupported_architecture("SGLang profile: the Mamba / Gated DeltaNet pool with --pp-size > 1", "not modelled");
    return SglangResult::Layout::mamba;
  }
  if (sliding) {
    if (!hybrid_swa_architecture(model.architecture))
      throw unsupported_architecture(
          fmt::format("SGLang profile: sliding-window layers of a '{}' model (SGLang's hybrid SWA pool is known for "
                      "gemma2, gemma3, cohere2, gpt_oss and MiMo only)",
                      model.architecture),
          "not modelled");
    if (s.pp > 1)
      throw unsupported_architecture("SGLang profile: the hybrid SWA pool with --pp-size > 1", "not modelled");
    return SglangResult::Layout::swa;
  }
  if (indexer) return SglangResult::Layout::dsa;
  if (mla) return SglangResult::Layout::mla;
  if (!full) throw unsupported_architecture("SGLang profile: a model without attention layers", "not modelled");
  return SglangResult::Layout::mha;
}

/// The Mamba state of one request on one layer of one of `tp` ranks at SGLang's dtypes: conv state
/// at the model dtype, the temporal (SSM) state at --mamba-ssm-dtype, float32 by default
/// (server_args.py, confirmed); each rank's share as Mamba2StateShape.create and
/// KimiLinearStateShape.create split it (configs/mamba_utils.py, read at 02e208de: vLLM's rule,
/// heads divided, a single group replicated; state_split.h).
std::uint64_t mamba_layer_bytes(const LayerSpec& layer, std::uint32_t tp) {
  std::uint64_t bytes = 0;
  for (const StateTensor& tensor : layer.state) {
    const bool temporal = tensor.name != "conv";
    const Dtype& dtype = temporal ? parse_weight_dtype("fp32") : *tensor.dtype;
    const std::uint64_t elements = state_elements_per_rank(tensor, tp, "--tp-size");
    bytes = checked_add(bytes, checked_mul(ceil_div(elements, dtype.block_elements), dtype.block_bytes, "state"), "state");
  }
  return bytes;
}

/// Bytes per token per rank of one stage's layers (get_cell_size_per_token /
/// DefaultPoolConfigurator._compute_cell_size).
SglangStage stage_cells(const ModelSpec& model, const SglangSettings& s, const CacheType& c, SglangResult::Layout layout,
                        std::uint32_t first, std::uint32_t count) {
  SglangStage st;
  st.first_layer = first;
  st.layers = count;
  const Dtype& dtype = *c.dtype;
  const bool fp4 = dtype.name == "nvfp4";
  const bool fp8 = dtype.block_bytes == 1 && dtype.block_elements == 1;
  std::uint32_t full_layers = 0;
  std::uint64_t fp4_heads = 0, fp4_k = 0, fp4_v = 0;
  for (std::uint32_t i = first; i < first + count; ++i) {
    const LayerSpec& layer = model.layers[i];
    switch (layer.kind) {
      case LayerKind::full:
      case LayerKind::sliding: {
        const std::uint64_t n = sglang_kv_heads(layer.kv_heads, s.tp);
        if (fp4) {
          if (layout != SglangResult::Layout::mha)
            throw unsupported_architecture("SGLang profile: an fp4_e2m1 cache beside sliding or recurrent layers",
                                           "not modelled");
          if (full_layers && (n != fp4_heads || layer.k_head_dim != fp4_k || layer.v_head_dim != fp4_v))
            throw unsupported_architecture("SGLang profile: an fp4_e2m1 cache over layers of different shapes",
                                           "not modelled");
          fp4_heads = n, fp4_k = layer.k_head_dim, fp4_v = layer.v_head_dim;
          ++full_layers;
          break;
        }
        const std::uint64_t k = dtype_bytes(dtype, n * layer.k_head_dim);
        const std::uint64_t v = dtype_bytes(dtype, n * layer.v_head_dim);
        add_bytes(st.k_bytes_per_token, k);
        add_bytes(st.v_bytes_per_token, v);
        add_bytes(layer.kind == LayerKind::sliding ? st.swa_bytes_per_token : st.full_bytes_per_token, checked_add(k, v, "KV cache per token"));
        break;
      }
      case LayerKind::mla: {
        // The latent (kv_lora_rank + qk_rope_head_dim), whole on every rank.
        const std::uint64_t latent = layer.k_head_dim;
        if (fp4) {
          if (layout != SglangResult::Layout::mla)
            throw unsupported_architecture("SGLang profile: an fp4_e2m1 cache with a DSA indexer or recurrent layers",
                                           "not modelled");
          // cell // 2 + (latent // 16) x kv_size per layer, kv_size 1 (MLA fp4 branch).
          add_bytes(st.k_bytes_per_token, latent / 2 + latent / 16);
          add_bytes(st.pool_bytes_per_token, latent / 2 + latent / 16);
          break;
        }
        if (layout == SglangResult::Layout::dsa && fp8) {
          // NSATokenToKVPool's fp8 layout (calculate_mla_kv_cache_dim): kv_lora_rank fp8 values,
          // an fp32 scale per 128 of them, the rope part in bf16: 512 + 16 + 128 = 656 B.
          const std::uint64_t rank = layer.k_head_dim - layer.mla_rope_dim;
          if (rank % 128 != 0)
            throw unsupported_architecture("SGLang profile: a DSA latent rank that is not a multiple of 128", "not modelled");
          const std::uint64_t pool = rank + rank / 128 * 4 + layer.mla_rope_dim * 2;
          // Before 0.5.16 the profiling cell still counts kv_lora_rank + rope at 1 B.
          add_bytes(st.k_bytes_per_token, s.version.configurator() ? pool : latent);
          add_bytes(st.pool_bytes_per_token, pool);
        } else {
          add_bytes(st.k_bytes_per_token, dtype_bytes(dtype, latent));
          add_bytes(st.pool_bytes_per_token, dtype_bytes(dtype, latent));
        }
        if (layer.index_head_dim) {
          // The indexer key: fp8 values + an fp32 scale per 128, uint8 whatever the cache dtype.
          add_bytes(st.indexer_bytes_per_token, std::uint64_t{layer.index_head_dim} + layer.index_head_dim / 128 * 4);
        }
        break;
      }
      case LayerKind::linear: add_bytes(st.mamba_bytes_per_request, mamba_layer_bytes(layer, s.tp)); break;
      default: break;
    }
  }
  if (fp4 && full_layers) {
    // MHA fp4 (get_cell_size_per_token): cell // 2 + (n x head_dim x L x 2 x kv_size) // 16 with
    // kv_size 1, and from 0.5.16 one shared fp8 dequant workspace of n x head_dim x 2 x kv_size.
    const char* what = "KV cache per token";
    const std::uint64_t cell = (Checked(fp4_heads, what) * (Checked(fp4_k, what) + fp4_v) * full_layers).value();
    st.k_bytes_per_token = (Checked(cell / 2, what) + (Checked(fp4_heads, what) * fp4_k * full_layers * 2).value() / 16 +
                            (s.version.configurator() ? (Checked(fp4_heads, what) * fp4_k * 2).value() : 0))
                               .value();
    st.full_bytes_per_token = st.k_bytes_per_token;
  }
  if (layout == SglangResult::Layout::mha || layout == SglangResult::Layout::swa || layout == SglangResult::Layout::mamba) {
    // Only the attention layers hold tokens; a Mamba model's MLA layers (Kimi Linear) add their latent to K.
    st.cell_bytes = fp4 ? st.k_bytes_per_token : checked_add(st.k_bytes_per_token, st.v_bytes_per_token, "KV cache per token");
    st.pool_bytes_per_token = st.cell_bytes;
  } else {
    st.cell_bytes = checked_add(st.k_bytes_per_token, st.indexer_bytes_per_token, "KV cache per token");
    add_bytes(st.pool_bytes_per_token, st.indexer_bytes_per_token);
  }
  return st;
}


/// What every draft's result starts from: the speculative setup and the pool cell of its layers.
SglangDraftResult draft_result(const SglangSpeculative& spec, SglangSpeculativeEra era, const SglangStage& cells) {
  SglangDraftResult d;
  d.algorithm = spec.name;
  d.era = era;
  d.num_steps = spec.num_steps, d.eagle_topk = spec.eagle_topk, d.num_draft_tokens = spec.num_draft_tokens;
  d.slots_per_request = spec.slots_per_request();
  d.headroom_slots_per_request = d.slots_per_request;
  d.cell_bytes = cells.cell_bytes;
  d.k_bytes_per_token = cells.k_bytes_per_token;
  d.v_bytes_per_token = cells.v_bytes_per_token;
  if (cells.indexer_bytes_per_token) {
    // A DSA layer: the latent as NSATokenToKVPool allocates it (the fp8 layout's 656 B, which
    // 0.5.x's profiling cell counts as 576) and the indexer key beside it.
    d.indexer_bytes_per_token = cells.indexer_bytes_per_token;
    d.k_bytes_per_token = cells.pool_bytes_per_token - cells.indexer_bytes_per_token;
  }
  return d;
}

/// The target's own MTP layers as SGLang drafts with them (NEXTN): DeepseekV3ForCausalLMNextN
/// (Glm4MoeForCausalLMNextN) builds num_nextn_predict_layers decoder layers, and the draft's pool
/// holds that many layers at the target's cell: MLA latents for DeepSeek (model_runner.py:
/// num_nextn_predict_layers for a draft worker, the MLA branch since May 2025), grouped-query K and
/// V for GLM-4.5 (the same since PR #8482, merged 2025-07-29: before it the pool took all the
/// target's layers, so 0.4.10, which it may or may not be in, is refused). Its weights are the
/// checkpoint's MTP layers as counted (their embedding and head copies included: built, then
/// swapped for the target's after the pools), eh_proj whole on every rank and the rest split.
/// DeepSeek-V3.2's and GLM-5's (DSA) draft the same way on an NSATokenToKVPool of their MTP layer
/// (model_runner's NSA branch, layer_num = the draft's num_nextn_predict_layers): its latent as
/// allocated and its indexer key. MiMo's (all layers before #8482, its layer count not read) and
/// the hybrids' (Qwen3-Next, Qwen3.5: they share the target's state pool, whose speculative
/// buffers changed across 2026) are not modelled; none was checked on a log.
SglangDraftResult mtp_draft_beside(const SglangSpeculative& spec, SglangSpeculativeEra era, const SglangSettings& s,
                                   const CacheType& cache, const ModelSpec& target) {
  const std::string target_name = target.id.empty() ? target.name : target.id;
  if (target.mtp_layers == 0) {
    if (spec.name == "EAGLE" && !spec.draft)
      throw Error(fmt::format("--speculative-algorithm EAGLE needs --speculative-draft-model-path: the draft checkpoint "
                              "(an EAGLE head); {} has no MTP layers for SGLang to draft with",
                              target_name));
    throw Error(fmt::format("--speculative-algorithm {}: {} declares no MTP layers (num_nextn_predict_layers) to draft "
                            "with; give an EAGLE or EAGLE-3 head instead",
                            spec.name, target_name));
  }
  // DeepSeek-V3.2 and GLM-5 (DSA) draft as DeepseekV3ForCausalLMNextN too, on the NSA pool.
  const bool dsa = target.architecture == "deepseek_v32" || target.architecture == "glm_moe_dsa";
  const bool deepseek = target.architecture == "deepseek_v3" || dsa;
  const bool glm = target.architecture == "glm4_moe";
  if (!deepseek && !glm)
    throw unsupported_architecture(
        fmt::format("SGLang profile: --speculative-algorithm {} with the MTP layers of '{}' (DeepSeek-V3/R1's, "
                    "deepseek_v3, DeepSeek-V3.2's and GLM-5's, deepseek_v32 and glm_moe_dsa, and GLM-4.5's, glm4_moe, "
                    "are modelled: the other families' draft pools were not checked)",
                    spec.name, target.architecture),
        "not modelled");
  if (glm && s.version.number < 5000)
    throw unsupported_architecture(
        fmt::format("SGLang profile: --speculative-algorithm {} with GLM-4.5's MTP layer under SGLang {}: PR #8482 "
                    "(merged 2025-07-29), which cut the draft's pool from all the target's layers to one, may or may "
                    "not be in it; give --sglang-version 0.5.0 or later",
                    spec.name, to_string(s.version)),
        "not modelled");
  // DSA targets come here from 0.5.8 only: plan_sglang refuses them before (DP attention).
  if (spec.draft) {
    const ModelSpec& named = spec.draft->spec;
    if (named.architecture != target.architecture || named.layer_count() != target.layer_count() ||
        named.mtp_layers != target.mtp_layers)
      throw unsupported_architecture(
          fmt::format("SGLang profile: --speculative-algorithm {} with a draft ({}) that is not {}'s own checkpoint (a "
                      "separately exported NextN model is not modelled; give the served model's path, or none)",
                      spec.name, named.id.empty() ? named.name : named.id, target_name),
          "not modelled");
  }
  if (!target.mtp_weights_bytes)
    throw unsupported_architecture(
        fmt::format("SGLang profile: --speculative-algorithm {}: the weights of {}'s MTP layers are not known (kvplan "
                    "counts them from the checkpoint's config.json, or the catalog entry built from it)",
                    spec.name, target_name),
        "not modelled");
  const LayerSpec* layer = mtp_cache_layer(target);
  const LayerKind kind = deepseek ? LayerKind::mla : LayerKind::full;
  if (!layer || layer->kind != kind)
    throw unsupported_architecture(fmt::format("SGLang profile: {}'s MTP layers are not {} layers", target_name, to_string(kind)),
                                   "not modelled");
  // SGLang's auto choice (server_args.py auto_choose_speculative_params): (3, 1, 4) for DeepSeek
  // from mid-2025; GLM is not in 0.5.x's list of (3, 1, 4) architectures, so the (5, 4, 8) every
  // other draft gets, until 2026's _auto_choose_speculative_params gives it (3, 1, 4) too.
  // GLM-5 (GlmMoeDsaForCausalLM) is not in 0.5.x's list either.
  SglangSpeculative listed_choice = spec;  // what SGLang picks for the architectures in its list
  listed_choice.num_steps = 3, listed_choice.eagle_topk = 1, listed_choice.num_draft_tokens = 4;
  SglangSpeculative chosen = spec;
  if (spec.auto_chosen) {
    if ((deepseek && target.architecture != "glm_moe_dsa") || s.version.configurator()) chosen = listed_choice;
    else chosen.num_steps = 5, chosen.eagle_topk = 4, chosen.num_draft_tokens = 8;
  }
  ModelSpec drafted = target;
  drafted.layers.assign(target.mtp_layers, *layer);
  SglangDraftResult d = draft_result(
      chosen, era,
      stage_cells(drafted, s, cache,
                  dsa ? SglangResult::Layout::dsa : deepseek ? SglangResult::Layout::mla : SglangResult::Layout::mha, 0,
                  target.mtp_layers));
  d.own_layers = true;
  // GLM-4.5's choice to 0.5.6 is read from a secondary quote: the headroom counts the fewer slots.
  if (glm && spec.auto_chosen && era == SglangSpeculativeEra::headroom)
    d.headroom_slots_per_request = std::min(d.slots_per_request, listed_choice.slots_per_request());
  d.kind = kind;
  d.name = fmt::format("{}'s MTP layer{}", target_name, target.mtp_layers == 1 ? "" : "s");
  d.layers = target.mtp_layers;
  d.weights = *mtp_weights_per_rank(target, s.tp);
  return d;
}

/// The draft beside the target (speculative.h): its layers' cell per rank at the target's cache
/// dtype, and its weights per rank as SGLang builds it: every tensor of the checkpoint, its own
/// embeddings (and an EAGLE head's lm_head) included (LlamaForCausalLMEagle3 and
/// LlamaForCausalLMEagle build them, then take the target's in their place after the pools:
/// counted, the peak "Load weight end" prints), and an EAGLE-3 head's token maps (d2t int64 a
/// draft token, t2d bool a target token). Split over the ranks as the target (an estimate).
SglangDraftResult draft_beside(const SglangSpeculative& spec, SglangSpeculativeEra era, const SglangSettings& s,
                               const CacheType& cache) {
  const ModelSpec& draft = spec.draft->spec;
  if (layout_of(draft, s) != SglangResult::Layout::mha)
    throw unsupported_architecture(fmt::format("SGLang profile: a draft ({}) with other than full-attention layers", draft.name),
                                   "not modelled");
  SglangDraftResult d =
      draft_result(spec, era, stage_cells(draft, s, cache, SglangResult::Layout::mha, 0, draft.layer_count()));
  d.name = draft.id.empty() ? draft.name : draft.id;
  for (const LayerSpec& layer : draft.layers)
    if (layer.kind == LayerKind::full) ++d.layers;
  std::uint64_t bytes = estimate_weights(draft, nullptr).bytes;
  if (spec.algorithm == SglangSpeculative::Algorithm::eagle3) {
    const std::uint64_t draft_vocab = draft.hidden_size ? draft.lm_head_params / draft.hidden_size : 0;
    bytes = (Checked(bytes, "draft weights") + checked_mul(draft_vocab, 8, "draft weights") + draft.vocab_size).value();
  }
  d.weights = ceil_div(bytes, s.tp);
  return d;
}

/// How SGLang lowers the fraction for a model with a vision encoder. 0.4.10 on
/// (ServerArgs.adjust_mem_fraction_for_vlm, then memory_hook.py): the DEFAULT fraction x 0.95 x
/// clamp(1 - 0.1 x (layers x hidden^2 / (24 x 1024^2) - 1), 0.8, 1.05), the encoder's
/// num_hidden_layers and hidden_size as its vision_config gives them; a given fraction is kept.
/// Before (ModelRunner.__init__), any fraction x 0.95; kvplan takes the lower of the two rules
/// there, since where the move fell among 0.4.x releases was not read.
struct VlmFraction {
  double factor = 1.0;
  std::string rule;
  std::string assumption;
};
VlmFraction vlm_fraction(const ModelSpec::VisionEncoder& encoder, bool fraction_is_default, SglangVersion version) {
  VlmFraction v;
  const bool known = encoder.layers && encoder.hidden_size;
  const double hidden = static_cast<double>(encoder.hidden_size);
  const double ratio = known ? static_cast<double>(encoder.layers) * hidden * hidden / (24.0 * 1024 * 1024) : 0;
  const double adjustment = known ? std::clamp(1.0 - 0.1 * (ratio - 1.0), 0.8, 1.05) : 0.8;
  const std::string encoder_words =
      known ? fmt::format("its vision encoder of {} layers x {}", encoder.layers, encoder.hidden_size)
            : "its vision encoder's size not stated: the smallest factor, 0.8";
  if (!known)
    v.assumption = "the vision_config states no num_hidden_layers or hidden_size: SGLang's adjustment for a multimodal "
                   "model is taken at its smallest (0.95 x 0.8), which never promises more than SGLang gives; give "
                   "--mem-fraction-static (the value SGLang logs) to be exact";
  if (version.mfs_generation() == 1) {
    v.factor = 0.95 * std::min(1.0, adjustment);
    v.rule = fmt::format(" x {:.4f} (a multimodal model: 0.95 on any fraction to 0.4.9, x {:.4f} for {}; the lower taken)",
                         v.factor, std::min(1.0, adjustment), encoder_words);
    return v;
  }
  if (!fraction_is_default) return v;
  v.factor = 0.95 * adjustment;
  v.rule = fmt::format(" x 0.95 x {:.4f} = {:.4f} (a multimodal model, adjust_mem_fraction_for_vlm: {})", adjustment, v.factor,
                       encoder_words);
  return v;
}

/// What the figures take for granted, in words (estimates and inferred rules).
SglangResult finish_assumptions(SglangResult& r, const ModelSpec& model, const SglangSettings& s, const SglangBudget& b,
                                const GpuSpec& smallest_gpu, bool mla, const CacheType& cache) {
  const GpuSpec* smallest = &smallest_gpu;
  const std::uint32_t world = s.tp * s.pp;
  if (!s.kv_dtype && model.checkpoint_kv_dtype && cache.dtype->name != model.checkpoint_kv_dtype->name)
    r.assumptions.push_back(fmt::format("the checkpoint declares an {} KV cache (kv_cache_quant_algo): SGLang's "
                                        "--kv-cache-dtype auto takes an FP8 one for ModelOpt NVFP4 checkpoints, and for "
                                        "FP8 ones in newer releases; this row prices auto at {}: give --kv-dtype {} for "
                                        "the former",
                                        model.checkpoint_kv_dtype->name, cache.dtype->name, model.checkpoint_kv_dtype->name));
  if (!b.before_measured || !b.after_measured)
    r.assumptions.push_back(fmt::format("ESTIMATE: free memory before load = the CUDA total {}{} - 0.5 GiB CUDA context{}{}, "
                                        "after = before - the weights per rank (loader temporaries not counted); give "
                                        "--sglang-free-before-load / --sglang-free-after-load from SGLang's 'Load weight "
                                        "begin/end. avail mem' lines to make #tokens exact",
                                        gib(b.cuda_total), b.cuda_total_known ? "" : " (the driver's total less 0.46 GiB)",
                                        world > 1 ? " - 2 GiB NCCL (as record S4 showed at TP 8)" : "",
                                        s.co_tenant_bytes ? " - " + gib(s.co_tenant_bytes) + " held by other processes" : ""));
  if (b.mfs_default && smallest->memory_basis != "driver-reported")
    r.assumptions.push_back("ESTIMATE: SGLang's default --mem-fraction-static reads nvidia-smi's total; this card's "
                            "memory is not the driver's figure");
  if (b.mfs_default && s.version.configurator())
    r.assumptions.push_back("the default --mem-fraction-static follows the 0.5.4+ heuristic with 0.5.10's piecewise "
                            "CUDA-graph sizes; 2026 main (arg_groups/memory_hook.py) reserves for CUDA graphs in a way "
                            "kvplan does not know exactly: give --mem-fraction-static to be exact");
  else if (b.mfs_default && s.version.number >= 5010 && s.piecewise_cuda_graph)
    r.assumptions.push_back("the default --mem-fraction-static reserves 8 MiB for each piecewise CUDA-graph capture "
                            "size, counted on the longer of the two size lists SGLang's releases have used (never less "
                            "than SGLang reserves; models it turns the graphs off for reserve none): give "
                            "--mem-fraction-static to be exact");
  if (s.pp > 1)
    r.assumptions.push_back("ESTIMATE: each stage's weights are its share of the layers (the embeddings on the first "
                            "stage and the output head on the last are spread evenly)");
  if (s.tp > 1)
    r.assumptions.push_back("every tensor-parallel rank alike: KV heads split (replicated below one a rank), the MLA "
                            "latent whole on every rank");
  if (r.layout == SglangResult::Layout::dsa)
    r.assumptions.push_back(cache.dtype->name == "fp8"
                                ? fmt::format("DSA fp8 layout: 656 B a layer as allocated (NSATokenToKVPool){}; the "
                                              "indexer key 132 B a layer, its pool taken as #tokens + page rows",
                                              s.version.configurator() ? "" : ", but 0.5.x budgets 576 B (it undercounts)")
                                : "DSA: the indexer key 132 B a layer beside the latent; its pool taken as #tokens + "
                                  "page rows");
  if (r.layout == SglangResult::Layout::swa)
    r.assumptions.push_back("the two SWA pools print one 'KV Cache is allocated' line each (order not confirmed); a "
                            "request holds min(ctx, window + chunked prefill) tokens in the sliding pool (inferred)");
  if (r.layout == SglangResult::Layout::mamba)
    r.assumptions.push_back(s.version.configurator()
                                ? "Mamba: 0.5.16+ request ratio taken as 5 (the most its constants add to): the cap may "
                                  "be higher (inferred, not confirmed)"
                                : "Mamba: the radix cache on and no extra Mamba buffer (request ratio 3)");
  if (r.draft)
    r.assumptions.push_back(fmt::format(
        "speculative decoding: each running request holds {} pool slots beyond its tokens (steps x topk + draft "
        "tokens, inferred from eagle_worker.py); the draft's weights are estimated{}; the era's release boundaries "
        "are dated by merge date, not by tags",
        r.draft->slots_per_request,
        r.draft->era == SglangSpeculativeEra::inside ? " and counted against the budget (PR #28855)" : " and paid from the headroom"));
  if (s.attention_backend.empty() && mla && compute_capability(*smallest) >= 100)
    r.assumptions.push_back("no --attention-backend: page size 1; on Blackwell SGLang may pick trtllm_mla, which "
                            "forces 64 (give --attention-backend)");
  return std::move(r);
}

}  // namespace

std::optional<std::string> sglang_cache_refusal(const ModelSpec& model, const std::vector<GpuSpec>& gpus,
                                               const SglangSettings& s) {
  if (gpus.empty()) return std::nullopt;
  CacheType cache = cache_type(model, smallest_card(gpus), s, layout_of(model, s) == SglangResult::Layout::dsa);
  if (cache.supported) return std::nullopt;
  return std::move(cache.reason);
}

SglangResult plan_sglang(const ModelSpec& model, const std::vector<GpuSpec>& gpus, const SglangSettings& s) {
  if (s.tp == 0 || s.pp == 0) throw Error("--tp-size and --pp-size must be at least 1");
  const std::uint32_t world = s.tp * s.pp;
  if (gpus.size() != world) throw Error(fmt::format("SGLang runs on tp x pp = {} GPUs; {} were given", world, gpus.size()));
  if (s.pp > model.layer_count())
    throw Error(fmt::format("--pp-size {}: more pipeline stages than the model's {} layers", s.pp, model.layer_count()));
  SglangResult r;
  r.tp = s.tp;
  r.pp = s.pp;
  r.context_length = s.context_length ? s.context_length : model.max_context;
  if (r.context_length == 0) throw Error("--context-length is required: the model does not state its trained context");
  if (s.words)
    r.rules.push_back(fmt::format("SGLang {} rules, --tp-size {} --pp-size {}: figures are per GPU", to_string(s.version),
                                  s.tp, s.pp));

  const GpuSpec* smallest = &smallest_card(gpus);
  r.layout = layout_of(model, s);
  // From its first DSA support SGLang forced DP attention for DeepSeek NSA models on CUDA
  // (dp_size = tp_size: the attention weights whole on every GPU) until PR #16305 (merged
  // 2026-01-02) left it off; kvplan does not model DP attention, and 0.5.7 may predate the change.
  if (r.layout == SglangResult::Layout::dsa && s.version.number < 5008)
    throw unsupported_architecture(
        fmt::format("SGLang profile: DSA models (DeepSeek-V3.2) under SGLang {}: it enables DP attention for them on "
                    "CUDA (dp_size = tp_size) until PR #16305 (merged 2026-01-02), which kvplan does not model; give "
                    "--sglang-version 0.5.8 or later",
                    to_string(s.version)),
        "not modelled");
  const bool mla = r.layout == SglangResult::Layout::mla || r.layout == SglangResult::Layout::dsa;
  // One latent buffer a layer (MLATokenToKVPool), also for a Mamba model's MLA layers.
  const bool latent = std::any_of(model.layers.begin(), model.layers.end(),
                                  [](const LayerSpec& layer) { return layer.kind == LayerKind::mla; });
  const CacheType cache = cache_type(model, *smallest, s, r.layout == SglangResult::Layout::dsa);
  r.dtype = cache.dtype;
  r.kv_dtype = cache.name;
  r.torch_dtype = cache.torch;
  r.dtype_supported = cache.supported;
  r.dtype_reason = cache.reason;
  r.page_size = page_size(s, *smallest, latent, r.layout == SglangResult::Layout::dsa, r.rules);
  const std::uint32_t page = r.page_size;
  std::optional<SglangSpeculativeEra> era;
  if (s.speculative) {
    era = sglang_speculative_era(s.version, s.speculative->name);
    const bool dsa_mtp = r.layout == SglangResult::Layout::dsa && s.speculative->algorithm == SglangSpeculative::Algorithm::nextn;
    if (r.layout != SglangResult::Layout::mha && r.layout != SglangResult::Layout::mla && !dsa_mtp)
      throw unsupported_architecture("SGLang profile: a speculative draft beside sliding-window or recurrent layers, or "
                                     "another draft than the model's own MTP layer beside DSA layers",
                                     "not modelled");
    if (s.pp > 1) throw unsupported_architecture("SGLang profile: a speculative draft with --pp-size > 1", "not modelled");
    r.draft = s.speculative->algorithm == SglangSpeculative::Algorithm::nextn
                  ? mtp_draft_beside(*s.speculative, *era, s, cache, model)
                  : draft_beside(*s.speculative, *era, s, cache);
  }

  // Pipeline stages and what each rank of a stage holds.
  const WeightsEstimate weights = estimate_weights(model, nullptr);
  for (std::uint32_t stage = 0; stage < s.pp; ++stage) {
    const auto [first, count] = stage_layers(model.layer_count(), stage, s.pp);
    SglangStage st = stage_cells(model, s, cache, r.layout, first, count);
    st.stage = stage;
    st.weights = ceil_div(static_cast<std::uint64_t>(static_cast<u128>(weights.bytes) * count / model.layer_count()), s.tp);
    if (st.cell_bytes == 0) throw unsupported_architecture("SGLang profile: a pipeline stage without attention layers", "not modelled");
    r.stages.push_back(st);
  }
  if (s.pp > 1 && s.words)
    r.rules.push_back(fmt::format("pipeline stages of {} layers: {} each, the remainder one more on the last stages "
                                  "(get_pp_indices)",
                                  model.layer_count(), model.layer_count() / s.pp));

  // The budget: MIN over all ranks of the free memory before and after loading.
  SglangBudget& b = r.budget;
  const CudaTotal total = cuda_visible_total(*smallest);
  b.cuda_total = total.bytes;
  b.cuda_total_known = total.known;
  b.weights = 0;
  for (const SglangStage& st : r.stages) b.weights = std::max(b.weights, st.weights);
  // CUDA context (~0.5 GiB) and, with several ranks, NCCL's buffers: 2.01 GiB at TP 8 in record S4.
  const std::uint64_t context = GiB / 2 + (world > 1 ? 2 * GiB : 0);
  b.before_measured = s.free_before_load.has_value();
  const std::uint64_t taken = checked_add(context, s.co_tenant_bytes, "memory");
  b.free_before_load = s.free_before_load ? *s.free_before_load : (b.cuda_total > taken ? b.cuda_total - taken : 0);
  b.after_measured = s.free_after_load.has_value();
  b.free_after_load = s.free_after_load ? *s.free_after_load
                                        : (b.free_before_load > b.weights ? b.free_before_load - b.weights : 0);
  if (b.after_measured) b.weights = b.free_before_load > b.free_after_load ? b.free_before_load - b.free_after_load : 0;
  const SglangDefaults defaults =
      sglang_defaults(smallest->memory_bytes / MiB, s.tp, s.pp, s.chunked_prefill_size, s.version,
                      s.speculative ? sglang_speculative_reserve_mib(*s.speculative, *era) : 0,
                      SglangGraphs{s.cuda_graph_max_bs, s.piecewise_cuda_graph, latent});
  r.chunked_prefill_size = defaults.chunked_prefill_size;
  b.mfs_default = !s.mem_fraction_static;
  b.mem_fraction_static = s.mem_fraction_static.value_or(defaults.mem_fraction_static);
  b.mfs_rule = b.mfs_default ? defaults.rule : fmt::format("--mem-fraction-static {}", b.mem_fraction_static);
  if (model.vision_encoder) {
    const VlmFraction vlm = vlm_fraction(*model.vision_encoder, b.mfs_default, s.version);
    if (vlm.factor != 1.0) {
      b.mem_fraction_static *= vlm.factor;
      b.mfs_rule += vlm.rule;
      if (!vlm.assumption.empty()) r.assumptions.push_back(vlm.assumption);
    }
  }
  if (s.words) {
    r.rules.push_back(b.mfs_rule);
    r.rules.push_back(fmt::format("{}free before load {} ({}), after load {} ({})",
                                  world > 1 ? "MIN over ranks, read through float32: " : "", gib(b.free_before_load),
                                  b.before_measured ? "given" : "ESTIMATE: CUDA total - context - NCCL", gib(b.free_after_load),
                                  b.after_measured ? "given" : "ESTIMATE: before - the weights per rank"));
  }
  b.static_bytes = static_cast<std::uint64_t>(static_cast<double>(b.free_before_load) * b.mem_fraction_static);
  b.headroom_bytes = b.free_before_load - std::min(b.free_before_load, b.static_bytes);

  // From 0.5.16 the draft is loaded before the target's pool is profiled: its weights are gone too.
  const std::uint64_t draft_inside = era == SglangSpeculativeEra::inside ? r.draft->weights : 0;
  const std::uint64_t after_drafts = b.free_after_load - std::min(b.free_after_load, draft_inside);
  const SglangRest rest = sglang_rest(b.free_before_load, after_drafts, b.mem_fraction_static, world > 1, s.version);
  b.rest_gib = rest.rest_gib;
  if (s.words)
    r.rules.push_back(fmt::format("rest = after{} - before x (1 - {}) = {:.4f} GiB (profile_max_num_token)",
                                  draft_inside ? " - the draft's weights" : "", b.mem_fraction_static, b.rest_gib));
  double rest_gib = rest.rest_gib;

  // The Mamba pool comes out of rest first (handle_max_mamba_cache): R / (1 + R) of it, R =
  // --mamba-full-memory-ratio 0.9; slots = its bytes // one request's state.
  const SglangStage& first_stage = r.stages.front();
  if (r.layout == SglangResult::Layout::mamba && !rest.refused) {
    const double ratio = 0.9;
    const double per = static_cast<double>(first_stage.mamba_bytes_per_request);
    const double raw = rest_gib * ratio / (1 + ratio);
    const std::int64_t slots = py_int(std::floor(raw * kGiB / per));
    const std::uint64_t deducted = slots > 0 ? static_cast<std::uint64_t>(slots) : 0;
    b.mamba_gib = static_cast<double>(deducted) * per / kGiB;
    rest_gib -= b.mamba_gib;
    // 0.5.16+ deducts K + 1 slots and counts K: the same bytes, one slot fewer to use.
    r.mamba_slots = s.version.configurator() && deducted > 0 ? deducted - 1 : deducted;
    r.mamba_bytes = checked_mul(deducted, first_stage.mamba_bytes_per_request, "Mamba pool");
    if (s.words)
      r.rules.push_back(fmt::format("Mamba pool: {} slots of {} B (0.9 / 1.9 of rest){}", format_thousands(r.mamba_slots),
                                    format_thousands(first_stage.mamba_bytes_per_request),
                                    s.version.configurator() ? "; 0.5.16+ keeps one more slot than it counts" : ""));
  }
  b.available = py_int(rest_gib * kGiB);

  // The requests a speculative setup runs unless told (server_args.py: 48), which the 0.4.10 -
  // 0.5.6 headroom multiplies.
  const std::uint64_t requests_given = s.max_running_requests.value_or(s.speculative ? 48 : 0);  // 0: SGLang's rule
  if (r.draft && era == SglangSpeculativeEra::headroom) {
    SglangDraftResult& d = *r.draft;
    // R x steps x topk + R x draft tokens + 100: R x a request's slots + 100.
    d.extra_tokens = (Checked(requests_given, "draft tokens") * d.headroom_slots_per_request + 100).value();
    if (d.headroom_slots_per_request < d.slots_per_request)
      r.assumptions.push_back("SGLang's auto choice for GLM's MTP draft before 0.5.7 is read from a secondary quote as "
                              "5, 4, 8: #tokens grows by the fewer extra tokens of 5, 4, 8 and 3, 1, 4 (436 at 48 "
                              "requests), each request's pool slots by the more; give the three flags to be exact");
  }

  // #tokens per stage, then the MIN over stages (profile_max_num_token, init_memory).
  std::int64_t tokens = std::numeric_limits<std::int64_t>::max();
  for (SglangStage& st : r.stages) {
    std::uint64_t cell = st.cell_bytes;
    if (r.draft && era == SglangSpeculativeEra::inside) {
      // DefaultPoolConfigurator: int(cell x (1 + draft layers / target layers)), the target's
      // attention layers; it assumes the draft's layers are as wide as the target's.
      std::uint32_t target_layers = 0;
      for (std::uint32_t i = st.first_layer; i < st.first_layer + st.layers; ++i)
        if (model.layers[i].kind == LayerKind::full || model.layers[i].kind == LayerKind::mla) ++target_layers;
      cell = static_cast<std::uint64_t>(py_int(static_cast<double>(cell) *
                                               (1 + static_cast<double>(r.draft->layers) / static_cast<double>(target_layers))));
      r.draft->scaled_cell_bytes = cell;
      r.draft->target_layers = target_layers;
    }
    std::int64_t t = floor_div(b.available, static_cast<std::int64_t>(cell));
    if (r.draft && r.draft->extra_tokens && t > 0) t += static_cast<std::int64_t>(r.draft->extra_tokens);
    if (s.max_total_tokens && static_cast<std::uint64_t>(std::max<std::int64_t>(t, 0)) > *s.max_total_tokens)
      t = static_cast<std::int64_t>(*s.max_total_tokens);
    t = floor_div(t, page) * page;
    st.tokens = t > 0 ? static_cast<std::uint64_t>(t) : 0;
    if (t < tokens) {
      tokens = t;
      r.decisive_stage = st.stage;
    }
  }
  const SglangStage& decisive = r.stages[r.decisive_stage];
  if (s.words)
    r.rules.push_back(fmt::format("cell {} B a token per rank{}; #tokens = {} B // cell{}, floored to the page of {}",
                                  format_thousands(r.draft && r.draft->scaled_cell_bytes ? r.draft->scaled_cell_bytes
                                                                                         : decisive.cell_bytes),
                                  r.layout == SglangResult::Layout::dsa ? " (latent + indexer key)"
                                  : r.draft && r.draft->scaled_cell_bytes ? " (scaled for the draft, below)"
                                                                          : "",
                                  format_thousands(static_cast<std::uint64_t>(std::max<std::int64_t>(b.available, 0))),
                                  s.max_total_tokens ? fmt::format(", at most --max-total-tokens {}", *s.max_total_tokens) : "",
                                  page));
  if (r.draft && s.words) {
    const SglangDraftResult& d = *r.draft;
    r.rules.push_back(fmt::format(
        "--speculative-algorithm {} (SGLang {} rules): the draft {} caches {} layer{} at {} B a token per rank in a pool "
        "of its own with the target's #tokens; its weights {} a GPU (ESTIMATE: every tensor as built, {}{}); steps {}, "
        "topk {}, draft tokens {}{}",
        d.algorithm, to_string(d.era), d.name, d.layers, d.layers == 1 ? "" : "s", format_thousands(d.cell_bytes),
        gib(d.weights),
        d.own_layers ? "the checkpoint's copies of the embedding and head included (built, then swapped for the target's)"
                     : "its embeddings included",
        s.tp > 1 ? ", split over the ranks" : "", d.num_steps, d.eagle_topk, d.num_draft_tokens,
        s.speculative->auto_chosen ? " (SGLang's auto choice: none of the three given)" : ""));
    if (d.era == SglangSpeculativeEra::inside)
      r.rules.push_back(fmt::format("0.5.16+: the draft loads before the pool is profiled (its weights come out of the "
                                    "free memory after load), and the cell is int({} x (1 + {} / {} target layers)) = {} B",
                                    format_thousands(decisive.cell_bytes), d.layers,
                                    d.target_layers, format_thousands(d.scaled_cell_bytes)));
    else
      r.rules.push_back(fmt::format("the draft's weights and pool come after the target's pool, out of what "
                                    "--mem-fraction-static leaves{}",
                                    d.era == SglangSpeculativeEra::headroom
                                        ? fmt::format("; #tokens gets {} more (max_running_requests x steps x topk + "
                                                      "max_running_requests x draft tokens + 100: init_memory_pool's "
                                                      "headroom, past the budget)",
                                                      format_thousands(d.extra_tokens))
                                        : ""));
  }
  if (s.max_total_tokens && tokens >= 0 && static_cast<std::uint64_t>(tokens) < *s.max_total_tokens / page * page)
    if (s.words)
      r.rules.push_back(fmt::format("max_total_tokens={} is larger than the profiled value: SGLang uses the profiled one",
                                    *s.max_total_tokens));

  // Hybrid SWA: the pool split between full and sliding layers.
  if (r.layout == SglangResult::Layout::swa) {
    const double f = static_cast<double>(decisive.full_bytes_per_token);
    const double w = static_cast<double>(decisive.swa_bytes_per_token);
    const double ratio = s.swa_full_tokens_ratio;
    for (const LayerSpec& layer : model.layers)
      if (layer.kind == LayerKind::sliding) r.window = std::max(r.window, layer.window);
    std::int64_t full = 0, swa = 0;
    if (s.version.configurator()) {
      // HybridSWAPoolConfigurator: cell = F + r x S (float), one floor.
      if (s.max_total_tokens)
        throw unsupported_architecture("SGLang profile: --max-total-tokens with the 0.5.16+ hybrid SWA pool", "not modelled");
      full = decisive.full_bytes_per_token ? floor_div(py_int(std::floor(static_cast<double>(b.available) / (f + ratio * w))), page) * page : 0;
      swa = floor_div(py_int(static_cast<double>(full) * ratio), page) * page;
      if (!decisive.full_bytes_per_token) swa = floor_div(floor_div(b.available, static_cast<std::int64_t>(w)), page) * page;
    } else if (decisive.full_bytes_per_token) {
      // set_num_tokens_hybrid_swa: the profiled #tokens rescaled, then each floored to the page.
      full = py_int(static_cast<double>(tokens) * (f + w) / (f + ratio * w));
      swa = py_int(static_cast<double>(full) * ratio);
      full = floor_div(full, page) * page;
      swa = floor_div(swa, page) * page;
    } else {
      swa = tokens;
    }
    tokens = full;
    r.swa_tokens = swa > 0 ? static_cast<std::uint64_t>(swa) : 0;
    if (s.words)
      r.rules.push_back(fmt::format("hybrid SWA pool, --swa-full-tokens-ratio {}: full layers {} B, sliding layers {} B a "
                                    "token; {}",
                                    ratio, format_thousands(decisive.full_bytes_per_token),
                                    format_thousands(decisive.swa_bytes_per_token),
                                    s.version.configurator() ? "full = available // (F + r x S) (0.5.16+)"
                                                             : "full = #tokens x (F + S) / (F + r x S), swa = full x r (0.5.x)"));
  }
  r.max_total_num_tokens = tokens > 0 ? static_cast<std::uint64_t>(tokens) : 0;

  // The refusals, in the order SGLang meets them.
  if (rest.refused) r.refusal = rest.refusal;
  else if (tokens <= 0 && r.layout != SglangResult::Layout::swa)
    r.refusal = fmt::format("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current "
                            "value: {}mem_fraction_static={}",
                            s.version.configurator() ? "" : "self.server_args.", b.mem_fraction_static);
  else if (r.layout == SglangResult::Layout::swa && r.window + page >= r.swa_tokens)
    r.refusal = fmt::format("ValueError: SWA pool ({} tokens) cannot hold even one request (sliding window {} + page {})",
                            r.swa_tokens, r.window, page);

  // The request pool (init_memory): its default size, and the int32 req_to_token table.
  if (requests_given) {
    r.max_running_requests = requests_given;
  } else {
    const double estimate = static_cast<double>(r.max_total_num_tokens) / static_cast<double>(r.context_length) * 512;
    r.max_running_requests = static_cast<std::uint64_t>(std::min<std::int64_t>(std::max<std::int64_t>(py_int(estimate), 2048), 4096));
    if (s.version.configurator()) r.max_running_requests = std::min(r.max_running_requests, r.max_total_num_tokens / 2);
  }
  if (r.layout == SglangResult::Layout::mamba) {
    // calculate_mamba_ratio: 3 with the radix cache and no extra buffer (0.5.x); the 0.5.16+
    // constants add up to 5 at most, and kvplan takes that, the smallest cap.
    const std::uint64_t ratio = s.version.configurator() ? 5 : 3;
    r.max_running_requests = std::min(r.max_running_requests, r.mamba_slots / ratio);
    if (s.words)
      r.rules.push_back(fmt::format("max_running_requests <= {} Mamba slots // {}", format_thousands(r.mamba_slots), ratio));
  }
  // With a draft each row also holds the verified tokens (context_len + 4 + draft tokens).
  const std::uint64_t row_tokens = checked_add(r.context_length + 4, r.draft ? r.draft->num_draft_tokens : 0, "request pool");
  r.req_to_token_bytes = checked_mul(checked_mul(r.max_running_requests, row_tokens, "request pool"), 4, "request pool");
  if (r.draft) {
    // The draft's pool: the target's #tokens (+ a page) at the draft's layers.
    SglangDraftResult& d = *r.draft;
    const std::uint64_t rows = checked_add(r.max_total_num_tokens, page, "KV pool");
    d.k_bytes = checked_mul(rows, d.k_bytes_per_token, "KV pool");
    d.v_bytes = checked_mul(rows, d.v_bytes_per_token, "KV pool");
    d.indexer_bytes = checked_mul(rows, d.indexer_bytes_per_token, "KV pool");
    const std::uint64_t target_pool = checked_mul(rows, decisive.pool_bytes_per_token, "KV pool");
    const std::uint64_t draft_pool = (Checked(d.k_bytes, "KV pool") + d.v_bytes + d.indexer_bytes).value();
    const std::uint64_t available = b.available > 0 ? static_cast<std::uint64_t>(b.available) : 0;
    // Before 2026 the draft's weights and pool, and the target's extra tokens, come after the
    // budget; from 0.5.16 whatever both pools hold beyond it.
    const std::uint64_t pools = era == SglangSpeculativeEra::inside ? checked_add(target_pool, draft_pool, "KV pool") : target_pool;
    d.from_headroom = (Checked(pools - std::min(pools, available), "memory") +
                       (era == SglangSpeculativeEra::inside ? 0 : checked_add(d.weights, draft_pool, "memory")))
                          .value();
  }
  const std::uint64_t from_headroom = checked_add(r.req_to_token_bytes, r.draft ? r.draft->from_headroom : 0, "memory");
  if (r.refusal.empty() && r.draft && from_headroom > b.headroom_bytes)
    r.refusal = fmt::format("out of memory after sizing the pools: the request table ({}) and the draft's {} ({}) are "
                            "more than the {} that --mem-fraction-static {:.6g} leaves",
                            gib(r.req_to_token_bytes),
                            era == SglangSpeculativeEra::inside ? "pool beyond the budget" : "weights and pool",
                            gib(r.draft->from_headroom), gib(b.headroom_bytes), b.mem_fraction_static);
  if (r.refusal.empty() && r.req_to_token_bytes > b.headroom_bytes)
    r.refusal = fmt::format("out of memory after sizing the pool: the request table (int32 x {} requests x {} tokens "
                            "= {}) is larger than the {} that --mem-fraction-static {:.6g} leaves",
                            r.max_running_requests, r.context_length + 4, gib(r.req_to_token_bytes), gib(b.headroom_bytes),
                            b.mem_fraction_static);
  if (s.words)
    r.rules.push_back(fmt::format("max_running_requests {}{}; req_to_token {} from the {} headroom", r.max_running_requests,
                                  s.max_running_requests ? " (--max-running-requests)"
                                  : s.speculative            ? " (SGLang's default with a speculative draft)"
                                  : s.version.configurator() ? " = min(clamp(#tokens / context_len x 512, 2048, 4096), #tokens // 2)"
                                                             : " = clamp(#tokens / context_len x 512, 2048, 4096)",
                                  gib(r.req_to_token_bytes), gib(b.headroom_bytes)));
  r.starts = r.refusal.empty() && r.dtype_supported;

  // The buffers as allocated: one more page than #tokens in every K, V and latent buffer.
  const std::uint64_t rows = checked_add(r.max_total_num_tokens, page, "KV pool");
  if (r.layout == SglangResult::Layout::swa) {
    std::uint64_t full_k = 0, full_v = 0, swa_k = 0, swa_v = 0;
    for (std::uint32_t i = decisive.first_layer; i < decisive.first_layer + decisive.layers; ++i) {
      const LayerSpec& layer = model.layers[i];
      const std::uint64_t n = sglang_kv_heads(layer.kv_heads, s.tp);
      add_bytes(layer.kind == LayerKind::sliding ? swa_k : full_k, dtype_bytes(*cache.dtype, n * layer.k_head_dim));
      add_bytes(layer.kind == LayerKind::sliding ? swa_v : full_v, dtype_bytes(*cache.dtype, n * layer.v_head_dim));
    }
    r.k_bytes = checked_mul(rows, full_k, "KV pool");
    r.v_bytes = checked_mul(rows, full_v, "KV pool");
    r.swa_k_bytes = checked_mul(checked_add(r.swa_tokens, page, "KV pool"), swa_k, "KV pool");
    r.swa_v_bytes = checked_mul(checked_add(r.swa_tokens, page, "KV pool"), swa_v, "KV pool");
  } else if (latent) {
    r.kv_bytes = checked_mul(rows, decisive.pool_bytes_per_token - decisive.indexer_bytes_per_token, "KV pool");
    r.indexer_bytes = checked_mul(rows, decisive.indexer_bytes_per_token, "KV pool");
  } else {
    r.k_bytes = checked_mul(rows, cache.dtype->name == "nvfp4" ? 0 : decisive.k_bytes_per_token, "KV pool");
    r.v_bytes = checked_mul(rows, cache.dtype->name == "nvfp4" ? 0 : decisive.v_bytes_per_token, "KV pool");
    if (cache.dtype->name == "nvfp4") r.kv_bytes = checked_mul(rows, decisive.cell_bytes, "KV pool");
  }
  r.pool_bytes = (Checked(r.k_bytes, "KV pool") + r.v_bytes + r.kv_bytes + r.swa_k_bytes + r.swa_v_bytes + r.indexer_bytes + r.mamba_bytes).value();
  if (r.draft) r.pool_bytes = (Checked(r.pool_bytes, "KV pool") + r.draft->k_bytes + r.draft->v_bytes + r.draft->indexer_bytes).value();

  // The lines SGLang prints (memory_pool.py, scheduler.py), GB meaning GiB; none when it stops
  // before allocating the pools.
  if (!r.refusal.empty() && r.refusal.rfind("out of memory", 0) != 0) return finish_assumptions(r, model, s, b, *smallest, mla, cache);
  const std::string dtype_part = s.version.configurator() ? fmt::format("dtype: {}, ", r.torch_dtype) : "";
  if (r.layout == SglangResult::Layout::swa)
    r.log_lines.push_back(fmt::format("Use sliding window memory pool. full_layer_tokens={}, swa_layer_tokens={}",
                                      r.max_total_num_tokens, r.swa_tokens));
  if (latent)
    r.log_lines.push_back(fmt::format("KV Cache is allocated. #tokens: {}, KV size: {} GB", r.max_total_num_tokens,
                                      engine_gib(r.kv_bytes)));
  else if (cache.dtype->name != "nvfp4")
    r.log_lines.push_back(fmt::format("KV Cache is allocated. {}#tokens: {}, K size: {} GB, V size: {} GB", dtype_part,
                                      r.max_total_num_tokens, engine_gib(r.k_bytes), engine_gib(r.v_bytes)));
  if (r.layout == SglangResult::Layout::swa)
    r.log_lines.push_back(fmt::format("KV Cache is allocated. {}#tokens: {}, K size: {} GB, V size: {} GB", dtype_part,
                                      r.swa_tokens, engine_gib(r.swa_k_bytes), engine_gib(r.swa_v_bytes)));
  if (r.draft && r.draft->kind == LayerKind::mla)
    r.log_lines.push_back(fmt::format("KV Cache is allocated. #tokens: {}, KV size: {} GB", r.max_total_num_tokens,
                                      engine_gib(r.draft->k_bytes)));
  else if (r.draft)
    r.log_lines.push_back(fmt::format("KV Cache is allocated. {}#tokens: {}, K size: {} GB, V size: {} GB", dtype_part,
                                      r.max_total_num_tokens, engine_gib(r.draft->k_bytes), engine_gib(r.draft->v_bytes)));
  r.log_lines.push_back(fmt::format("max_total_num_tokens={}, chunked_prefill_size={}, max_prefill_tokens=16384, "
                                    "max_running_requests={}, context_len={}",
                                    r.max_total_num_tokens, r.chunked_prefill_size, r.max_running_requests,
                                    r.context_length));

  return finish_assumptions(r, model, s, b, *smallest, mla, cache);
}

}  // namespace kvplan
