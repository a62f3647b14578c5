#include "engines/trtllm/rules.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "engines/core/state_split.h"

#include "engines/core/serving.h"
#include "model/checked.h"
#include "kvplan/error.h"
#include "kvplan/plan.h"
#include "kvplan/units.h"
#include "model/wide_int.h"

// Every rule names the TensorRT-LLM source it follows (NVIDIA/TensorRT-LLM; staging/engines/
// trtllm.md has the commits, the versions and which rules were confirmed). The PyTorch backend:
// tensorrt_llm/_torch/pyexecutor/_util.py (KvCacheCreator) and resource_manager.py
// (KVCacheManager); the TensorRT-engine runtime: cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp.

namespace kvplan {

namespace {

constexpr double kGiB = 1073741824.0;


std::string gib(std::uint64_t bytes) { return format_gib(static_cast<std::int64_t>(bytes)); }

std::uint64_t to_u64(double x) {
  if (!(x > 0)) return 0;
  if (x >= 1.8e19) return std::numeric_limits<std::uint64_t>::max();
  return static_cast<std::uint64_t>(x);
}

bool pytorch(TrtllmVersion v) { return v != TrtllmVersion::engine; }

/// Decoder layers of pipeline stage `stage` (mapping.py Mapping.pp_layers: torch.tensor_split,
/// so the FIRST L % pp stages get one more). A pp_partition is not modelled.
std::pair<std::uint32_t, std::uint32_t> stage_layers(std::uint32_t layers, std::uint32_t stage, std::uint32_t pp) {
  const std::uint32_t base = layers / pp;
  const std::uint32_t extra = layers % pp;
  const std::uint32_t first = stage * base + std::min(stage, extra);
  return {first, base + (stage < extra ? 1 : 0)};
}

/// The KV dtype TensorRT-LLM uses and whether it has it: KvCacheConfig.dtype is auto (the
/// checkpoint's), fp8 or nvfp4; the TensorRT-engine path also builds int8 caches.
struct CacheType {
  const Dtype* dtype = nullptr;
  std::string name;
  bool supported = true;
  std::string reason;
};

/// KvCacheConfig.dtype "auto": the KV quantization the checkpoint declares (a ModelOpt
/// kv_cache_quant_algo, validate_and_set_kv_cache_quant), else the model's compute dtype.
const Dtype& automatic_cache(const ModelSpec& model) {
  return model.checkpoint_kv_dtype ? *model.checkpoint_kv_dtype : parse_kv_dtype("auto", *model.weight_dtype);
}

CacheType cache_type(const ModelSpec& model, const GpuSpec& gpu, const TrtllmSettings& s) {
  const Dtype& automatic = automatic_cache(model);
  CacheType c;
  c.dtype = s.kv_dtype ? s.kv_dtype : &automatic;
  const std::string_view name = c.dtype->name;
  const unsigned cc = compute_capability(gpu);
  c.name = s.kv_dtype && c.dtype != &automatic ? std::string(name) : "auto";
  if (name == "fp8") {
    if (cc < 89) {
      c.supported = false;
      c.reason = fmt::format("TensorRT-LLM's fp8 KV cache needs sm_89 or later (Ada, Hopper, Blackwell); {} is sm_{}",
                             gpu.name, cc);
    }
  } else if (name == "nvfp4") {
    if (!pytorch(s.version)) {
      c.supported = false;
      c.reason = "the TensorRT-engine runtime has no nvfp4 KV cache";
    } else if (cc < 100) {
      c.supported = false;
      c.reason = fmt::format("TensorRT-LLM's nvfp4 KV cache needs a Blackwell GPU (sm_100 or later); {} is sm_{}", gpu.name, cc);
    }
  } else if (name == "fp16" || name == "bf16" || name == "fp32") {
    // The cache follows the model's compute dtype: the LLM API's dtype, or the engine's --dtype.
  } else if (name == "int8" && !pytorch(s.version)) {
    // INT8 KV caches are built into TensorRT engines (hasInt8KvCache).
  } else if (c.dtype != &automatic) {
    c.supported = false;
    c.reason = fmt::format("TensorRT-LLM has no {} KV cache for this checkpoint: KvCacheConfig.dtype takes auto (the "
                           "checkpoint's, {} here), fp8 or nvfp4",
                           name, automatic.name);
  }
  return c;
}

/// Bytes of `values` cache values: NVFP4 packs two a byte and adds an fp8 scale per 16.
std::uint64_t pool_bytes_of(const Dtype& dtype, std::uint64_t values) {
  if (dtype.name == "nvfp4") {
    if (values % 16 != 0)
      throw unsupported_architecture("TensorRT-LLM profile: an nvfp4 cache whose values per token are not a multiple of 16",
                                     "not modelled");
    return values / 2 + values / 16;
  }
  return dtype_bytes(dtype, values);
}

/// The static estimate the creator divides by (KVCacheManager.get_cache_size_per_token): the
/// model's KV heads (a per-layer list: its float mean) x head_dim // tp, floored.
std::uint64_t estimate_bytes_of(const Dtype& dtype, double values) {
  if (dtype.name == "nvfp4") return static_cast<std::uint64_t>(std::ceil(values / 2) + std::ceil(values / 16));
  if (dtype.block_bytes == 1 && dtype.block_elements == 1) return static_cast<std::uint64_t>(values);
  return static_cast<std::uint64_t>(values) * 2;  // "otherwise x 2": fp32 too
}

struct Shape {
  bool mla = false;
  bool dsa = false;
  bool recurrent = false;  ///< Mamba2 or Gated DeltaNet layers beside the attention (MambaHybridCacheManager)
  std::uint64_t head_dim = 0;
};

/// A layer with a paged KV cache: not a layer without attention, nor a recurrent one (its state
/// is a slot of its own, not tokens).
bool pages_tokens(const LayerSpec& layer) { return layer.kind != LayerKind::none && layer.kind != LayerKind::linear; }

/// The model's cache shape under TensorRT-LLM, refused where the profile does not model it.
Shape shape_of(const ModelSpec& model) {
  Shape shape;
  bool attention = false;
  for (const LayerSpec& layer : model.layers) {
    switch (layer.kind) {
      case LayerKind::full:
      case LayerKind::sliding:
      case LayerKind::mla: break;
      case LayerKind::none: continue;
      case LayerKind::linear:
        if (layer.state.empty())
          throw unsupported_architecture("TensorRT-LLM profile: a recurrent layer whose state is not stated", "not modelled");
        shape.recurrent = true;
        continue;
      case LayerKind::chunked:
        throw unsupported_architecture("TensorRT-LLM profile: chunked local attention (Llama 4)", "not modelled");
      case LayerKind::shared:
        throw unsupported_architecture("TensorRT-LLM profile: layers that read an earlier layer's cache (KV sharing)",
                                       "not modelled");
      case LayerKind::cross:
        throw unsupported_architecture("TensorRT-LLM profile: cross-attention layers (Llama 3.2 Vision)", "not modelled");
    }
    if (!layer.state.empty())
      throw unsupported_architecture("TensorRT-LLM profile: attention with recurrent state in the same layer", "not modelled");
    const bool mla = layer.kind == LayerKind::mla;
    if (attention && mla != shape.mla)
      throw unsupported_architecture("TensorRT-LLM profile: MLA beside other attention layers", "not modelled");
    const std::uint64_t head = layer.k_head_dim;
    if (!mla && layer.v_head_dim != layer.k_head_dim)
      throw unsupported_architecture("TensorRT-LLM profile: K and V heads of different widths", "not modelled");
    if (attention && head != shape.head_dim)
      throw unsupported_architecture("TensorRT-LLM profile: layers of different head sizes (per-layer head_dim)",
                                     "not modelled");
    shape.mla = mla;
    shape.dsa = shape.dsa || layer.index_head_dim != 0;
    shape.head_dim = head;
    attention = true;
  }
  if (!attention) throw unsupported_architecture("TensorRT-LLM profile: a model without attention layers", "not modelled");
  return shape;
}

/// The rank's per-token bytes of stage [first, first + count): the creator's estimate and the pool's.
void stage_bytes(const ModelSpec& model, const Shape& shape, const Dtype& dtype, std::uint32_t tp, TrtllmStage& st) {
  std::uint64_t attention_layers = 0, head_sum = 0, indexer_layers = 0, indexer_dim = 0;
  double heads_total = 0;
  std::uint64_t heads_count = 0;
  for (const LayerSpec& layer : model.layers)
    if (pages_tokens(layer)) heads_total += layer.kv_heads, ++heads_count;
  for (std::uint32_t i = st.first_layer; i < st.first_layer + st.layers; ++i) {
    const LayerSpec& layer = model.layers[i];
    if (!pages_tokens(layer)) continue;
    ++attention_layers;
    head_sum += shape.mla ? 1 : ceil_div(layer.kv_heads, tp);  // num_kv_heads_per_layer: ceil(kv / tp)
    if (layer.index_head_dim) ++indexer_layers, indexer_dim = layer.index_head_dim;
  }
  const std::uint64_t layers = std::max<std::uint64_t>(attention_layers, 1);
  if (shape.mla) {
    // MLA: one latent of kv_lora_rank + qk_rope_head_dim, kv_factor 1, not divided by TP.
    const std::uint64_t latent = checked_mul(layers, shape.head_dim, "cache size");
    const std::uint64_t per = shape.dsa ? (dtype.block_bytes == 1 && dtype.block_elements == 1 ? latent : checked_mul(latent, 2, "cache size"))
                                        : pool_bytes_of(dtype, latent);
    // DSA (DSACacheManager): + the indexer key, fp8 values and an fp32 scale per 128, raw bytes.
    const std::uint64_t indexer = checked_mul(indexer_layers, indexer_dim + indexer_dim / 128 * 4, "cache size");
    st.bytes_per_token = checked_add(per, indexer, "cache size");
    st.estimate_bytes_per_token = (shape.dsa ? per : estimate_bytes_of(dtype, static_cast<double>(latent))) + indexer;
    return;
  }
  st.bytes_per_token = pool_bytes_of(dtype, checked_mul(checked_mul(2, head_sum, "cache size"), shape.head_dim, "cache size"));
  const double mean_heads = heads_total / static_cast<double>(std::max<std::uint64_t>(heads_count, 1));
  const double head = std::floor(static_cast<double>(shape.head_dim) * mean_heads / tp);
  st.estimate_bytes_per_token = estimate_bytes_of(dtype, 2.0 * static_cast<double>(layers) * head);
}

/// The dry run's peak beyond the weights, ESTIMATED: fp32 logits of min(max_batch_size,
/// max_num_tokens) rows, a forward pass of max_num_tokens tokens at 64 KiB a token, and 1.75 GiB
/// of CUDA context, graphs and workspaces (1.5 GiB more of NCCL with several ranks). Sized so that
/// record T1 (5.09 GiB beside the weights on an H100) is slightly over-counted, never under.
void estimate_peak(const ModelSpec& model, const TrtllmSettings& s, std::uint32_t world, TrtllmBudget& b) {
  if (model.vocab_size == 0)
    throw Error("the TensorRT-LLM profile estimates the dry run's logits from the vocabulary size, which this model does "
                "not state (vocab_size); give --trtllm-free-memory",
                ExitCode::unsupported_architecture);
  b.activation = checked_add(checked_mul(checked_mul(4, std::min(s.max_batch_size, s.max_num_tokens), "activation"), model.vocab_size, "activation"),
                             checked_mul(s.max_num_tokens, 64 * KiB, "activation"), "activation");
  b.non_torch = 7 * GiB / 4 + (world > 1 ? 3 * GiB / 2 : 0);
}

std::string py_float(double x) { return fmt::format("{}", x); }

/// The recurrent state of one request slot on one rank (MambaCacheManager: conv_states and
/// ssm_states, each layer's channels and heads divided by TP as MambaStateShape splits them;
/// state_split.h) over every recurrent layer.
std::uint64_t mamba_slot_bytes(const ModelSpec& model, std::uint32_t tp) {
  std::uint64_t bytes = 0;
  for (const LayerSpec& layer : model.layers)
    if (layer.kind == LayerKind::linear) bytes = checked_add(bytes, state_bytes_per_rank(layer, tp, "--tp_size"), "Mamba state");
  return bytes;
}

}  // namespace

TrtllmVersion parse_trtllm_version(std::string_view text, std::string_view flag) {
  if (text == "latest") return TrtllmVersion::v1_1;
  unsigned major = 0, minor = 0;
  const char* p = text.data();
  const char* end = text.data() + text.size();
  auto [after_major, e1] = std::from_chars(p, end, major);
  bool ok = e1 == std::errc() && after_major != p && after_major < end && *after_major == '.';
  if (ok) {
    auto [after_minor, e2] = std::from_chars(after_major + 1, end, minor);
    ok = e2 == std::errc() && after_minor != after_major + 1;
    // Anything after: ".PATCH", "rc1", ".dev2024082000", "post1".
    for (const char* c = after_minor; ok && c < end; ++c)
      ok = (*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') || *c == '.';
  }
  if (!ok || major > 1 || (major == 0 && minor < 8))
    throw Error(fmt::format("{}: '{}' is not a TensorRT-LLM version kvplan knows (0.8 or later, e.g. 0.13, 0.20.0, 0.21, "
                            "1.0, 1.2, latest)",
                            flag, text));
  if (major == 0) return minor <= 18 ? TrtllmVersion::engine : minor <= 20 ? TrtllmVersion::v0_19 : TrtllmVersion::v0_21;
  return minor == 0 ? TrtllmVersion::v0_21 : TrtllmVersion::v1_1;
}

bool trtllm_state_may_be_pooled(std::string_view text) {
  if (text == "latest") return true;
  unsigned major = 0, minor = 0;
  const char* end = text.data() + text.size();
  const auto [after_major, e1] = std::from_chars(text.data(), end, major);
  if (e1 != std::errc() || after_major == end || *after_major != '.') return true;  // unread: the cautious side
  const auto [after_minor, e2] = std::from_chars(after_major + 1, end, minor);
  if (e2 != std::errc()) return true;
  return major > 1 || (major == 1 && minor >= 3);
}

std::string_view to_string(TrtllmVersion version) {
  switch (version) {
    case TrtllmVersion::engine: return "0.8-0.18 (TensorRT engine)";
    case TrtllmVersion::v0_19: return "0.19-0.20";
    case TrtllmVersion::v0_21: return "0.21-1.0";
    case TrtllmVersion::v1_1: return "1.1+";
  }
  return "?";
}

std::optional<std::string> trtllm_cache_refusal(const ModelSpec& model, const std::vector<GpuSpec>& gpus,
                                               const TrtllmSettings& s) {
  if (gpus.empty()) return std::nullopt;
  CacheType cache = cache_type(model, smallest_card(gpus), s);
  if (cache.supported) return std::nullopt;
  return std::move(cache.reason);
}

TrtllmResult plan_trtllm(const ModelSpec& model, const std::vector<GpuSpec>& gpus, const TrtllmSettings& s) {
  if (s.tp == 0 || s.pp == 0) throw Error("--tp_size and --pp_size must be at least 1");
  const std::uint32_t world = s.tp * s.pp;
  if (gpus.size() != world) throw Error(fmt::format("TensorRT-LLM runs on tp x pp = {} GPUs; {} were given", world, gpus.size()));
  if (s.pp > model.layer_count())
    throw Error(fmt::format("--pp_size {}: more pipeline stages than the model's {} layers", s.pp, model.layer_count()));
  TrtllmResult r;
  r.version = s.version;
  r.tp = s.tp;
  r.pp = s.pp;
  r.max_seq_len = s.max_seq_len ? s.max_seq_len : model.max_context;
  if (r.max_seq_len == 0) throw Error("--max_seq_len is required: the model does not state its trained context");
  r.max_batch_size = s.max_batch_size;
  r.max_num_tokens = s.max_num_tokens;
  const Shape shape = shape_of(model);
  r.mla = shape.mla;
  // tokens_per_block: KvCacheConfig's 32; TensorRT engines were built with 64 (secondary, and what
  // records T3/T5 need); DeepSeek-V3.2's sparse attention runs with 64 (secondary, docs PR #9141).
  r.tokens_per_block = s.tokens_per_block ? s.tokens_per_block : (!pytorch(s.version) || shape.dsa) ? 64 : 32;
  const std::uint32_t tpb = r.tokens_per_block;
  if (s.words)
    r.rules.push_back(fmt::format("TensorRT-LLM {} rules, --tp_size {} --pp_size {}: figures are per GPU; {} tokens a block{}",
                                  to_string(s.version), s.tp, s.pp, tpb,
                                  s.tokens_per_block ? " (--tokens_per_block)"
                                  : !pytorch(s.version) ? " (the engine build's default, secondary)"
                                  : shape.dsa ? " (DeepSeek-V3.2's, secondary)"
                                              : " (KvCacheConfig's default)"));

  const GpuSpec* smallest = &smallest_card(gpus);
  const CacheType cache = cache_type(model, *smallest, s);
  r.dtype = cache.dtype;
  r.kv_dtype = cache.name;
  r.dtype_supported = cache.supported;
  r.dtype_reason = cache.reason;

  // Stages, their layers and their bytes per token.
  const WeightsEstimate weights = estimate_weights(model, nullptr);
  for (std::uint32_t stage = 0; stage < s.pp; ++stage) {
    TrtllmStage st;
    st.stage = stage;
    std::tie(st.first_layer, st.layers) = stage_layers(model.layer_count(), stage, s.pp);
    st.weights = ceil_div(static_cast<std::uint64_t>(static_cast<u128>(weights.bytes) * st.layers / model.layer_count()), s.tp);
    stage_bytes(model, shape, *cache.dtype, s.tp, st);
    r.stages.push_back(st);
  }
  if (s.pp > 1 && s.words)
    r.rules.push_back(fmt::format("pipeline stages of {} layers: {} each, the first {} one more (Mapping.pp_layers)",
                                  model.layer_count(), model.layer_count() / s.pp, model.layer_count() % s.pp));

  // The budget: the free memory the fraction multiplies.
  TrtllmBudget& b = r.budget;
  // Hybrids (MambaHybridCacheManager, 1.0-1.2): the recurrent state of max_batch_size slots, and
  // one for CUDA-graph padding (_get_mamba_hybrid_pool_size), allocated as torch tensors before
  // the dry run, so the free memory the fraction multiplies is measured without it.
  if (shape.recurrent) {
    if (s.pp > 1)
      throw unsupported_architecture("TensorRT-LLM profile: recurrent layers under pipeline parallelism",
                                     "the slots per stage changed across versions (x pp_size from 2026): not modelled");
    const std::uint64_t slot_bytes = mamba_slot_bytes(model, s.tp);
    b.mamba_slots = checked_add(s.max_batch_size, 1, "Mamba slots");
    b.mamba_state = checked_mul(b.mamba_slots, slot_bytes, "Mamba state");
    if (s.words)
      r.rules.push_back(fmt::format("recurrent state {} = {} slots (--max_batch_size {} + 1 for CUDA-graph padding) x {} B a "
                                    "slot on each rank (MambaCacheManager's conv and SSM states, allocated before the dry "
                                    "run: out of the free memory{}); each SSM state at its config's dtype, which 1.0-1.2 "
                                    "replace by the model's unless kv_cache_config.mamba_ssm_cache_dtype says otherwise (an "
                                    "upper bound there)",
                                    gib(b.mamba_state), format_thousands(b.mamba_slots), s.max_batch_size,
                                    format_thousands(slot_bytes),
                                    b.measured || s.free_memory ? ", so a logged free figure is already without it" : ""));
  }
  const CudaTotal total = cuda_visible_total(*smallest);
  b.cuda_total = total.bytes;
  b.cuda_total_known = total.known;
  for (const TrtllmStage& st : r.stages) b.weights = std::max(b.weights, st.weights);
  b.fraction_given = s.free_gpu_memory_fraction.has_value();
  const double fraction = s.free_gpu_memory_fraction.value_or(0.9);
  if (fraction >= 1.0) throw Error("--kv_cache_free_gpu_memory_fraction: TensorRT-LLM asserts it is below 1.0");
  // Before 1.1 the fraction passes through the C++ KvCacheConfig as a float32 (0.8 prints as
  // 0.800000011920929 in record T1).
  b.fraction = s.version == TrtllmVersion::v1_1 ? fraction : static_cast<double>(static_cast<float>(fraction));
  if (s.free_memory) {
    b.measured = true;
    b.free_memory = *s.free_memory;
  } else {
    if (!pytorch(s.version))
      throw Error("the TensorRT-engine runtime's free memory depends on the engine build (runtime buffers, decoder): give "
                  "--trtllm-free-memory from its 'Memory usage when calculating max tokens' line",
                  ExitCode::unsupported_architecture);
    estimate_peak(model, s, world, b);
    const std::uint64_t used = checked_add(
        checked_add(checked_add(checked_add(b.weights, b.activation, "memory"), b.non_torch, "memory"), s.co_tenant_bytes,
                    "memory"),
        b.mamba_state, "memory");
    b.free_memory = b.cuda_total > used ? b.cuda_total - used : 0;
    // From PR #12185 (about April 2026, during 1.3.0rc) CppMambaHybridCacheManager keeps the state in
    // the C++ pool, inside fraction x free: the cache gets fraction x (free + state) - state, which
    // is (1 - fraction) x state less than before. Where the release may hold it, the lesser.
    if (b.mamba_state && s.state_may_be_pooled) {
      const double fraction_used = s.free_gpu_memory_fraction.value_or(0.9);
      const auto less = static_cast<std::uint64_t>(static_cast<double>(b.mamba_state) * (1 - fraction_used) / fraction_used);
      b.free_memory = b.free_memory > less ? b.free_memory - less : 0;
      if (s.words)
        r.rules.push_back(fmt::format("the recurrent state may sit inside fraction x free (2026's C++ manager, PR #12185, "
                                      "from about 1.3): free memory taken {} lower, so that the cache gets fraction x "
                                      "(free + state) - state, the lesser of the two rules",
                                      gib(less)));
    }
  }
  b.kv_budget = to_u64(static_cast<double>(b.free_memory) * b.fraction);
  if (s.words)
    r.rules.push_back(fmt::format("free memory {} ({}); x fraction {} = {} for the KV cache", gib(b.free_memory),
                                  b.measured ? "given"
                                             : fmt::format("ESTIMATE: CUDA total {} - weights {} - dry-run activations {} "
                                                           "- CUDA context, graphs and NCCL {}",
                                                           gib(b.cuda_total), gib(b.weights), gib(b.activation), gib(b.non_torch)),
                                  py_float(b.fraction), gib(b.kv_budget)));

  // Windows: every layer keeps max_seq_len tokens unless KvCacheConfig.max_attention_window says
  // otherwise (a list repeated over the layers, each clamped to max_seq_len).
  std::vector<std::uint64_t> layer_window(model.layer_count(), r.max_seq_len);
  if (!s.max_attention_window.empty())
    for (std::uint32_t i = 0; i < model.layer_count(); ++i)
      layer_window[i] = std::min(s.max_attention_window[i % s.max_attention_window.size()], r.max_seq_len);
  std::map<std::uint64_t, std::uint32_t> distinct;
  for (std::uint32_t i = 0; i < model.layer_count(); ++i)
    if (pages_tokens(model.layers[i])) ++distinct[layer_window[i]];
  r.vswa = distinct.size() > 1;
  if (!r.vswa) {
    // KvCacheCreator: kv_cache_config.max_tokens = fraction x free // the estimate, at most --max_tokens.
    double decisive = std::numeric_limits<double>::infinity();
    for (TrtllmStage& st : r.stages) {
      double creator = std::floor(static_cast<double>(b.free_memory) * b.fraction /
                                  static_cast<double>(st.estimate_bytes_per_token));
      if (s.max_tokens) creator = std::min(creator, static_cast<double>(*s.max_tokens));
      double final_tokens = b.fraction * static_cast<double>(b.free_memory) / static_cast<double>(st.bytes_per_token);
      if (!pytorch(s.version)) {
        // calculateMaxNumBlocks: (SizeType32)(fraction x free / bytes); --max_tokens instead or the min.
        final_tokens = std::floor(std::min(final_tokens, 2147483647.0));
        if (s.max_tokens) final_tokens = b.fraction_given ? std::min(final_tokens, static_cast<double>(*s.max_tokens))
                                                          : static_cast<double>(*s.max_tokens);
      } else if (b.fraction_given || s.version == TrtllmVersion::v1_1) {
        final_tokens = std::min(creator, final_tokens);  // "Both free_gpu_memory_fraction and max_tokens are set"
      } else {
        final_tokens = creator;  // no fraction set: the creator's max_tokens as it is
      }
      st.max_tokens = final_tokens;
      if (st.stage == 0 || final_tokens < decisive) {
        decisive = final_tokens;
        r.decisive_stage = st.stage;
        r.creator_max_tokens = pytorch(s.version) ? to_u64(creator) : 0;
      }
    }
    r.max_tokens = decisive;  // allreduce(MIN) over every rank
    const bool ceil = s.version == TrtllmVersion::v0_19 || !pytorch(s.version);
    r.blocks = ceil ? to_u64(std::ceil(r.max_tokens / tpb)) : to_u64(std::floor(r.max_tokens / tpb));
    r.tokens = checked_mul(r.blocks, tpb, "KV pool");
    const TrtllmStage& st = r.stages[r.decisive_stage];
    TrtllmWindow w;
    w.window = r.max_seq_len;
    w.layers = st.layers;
    w.bytes_per_token = st.bytes_per_token;
    w.pool_bytes_per_token = st.bytes_per_token;
    w.blocks = r.blocks;
    w.blocks_per_sequence = ceil_div(r.max_seq_len, tpb);
    r.windows.push_back(w);
    r.pool_bytes = checked_mul(r.tokens, st.bytes_per_token, "KV pool");
    if (s.words)
      r.rules.push_back(fmt::format("bytes a token {} (the pool's: ceil(kv_heads / tp) a layer{}); the creator divides by {}",
                                    format_thousands(st.bytes_per_token), r.mla ? ", MLA's latent on every rank" : "",
                                    format_thousands(st.estimate_bytes_per_token)));
    if (!s.words) {
      // A probe: its rules are never read.
    } else if (pytorch(s.version))
      r.rules.push_back(fmt::format("max_tokens {:.2f} = min(creator {}{}, fraction x free / bytes a token){}; blocks = "
                                    "{}(max_tokens / {}) = {}",
                                    r.max_tokens, format_thousands(r.creator_max_tokens),
                                    s.max_tokens ? fmt::format(", --max_tokens {}", *s.max_tokens) : "",
                                    s.pp * s.tp > 1 ? ", MIN over ranks" : "", ceil ? "ceil" : "floor", tpb,
                                    format_thousands(r.blocks)));
    else
      r.rules.push_back(fmt::format("maxTokens = (int32)(fraction x free / bytes) = {}; blocks = ceilDiv(maxTokens, {}) = {}",
                                    format_thousands(to_u64(r.max_tokens)), tpb, format_thousands(r.blocks)));
  } else {
    // VSWA (calculate_max_num_blocks_for_vswa): the pool in equal shares, one per distinct window.
    if (!pytorch(s.version))
      throw unsupported_architecture("TensorRT-LLM profile: several attention windows on the TensorRT-engine runtime",
                                     "not modelled");
    if (shape.mla) throw unsupported_architecture("TensorRT-LLM profile: MLA with several attention windows", "not modelled");
    std::uint64_t pool = b.kv_budget;
    if (s.version == TrtllmVersion::v1_1) {
      if (s.max_gpu_total_bytes) pool = std::min(pool, s.max_gpu_total_bytes);  // the creator's min, then the pool
    } else if (s.max_gpu_total_bytes) {
      pool = s.max_gpu_total_bytes;
    }
    const double share = 1.0 / static_cast<double>(distinct.size());
    std::uint64_t sequence_bytes = 0;
    std::uint64_t largest = 0;
    for (const auto& entry : distinct) {
      const std::uint64_t window = entry.first;
      TrtllmWindow w;
      w.window = window;
      std::uint64_t worst_blocks = std::numeric_limits<std::uint64_t>::max();
      std::uint64_t worst_values = 0;
      for (const TrtllmStage& st : r.stages) {
        std::uint64_t heads = 0;
        std::uint32_t layers = 0;
        for (std::uint32_t i = st.first_layer; i < st.first_layer + st.layers; ++i)
          if (layer_window[i] == window && pages_tokens(model.layers[i]))
            heads += ceil_div(model.layers[i].kv_heads, s.tp), ++layers;
        if (!layers) continue;
        // bytes_w: the layers' K+V at the dtype's data size, without NVFP4's scales.
        const std::uint64_t values = checked_mul(checked_mul(2, heads, "cache size"), shape.head_dim, "cache size");
        const std::uint64_t bytes = cache.dtype->name == "nvfp4" ? values / 2 : dtype_bytes(*cache.dtype, values);
        const std::uint64_t blocks =
            to_u64(std::floor(static_cast<double>(pool) * share / static_cast<double>(bytes) / tpb));
        if (blocks < worst_blocks) worst_blocks = blocks, w.layers = layers, w.bytes_per_token = bytes, worst_values = values;
      }
      w.blocks = worst_blocks;  // MIN-allreduce per window
      w.pool_bytes_per_token = pool_bytes_of(*cache.dtype, worst_values);
      w.blocks_per_sequence = ceil_div(window, tpb);
      sequence_bytes = checked_add(sequence_bytes, checked_mul(window, w.bytes_per_token, "KV pool"), "KV pool");
      r.pool_bytes = checked_add(
          r.pool_bytes, checked_mul(checked_mul(w.blocks, tpb, "KV pool"), pool_bytes_of(*cache.dtype, worst_values), "KV pool"), "KV pool");
      if (window >= largest) largest = window, r.blocks = w.blocks;
      r.windows.push_back(w);
    }
    r.tokens = checked_mul(r.blocks, tpb, "KV pool");
    r.max_tokens = static_cast<double>(r.tokens);
    r.creator_max_tokens = 0;
    if (s.words)
      r.rules.push_back(fmt::format("VSWA: {} distinct windows share the pool {} equally (TRTLLM_WINDOW_SIZE_SHARES not "
                                    "modelled){}",
                                    distinct.size(), gib(pool), s.max_tokens ? "; --max_tokens is ignored for VSWA" : ""));
    if (sequence_bytes >= pool)
      r.refusal = fmt::format("one sequence at every window needs {}, the pool {}: TensorRT-LLM would shrink the windows "
                              "(adjust_window_sizes_for_vswa, not modelled)",
                              gib(sequence_bytes), gib(pool));
  }

  // The longest sequence the blocks allow (get_max_atten_window_upper_bound, beam 1).
  r.max_seq_len_bound = r.tokens;
  if (b.free_memory == 0 || r.blocks == 0) {
    if (r.refusal.empty())
      r.refusal = b.mamba_state ? fmt::format("no memory is left for the KV cache after the weights, the dry run and the "
                                              "recurrent state of {} request slots ({}; --max_batch_size sets them)",
                                              format_thousands(b.mamba_slots), gib(b.mamba_state))
                                : "no memory is left for the KV cache after the weights and the dry run";
  } else if (!pytorch(s.version) && r.max_seq_len > r.tokens) {
    r.refusal = fmt::format("Assertion failed: maxTokensInPagedKvCache ({}) must be large enough to process at least 1 "
                            "sequence of {} tokens",
                            r.tokens, r.max_seq_len);
  } else if (r.max_seq_len > r.max_seq_len_bound && !r.vswa) {
    if (s.words)
      r.rules.push_back(fmt::format("Attention window size {} exceeds upper bound {} for available blocks. Reducing to {}: "
                                    "max_seq_len becomes {}",
                                    r.max_seq_len, r.max_seq_len_bound, r.max_seq_len_bound, r.max_seq_len_bound));
  }
  r.starts = r.refusal.empty() && r.dtype_supported;

  // The lines TensorRT-LLM prints.
  if (r.refusal.empty() || r.refusal.rfind("Assertion", 0) == 0) {
    if (!pytorch(s.version)) {
      r.log_lines.push_back(fmt::format("Memory usage when calculating max tokens in paged kv cache: total: {} GiB, "
                                        "available: {} GiB",
                                        engine_gib(b.cuda_total), engine_gib(b.free_memory)));
      r.log_lines.push_back(fmt::format("Number of blocks in KV cache primary pool: {}", r.blocks));
    } else if (!r.vswa && (b.fraction_given || s.version == TrtllmVersion::v1_1)) {
      if (s.version == TrtllmVersion::v0_19)
        r.log_lines.push_back(fmt::format("Both free_gpu_memory_fraction and max_tokens are set (to {} and {}, "
                                          "respectively). The smaller value will be used.",
                                          py_float(b.fraction), r.creator_max_tokens));
      else
        r.log_lines.push_back(fmt::format("Both free_gpu_memory_fraction and max_tokens are set (to {} and {} with free "
                                          "memory {}GiB of total memory {}GiB, respectively). The smaller value will be used.",
                                          py_float(b.fraction), py_float(r.max_tokens),
                                          py_float(static_cast<double>(b.free_memory) / kGiB),
                                          py_float(static_cast<double>(b.cuda_total) / kGiB)));
    }
    for (const TrtllmWindow& w : r.windows) {
      if (s.version == TrtllmVersion::v1_1)
        r.log_lines.push_back(fmt::format("Max KV cache blocks per sequence: {} [window size={}], tokens per block={}, "
                                          "primary blocks={}, secondary blocks=0, max sequence length={}",
                                          w.blocks_per_sequence, w.window, tpb, w.blocks, r.max_seq_len));
      else
        r.log_lines.push_back(fmt::format("Max KV cache pages per sequence: {} [window size={}]", w.blocks_per_sequence,
                                          w.window));
    }
    r.log_lines.push_back(fmt::format("Number of tokens per block: {}.", tpb));
    r.log_lines.push_back(fmt::format("[MemUsageChange] Allocated {} GiB for max tokens in paged KV cache ({}).",
                                      engine_gib(r.pool_bytes), r.tokens));
    if (pytorch(s.version))
      r.log_lines.push_back(fmt::format("max_seq_len={}, max_num_requests={}, max_num_tokens={}, max_batch_size={}",
                                        std::min(r.max_seq_len, r.vswa ? r.max_seq_len : r.max_seq_len_bound),
                                        r.max_batch_size, r.max_num_tokens, r.max_batch_size));
  }

  // What the figures take for granted.
  if (!b.measured)
    r.assumptions.push_back(fmt::format("ESTIMATE: the free memory after the weights and the dry run = the CUDA total "
                                        "{}{} - weights - an activation and non-torch estimate calibrated on one H100 log "
                                        "(T1){}; give --trtllm-free-memory (the 'available KV cache memory' it logs / the "
                                        "fraction) to make the token count exact",
                                        gib(b.cuda_total), b.cuda_total_known ? "" : " (the driver's total less 0.46 GiB)",
                                        s.co_tenant_bytes ? " - " + gib(s.co_tenant_bytes) + " held by other processes" : ""));
  else if (pytorch(s.version))
    r.assumptions.push_back("the final KV manager sees the same free memory as the creator's estimate (TensorRT-LLM frees "
                            "the estimation pool and the dry-run executor before creating it)");
  const std::string_view resolved = cache.dtype->name;
  if (s.kv_dtype && cache.dtype != &automatic_cache(model) &&
      (resolved == "fp16" || resolved == "bf16" || resolved == "fp32"))
    r.assumptions.push_back(fmt::format("a {} cache: the model run at {} (the LLM API's dtype, or the TensorRT engine "
                                        "built with it)",
                                        resolved, resolved));
  if (s.kv_dtype == nullptr && model.checkpoint_kv_dtype)
    r.assumptions.push_back(fmt::format("KV dtype auto = {}: the checkpoint's own KV-cache quantization "
                                        "(kv_cache_quant_algo), which TensorRT-LLM takes under auto",
                                        cache.dtype->name));
  else if (s.kv_dtype == nullptr)
    r.assumptions.push_back(fmt::format("KV dtype auto = {}: a checkpoint with FP8 KV-cache quantization "
                                        "(kv_cache_quant_algo) caches fp8; give --kv-dtype fp8 for it",
                                        cache.dtype->name));
  if (s.tp > 1 && !shape.mla && std::any_of(model.layers.begin(), model.layers.end(),
                                             [&](const LayerSpec& l) { return l.kv_heads && l.kv_heads < s.tp; }))
    r.assumptions.push_back("TP above the KV heads: the pool holds ceil(heads / tp) = 1 a layer, the creator's estimate "
                            "floors to less; the final manager's fraction x free bound decides");
  if (s.pp > 1)
    r.assumptions.push_back("ESTIMATE: each stage's weights are its share of the layers (the embeddings on the first "
                            "stage and the output head on the last are spread evenly)");
  if (s.tp > 1) r.assumptions.push_back("every tensor-parallel rank alike");
  if (r.vswa)
    r.assumptions.push_back("VSWA: the Allocated line shown sums the windows' pools with the largest window's tokens "
                            "(how TensorRT-LLM prints VSWA pools is not confirmed); a request holds min(ctx, window) "
                            "tokens of each window's pool");
  else if (std::any_of(model.layers.begin(), model.layers.end(), [](const LayerSpec& l) { return l.kind == LayerKind::sliding; }))
    r.assumptions.push_back("sliding-window layers keep max_seq_len tokens: TensorRT-LLM's KV manager windows come from "
                            "--max_attention_window, not the model's config");
  if (shape.dsa)
    r.assumptions.push_back("DSA: the indexer key with fp8 values (132 B a layer at 128), not the fp4 indexer");
  return r;
}

}  // namespace kvplan
