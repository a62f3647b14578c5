#include "engines/llamacpp/rules.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "model/checked.h"
#include "kvplan/error.h"
#include "kvplan/plan.h"
#include "model/suggest.h"
#include "kvplan/units.h"
#include "model/text.h"
#include "model/wide_int.h"

namespace kvplan {

namespace {

/// LLAMA_MAX_SEQ in llama-cparams.h.
constexpr std::uint32_t kMaxSeq = 256;

/// GGML_PAD(x, 256): llama.cpp pads n_ctx, n_ctx_seq and the SWA cache to 256 cells.
std::uint64_t pad256(std::uint64_t x) { return round_up_to(x, 256, "context size"); }

/// The cache types llama.cpp's -ctk/-ctv accept (common/arg.cpp, kv_cache_types).
constexpr std::array<std::string_view, 9> kCacheTypes = {"f32",  "f16",  "bf16", "q8_0",  "q4_0",
                                                         "q4_1", "q5_0", "q5_1", "iq4_nl"};

bool is_quantized(const GgmlType& type) { return type.block_elements > 1; }

std::string mib(std::uint64_t bytes) { return fmt::format("{:.2f} MiB", static_cast<double>(bytes) / MiB); }

using CacheLayer = LlamaCppCacheLayer;

/// Layers with their own K/V cells. A shared layer reads an earlier layer's cells (llama.cpp's
/// `reuse` callback) and allocates nothing.
bool holds_tokens(LayerKind kind) {
  return kind != LayerKind::linear && kind != LayerKind::none && kind != LayerKind::shared;
}
bool is_windowed(LayerKind kind) { return kind == LayerKind::sliding || kind == LayerKind::chunked; }

/// checked_add and checked_mul without a call where nothing overflows (a plan makes a few hundred
/// sums, a search plans thousands of times): the same values, and checked_add's or checked_mul's
/// OverflowError, with the same words, where something does.
inline std::uint64_t sum_checked(std::uint64_t a, std::uint64_t b, std::string_view what) {
  std::uint64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? checked_add(a, b, what) : sum;
}
inline std::uint64_t product_checked(std::uint64_t a, std::uint64_t b, std::string_view what) {
  std::uint64_t product = 0;
  return __builtin_mul_overflow(a, b, &product) ? checked_mul(a, b, what) : product;
}

/// Bytes of a [row, cells, streams] tensor of `type`: ggml_row_size(type, row) x cells x streams.
std::uint64_t tensor_bytes(const GgmlType& type, std::uint64_t row, std::uint64_t cells, std::uint64_t streams,
                           std::string_view what) {
  if (row % type.block_elements != 0)
    throw Error(fmt::format("llama.cpp cannot store a {} row of {} values as {} (blocks of {}); it would abort", what,
                            row, type.name, type.block_elements));
  const std::uint64_t row_bytes = product_checked(row / type.block_elements, type.block_bytes, "cache size");
  return product_checked(product_checked(row_bytes, cells, "cache size"), streams, "cache size");
}

/// Architectures whose nextn (MTP) layers llama.cpp v0.4.0 filters out of the KV cache
/// (llama_model::create_memory: the hybrid Qwen filter `il < n_layer()`).
bool filters_nextn_layers(std::string_view arch) {
  // deepseek32 and glm-dsa: create_memory's filter_mla / filter_lid (il < n_layer()) when the file
  // has nextn layers; qwen3next, qwen35 and qwen35moe: the hybrid's filter_attn (il < n_layer());
  // mimo2, step35 and hy_v3: the main context's filter (il < n_layer()) when the file has nextn
  // layers; qwen4exp and minimax-01: the hybrid's filter_attn, as qwen3next's; dots3note:
  // llama_kv_cache_dsa_iswa's filter_mla.
  return arch == "qwen3next" || arch == "qwen35" || arch == "qwen35moe" || arch == "deepseek32" ||
         arch == "glm-dsa" || arch == "mimo2" || arch == "step35" || arch == "hy_v3" || arch == "qwen4exp" ||
         arch == "minimax-01" || arch == "dots3note";
}

/// The GGUF architectures whose memory is llama_kv_cache_dsa: the GGUF reader marks the layers
/// llama.cpp gives an indexer key. A config.json's indexer (deepseek_v32, glm_moe_dsa) follows the
/// Hugging Face rule, which for GLM is not llama.cpp's table: it stays refused.
bool reads_dsa_indexer(std::string_view arch) {
  return arch == "deepseek32" || arch == "glm-dsa" || arch == "dots3note";
}

/// dots3note's llama_kv_cache_dsa_iswa: DSA's two caches on the non-sliding layers, then a K-only
/// sliding cache (its sliding layers are MLA too: K rows only).
bool dsa_beside_window(std::string_view arch) { return arch == "dots3note"; }

/// deepseek4's llama_kv_cache_dsv4: a K-only window on every layer beside compressed caches.
bool keeps_compressed_caches(std::string_view arch) { return arch == "deepseek4"; }

/// llama-kv-cache-dsv4.cpp's compressed cache size: pad256(max(1, ceil(n_ctx_seq / ratio))) cells.
std::uint64_t compressed_cells(std::uint64_t n_ctx_seq, std::uint64_t ratio) {
  return pad256(std::max<std::uint64_t>(1, n_ctx_seq / ratio + (n_ctx_seq % ratio != 0 ? 1 : 0)));
}

/// minimax-m3's indexer cache (llama_kv_cache_msa) and qwen4exp's (llama_memory_hybrid_idx): the
/// indexer key and a V of one head on plain attention layers.
bool reads_msa_indexer(std::string_view arch) { return arch == "minimax-m3" || arch == "qwen4exp"; }

/// Sliding layers of these architectures are full attention in llama.cpp (it ignores or disables
/// their window): Hugging Face model types that llama.cpp converts to such archs, and the GGUF ones.
bool ignores_window(std::string_view arch) {
  static constexpr std::array<std::string_view, 10> kIgnore = {
      "llama", "mistral", "mixtral", "phi3", "qwen2", "qwen2_moe", "qwen2moe", "qwen3", "qwen3_moe", "qwen3moe"};
  return std::find(kIgnore.begin(), kIgnore.end(), arch) != kIgnore.end();
}

}  // namespace

namespace {

/// A rule sentence formatted into `rules` only when the caller wants the words (a probe does not:
/// formatting was a fifth of a probe's instructions, and a sentence of more than 15 characters is
/// a heap block even when it is not formatted). A sentence whose arguments cost something to
/// compute is guarded by `words` at its call.
struct RuleWords {
  std::vector<std::string>& rules;
  bool words;
  template <typename... T>
  void operator()(fmt::format_string<T...> format, T&&... args) const {
    if (words) rules.push_back(fmt::vformat(format, fmt::make_format_args(args...)));
  }
  /// A sentence without arguments.
  void text(std::string_view sentence) const {
    if (words) rules.emplace_back(sentence);
  }
};

/// The span covering both: a file part's memory-mapped range over several layers.
LlamaCppLayerWeights::Span joined(const LlamaCppLayerWeights::Span& a, const LlamaCppLayerWeights::Span& b) {
  if (!a.any) return b;
  if (!b.any) return a;
  return {true, std::min(a.first, b.first), std::max(a.last, b.last)};
}

}  // namespace

LlamaCppLayerWeights sum_by_layer(const std::vector<ModelFileTensor>& tensors) {
  LlamaCppLayerWeights out;
  out.from_tensors = tensors.size();
  // A layout no real file has (a layer index past kMaxLayers, hundreds of parts) is placed tensor by tensor.
  constexpr std::uint32_t kMostParts = 64;
  std::int64_t last_layer = -1;
  std::uint32_t files = 0;
  for (const ModelFileTensor& t : tensors) {
    if (t.layer < ModelFileTensor::output || t.layer > static_cast<std::int64_t>(kMaxLayers) || t.file >= kMostParts)
      return out;
    last_layer = std::max<std::int64_t>(last_layer, t.layer);
    files = std::max(files, t.file + 1);
  }
  const std::size_t slots = static_cast<std::size_t>(last_layer + 3);
  if (slots * files > 65536) return out;  // a hostile layout: no table of millions of spans
  out.files = files;
  out.bytes.assign(slots, 0);
  out.any.assign(slots, false);
  out.spans.assign(slots * files, {});
  u128 total = 0;
  std::array<std::uint64_t, kMostParts> file_end{};
  for (const ModelFileTensor& t : tensors) {
    if (t.offset > UINT64_MAX - t.bytes) return LlamaCppLayerWeights{tensors.size()};
    const std::uint64_t end = t.offset + t.bytes;
    const std::size_t slot = t.layer >= 0 ? static_cast<std::size_t>(t.layer) + 2 : t.layer == ModelFileTensor::input ? 0 : 1;
    total += t.bytes;
    out.bytes[slot] += t.bytes;  // wraps only when the total passes 64 bits, refused below
    LlamaCppLayerWeights::Span& span = out.spans[slot * files + t.file];
    if (span.any) {
      span.first = std::min(span.first, t.offset);
      span.last = std::max(span.last, end);
    } else {
      span = {true, t.offset, end};
    }
    file_end[t.file] = std::max(file_end[t.file], end);
  }
  for (std::size_t slot = 0; slot < slots; ++slot)
    for (std::uint32_t file = 0; file < files; ++file) out.any[slot] = out.any[slot] || out.spans[slot * files + file].any;
  // Every sum placing makes (the GPU's tensors, the host layers', the host spans') is at most one of these.
  u128 ends = 0;
  for (const std::uint64_t end : file_end) ends += end;
  if (total > UINT64_MAX || ends > UINT64_MAX) return LlamaCppLayerWeights{tensors.size()};
  out.exact = true;
  // No sum passes 64 bits (above), so neither does any of these.
  const std::size_t layers = slots - 2;
  out.layers_from.assign(layers + 1, 0);
  for (std::size_t il = layers; il-- > 0;) out.layers_from[il] = out.layers_from[il + 1] + out.bytes[il + 2];
  out.layers_below.assign((layers + 1) * files, {});
  for (std::size_t il = 0; il < layers; ++il)
    for (std::uint32_t file = 0; file < files; ++file)
      out.layers_below[(il + 1) * files + file] = joined(out.layers_below[il * files + file], out.spans[(il + 2) * files + file]);
  return out;
}

std::uint64_t LlamaCppLayerLoads::gpu_bytes(std::int64_t ngl) const {
  const std::uint64_t offloadable = suffix.size() - 1;  // n_layer_all + 1
  const std::uint64_t on_gpu = std::min<std::uint64_t>(static_cast<std::uint64_t>(std::max<std::int64_t>(ngl, 0)), offloadable);
  std::uint64_t bytes = suffix[offloadable - on_gpu];
  if (even_weights != 0) bytes += static_cast<std::uint64_t>(static_cast<u128>(even_weights) * on_gpu / offloadable);
  return bytes;
}

LlamaCppModelFacts llamacpp_facts(const ModelSpec& model) {
  // llama.cpp (and Ollama) run GGUF files. An fp8, int4 or nvfp4 safetensors release is not one:
  // convert_hf_to_gguf.py dequantizes it to the type it writes, so its own size says nothing.
  if (weights_are_quantized_safetensors(model))
    throw Error(fmt::format("{}: its weights are an {} safetensors checkpoint, which llama.cpp and Ollama do not load as it is "
                            "(convert_hf_to_gguf.py dequantizes it to the type it writes): give the GGUF file "
                            "(--model FILE.gguf) or a GGUF repository (--model org/Name-GGUF:Q8_0)",
                            model.id, model.weight_dtype->name),
                ExitCode::unsupported_architecture);
  LlamaCppModelFacts facts;
  facts.n_vocab = model.vocab_size;
  if (const ModelFile* file = model.file.get()) {
    facts.n_embd = file->n_embd;
    facts.n_ff_max = file->n_ff_max;
    facts.tensors = file->tensors;
    facts.output_tied = file->output_tied;
    facts.token_embd_bytes = file->token_embd_bytes;
    facts.notes = file->notes;
    facts.by_layer = sum_by_layer(facts.tensors);
  }
  try {
    facts.layout = read_llamacpp_layout(model);
  } catch (const Error&) {
    // Left unread: each plan reads the layers itself and throws this where it did.
  }
  return facts;
}

LlamaCppFlashAttn parse_llamacpp_flash_attn(std::string_view text) {
  const std::string t = ascii_lower(text);
  // common/arg.cpp: is_truthy / is_falsey / is_autoy
  if (t == "on" || t == "enabled" || t == "true" || t == "1") return LlamaCppFlashAttn::on;
  if (t == "off" || t == "disabled" || t == "false" || t == "0") return LlamaCppFlashAttn::off;
  if (t == "auto" || t == "-1") return LlamaCppFlashAttn::automatic;
  throw Error(fmt::format("--flash-attn: unknown value '{}' (llama.cpp accepts on, off, auto)", text));
}

LlamaCppSplitMode parse_llamacpp_split_mode(std::string_view text) {
  const std::string t = ascii_lower(text);
  if (t == "layer") return LlamaCppSplitMode::layer;
  if (t == "row") return LlamaCppSplitMode::row;
  if (t == "none") return LlamaCppSplitMode::none;
  throw Error(fmt::format("--split-mode: unknown value '{}' (llama.cpp accepts none, layer, row)", text));
}

std::string_view to_string(LlamaCppSplitMode mode) {
  switch (mode) {
    case LlamaCppSplitMode::layer: return "layer";
    case LlamaCppSplitMode::row: return "row";
    case LlamaCppSplitMode::none: return "none";
  }
  return "layer";
}

std::string_view to_string(LlamaCppFlashAttn mode) {
  switch (mode) {
    case LlamaCppFlashAttn::off: return "off";
    case LlamaCppFlashAttn::on: return "on";
    case LlamaCppFlashAttn::automatic: return "auto";
  }
  return "auto";
}

namespace {

/// The cache type `text` names (kvplan's fp32 / fp16 too), or nullptr.
const GgmlType* find_cache_type(std::string_view text) {
  // Compared as ascii_lower(text) would be, without building it: every row a search prices asks twice.
  const auto is = [text](std::string_view name) {
    return text.size() == name.size() && std::equal(text.begin(), text.end(), name.begin(), [](char c, char n) {
             return static_cast<char>(std::tolower(static_cast<unsigned char>(c))) == n;
           });
  };
  if (is("fp32")) return &ggml_type_by_name("f32");
  if (is("fp16")) return &ggml_type_by_name("f16");
  for (const std::string_view name : kCacheTypes)
    if (is(name)) return &ggml_type_by_name(name);
  return nullptr;
}

std::string cache_type_error(std::string_view text, std::string_view flag) {
  const std::string t = ascii_lower(text);
  std::string hint;
  if (t == "fp8" || t == "fp8_e4m3" || t == "fp8_e5m2" || t == "int8") hint = " (llama.cpp has no 8-bit float or int8 cache; q8_0 is its 8-bit type)";
  else if (t == "int4") hint = " (llama.cpp's 4-bit cache types are q4_0, q4_1 and iq4_nl)";
  else hint = did_you_mean(text, std::vector<std::string>(kCacheTypes.begin(), kCacheTypes.end()));
  return fmt::format("{}: '{}' is not a llama.cpp cache type{}; llama.cpp accepts f32 f16 bf16 q8_0 q4_0 q4_1 "
                     "q5_0 q5_1 iq4_nl",
                     flag, text, hint);
}

}  // namespace

const GgmlType& parse_llamacpp_cache_type(std::string_view text, std::string_view flag) {
  if (const GgmlType* type = find_cache_type(text)) return *type;
  throw Error(cache_type_error(text, flag));
}

std::optional<std::string> llamacpp_cache_type_error(std::string_view text, std::string_view flag) {
  if (find_cache_type(text)) return std::nullopt;
  return cache_type_error(text, flag);
}

LlamaCppLayout read_llamacpp_layout(const ModelSpec& model) {
  LlamaCppLayout out;
  out.model = &model;
  out.spec_layers = model.layers.size();
  out.spec_mtp_layers = model.mtp_layers;
  std::vector<CacheLayer>& layers = out.layers;
  layers.reserve(std::size_t{model.layers.size()} + model.mtp_layers);  // the nextn layers copy one by reference
  bool any_plain = false;
  out.compressed = keeps_compressed_caches(model.architecture);
  for (std::uint32_t il = 0; il < model.layers.size(); ++il) {
    const LayerSpec& spec = model.layers[il];
    if (spec.kind == LayerKind::cross)
      throw unsupported_architecture("layer " + std::to_string(il),
                                     "cross-attention to image tokens (Llama 3.2 Vision): llama.cpp has no mllama");
    CacheLayer layer{il, spec.kind};
    if (spec.kind == LayerKind::none && model.file &&
        std::find(model.file->empty_kv_layers.begin(), model.file->empty_kv_layers.end(), il) !=
            model.file->empty_kv_layers.end()) {
      // A layer without KV heads that llama_kv_cache still creates, K and V 0 wide: it counts
      // among the cache's layers, and with V transposed its V rows take the widest layer's width.
      layer.kind = LayerKind::full;
      layers.push_back(layer);
      continue;
    }
    if (is_windowed(spec.kind) && ignores_window(model.architecture)) {
      out.window_ignored = true;
      layer.kind = LayerKind::full;
    }
    if (holds_tokens(spec.kind)) {
      layer.k_head = spec.k_head_dim;
      layer.v_head = spec.kind == LayerKind::mla ? 0 : spec.v_head_dim;
      layer.k_row = std::uint64_t{spec.kv_heads} * spec.k_head_dim;
      layer.v_row = std::uint64_t{spec.kv_heads} * layer.v_head;
      // dots3note's sliding layers are MLA's K rows under a window (no V): not plain attention.
      const bool k_only = spec.kind == LayerKind::mla || out.compressed ||
                          (dsa_beside_window(model.architecture) && layer.v_head == 0);
      (k_only ? out.any_mla : any_plain) = true;
    }
    for (const StateTensor& state : spec.state) {
      std::uint64_t& row = state.name == "conv" ? layer.r_row : layer.s_row;
      row = sum_checked(row, state.elements, "state size");
    }
    if (spec.compress_ratio != 0 && !out.compressed)
      throw unsupported_architecture("layer " + std::to_string(il) + " compress_ratio",
                                     std::to_string(spec.compress_ratio) +
                                         " (kvplan's llama.cpp profile reads compressed caches from a deepseek4 GGUF file)");
    layer.compress_ratio = spec.compress_ratio;
    if (out.compressed && spec.index_head_dim != 0) {
      if (spec.compress_ratio != 4)
        throw unsupported_architecture("layer " + std::to_string(il) + " index_head_dim",
                                       "an indexer key outside a CSA layer (deepseek4 keeps it on ratio-4 layers)");
      layer.indexer_row = spec.index_head_dim;  // hparams_lid: one head of indexer_head_size
    } else if (spec.index_head_dim != 0) {
      const bool msa = reads_msa_indexer(model.architecture) && spec.kind == LayerKind::full;
      if (!msa && (!reads_dsa_indexer(model.architecture) || spec.kind != LayerKind::mla))
        throw unsupported_architecture(
            "layer " + std::to_string(il) + " index_head_dim",
            std::to_string(spec.index_head_dim) +
                " (a DSA lightning-indexer cache: kvplan's llama.cpp profile reads it from a deepseek32 or glm-dsa "
                "GGUF file, whose keys say which layers llama.cpp gives one; give the GGUF file)");
      layer.indexer_row = spec.index_head_dim;  // hparams_lid: one key head of indexer_head_size
      if (msa) layer.indexer_v_row = spec.v_head_dim;  // hparams_idx: value_length, one head
      out.any_indexer = true;
    }
    layer.has_state = spec.kind == LayerKind::linear || !spec.state.empty();
    layers.push_back(layer);
  }
  if (out.any_mla && any_plain) throw unsupported_architecture("layers", "MLA mixed with plain attention");
  const std::uint32_t n_layer = static_cast<std::uint32_t>(model.layers.size());
  out.n_layer_all = n_layer + model.mtp_layers;
  if (model.mtp_layers > 0) {
    const auto last = std::find_if(layers.rbegin(), layers.rend(), [](const CacheLayer& l) { return holds_tokens(l.kind); });
    if (!filters_nextn_layers(model.architecture) && last != layers.rend()) {
      const CacheLayer shape = *last;  // copied: the pushes below may move the vector
      for (std::uint32_t i = 0; i < model.mtp_layers; ++i) {
        CacheLayer extra = shape;
        extra.il = n_layer + i;
        if (is_windowed(extra.kind)) extra.kind = LayerKind::full;  // set_swa_pattern marks them non-SWA
        layers.push_back(extra);
      }
      out.nextn_cached = true;
    }
  }

  // The one window llama.cpp keeps per model (hparams.n_swa).
  for (const CacheLayer& layer : layers) {
    if (!is_windowed(layer.kind)) continue;
    (layer.kind == LayerKind::sliding ? out.any_sliding : out.any_chunked) = true;
    const std::uint64_t window = model.layers[layer.il].window;
    if (out.n_swa != 0 && window != out.n_swa)
      throw unsupported_architecture("sliding_window", "different windows per layer (llama.cpp keeps one n_swa)");
    out.n_swa = window;
  }
  if (out.any_sliding && out.any_chunked) throw unsupported_architecture("layers", "sliding mixed with chunked attention");
  if (out.any_indexer && (out.any_sliding || out.any_chunked) && !dsa_beside_window(model.architecture))
    throw unsupported_architecture("layers", "a DSA indexer beside sliding layers (llama_kv_cache_dsa_iswa: not modelled)");

  // V rows: [TAG_V_CACHE_VARIABLE] in llama-kv-cache.cpp.
  for (const CacheLayer& layer : layers) {
    out.any_recurrent = out.any_recurrent || layer.has_state;
    if (!holds_tokens(layer.kind)) continue;
    out.any_attention = true;
    if (out.v_row_max != 0 && layer.v_row != out.v_row_max) out.v_varies = true;
    out.v_row_max = std::max(out.v_row_max, layer.v_row);
  }

  // Each cache's runs of layers of one shape, in the order its loop adds them.
  const auto add_runs = [&](std::vector<LlamaCppLayout::Run>& runs, auto belongs) {
    for (const CacheLayer& layer : layers) {
      if (!holds_tokens(layer.kind) || !belongs(layer)) continue;
      if (runs.empty() || runs.back().k_row != layer.k_row || runs.back().v_row != layer.v_row)
        runs.push_back({layer.k_row, layer.v_row, static_cast<std::uint32_t>(out.ils.size()), 0});
      out.ils.push_back(layer.il);
      ++runs.back().count;
    }
  };
  add_runs(out.runs[LlamaCppLayout::every_cache_layer], [](const CacheLayer&) { return true; });
  add_runs(out.runs[LlamaCppLayout::non_swa], [](const CacheLayer& l) { return !is_windowed(l.kind); });
  add_runs(out.runs[LlamaCppLayout::swa], [](const CacheLayer& l) { return is_windowed(l.kind); });
  add_runs(out.runs[LlamaCppLayout::csa], [](const CacheLayer& l) { return l.compress_ratio == 4; });
  add_runs(out.runs[LlamaCppLayout::hca], [](const CacheLayer& l) { return l.compress_ratio == 128; });
  // llama_kv_cache_dsa's indexer cache: its rows are the indexer key, K only (hparams_lid keeps is_mla);
  // llama_kv_cache_msa's adds a V row of one head; deepseek4's lightning-indexer cache is DSA's.
  std::vector<LlamaCppLayout::Run>& indexer_runs = out.runs[out.compressed ? LlamaCppLayout::lid : LlamaCppLayout::indexer];
  for (const CacheLayer& layer : layers) {
    if (layer.indexer_row == 0) continue;
    if (indexer_runs.empty() || indexer_runs.back().k_row != layer.indexer_row ||
        indexer_runs.back().v_row != layer.indexer_v_row)
      indexer_runs.push_back({layer.indexer_row, layer.indexer_v_row, static_cast<std::uint32_t>(out.ils.size()), 0});
    out.ils.push_back(layer.il);
    ++indexer_runs.back().count;
  }
  return out;
}

LlamaCppResult plan_llamacpp(const ModelSpec& model, const LlamaCppSettings& settings, const LlamaCppModelFacts& facts,
                             LlamaCppLayerLoads* loads) {
  if (loads) *loads = LlamaCppLayerLoads{};
  LlamaCppResult out;
  std::vector<std::string>& rules = out.rules;
  const RuleWords say{rules, settings.words};
  if (say.words)
    for (const std::string& note : facts.notes) rules.push_back("model file: " + note);

  const GgmlType& type_k = settings.type_k ? *settings.type_k : ggml_type_by_name("f16");
  const GgmlType& type_v = settings.type_v ? *settings.type_v : ggml_type_by_name("f16");
  out.type_k = std::string(type_k.name);
  out.type_v = std::string(type_v.name);
  say("cache types: K {}, V {}{}", type_k.name, type_v.name,
                              settings.type_k || settings.type_v ? " (-ctk/-ctv; llama.cpp's default is f16)"
                                                                 : " (llama.cpp's default)");

  // --- the layers as llama.cpp numbers them: the decoder layers, then the nextn (MTP) layers
  // (read_llamacpp_layout; a profile's facts hold them read once).
  LlamaCppLayout own_layout;
  const bool layout_given = facts.layout.model == &model && facts.layout.spec_layers == model.layers.size() &&
                            facts.layout.spec_mtp_layers == model.mtp_layers;
  if (!layout_given) own_layout = read_llamacpp_layout(model);
  const LlamaCppLayout& layout = layout_given ? facts.layout : own_layout;
  const std::vector<CacheLayer>& layers = layout.layers;
  const bool any_mla = layout.any_mla;
  if (layout.window_ignored)
    say("{}: llama.cpp does not apply the sliding window for this architecture: the sliding "
                                "layers keep the full context",
                                model.architecture);
  const std::uint32_t n_layer = static_cast<std::uint32_t>(model.layers.size());
  const std::uint32_t n_layer_all = layout.n_layer_all;
  if (model.mtp_layers > 0) {
    if (!layout.nextn_cached)
      say("the {} nextn (MTP) layers get no KV cache (layer filter il < n_layer)", model.mtp_layers);
    else if (say.words)
      say("the {} nextn (MTP) layers get KV cells too, shaped like the last attention layer "
                                "(llama.cpp v0.4.0 applies no layer filter for {})",
                                model.mtp_layers, model.architecture.empty() ? "this model" : model.architecture);
  }
  out.n_layer_all = n_layer_all;
  const std::uint64_t n_swa = layout.n_swa;
  const bool any_chunked = layout.any_chunked;
  const bool iswa = layout.any_sliding || layout.any_chunked;

  // --- llama_init_from_model: what llama.cpp refuses, in its own words.
  if (any_mla && type_k.id != type_v.id)
    throw Error(fmt::format("llama.cpp refuses this: \"model does not support different K ({}) and V ({}) cache types\" "
                            "(an MLA or deepseek4 cache stores K only; give -ctk and -ctv the same type)",
                            type_k.name, type_v.name));
  LlamaCppFlashAttn fa = settings.flash_attn;
  out.flash_attn_requested = fa;
  // llama_init_from_model turns it off for grok before anything else looks at it.
  if (model.architecture == "grok" && fa != LlamaCppFlashAttn::off) {
    say.text("grok: \"flash_attn is not compatible with Grok - forcing off\"");
    fa = LlamaCppFlashAttn::off;
  }
  if (is_quantized(type_v) && fa != LlamaCppFlashAttn::on) {
    if (fa == LlamaCppFlashAttn::off)
      throw Error(fmt::format("llama.cpp refuses this: \"quantized V cache requires flash_attn to be enabled\" "
                              "(a {} V cache needs -fa on or -fa auto)",
                              type_v.name));
    say.text("-fa auto with a quantized V cache: \"enabling flash_attn since it is required for quantized V cache\"");
    fa = LlamaCppFlashAttn::on;
  }
  if (fa != LlamaCppFlashAttn::off && (is_quantized(type_k) || is_quantized(type_v))) {
    for (const CacheLayer& layer : layers) {
      if (!holds_tokens(layer.kind)) continue;
      if (is_quantized(type_k) && layer.k_head % type_k.block_elements != 0)
        throw Error(fmt::format("llama.cpp refuses this: \"K cache type {} with block size {} does not divide "
                                "n_embd_head_k={}\"",
                                type_k.name, type_k.block_elements, layer.k_head));
      if (is_quantized(type_v) && !any_mla && layer.v_head % type_v.block_elements != 0)
        throw Error(fmt::format("llama.cpp refuses this: \"V cache type {} with block size {} does not divide "
                                "n_embd_head_v={}\"",
                                type_v.name, type_v.block_elements, layer.v_head));
    }
  }
  // llama.cpp v0.4.0's plm graph hands its attention a V of the wrong shape when flash attention is
  // on, and "auto" builds that graph to test it: the process aborts on a GGML_ASSERT (seen on the
  // cross-check's fixture at 1 to 4 sequences; -fa off runs).
  if (model.architecture == "plm" && fa != LlamaCppFlashAttn::off)
    throw Error(fmt::format("llama.cpp aborts here: plm's graph fails a GGML_ASSERT with -fa {} in llama.cpp v0.4.0 "
                            "(seen on kvplan's cross-check fixture); run plm with -fa off",
                            to_string(fa)));
  // The cache is created before "auto" is resolved, with flash_attn = (type != disabled), so "auto"
  // lays the cache out as flash attention does (llama_context::llama_context, cparams.flash_attn).
  out.flash_attn = fa != LlamaCppFlashAttn::off;
  out.v_trans = !out.flash_attn;
  if (say.words)
    rules.push_back(out.flash_attn
                      ? fmt::format("-fa {}: V stored row by row as flash attention reads it{}", to_string(fa),
                                    fa == LlamaCppFlashAttn::automatic
                                        ? " (the cache is created before auto is resolved, with flash attention on)"
                                        : "")
                      : "-fa off: V stored transposed (v_trans)");

  // --- the context: llama_context::llama_context.
  if (settings.n_parallel == 0 || settings.n_parallel > kMaxSeq)
    throw Error(fmt::format("--parallel: {} sequences; llama.cpp accepts 1 to {} (LLAMA_MAX_SEQ)", settings.n_parallel, kMaxSeq));
  const std::uint32_t n_seq = settings.n_parallel;
  std::uint64_t n_ctx_in = settings.n_ctx;
  if (n_ctx_in == 0) {
    if (model.max_context == 0) throw Error("--ctx-size 0 means the trained context, which this model does not state");
    n_ctx_in = model.max_context;
    if (say.words) say("-c 0: n_ctx = the trained context, {}", format_thousands(n_ctx_in));
  }
  if (n_ctx_in > std::numeric_limits<std::uint32_t>::max())
    throw Error(fmt::format("--ctx-size: {} is more than llama.cpp's n_ctx can hold (2^32 - 1)", n_ctx_in));
  if (settings.n_batch == 0 && settings.n_ubatch == 0) throw Error("llama.cpp refuses n_batch and n_ubatch both zero");
  out.n_batch = static_cast<std::uint32_t>(std::min<std::uint64_t>(n_ctx_in, settings.n_batch));
  out.n_ubatch = std::min(out.n_batch, settings.n_ubatch == 0 ? out.n_batch : settings.n_ubatch);
  say("n_batch = min(n_ctx {}, -b {}) = {}; n_ubatch = min(n_batch, -ub {}) = {}", n_ctx_in,
                              settings.n_batch, out.n_batch, settings.n_ubatch, out.n_ubatch);
  out.n_seq_max = n_seq;
  out.kv_unified = settings.kv_unified;
  out.swa_full = settings.swa_full;
  out.n_ctx = pad256(n_ctx_in);
  if (out.n_ctx != n_ctx_in) say("n_ctx = pad256({}) = {}", n_ctx_in, out.n_ctx);
  if (settings.kv_unified) {
    out.n_ctx_seq = out.n_ctx;
    say("--kv-unified: one stream of {} cells shared by {} sequence{}", out.n_ctx, n_seq,
                                n_seq == 1 ? "" : "s");
  } else {
    out.n_ctx_seq = pad256(out.n_ctx / n_seq);
    const std::uint64_t n_ctx = out.n_ctx_seq * n_seq;
    if (say.words)
      say("per-sequence streams: n_ctx_seq = pad256(n_ctx {} / {} sequences) = {}, one stream "
                                "per sequence{}",
                                out.n_ctx, n_seq, out.n_ctx_seq,
                                n_ctx != out.n_ctx ? fmt::format("; n_ctx becomes {} x {} = {} (llama.cpp: \"n_ctx is not "
                                                                 "divisible by n_seq_max - rounding down\")",
                                                                 out.n_ctx_seq, n_seq, n_ctx)
                                                   : "");
    out.n_ctx = n_ctx;
  }
  // llama_kv_cache_dsv4 ignores `unified`: its caches and states keep a stream per sequence, of
  // n_ctx_seq (= n_ctx under --kv-unified) cells each.
  const bool unified_streams = settings.kv_unified && !layout.compressed;
  if (settings.kv_unified && layout.compressed)
    say.text("deepseek4: --kv-unified makes n_ctx_seq = n_ctx, but llama_kv_cache_dsv4 keeps one stream per sequence "
             "in every cache and state (it ignores unified)");
  const std::uint32_t streams = unified_streams ? 1 : n_seq;

  // --- placement: llama_model_base::load_tensors. The output layer counts as one of n_layer + 1.
  const std::int64_t ngl = settings.n_gpu_layers < 0 ? std::int64_t{n_layer_all} + 1 : settings.n_gpu_layers;
  const std::int64_t i_gpu_start = std::max<std::int64_t>(std::int64_t{n_layer_all} + 1 - ngl, 0);
  const std::int64_t act_gpu_layers = std::min<std::int64_t>(ngl, std::int64_t{n_layer_all} + 1);
  out.output_on_gpu = ngl >= 1;
  out.gpu_layers = static_cast<std::uint32_t>(act_gpu_layers);
  const std::uint32_t gpu_repeating = out.gpu_layers - (out.output_on_gpu ? 1 : 0);
  if (say.words) {
    std::string which = out.output_on_gpu ? "the output layer" : "nothing";
    if (gpu_repeating > 0)
      which += fmt::format(" + repeating layers {} to {}", i_gpu_start, n_layer_all - 1);
    say("-ngl {}: {} of {} layers on the GPU ({}); the input layer (token embeddings) always "
                                "stays in host memory; each layer's KV cells and state live on its layer's device",
                                settings.n_gpu_layers < 0 ? std::string("all (llama.cpp's -1)")
                                                          : std::to_string(settings.n_gpu_layers),
                                out.gpu_layers, n_layer_all + 1, which);
  }
  // The devices (llama_model_load_from_file_impl: --split-mode none keeps the main GPU alone) and
  // the split points: the tensor split, or each device's free memory, summed and normalized in
  // float as load_tensors does; layer il (the output layer is il = n_layer) goes to the first
  // device whose split point is above (il - i_gpu_start) / act_gpu_layers (std::upper_bound).
  out.split_mode = settings.split_mode;
  std::vector<std::uint32_t> device_ids;
  const std::size_t given = std::max<std::size_t>(settings.device_free.size(), 1);
  if (settings.split_mode == LlamaCppSplitMode::none || given == 1) {
    if (settings.main_gpu >= given)
      throw Error(fmt::format("--main-gpu: {} is not one of the {} GPU{} (llama.cpp: \"invalid value for main_gpu\")",
                              settings.main_gpu, given, given == 1 ? "" : "s"));
    device_ids.push_back(settings.split_mode == LlamaCppSplitMode::none ? settings.main_gpu : 0);
  } else {
    for (std::uint32_t i = 0; i < given; ++i) device_ids.push_back(i);
  }
  if (settings.split_mode == LlamaCppSplitMode::row && device_ids.size() > 1)
    throw Error("--split-mode row: each matrix's rows are split across the GPUs by ggml's split buffer, whose per-device "
                "rounding kvplan does not model; price --split-mode layer (llama.cpp's default) instead",
                ExitCode::unsupported_architecture);
  if (!settings.tensor_split.empty() && settings.tensor_split.size() != given && device_ids.size() > 1)
    throw Error(fmt::format("--tensor-split: {} shares for {} GPUs", settings.tensor_split.size(), given));
  std::vector<float> splits(device_ids.size(), 0.0f);
  const bool all_zero = std::all_of(settings.tensor_split.begin(), settings.tensor_split.end(), [](float x) { return x == 0.0f; });
  for (std::size_t i = 0; i < device_ids.size(); ++i) {
    if (!all_zero && device_ids.size() > 1) splits[i] = settings.tensor_split[device_ids[i]];
    else splits[i] = settings.device_free.empty() ? 1.0f : static_cast<float>(settings.device_free[device_ids[i]]);
  }
  float split_sum = 0.0f;
  for (float& split : splits) {
    split_sum += split;
    split = split_sum;
  }
  if (!(split_sum > 0.0f)) throw Error("--tensor-split: the shares add up to 0");
  for (float& split : splits) split /= split_sum;
  for (std::size_t i = 0; i < device_ids.size(); ++i) out.devices.push_back({device_ids[i], splits[i]});
  /// The device of layer il (n_layer_all: the output layer), or -1 for host memory.
  const auto place = [&](std::int64_t il) -> std::int32_t {
    if (il < i_gpu_start || il - i_gpu_start >= act_gpu_layers) return -1;
    const float at = static_cast<float>(il - i_gpu_start) / static_cast<float>(act_gpu_layers);
    const auto it = std::upper_bound(splits.begin(), splits.end(), at);
    return static_cast<std::int32_t>(std::min<std::ptrdiff_t>(it - splits.begin(), static_cast<std::ptrdiff_t>(splits.size()) - 1));
  };
  // On one device upper_bound over its one split point always answers it: a layer's device is
  // whether it is offloaded, the layers from i_gpu_start to the output layer (no float division and
  // search per layer per plan). Several devices: placed once per layer, as every cache layer and
  // weight group asks. Past the output layer, place() answers host memory whatever -ngl is.
  const bool one_device = splits.size() == 1;
  std::vector<std::int32_t> device_at(one_device ? 0 : std::size_t{n_layer_all} + 1);
  for (std::uint32_t il = 0; il < device_at.size(); ++il) device_at[il] = place(il);
  const auto device_of = [&](std::int64_t il) -> std::int32_t {
    if (one_device) return il >= i_gpu_start && il - i_gpu_start < act_gpu_layers ? 0 : -1;
    return il >= 0 && il <= std::int64_t{n_layer_all} ? device_at[static_cast<std::size_t>(il)] : place(il);
  };
  const auto on_gpu = [&](std::uint32_t il) { return device_of(il) >= 0; };
  if (one_device) {
    out.devices.front().layers = gpu_repeating;
    out.devices.front().output = out.output_on_gpu;
  } else {
    for (std::uint32_t il = 0; il <= n_layer_all; ++il) {
      const std::int32_t d = device_of(il);
      if (d < 0) continue;
      if (il == n_layer_all) out.devices[static_cast<std::size_t>(d)].output = true;
      else ++out.devices[static_cast<std::size_t>(d)].layers;
    }
  }
  if (!say.words) {
    // The split in words below; none for a probe.
  } else if (out.devices.size() > 1) {
    std::string shares;
    for (const LlamaCppDevice& d : out.devices)
      shares += fmt::format("{}GPU {}: {} layer{}{}", shares.empty() ? "" : ", ", d.index, d.layers, d.layers == 1 ? "" : "s",
                            d.output ? " + the output layer" : "");
    say("--split-mode layer across {} GPUs by {} (split points {}): {}", out.devices.size(),
                                all_zero ? "free memory" : "--tensor-split",
                                [&] {
                                  std::string points;
                                  for (const float p : splits) points += fmt::format("{}{:.4f}", points.empty() ? "" : " ", p);
                                  return points;
                                }(),
                                shares);
  } else if (settings.split_mode == LlamaCppSplitMode::none && given > 1) {
    say("--split-mode none: every offloaded layer on the main GPU {}", settings.main_gpu);
  }
  const auto add_to_device = [&](std::int64_t il, std::uint64_t weights, std::uint64_t cache, std::uint64_t state = 0) {
    const std::int32_t d = device_of(il);
    if (d < 0) return;
    LlamaCppDevice& device = out.devices[static_cast<std::size_t>(d)];
    device.state_bytes = sum_checked(device.state_bytes, state, "state size");
    device.weights_bytes = sum_checked(device.weights_bytes, weights, "weight size");
    device.cache_bytes = sum_checked(device.cache_bytes, cache, "cache size");
  };

  // Each layer's load whatever its device (LlamaCppLayerLoads), summed mod 2^64 as the device's are.
  std::vector<std::uint64_t> layer_loads(loads ? std::size_t{n_layer_all} + 1 : 0, 0);
  const auto load = [&](std::uint64_t il, std::uint64_t bytes) {
    if (loads && il <= n_layer_all) layer_loads[il] += bytes;
  };
  bool loads_exact = true;

  // --- V rows: [TAG_V_CACHE_VARIABLE] in llama-kv-cache.cpp (read_llamacpp_layout).
  const std::uint64_t v_row_max = layout.v_row_max;
  const bool v_varies = layout.v_varies;
  if (out.v_trans && v_varies && !any_mla)
    say("-fa off and V widths differ across layers: every V row padded to the widest, {} "
                                "(llama.cpp: \"padding V cache to {}\")",
                                v_row_max, v_row_max);

  // --- the caches.
  // A run's K and V per layer and its V row: MLA allocates no V tensor (has_v = !is_mla); otherwise
  // V is padded to the widest row when transposed.
  struct RunBytes {
    std::uint64_t k = 0, v = 0, v_row = 0;
  };
  // `indexer`: a run of the indexer cache, whose V rows (llama_kv_cache_msa's, all one head wide)
  // are padded among themselves, not to the main cache's widest.
  const auto run_bytes = [&](const LlamaCppLayout::Run& run, std::uint64_t cells, bool indexer) {
    RunBytes out_run;
    out_run.v_row = any_mla ? 0 : out.v_trans && !indexer ? v_row_max : run.v_row;
    out_run.k = tensor_bytes(type_k, run.k_row, cells, streams, "K");
    out_run.v = any_mla ? 0 : tensor_bytes(type_v, out_run.v_row, cells, streams, "V");
    return out_run;
  };
  // With one device, a run of layers of one shape (LlamaCppLayout::Run) adds
  // count x its K and V, and its layers on the GPU are those from i_gpu_start on: a step per run
  // instead of per layer. The sums are taken in 128 bits; where one passes 64 bits (or would before
  // a later run is sized) false sends the cache, untouched, to the layer loop, which throws the
  // same OverflowError at the same layer. The loop's sums only grow, so a total that fits means
  // none of its partial sums overflowed.
  const auto sum_runs = [&](LlamaCppKvCache& cache, const std::vector<LlamaCppLayout::Run>& runs, bool indexer) {
    LlamaCppDevice& device = out.devices.front();
    u128 k_sum = 0, v_sum = 0, gpu = 0, host = 0, on_device = device.cache_bytes;
    std::uint64_t widest_v = cache.v_row;
    std::uint32_t layers_summed = 0, gpu_layers_summed = 0;
    const auto fit = [&] { return std::max({k_sum, v_sum, gpu, host, on_device}) <= u128{UINT64_MAX}; };
    for (const LlamaCppLayout::Run& run : runs) {
      if (!fit()) return false;
      const auto [k, v, v_row] = run_bytes(run, cache.cells, indexer);
      widest_v = std::max(widest_v, v_row);
      const std::uint32_t* ils = layout.ils.data() + run.first;
      const std::uint32_t* first_on_gpu = std::lower_bound(
          ils, ils + run.count, i_gpu_start, [](std::uint32_t il, std::int64_t at) { return std::int64_t{il} < at; });
      const auto gpu_layers = static_cast<std::uint32_t>(ils + run.count - first_on_gpu);
      layers_summed += run.count;
      gpu_layers_summed += gpu_layers;
      const u128 both = u128{k} + v;
      k_sum += u128{k} * run.count;
      v_sum += u128{v} * run.count;
      gpu += both * gpu_layers;
      on_device += both * gpu_layers;
      host += both * (run.count - gpu_layers);
    }
    if (!fit()) return false;
    cache.v_row = widest_v;
    cache.layers += layers_summed;
    cache.gpu_layers += gpu_layers_summed;
    cache.k_bytes = static_cast<std::uint64_t>(k_sum);
    cache.v_bytes = static_cast<std::uint64_t>(v_sum);
    cache.gpu_bytes = static_cast<std::uint64_t>(gpu);
    cache.host_bytes = static_cast<std::uint64_t>(host);
    device.cache_bytes = static_cast<std::uint64_t>(on_device);
    return true;
  };
  // A cache's layers are its runs' (read_llamacpp_layout decides which layers each cache holds).
  const auto make_cache = [&](std::string role, std::uint64_t cells, std::size_t which) {
    const std::vector<LlamaCppLayout::Run>& runs = layout.runs[which];
    LlamaCppKvCache cache;
    cache.role = std::move(role);
    cache.cells = cells;
    cache.streams = streams;
    cache.seqs = n_seq;
    cache.k_type = std::string(type_k.name);
    cache.v_type = std::string(type_v.name);
    cache.compress_ratio = which == LlamaCppLayout::hca ? 128 : which == LlamaCppLayout::csa || which == LlamaCppLayout::lid ? 4 : 0;
    const bool indexer = which == LlamaCppLayout::indexer;
    if (one_device && sum_runs(cache, runs, indexer)) {
      // Each layer's load, added only once the whole cache is known to fit 64 bits (the layer loop
      // below adds them itself).
      if (loads)
        for (const LlamaCppLayout::Run& run : runs) {
          const RunBytes bytes = run_bytes(run, cells, indexer);
          for (std::uint32_t i = run.first; i < run.first + run.count; ++i) load(layout.ils[i], bytes.k + bytes.v);
        }
      return cache;
    }
    // A layer's K and V follow from its row widths alone: sized once per run of one shape (a layer
    // that would throw throws at its run's first).
    for (const LlamaCppLayout::Run& run : runs) {
      const auto [k, v, v_row] = run_bytes(run, cells, indexer);
      cache.v_row = std::max(cache.v_row, v_row);
      for (std::uint32_t i = run.first; i < run.first + run.count; ++i) {
        const std::uint32_t il = layout.ils[i];
        ++cache.layers;
        cache.k_bytes = sum_checked(cache.k_bytes, k, "cache size");
        cache.v_bytes = sum_checked(cache.v_bytes, v, "cache size");
        load(il, k + v);
        if (on_gpu(il)) {
          ++cache.gpu_layers;
          const std::uint64_t both = sum_checked(k, v, "cache size");
          cache.gpu_bytes = sum_checked(cache.gpu_bytes, both, "cache size");
          add_to_device(il, 0, both);
        } else {
          cache.host_bytes = sum_checked(cache.host_bytes, sum_checked(k, v, "cache size"), "cache size");
        }
      }
    }
    return cache;
  };
  const bool any_attention = layout.any_attention;
  out.caches.reserve(1 + (iswa ? 1 : 0) + (layout.any_indexer ? 1 : 0) + (layout.compressed ? 3 : 0));
  if (iswa) {
    // Saturating: a window near 2^64 holds the whole context (a wrapped product held almost none).
    const std::uint64_t swa_span = n_swa > (UINT64_MAX - out.n_ubatch) / (unified_streams ? n_seq : 1)
                                       ? UINT64_MAX
                                       : n_swa * (unified_streams ? n_seq : 1) + out.n_ubatch;
    std::uint64_t swa_cells = pad256(std::min(out.n_ctx_seq, swa_span));
    if (settings.swa_full) {
      say("--swa-full: the SWA cache holds n_ctx_seq = {} cells", out.n_ctx_seq);
      swa_cells = out.n_ctx_seq;
    } else {
      say(
          "iSWA: {} layers get their own cache of pad256(min(n_ctx_seq {}, n_swa {} x {} + n_ubatch {})) = {} cells "
          "per stream (llama-kv-cache-iswa.cpp)",
          any_chunked ? "chunked" : "sliding", out.n_ctx_seq, n_swa, unified_streams ? n_seq : 1, out.n_ubatch,
          swa_cells);
    }
    // llama_kv_cache_dsa_iswa (dots3note) creates DSA's two caches before the sliding one.
    out.caches.push_back(make_cache(layout.any_indexer ? "main KV" : "non-SWA KV", out.n_ctx_seq, LlamaCppLayout::non_swa));
    if (layout.any_indexer) out.caches.push_back(make_cache("indexer KV", out.n_ctx_seq, LlamaCppLayout::indexer));
    out.caches.push_back(make_cache("SWA KV", swa_cells, LlamaCppLayout::swa));
    if (out.caches.front().layers == 0)
      say.text("every attention layer is sliding: the non-SWA cache is still created, with 0 layers and 0 bytes");
    if (layout.compressed) {
      // llama_kv_cache_dsv4 then creates the CSA, HCA and lightning-indexer caches, K only at -ctk.
      const std::uint64_t c4 = compressed_cells(out.n_ctx_seq, 4), c128 = compressed_cells(out.n_ctx_seq, 128);
      out.caches.push_back(make_cache("CSA KV", c4, LlamaCppLayout::csa));
      out.caches.push_back(make_cache("HCA KV", c128, LlamaCppLayout::hca));
      out.caches.push_back(make_cache("LID KV", c4, LlamaCppLayout::lid));
      say("deepseek4: the layers of compress ratio 4 keep a CSA cache and the lightning indexer's (LID) of "
          "pad256(max(1, ceil(n_ctx_seq {} / 4))) = {} cells, those of ratio 128 an HCA cache of "
          "pad256(max(1, ceil(n_ctx_seq / 128))) = {} cells, per stream (llama-kv-cache-dsv4.cpp)",
          out.n_ctx_seq, c4, c128);
    }
  } else if (any_attention) {
    // llama_kv_cache_dsa logs its two caches as "creating main KV cache" and "creating indexer KV cache".
    out.caches.push_back(make_cache(layout.any_indexer ? "main KV" : "KV", out.n_ctx_seq, LlamaCppLayout::every_cache_layer));
  }
  if (layout.any_indexer) {
    // llama_kv_cache_dsa creates the indexer's cache second, with the same cells, streams and K type
    // (under a window it is already in, above).
    if (!iswa) out.caches.push_back(make_cache("indexer KV", out.n_ctx_seq, LlamaCppLayout::indexer));
    if (reads_msa_indexer(model.architecture))
      say.text("indexer: a cache of its own holds the sparse-attention indexer's key (one head) and a V of one head "
               "that nothing writes, per cell on the indexed attention layers, at the K and V cache types "
               "(llama_kv_cache_msa, llama_memory_hybrid_idx)");
    else
      say.text("DSA: a second K-only cache holds the lightning indexer's key (one head) per cell on the indexed "
               "layers, at the K cache type (llama_kv_cache_dsa)");
  }
  if (layout.compressed)
    say.text("deepseek4: every cache stores K only, one head per cell (dsv4_make_k_only); V is 0 bytes");
  else if (any_mla)
    say.text("MLA: the cache stores K only (the compressed latent with its rope part); V is 0 bytes");
  for (const LlamaCppKvCache& cache : out.caches)
    say("{}: {} cells x {} stream{} x {} layers: K {} = {} B, V {} = {} B", cache.role, cache.cells,
                                cache.streams, cache.streams == 1 ? "" : "s", cache.layers, cache.k_type, cache.k_bytes,
                                cache.v_type, cache.v_bytes);

  // --- recurrent state: llama_memory_recurrent, f32 whatever the cache types (create_memory).
  const bool any_recurrent = layout.any_recurrent;
  if (any_recurrent) {
    LlamaCppRecurrent rs;
    rs.cells = std::max<std::uint32_t>(1, n_seq);
    rs.seqs = n_seq;
    rs.logged_layers = n_layer;
    for (const CacheLayer& layer : layers) {
      if (!layer.has_state) continue;
      ++rs.layers;
      rs.r_row = std::max(rs.r_row, layer.r_row);
      rs.s_row = std::max(rs.s_row, layer.s_row);
      const std::uint64_t r = product_checked(product_checked(layer.r_row, 4, "state size"), rs.cells, "state size");
      const std::uint64_t s = product_checked(product_checked(layer.s_row, 4, "state size"), rs.cells, "state size");
      rs.r_bytes = sum_checked(rs.r_bytes, r, "state size");
      rs.s_bytes = sum_checked(rs.s_bytes, s, "state size");
      load(layer.il, r + s);
      if (on_gpu(layer.il)) {
        ++rs.gpu_layers;
        const std::uint64_t both = sum_checked(r, s, "state size");
        rs.gpu_bytes = sum_checked(rs.gpu_bytes, both, "state size");
        add_to_device(layer.il, 0, both, both);
      } else {
        rs.host_bytes = sum_checked(rs.host_bytes, sum_checked(r, s, "state size"), "state size");
      }
    }
    say("recurrent state: {} cells (max(1, n_seq_max)) x {} recurrent layers, f32 whatever -ctk/-ctv: "
                                "R {} x 4 B, S {} x 4 B per cell per layer (llama-memory-recurrent.cpp; context size "
                                "does not matter)",
                                rs.cells, rs.layers, rs.r_row, rs.s_row);
    out.recurrent = rs;
  }

  // --- deepseek4's compressor states (llama_dsv4_comp_state): f32 whatever -ctk/-ctv, one plane per
  // sequence (n_rs_seq, llama.cpp's default 0, adds none), on each layer's device.
  if (layout.compressed) {
    struct Shape {
      const char* name;
      std::uint32_t ratio;
      std::uint64_t state_size, width_factor;
      bool indexer;
    };
    // The K head and the indexer key are the model's (every layer keeps one K head of the same width).
    std::uint64_t k_head = layers.front().k_row, indexer_key = 0;
    for (const CacheLayer& layer : layers) indexer_key = std::max(indexer_key, layer.indexer_row);
    constexpr std::array<Shape, 3> kShapes = {{{"CSA", 4, 8, 2, false}, {"HCA", 128, 128, 1, false}, {"LID", 4, 8, 2, true}}};
    for (const Shape& shape : kShapes) {
      LlamaCppCompressorState state;
      state.name = shape.name;
      state.ratio = shape.ratio;
      state.state_size = shape.state_size;
      state.planes = n_seq;
      state.n_embd_state = shape.width_factor * (shape.indexer ? indexer_key : k_head);
      for (const CacheLayer& layer : layers) {
        if (layer.compress_ratio != shape.ratio) continue;
        // Two tensors, kv and score, of n_embd_state x state_size x planes f32 values.
        const std::uint64_t bytes = (Checked(8, "state size") * state.n_embd_state * state.state_size * state.planes).value();
        ++state.layers;
        state.bytes = sum_checked(state.bytes, bytes, "state size");
        load(layer.il, bytes);
        if (on_gpu(layer.il)) {
          ++state.gpu_layers;
          state.gpu_bytes = sum_checked(state.gpu_bytes, bytes, "state size");
          add_to_device(layer.il, 0, bytes, bytes);
        } else {
          state.host_bytes = sum_checked(state.host_bytes, bytes, "state size");
        }
      }
      out.compressor_state_bytes = sum_checked(out.compressor_state_bytes, state.bytes, "state size");
      out.compressor_states.push_back(std::move(state));
    }
    say("deepseek4: compressor state, f32 whatever -ctk/-ctv, a kv and a score tensor per layer and sequence: CSA {} "
        "x 8 values (2 x the K head), HCA {} x 128 (the K head), LID {} x 8 (2 x the indexer key); n_rs_seq 0 "
        "(llama-kv-cache-dsv4.cpp, llama_dsv4_comp_state)",
        out.compressor_states[0].n_embd_state, out.compressor_states[1].n_embd_state, out.compressor_states[2].n_embd_state);
    for (const LlamaCppCompressorState& state : out.compressor_states) {
      out.gpu_cache_bytes = sum_checked(out.gpu_cache_bytes, state.gpu_bytes, "cache size");
      out.host_cache_bytes = sum_checked(out.host_cache_bytes, state.host_bytes, "cache size");
    }
  }

  for (const LlamaCppKvCache& cache : out.caches) {
    out.kv_bytes = sum_checked(out.kv_bytes, sum_checked(cache.k_bytes, cache.v_bytes, "cache size"), "cache size");
    out.gpu_cache_bytes = sum_checked(out.gpu_cache_bytes, cache.gpu_bytes, "cache size");
    out.host_cache_bytes = sum_checked(out.host_cache_bytes, cache.host_bytes, "cache size");
  }
  if (out.recurrent) {
    out.recurrent_bytes = sum_checked(out.recurrent->r_bytes, out.recurrent->s_bytes, "state size");
    out.gpu_cache_bytes = sum_checked(out.gpu_cache_bytes, out.recurrent->gpu_bytes, "cache size");
    out.host_cache_bytes = sum_checked(out.host_cache_bytes, out.recurrent->host_bytes, "cache size");
  }

  // --- weights: the model buffers.
  const LlamaCppLayerWeights* by_layer = &facts.by_layer;
  LlamaCppLayerWeights summed;
  if (!facts.tensors.empty() && by_layer->from_tensors != facts.tensors.size()) {
    summed = sum_by_layer(facts.tensors);
    by_layer = &summed;
  }
  // Either way a file's tensors are placed (a layer at a time, or tensor by tensor), the tied
  // output layer's copy and the rule in words end it alike.
  const auto finish_file_weights = [&] {
    if (facts.output_tied && out.output_on_gpu) {
      out.model_gpu_bytes = sum_checked(out.model_gpu_bytes, facts.token_embd_bytes, "weight size");
      add_to_device(n_layer_all, facts.token_embd_bytes, 0);
      say("no output.weight: the output layer uses a copy of token_embd ({} B) on the GPU",
                                  facts.token_embd_bytes);
    }
    say.text("weights: the GPU buffer is the sum of its tensors; the host buffer is memory-mapped: the span of "
                    "the file from the first to the last host tensor (alignment padding included)");
  };
  const std::size_t file_layers = by_layer->bytes.size() >= 2 ? by_layer->bytes.size() - 2 : 0;
  if (!facts.tensors.empty() && by_layer->exact && one_device && file_layers <= n_layer_all &&
      by_layer->layers_from.size() == file_layers + 1) {
    // One device and every file layer below the output layer's index: the layers from i_gpu_start
    // up are on the GPU, the rest and the input layer in host memory. The same sums as a layer at a
    // time, taken a range at a time (sum_by_layer's layers_from and layers_below).
    const std::size_t first_on_gpu = static_cast<std::size_t>(std::min<std::int64_t>(i_gpu_start, static_cast<std::int64_t>(file_layers)));
    const std::uint64_t output = by_layer->any[1] ? by_layer->bytes[1] : 0;
    if (loads)
      for (std::size_t slot = 1; slot < by_layer->bytes.size(); ++slot)
        if (by_layer->any[slot]) load(slot == 1 ? std::uint64_t{n_layer_all} : slot - 2, by_layer->bytes[slot]);
    out.model_gpu_bytes = by_layer->layers_from[first_on_gpu] + (out.output_on_gpu ? output : 0);
    out.model_host_layer_bytes = by_layer->layers_from[0] - by_layer->layers_from[first_on_gpu] + (out.output_on_gpu ? 0 : output);
    if (out.model_gpu_bytes > 0) add_to_device(i_gpu_start, out.model_gpu_bytes, 0);
    for (std::uint32_t file = 0; file < by_layer->files; ++file) {
      LlamaCppLayerWeights::Span span = joined(by_layer->spans[file], by_layer->layers_below[first_on_gpu * by_layer->files + file]);
      if (!out.output_on_gpu) span = joined(span, by_layer->spans[by_layer->files + file]);
      if (span.any) out.model_host_bytes = sum_checked(out.model_host_bytes, span.last - span.first, "weight size");
    }
    out.model_host_exact = true;
    if (facts.output_tied) load(n_layer_all, facts.token_embd_bytes);
    finish_file_weights();
  } else if (!facts.tensors.empty() && by_layer->exact) {
    // A layer at a time (sum_by_layer): the same sums as tensor by tensor, none of which can pass
    // 64 bits. The host buffer spans, per file part, the host layers' spans.
    std::vector<LlamaCppLayerWeights::Span> host_span(by_layer->files);
    for (std::size_t slot = 0; slot < by_layer->bytes.size(); ++slot) {
      if (!by_layer->any[slot]) continue;
      const std::uint64_t bytes = by_layer->bytes[slot];
      const std::uint64_t il = slot == 1 ? std::uint64_t{n_layer_all} : slot - 2;  // the device's layer (slot 0: none)
      if (slot != 0) load(il, bytes);
      const bool gpu = slot == 0 ? false : slot == 1 ? out.output_on_gpu : on_gpu(static_cast<std::uint32_t>(il));
      if (gpu) {
        out.model_gpu_bytes = sum_checked(out.model_gpu_bytes, bytes, "weight size");
        add_to_device(static_cast<std::int64_t>(il), bytes, 0);
        continue;
      }
      if (slot != 0) out.model_host_layer_bytes = sum_checked(out.model_host_layer_bytes, bytes, "weight size");
      for (std::uint32_t file = 0; file < by_layer->files; ++file)
        host_span[file] = joined(host_span[file], by_layer->spans[slot * by_layer->files + file]);
    }
    for (const LlamaCppLayerWeights::Span& span : host_span)
      if (span.any) out.model_host_bytes = sum_checked(out.model_host_bytes, span.last - span.first, "weight size");
    out.model_host_exact = true;
    if (facts.output_tied) load(n_layer_all, facts.token_embd_bytes);
    finish_file_weights();
  } else if (!facts.tensors.empty()) {
    loads_exact = false;  // a sum past 64 bits: tensor by tensor, so the error names the same figures
    std::map<std::uint32_t, std::pair<std::uint64_t, std::uint64_t>> host_span;  // file -> [first, last)
    for (const LlamaCppTensor& t : facts.tensors) {
      const bool gpu = t.layer == LlamaCppTensor::input    ? false
                       : t.layer == LlamaCppTensor::output ? out.output_on_gpu
                                                           : on_gpu(static_cast<std::uint32_t>(t.layer));
      if (gpu) {
        out.model_gpu_bytes = sum_checked(out.model_gpu_bytes, t.bytes, "weight size");
        add_to_device(t.layer == LlamaCppTensor::output ? std::int64_t{n_layer_all} : std::int64_t{t.layer}, t.bytes, 0);
        continue;
      }
      if (t.layer != LlamaCppTensor::input)
        out.model_host_layer_bytes = sum_checked(out.model_host_layer_bytes, t.bytes, "weight size");
      const std::uint64_t end = sum_checked(t.offset, t.bytes, "weight size");
      auto [it, inserted] = host_span.try_emplace(t.file, t.offset, end);
      if (!inserted) {
        it->second.first = std::min(it->second.first, t.offset);
        it->second.second = std::max(it->second.second, end);
      }
    }
    for (const auto& [file, span] : host_span)
      out.model_host_bytes = sum_checked(out.model_host_bytes, span.second - span.first, "weight size");
    out.model_host_exact = true;
    finish_file_weights();
  } else {
    // A spec with a parameter count and no checkpoint size: params x the weight dtype, as the
    // generic profile prices it (weights of 0 answered "fits" for any model).
    const std::uint64_t weights = model.weights_bytes ? *model.weights_bytes : estimate_weights(model, nullptr).bytes;
    std::uint64_t in_layers = 0;
    if (model.layer_weights_bytes.size() == model.layers.size())
      for (std::uint32_t il = 0; il < n_layer; ++il) {
        in_layers = sum_checked(in_layers, model.layer_weights_bytes[il], "weight size");
        load(il, model.layer_weights_bytes[il]);
        if (on_gpu(il)) {
          out.model_gpu_bytes = sum_checked(out.model_gpu_bytes, model.layer_weights_bytes[il], "weight size");
          add_to_device(il, model.layer_weights_bytes[il], 0);
        }
      }
    if (in_layers == 0) {
      if (loads) loads->even_weights = weights;
      // No per-layer sizes: an even split over the n_layer + 1 offloadable layers.
      out.model_gpu_bytes = static_cast<std::uint64_t>(static_cast<u128>(weights) * out.gpu_layers / (n_layer_all + 1));
      // Per device the same even share of each of its layers; the remainder of the division on the last.
      std::uint64_t placed = 0;
      for (LlamaCppDevice& device : out.devices) {
        const std::uint32_t n = device.layers + (device.output ? 1 : 0);
        device.weights_bytes += static_cast<std::uint64_t>(static_cast<u128>(weights) * n / (n_layer_all + 1));
        placed += device.weights_bytes;
      }
      if (!out.devices.empty() && out.model_gpu_bytes > placed) out.devices.back().weights_bytes += out.model_gpu_bytes - placed;
      say.text("weights (approximate, no GGUF tensor list): split evenly over the n_layer + 1 offloadable layers");
    } else {
      say.text("weights (approximate, no GGUF tensor list): layers by their sizes; embeddings and output head in host memory");
    }
    out.model_host_bytes = weights - std::min(weights, out.model_gpu_bytes);
    out.model_host_layer_bytes = out.model_host_bytes;
  }

  if (loads) {
    // Valid for -ngl up to this one: fewer layers on the one GPU sum a part of what was just summed
    // without passing 64 bits, and the host's sums stay within the totals checked above.
    loads->usable = loads_exact && out.devices.size() == 1;
    loads->suffix.assign(std::size_t{n_layer_all} + 2, 0);
    for (std::size_t il = n_layer_all + std::size_t{1}; il-- > 0;) loads->suffix[il] = loads->suffix[il + 1] + layer_loads[il];
  }

  // --- output buffer: llama_context::output_reserve(n_seq_max), logits only, in host memory.
  if (facts.n_vocab > 0) {
    out.output_buffer_bytes = product_checked(product_checked(facts.n_vocab, n_seq, "output buffer"), 4, "output buffer");
    say("output buffer: n_vocab {} x n_seq_max {} f32 logits = {} B, host memory "
                                "(output_reserve at context creation)",
                                facts.n_vocab, n_seq, *out.output_buffer_bytes);
  }

  // --- compute buffer: an ESTIMATE (the real one is the peak of ggml's graph allocator). Two
  // phases peak: the output projection (logits of a whole ubatch, 4 B each, plus its input) and an
  // attention layer (Q/K/V of the ubatch, the KQ mask of every cache: f16 with flash attention,
  // f32 without, and without flash attention the f32 KQ scores of all heads).
  if (facts.n_vocab > 0 && facts.n_embd > 0) {
    const auto first_attention = std::find_if(layers.begin(), layers.end(), [](const CacheLayer& l) { return holds_tokens(l.kind); });
    const std::uint64_t ub = out.n_ubatch;
    std::uint64_t max_cells = 0, mask = 0;
    for (const LlamaCppKvCache& cache : out.caches) {
      if (cache.layers == 0) continue;
      max_cells = std::max(max_cells, cache.cells);
      mask = (Checked(cache.cells, "compute buffer") * ub * (out.flash_attn ? 2 : 4) + mask).value();
    }
    // Checked: with -c, -b and -ub near 2^32 and a wide model these products pass 2^64 (they
    // wrapped, and the estimate shrank as the context grew).
    const Checked n_head(model.attention_heads, "compute buffer");
    const std::uint64_t qkv = first_attention == layers.end()
                                  ? 0
                                  : (n_head * (Checked(2, "compute buffer") * first_attention->k_head + first_attention->v_head)).value();
    const std::uint64_t scores = out.flash_attn ? 0 : (Checked(4, "compute buffer") * ub * n_head * max_cells).value();
    const std::uint64_t logits_phase = (Checked(4, "compute buffer") * ub * (Checked(facts.n_vocab, "compute buffer") + facts.n_embd)).value();
    const std::uint64_t layer_phase =
        (Checked(4, "compute buffer") * ub * (Checked(facts.n_embd, "compute buffer") + qkv) + mask + scores).value();
    out.compute_estimate_bytes = std::max(logits_phase, layer_phase);
    if (say.words)
      say(
        "compute buffer ESTIMATE (not llama.cpp's figure): the larger of the logits phase 4 x n_ubatch x (n_vocab + "
        "n_embd) = {} and an attention layer 4 x n_ubatch x (n_embd + n_head x (2 k + v)) + KQ mask n_ubatch x cells x "
        "{} B{} = {}",
        mib(logits_phase), out.flash_attn ? 2 : 4, out.flash_attn ? "" : " + f32 scores 4 x n_ubatch x n_head x cells",
        mib(layer_phase));
  }
  return out;
}

}  // namespace kvplan
