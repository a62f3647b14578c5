#include "engines/vllm/rules.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "kvplan/plan.h"
#include "kvplan/error.h"
#include "kvplan/units.h"
#include "model/checked.h"

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
};

/// vLLM's cache dtypes: auto (the model's), bfloat16/float16, fp8 (e4m3, e5m2). kvplan's other
/// types (int8, int4, llama.cpp's blocks) have no vLLM kernel.
const Dtype& vllm_cache_dtype(const ModelSpec& model, const VllmSettings& settings) {
  if (settings.kv_dtype == nullptr) return parse_kv_dtype("auto", *model.weight_dtype);
  const std::string_view name = settings.kv_dtype->name;
  if (name == "fp16" || name == "bf16" || name == "fp32" || name == "fp8" || name == "fp8_e5m2") return *settings.kv_dtype;
  throw Error(fmt::format("--kv-cache-dtype {}: vLLM stores the KV cache as auto (the model's dtype), bfloat16, "
                          "float16, fp8, fp8_e4m3 or fp8_e5m2",
                          name));
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

/// "sm_90" in the catalog's architecture text -> 90; 0 when absent.
unsigned compute_capability(const GpuSpec& gpu) {
  const std::size_t at = gpu.arch.find("sm_");
  if (at == std::string::npos) return 0;
  unsigned value = 0;
  const char* begin = gpu.arch.data() + at + 3;
  std::from_chars(begin, gpu.arch.data() + gpu.arch.size(), value);
  return value;
}

/// The attention block size: --block-size, else 16 (FlashAttention, FlashInfer, Triton). MLA
/// backends force theirs (platforms/cuda.py): FlashMLA on Hopper 64, CUTLASS MLA on Blackwell 128.
std::uint32_t attention_block_size(const GpuSpec& gpu, const VllmSettings& settings, bool mla,
                                   std::vector<std::string>& rules) {
  const std::uint32_t chosen = settings.block_size ? settings.block_size : 16;
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

/// What each layer keeps per GPU, grouped into types of equal shape.
std::vector<LayerType> layer_types(const ModelSpec& model, const Dtype& dtype, const VllmSettings& settings,
                                   std::vector<std::string>& rules) {
  const bool merge_windows = !settings.hybrid_kv_cache_manager;
  bool chunked_as_full = false;
  std::vector<LayerType> types;
  for (const LayerSpec& layer : model.layers) {
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
        const std::uint64_t heads = kv_heads_per_rank(layer.kv_heads, settings.tensor_parallel);
        type.bytes_per_token = dtype_bytes(
            dtype, (Checked(heads, "KV bytes per token") * (Checked(layer.k_head_dim, "KV bytes per token") + layer.v_head_dim)).value());
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
        type.bytes_per_token = dtype_bytes(dtype, layer.k_head_dim);
        break;
      case LayerKind::linear:
        if (settings.tensor_parallel > 1)
          throw unsupported_architecture("vLLM profile: recurrent (Mamba, Gated DeltaNet, KDA) state with -tp > 1",
                                         "not modelled");
        for (const StateTensor& tensor : layer.state)
          type.state_bytes = checked_add(type.state_bytes, dtype_bytes(*tensor.dtype, tensor.elements), "state");
        break;
      case LayerKind::none:
      case LayerKind::shared: continue;  // no KV spec: nothing allocated
      case LayerKind::cross:
        throw unsupported_architecture("vLLM profile: cross-attention layers (Llama 3.2 Vision)",
                                       "MllamaForConditionalGeneration was removed from vLLM after 0.10.2");
    }
    if (layer.index_head_dim)
      throw unsupported_architecture("vLLM profile: DSA indexer cache (index_head_dim)", "not modelled");
    const auto same = std::find_if(types.begin(), types.end(), [&](const LayerType& t) {
      return t.kind == type.kind && t.window == type.window && t.bytes_per_token == type.bytes_per_token &&
             t.state_bytes == type.state_bytes;
    });
    if (same != types.end()) ++same->layers;
    else types.push_back((type.layers = 1, type));
  }
  if (merge_windows) rules.push_back("--disable-hybrid-kv-cache-manager: sliding and chunked layers keep every token");
  else if (chunked_as_full)
    rules.push_back("chunked-local layers keep every token: before 0.21 VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE "
                    "is off, so vLLM turns them into full attention");
  return types;
}

/// Blocks one request of `max_len` tokens needs in a group (kv_cache_interface.py,
/// max_memory_usage_bytes / page).
std::uint64_t blocks_per_request(const VllmGroup& group, std::uint64_t max_len, std::uint64_t mnbt, bool prefix_caching) {
  switch (group.kind) {
    // Saturating sums: a window near 2^64 holds every token (a wrapped sum held almost none).
    case LayerKind::sliding: return ceil_div(std::min(saturating_add(group.window - 1, mnbt), max_len), group.block_size) + 1;
    case LayerKind::chunked: return ceil_div(std::min(saturating_add(group.window, mnbt), max_len), group.block_size);
    case LayerKind::linear: return prefix_caching ? 2 : 1;
    default: return ceil_div(max_len, group.block_size);
  }
}

/// Page sizes made equal and layers grouped (kv_cache_utils.py). Fills the result's page,
/// layers per block and groups; plan_vllm then counts each group's blocks per request.
void form_groups(std::vector<LayerType>& types, const GpuSpec& gpu, const VllmSettings& settings, VllmResult& r) {
  const bool mla = std::any_of(types.begin(), types.end(), [](const LayerType& t) { return t.kind == LayerKind::mla; });
  const std::uint32_t block = attention_block_size(gpu, settings, mla, r.rules);
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
    return;
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
  for (const LayerType& type : types) {
    const std::uint32_t count = static_cast<std::uint32_t>(ceil_div(type.layers, group_size));
    for (std::uint32_t g = 0; g < count; ++g) {
      const std::uint32_t real = g + 1 < count ? group_size : type.layers - (count - 1) * group_size;
      r.groups.push_back({type.kind, type.window, real, group_size - real, type.block_size, 0});
      padding_total += group_size - real;
    }
  }
  r.rules.push_back(fmt::format("{} KV-cache groups of {} layers (group size: the fewest layers of a kind, or the most when "
                                "within 1.5x){}; every page {} B",
                                r.groups.size(), group_size,
                                padding_total ? fmt::format(", {} padding layer{} allocated", padding_total,
                                                            padding_total == 1 ? "" : "s")
                                              : "",
                                format_thousands(page)));
}

/// Estimates of what vLLM measures while profiling (vllm-rules.md §8.5), per GPU.
void estimate_budget(const ModelSpec& model, const GpuSpec& gpu, const VllmSettings& settings, VllmResult& r) {
  VllmBudget& b = r.budget;
  b.total_is_cuda_visible = gpu.cuda_total_bytes.has_value();
  b.total = gpu.cuda_total_bytes.value_or(gpu.memory_bytes);
  b.requested = scale_by_millionths(b.total, settings.utilization_millionths);
  r.rules.push_back(fmt::format("budget {} = {} x gpu_memory_utilization {:.2f}{}", gib(b.requested), gib(b.total),
                                static_cast<double>(settings.utilization_millionths) / 1e6,
                                b.total_is_cuda_visible ? " (the CUDA-visible total vLLM sees on this GPU)"
                                                        : " (the driver's total: vLLM sees a little less, ~0.46 GiB on an H100)"));
  const std::uint32_t tp = settings.tensor_parallel;
  b.weights = ceil_div(estimate_weights(model, nullptr).bytes, tp);
  if (model.vocab_size == 0)
    throw Error("the vLLM profile estimates the sampler's memory from the vocabulary size, which this model does not "
                "state (vocab_size)",
                ExitCode::unsupported_architecture);
  // The torch peak of profile_run is the dummy sampler's: fp32 logits, sorted logits and int64
  // indices of max_num_seqs rows (16 B per vocabulary entry); the forward pass is smaller for
  // dense models. It does not shrink with TP.
  b.activation = checked_mul(checked_mul(16, std::min<std::uint64_t>(r.max_num_seqs, r.max_num_batched_tokens), "activation estimate"), model.vocab_size,
                             "activation estimate");
  // Non-torch memory allocated during profiling, as vLLM's logs show it (H100): NCCL buffers at TP > 1.
  const double non_torch_gib = settings.version == VllmVersion::v0_10 ? (tp > 1 ? 0.1 : 0.0) : (tp > 1 ? 2.1 : 0.25);
  b.non_torch = static_cast<std::uint64_t>(non_torch_gib * static_cast<double>(GiB));
  // CUDA graphs: budgeted from 0.21 (profile_cudagraph_memory), roughly 0.45 GiB + 0.014 GiB a layer.
  // --enforce-eager captures none, so there is nothing to profile or subtract.
  b.cuda_graphs = settings.enforce_eager
                      ? 0
                      : static_cast<std::uint64_t>((0.45 + 0.014 * model.layer_count()) * static_cast<double>(GiB));
  b.cuda_graphs_subtracted = settings.version == VllmVersion::v0_21 && !settings.enforce_eager;
  if (settings.enforce_eager) r.rules.push_back("--enforce-eager: no CUDA graphs, none in the budget");
  const std::uint64_t used = checked_add(checked_add(b.weights, b.activation, "vLLM memory"),
                                         checked_add(b.non_torch, b.cuda_graphs_subtracted ? b.cuda_graphs : 0, "vLLM memory"),
                                         "vLLM memory");
  if (settings.kv_cache_memory_bytes) {
    // The pool is what the flag says; weights, activations and graphs still need the card.
    b.from_kv_cache_memory = true;
    if (*settings.kv_cache_memory_bytes > (std::uint64_t{1} << 62)) throw Error("--kv-cache-memory: too large");
    b.available = static_cast<std::int64_t>(*settings.kv_cache_memory_bytes);
    r.rules.push_back(fmt::format("--kv-cache-memory {}: vLLM skips profiling and allocates that much for the KV cache; "
                                  "weights {}, activation ~{}, non-torch ~{}{} still need the card's {}",
                                  gib(*settings.kv_cache_memory_bytes), gib(b.weights), gib(b.activation), gib(b.non_torch),
                                  b.cuda_graphs_subtracted ? " and CUDA graphs ~" + gib(b.cuda_graphs) : "", gib(b.total)));
    return;
  }
  if (b.requested > (std::uint64_t{1} << 62) || used > (std::uint64_t{1} << 62)) throw Error("vLLM budget: too large");
  b.available = static_cast<std::int64_t>(b.requested) - static_cast<std::int64_t>(used);
  r.rules.push_back(fmt::format("estimate: available = budget - weights/TP {} - sampler peak {} (16 B x {} seqs x {} vocab) "
                                "- non-torch {}{}",
                                gib(b.weights), gib(b.activation), std::min<std::uint64_t>(r.max_num_seqs, r.max_num_batched_tokens),
                                model.vocab_size, gib(b.non_torch),
                                b.cuda_graphs_subtracted ? fmt::format(" - CUDA graphs {}", gib(b.cuda_graphs))
                                                         : " (CUDA graphs, ~" + gib(b.cuda_graphs) +
                                                               ", live outside the budget before 0.21)"));
}

/// Bytes one request of `len` tokens needs, summed over the real layers of every group
/// (_check_enough_kv_cache_memory: padding layers are not needed).
std::uint64_t request_bytes_at(const VllmResult& r, std::uint64_t len, const VllmSettings& settings) {
  std::uint64_t bytes = 0;
  for (const VllmGroup& group : r.groups) {
    const std::uint64_t blocks = blocks_per_request(group, len, r.max_num_batched_tokens, settings.prefix_caching);
    const std::uint64_t layers = r.uniform ? r.layers_per_block : group.layers;
    bytes = checked_add(bytes, checked_mul(checked_mul(blocks, r.page_bytes, "request"), layers, "request"), "request");
  }
  return bytes;
}

}  // namespace

VllmVersion parse_vllm_version(std::string_view text, std::string_view flag) {
  if (text == "latest") return VllmVersion::v0_21;
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
  return *minor == 10 ? VllmVersion::v0_10 : *minor <= 20 ? VllmVersion::v0_11 : VllmVersion::v0_21;
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

VllmResult plan_vllm(const ModelSpec& model, const GpuSpec& gpu, const VllmSettings& settings) {
  if (settings.tensor_parallel == 0) throw Error("-tp: must be at least 1");
  VllmResult r;
  r.tensor_parallel = settings.tensor_parallel;
  r.max_model_len = settings.max_model_len ? settings.max_model_len : model.max_context;
  if (r.max_model_len == 0) throw Error("--max-model-len is required: the model does not state its trained context");
  // EngineArgs.get_batch_defaults (API server): large defaults on >= 70 GiB cards other than the A100.
  const std::uint64_t total = gpu.cuda_total_bytes.value_or(gpu.memory_bytes);
  const bool large = total >= 70 * GiB && gpu.name.find("A100") == std::string::npos;
  r.max_num_batched_tokens = settings.max_num_batched_tokens ? settings.max_num_batched_tokens : large ? 8192 : 2048;
  r.max_num_seqs = settings.max_num_seqs ? settings.max_num_seqs : large ? 1024 : 256;
  const Dtype& dtype = vllm_cache_dtype(model, settings);
  r.kv_dtype = std::string(dtype.name);
  r.rules.push_back(fmt::format("vLLM {} rules, tensor parallel {}: figures are per GPU", to_string(settings.version),
                                settings.tensor_parallel));

  std::vector<LayerType> types = layer_types(model, dtype, settings, r.rules);
  form_groups(types, gpu, settings, r);
  for (VllmGroup& group : r.groups) {
    group.blocks_per_request = blocks_per_request(group, r.max_model_len, r.max_num_batched_tokens, settings.prefix_caching);
    r.blocks_per_request = checked_add(r.blocks_per_request, group.blocks_per_request, "blocks per request");
  }
  estimate_budget(model, gpu, settings, r);

  // num_blocks = avail // page // layers per block (get_num_blocks); every rank alike.
  const std::uint64_t block_bytes = checked_mul(r.page_bytes, r.layers_per_block, "KV block");
  if (block_bytes == 0) throw Error("vLLM profile: a KV block of 0 bytes (a layer whose cache is empty)");
  r.num_blocks = r.budget.available > 0 ? static_cast<std::uint64_t>(r.budget.available) / block_bytes : 0;
  r.cache_bytes = (Checked(r.num_blocks, "KV cache") * block_bytes * (r.uniform ? 1 : r.groups.size())).value();
  if (settings.version == VllmVersion::v0_21) {
    // As vLLM computes it, in floating point; clamped so that absurd inputs cannot overflow the cast.
    r.gpu_kv_cache_tokens = static_cast<std::uint64_t>(
        std::min(r.max_concurrency() * static_cast<double>(r.max_model_len), 1.8e19));
    r.rules.push_back("GPU KV cache size = int(max concurrency x max_model_len) (get_kv_cache_capacity)");
  } else {
    std::uint32_t smallest = r.groups.front().block_size;
    for (const VllmGroup& group : r.groups) smallest = std::min(smallest, group.block_size);
    r.gpu_kv_cache_tokens = r.num_blocks / r.groups.size() * smallest;
    r.rules.push_back(r.uniform ? "GPU KV cache size = blocks x block size"
                                : "GPU KV cache size = blocks // groups x smallest block size (not a context capacity "
                                  "for a hybrid model: read the concurrency)");
  }

  r.request_bytes = request_bytes_at(r, r.max_model_len, settings);
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

}  // namespace kvplan
