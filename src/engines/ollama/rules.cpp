#include "engines/ollama/rules.h"

#include "engines/ollama/e4_choices.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <limits>
#include <numeric>

#include <fmt/format.h>

#include "model/checked.h"
#include "kvplan/error.h"
#include "kvplan/units.h"
#include "model/ggml_type.h"
#include "model/text.h"
#include "model/wide_int.h"

namespace kvplan {

namespace {

/// `%.1f` of GiB / MiB / KiB, as format.HumanBytes2 prints (for the rules in words).
std::string human(std::uint64_t b) {
  if (b >= GiB) return fmt::format("{:.1f} GiB", static_cast<double>(b) / GiB);
  if (b >= MiB) return fmt::format("{:.1f} MiB", static_cast<double>(b) / MiB);
  if (b >= 1024) return fmt::format("{:.1f} KiB", static_cast<double>(b) / 1024);
  return fmt::format("{} B", b);
}

/// GGUF architecture names of the Hugging Face model types the catalog uses.
std::string gguf_arch(std::string_view arch) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 12> kMap = {{
      {"mistral", "llama"}, {"gemma3_text", "gemma3"}, {"deepseek_v3", "deepseek2"}, {"deepseek_v2", "deepseek2"},
      {"gpt_oss", "gptoss"}, {"qwen2_moe", "qwen2moe"}, {"qwen3_moe", "qwen3moe"}, {"gemma2_text", "gemma2"},
      {"phi3", "phi3"}, {"qwen3_next", "qwen3next"}, {"mllama", "mllama"}, {"command_r", "command-r"}}};
  for (const auto& [hf, gguf] : kMap)
    if (arch == hf) return std::string(gguf);
  return std::string(arch);
}

/// kvCacheBytesPerElement (fs/ggml/ggml.go): q8_0 1, q4_0 0.5, else 2 (f16).
double bytes_per_element(std::string_view type) {
  if (type == "q8_0") return 1.0;
  if (type == "q4_0") return 0.5;
  return 2.0;
}

/// gemma3's SigLIP tower (VisionGraphSize): 4 x (image^2 x channels + emb x patch + (image/patch)^4 x heads).
constexpr std::uint64_t kGemma3VisionGraph = 4 * (896ull * 896 * 3 + 1152ull * 14 + 64ull * 64 * 64 * 64 * 16);

struct Graph {
  std::vector<std::uint64_t> kv;
  std::uint64_t partial = 0, full = 0;
};

/// GraphSize (llm/ggml.go, later fs/ggml/ggml.go): Ollama's KV estimate per layer and its compute
/// graph for a partial and a full offload, by architecture and version. ctx is num_ctx x parallel.
Graph graph_size(const OllamaModelView& m, std::uint64_t ctx_in, std::uint64_t batch_in, std::uint32_t parallel,
                 std::string_view kv_type, const OllamaVersion& v) {
  // Ollama computes these in Go's uint64, which wraps; every term here is Checked, so a model or
  // a context that large is an error instead of a small figure.
  using C = Checked;
  const char* what = "Ollama's memory estimate";
  Graph g;
  const C e(m.embedding, what), heads(m.heads, what), hkv(m.heads_kv_max, what), V(m.tokens, what);
  const C hk(m.head_k, what), hv(m.head_v, what), hd(m.heads ? m.embedding / m.heads : 0, what);
  const C ctx(ctx_in, what), batch(batch_in, what);
  const std::uint64_t L = m.block_count;
  const double bpe = bytes_per_element(kv_type);
  g.kv.assign(L, 0);
  if (!v.at_least(0, 5, 0)) {
    // v0.2 - v0.4: one fp16 figure, split evenly (layerSize = blk + kv / BlockCount).
    const std::uint64_t kv = (2 * ctx * L * (hk + hv) * hkv).value();
    std::fill(g.kv.begin(), g.kv.end(), kv / L);
  } else if (!v.at_least(0, 6, 3)) {
    const auto kv = static_cast<std::uint64_t>(static_cast<double>((ctx * L * (hk + hv) * hkv).value()) * bpe);
    std::fill(g.kv.begin(), g.kv.end(), kv / L);
  } else {
    for (std::uint64_t& kv : g.kv) kv = static_cast<std::uint64_t>(static_cast<double>((ctx * (hk + hv) * hkv).value()) * bpe);
  }
  C full(0, what), partial(0, what);
  const std::string& a = m.arch;
  if (a == "llama" || a == "llama4") {
    const C layer_full = 4 * batch * (1 + 4 * e + ctx * (1 + heads));
    full = v.at_least(0, 5, 0) ? std::max(layer_full, 4 * batch * (e + V)) : layer_full;
    partial = 4 * batch * e + std::max(4 * batch * (1 + e + std::max(ctx, e)) + e * e * 9 / 16 +
                                           4 * ctx * (batch * heads + hd * hkv),
                                       4 * batch * (e + V) + e * V * 105 / 128);
  } else if (a == "gemma" || a == "gemma2" || a == "gemma3") {
    full = std::max(4 * batch * (e + V), 4 * batch * (2 + ctx + ctx * heads + 2 * e + 2 * hk * heads));
    partial = std::max(4 * e * batch + e * V * 105 / 128 + 4 * V * batch,
                       4 * batch * (2 * e + 1 + 2 * hk * heads + ctx + ctx * heads) + 4 * hk * ctx * 8 +
                           e * hk * heads * 9 / 16);
    if (a == "gemma3" && v.at_least(0, 6, 3)) {
      // Every 6th layer is global; the others hold numParallel x sliding_window + batch tokens.
      const C window = C(parallel, what) * m.sliding_window + batch;
      for (std::uint64_t i = 0; i < L; ++i)
        if ((i + 1) % 6 != 0)
          g.kv[i] = static_cast<std::uint64_t>(static_cast<double>((window * (hk + hv) * hkv).value()) * bpe);
    }
  } else if (a == "command-r") {
    full = std::max(4 * batch * (e + V), 4 * batch * (2 + 4 * e + ctx * (1 + heads)));
    partial = std::max(4 * batch * (e + V) + e * V * 105 / 128,
                       4 * batch * (1 + 2 * e + ctx * (1 + heads)) + 4 * e * ctx + e * e * 9 / 16);
  } else if (a == "qwen2") {
    full = std::max(4 * batch * (e + V), 4 * batch * (1 + 2 * e + ctx + ctx * heads));
    partial = std::max(4 * batch * (e + V) + e * V * 105 / 128, 4 * (batch * (1 + 2 * e + ctx * (1 + heads)) + e * (1 + ctx)));
  } else if (a == "phi2") {
    full = std::max(4 * batch * (e + V), 4 * batch * (1 + 4 * e + ctx + ctx * heads));
    partial = std::max(4 * batch * (2 * e + V) + e * V * 105 / 128, 4 * batch * (2 + 3 * e + ctx + ctx * heads));
  } else if (a == "stablelm") {
    full = 4 * batch * (ctx * (1 + heads) + 3 * e + 2);
    partial = std::max(4 * batch * (V + 2 * e), full);
  } else if (a == "deepseek2") {
    full = std::max(4 * batch * (3 * e + V), 4 * batch * (3 * e + 2 + ctx * (1 + hkv) + 2 * hk * hkv));
    partial = std::max(4 * batch * (3 * e + V) + e * V * 105 / 128,
                       4 * batch * (2 * e + 1 + 2 * hk * hkv + ctx + ctx * hkv) + 4 * hk * ctx * hkv + e * hk * hkv * 9 / 16);
  } else if (a == "gptoss" && v.at_least(0, 11, 0)) {
    // The graph is computed from kvTotal before the per-layer overrides.
    C kv_total(0, what);
    for (const std::uint64_t kv : g.kv) kv_total += kv;
    for (std::uint64_t i = 0; i < L; ++i) {
      const auto per_token = static_cast<std::uint64_t>(static_cast<double>(((hk + hv) * hkv).value()) * bpe);
      g.kv[i] = (C(per_token, what) * (i % 2 == 0 ? (C(parallel, what) * 4096 + batch).value() : ctx_in)).value();
    }
    full = 4 * heads / std::max<std::uint64_t>(m.heads_kv_min, 1) * kv_total.value() / 6;
    partial = full;
  }
  g.full = full.value();
  g.partial = partial.value();
  return g;
}

/// The runner's reply to "how much does this cost" when GraphSize has no formula for the arch:
/// partial = GQA x kvTotal / 6, full = partial (llm/memory.go).
void fill_unknown_graph(Graph& g, const OllamaModelView& m) {
  Checked kv_total(0, "Ollama's memory estimate");
  for (const std::uint64_t kv : g.kv) kv_total += kv;
  if (g.partial == 0) g.partial = (m.heads / std::max<std::uint64_t>(m.heads_kv_min, 1) * kv_total / 6).value();
  if (g.full == 0) g.full = g.partial;
}

bool has_projector(const OllamaModelView& m, const OllamaVersion& v) { return m.vision_weights > 0 && v.at_least(0, 6, 0); }

/// E3 (llm/server.go greedyFit): layers from the last into the last GPU, spilling to earlier ones.
std::vector<std::vector<std::uint32_t>> greedy_fit(const std::vector<std::uint64_t>& layers, const std::vector<std::uint64_t>& free,
                                                   float capacity, std::int64_t requested) {
  std::vector<std::vector<std::uint32_t>> out(free.size());
  if (free.empty()) return out;
  std::size_t device = free.size() - 1;
  std::uint64_t space = static_cast<std::uint64_t>(static_cast<float>(free[device]) * capacity);
  for (std::size_t i = layers.size(); i-- > 0;) {
    if (requested >= 0 && static_cast<std::int64_t>(layers.size() - 1 - i) >= requested) break;
    while (true) {
      if (layers[i] <= space) {
        out[device].insert(out[device].begin(), static_cast<std::uint32_t>(i));
        space -= layers[i];
        break;
      }
      if (device == 0) return out;
      --device;
      space = static_cast<std::uint64_t>(static_cast<float>(free[device]) * capacity);
    }
  }
  return out;
}

std::size_t placed(const std::vector<std::vector<std::uint32_t>>& assignment) {
  std::size_t n = 0;
  for (const auto& gpu : assignment) n += gpu.size();
  return n;
}

/// findBestFit: the smallest capacity factor (float32 bisection to 1e-6) that still places the most layers.
std::vector<std::vector<std::uint32_t>> best_fit(const std::vector<std::uint64_t>& layers, const std::vector<std::uint64_t>& free,
                                                 std::int64_t requested, bool force) {
  float high = 1, low = 0;
  if (requested >= 0 && force) high = 1000;
  auto best = greedy_fit(layers, free, high, requested);
  const std::size_t most = placed(best);
  while (high - low > 1e-6f) {
    const float mid = (low + high) / 2;
    auto assignment = greedy_fit(layers, free, mid, requested);
    if (placed(assignment) == most) {
      high = mid;
      best = std::move(assignment);
    } else {
      low = mid;
    }
  }
  return best;
}

/// assignLayers: pack into as few GPUs as possible; without every layer, try again without the output layer.
std::vector<std::vector<std::uint32_t>> assign_layers(std::vector<std::uint64_t> layers, const std::vector<std::uint64_t>& free,
                                                      std::int64_t requested) {
  std::vector<std::vector<std::uint32_t>> result(free.size());
  for (int pass = 0; pass < 2; ++pass) {
    if (requested >= 0) requested = std::min<std::int64_t>(static_cast<std::int64_t>(layers.size()), requested);
    for (std::size_t i = 0; i < free.size(); ++i) {
      std::vector<std::uint64_t> first(free.begin(), free.begin() + static_cast<std::ptrdiff_t>(i + 1));
      auto assignment = best_fit(layers, first, requested, i == free.size() - 1);
      assignment.resize(free.size());
      result = std::move(assignment);
      if (placed(result) == layers.size() || static_cast<std::int64_t>(placed(result)) == requested) break;
    }
    if (placed(result) == layers.size()) return result;
    layers.pop_back();
  }
  return result;
}

}  // namespace

std::string OllamaVersion::text() const {
  return latest ? std::string("latest (v0.33.0-rc2)") : fmt::format("v{}.{}.{}", major, minor, patch);
}

OllamaVersion parse_ollama_version(std::string_view text, std::string_view flag) {
  const std::string t = ascii_lower(text);
  if (t == "latest" || t.empty()) return {};
  std::string_view rest = t;
  if (!rest.empty() && rest.front() == 'v') rest.remove_prefix(1);
  if (const std::size_t dash = rest.find('-'); dash != std::string_view::npos) rest = rest.substr(0, dash);  // -rc2
  OllamaVersion v{0, 0, 0, false};
  std::uint32_t* parts[3] = {&v.major, &v.minor, &v.patch};
  for (int i = 0; i < 3; ++i) {
    const std::size_t dot = rest.find('.');
    const std::string_view piece = rest.substr(0, dot);
    const auto [end, ec] = std::from_chars(piece.data(), piece.data() + piece.size(), *parts[i]);
    if (piece.empty() || ec != std::errc() || end != piece.data() + piece.size())
      throw Error(fmt::format("{}: '{}' is not an Ollama version (0.5.12, 0.30.0, latest)", flag, text));
    if (dot == std::string_view::npos) break;
    rest.remove_prefix(dot + 1);
  }
  if (v.major != 0 || !v.at_least(0, 2, 0) || v.at_least(0, 34, 0))
    throw Error(fmt::format("{}: {} is outside the versions kvplan has read (0.2.0 to 0.33)", flag, text),
                ExitCode::unsupported_architecture);
  return v;
}

OllamaEra ollama_era(const OllamaVersion& v) {
  if (!v.at_least(0, 12, 11)) return OllamaEra::e1;
  if (!v.at_least(0, 30, 0)) return OllamaEra::e3;
  return OllamaEra::e4;
}

std::string_view to_string(OllamaEra era) {
  switch (era) {
    case OllamaEra::e1: return "E1";
    case OllamaEra::e3: return "E3";
    case OllamaEra::e4: return "E4";
  }
  return "E4";
}

std::optional<std::string> ollama_kv_type_error(std::string_view text, std::string_view flag) {
  const std::string t = ascii_lower(text);
  if (t.empty() || t == "f16" || t == "fp16" || t == "q8_0" || t == "q4_0") return std::nullopt;
  return fmt::format("{}: '{}' is not a cache type Ollama accepts (f16, q8_0, q4_0)", flag, text);
}

std::string parse_ollama_kv_type(std::string_view text, std::string_view flag) {
  if (std::optional<std::string> error = ollama_kv_type_error(text, flag)) throw Error(std::move(*error));
  const std::string t = ascii_lower(text);
  if (t.empty() || t == "f16" || t == "fp16") return t.empty() ? "" : "f16";
  return t;
}

OllamaModelView ollama_model_view(const ModelSpec& model, const LlamaCppModelFacts* facts) {
  OllamaModelView m;
  m.arch = gguf_arch(model.architecture);
  m.block_count = model.layer_count();
  m.heads = model.attention_heads;
  m.tokens = model.vocab_size;
  m.train_ctx = model.max_context;
  m.heads_kv_min = std::numeric_limits<std::uint64_t>::max();
  for (const LayerSpec& l : model.layers) {
    if (l.kind == LayerKind::linear || l.kind == LayerKind::none || l.kind == LayerKind::shared)
      throw Error(fmt::format("the Ollama profile prices attention layers only; {} has {} layers", model.id,
                              l.kind == LayerKind::none ? "attention-free" : to_string(l.kind)),
                  ExitCode::unsupported_architecture);
    m.heads_kv_max = std::max<std::uint64_t>(m.heads_kv_max, l.kv_heads);
    m.heads_kv_min = std::min<std::uint64_t>(m.heads_kv_min, l.kv_heads);
    m.head_k = std::max<std::uint64_t>(m.head_k, l.k_head_dim);
    m.head_v = std::max<std::uint64_t>(m.head_v, l.kind == LayerKind::mla ? 0 : l.v_head_dim);
    if (l.kind == LayerKind::sliding) m.sliding_window = l.window;
  }
  if (m.block_count == 0) throw Error("the model has no layers", ExitCode::unsupported_architecture);
  m.flash_attention_capable = m.head_k == m.head_v && m.head_k > 0 && m.arch != "gemma2";
  const ModelFile* file = model.file.get();
  m.embedding = file && file->n_embd ? file->n_embd : std::uint64_t{m.heads} * model.layers.front().k_head_dim;
  if (file && !file->tensors.empty() && model.layer_weights_bytes.size() == model.layers.size()) {
    m.blk = model.layer_weights_bytes;
    const LlamaCppLayerWeights* by_layer = facts ? &facts->by_layer : nullptr;
    if (by_layer && by_layer->exact && by_layer->from_tensors == file->tensors.size() && by_layer->bytes.size() > 1) {
      m.output_layer += by_layer->bytes[1];  // the output tensors' sum (exact: no sum of the file passes 64 bits)
    } else {
      for (const ModelFileTensor& t : file->tensors)
        if (t.layer == ModelFileTensor::output) m.output_layer += t.bytes;
    }
    if (file->output_tied) m.output_layer += file->token_embd_bytes;
    m.vision_weights = file->vision_bytes;
    if (m.vision_weights && m.arch == "gemma3") m.vision_graph = kGemma3VisionGraph;
  } else {
    // No tensor list: the checkpoint split evenly over the blocks and the output head (an estimate).
    if (!model.weights_bytes)
      throw Error(fmt::format("the Ollama profile needs {}'s weights: give a GGUF file, an Ollama tag (llama3.1:8b) or --weights",
                              model.id),
                  ExitCode::unsupported_architecture);
    const std::uint64_t per = *model.weights_bytes / (m.block_count + 1);
    m.blk.assign(m.block_count, per);
    m.output_layer = *model.weights_bytes - per * m.block_count;
    m.exact = false;
  }
  return m;
}

std::uint64_t ollama_default_num_ctx(const OllamaVersion& v, const std::vector<OllamaDevice>& gpus, std::uint64_t overhead,
                                     std::string* why) {
  const auto say = [&](std::string text) {
    if (why) *why = std::move(text);
  };
  if (!v.at_least(0, 6, 7)) {
    say(fmt::format("num_ctx 2048: the default to v0.6.6 (api/types.go DefaultOptions)"));
    return 2048;
  }
  if (!v.at_least(0, 15, 5)) {
    say("num_ctx 4096: the default of v0.6.7 - v0.15.4 (commit 44b466eeb)");
    return 4096;
  }
  std::uint64_t total = 0;
  for (const OllamaDevice& g : gpus)
    if (!g.cpu) total = checked_add(total, g.total_bytes - std::min(g.total_bytes, overhead), "total VRAM");
  const std::uint64_t ctx = total >= 47 * GiB ? 262144 : total >= 23 * GiB ? 32768 : 4096;
  say(fmt::format("num_ctx {}: the VRAM tier of v0.15.5+ (server/routes.go): total VRAM{} - OLLAMA_GPU_OVERHEAD = {} "
                  "({} 47 GiB: 262144, {} 23 GiB: 32768, else 4096)",
                  ctx, gpus.size() == 1 ? "" : " of every GPU", human(total), total >= 47 * GiB ? ">=" : "<",
                  total >= 23 * GiB ? ">=" : "<"));
  return ctx;
}

OllamaEstimate estimate_gpu_layers(const OllamaModelView& m, const std::vector<OllamaDevice>& gpus, std::uint64_t num_ctx,
                                   std::uint32_t parallel, std::uint32_t batch_opt, std::int64_t num_gpu,
                                   std::string_view kv_type, std::uint64_t overhead_env, const OllamaVersion& v) {
  OllamaEstimate est;
  est.kv_type = std::string(kv_type);
  est.layers_requested = num_gpu;
  est.layers_model = m.block_count + 1;
  const std::uint64_t overhead = v.at_least(0, 3, 10) ? overhead_env : 0;  // OLLAMA_GPU_OVERHEAD from v0.3.10
  std::uint64_t projector_gzo = 0, projector_last = 0;
  std::uint64_t ctx = num_ctx;
  if (has_projector(m, v)) {
    // "multimodal models require at least 2048 context": for a projector inside the blob from v0.7.1.
    if (v.at_least(0, 7, 1)) ctx = std::max<std::uint64_t>(ctx, 2048);
    est.projector_weights = m.vision_weights;
    est.projector_graph = m.vision_graph;
    (v.at_least(0, 7, 1) ? projector_last : projector_gzo) = checked_add(m.vision_weights, m.vision_graph, "Ollama's memory estimate");
  }
  Graph g = graph_size(m, ctx, std::min<std::uint64_t>(ctx, batch_opt), parallel, kv_type, v);
  fill_unknown_graph(g, m);
  if (gpus.size() > 1) g.full = g.partial;  // multigpu always uses the partial graph size
  est.kv = g.kv;
  for (const std::uint64_t kv : g.kv) est.kv_total = checked_add(est.kv_total, kv, "Ollama's memory estimate");
  est.graph_full = g.full;
  est.graph_partial = g.partial;
  const std::uint64_t graph = std::max(g.full, g.partial);
  const std::uint32_t L = m.block_count;
  {
    // One checked bound for the sums below (Ollama's uint64 arithmetic, which wraps): none adds
    // more than L + GPUs + 2 times everything there is to place, so when that fits none wraps.
    Checked bound = Checked(overhead, "Ollama's memory estimate") + projector_gzo + projector_last + m.output_layer + graph;
    for (std::uint32_t i = 0; i < L; ++i) bound = bound + m.blk[i] + g.kv[i];
    for (const OllamaDevice& gpu : gpus) bound = bound + gpu.minimum_bytes;
    checked_mul(bound.value(), std::uint64_t{L} + gpus.size() + 2, "Ollama's memory estimate");
  }
  std::uint64_t layer_size = m.blk.front() + g.kv.front();
  est.layer_buffer = layer_size;

  std::vector<std::size_t> with_space;
  est.allocations.assign(gpus.size(), 0);
  est.layers_per_gpu.assign(gpus.size(), 0);
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const std::uint64_t gzo = with_space.empty() ? projector_gzo : 0;
    if (gpus[i].free_bytes < overhead + gzo + graph + gpus[i].minimum_bytes + 2 * layer_size) continue;
    with_space.push_back(i);
    est.allocations[i] += gpus[i].minimum_bytes + layer_size;
  }
  std::uint64_t overflow = 0;
  if (!with_space.empty()) est.allocations[with_space.front()] += projector_gzo;
  else if (v.at_least(0, 7, 1)) overflow += projector_gzo;

  std::uint32_t count = 0;
  std::uint64_t weights = 0;
  const bool backwards = v.at_least(0, 7, 0);
  const auto try_place = [&](std::size_t index, std::uint64_t size) {
    for (std::size_t j = with_space.size(); j > 0; --j) {
      const std::size_t at = index % j;
      const std::size_t gi = with_space[at];
      if (gpus[gi].free_bytes > overhead + est.allocations[gi] + graph + size) {
        est.allocations[gi] += size;
        ++est.layers_per_gpu[gi];
        ++count;
        return true;
      }
      with_space.erase(with_space.begin() + static_cast<std::ptrdiff_t>(at));
    }
    return false;
  };
  for (std::uint32_t step = 0; step < L; ++step) {
    const std::uint32_t i = backwards ? L - 1 - step : step;
    layer_size = m.blk[i] + g.kv[i];
    weights += v.at_least(0, 6, 1) ? m.blk[i] : layer_size;  // to v0.6.0 the log's weights counted the cache too
    if (num_gpu >= 0 && count >= num_gpu) {
      if (backwards) overflow += layer_size;
      continue;
    }
    // From v0.7.0 every block that finds no GPU adds to the overflow (len(gpusWithSpace) == 0).
    if (!try_place(i, layer_size) && backwards) overflow += layer_size;
  }
  est.fully_loaded = count >= L;
  if (!backwards && !est.fully_loaded) overflow += (L - count) * layer_size;  // the last block's size, as before v0.7.0

  const std::uint64_t last_layer = m.output_layer + projector_last;
  if (last_layer > 0) {
    if (num_gpu < 0 || count < num_gpu) {
      for (std::size_t j = with_space.size(); j > 0; --j) {
        const std::size_t gi = with_space[count % j];
        if (gpus[gi].free_bytes > overhead + est.allocations[gi] + graph + last_layer) {
          est.allocations[gi] += last_layer;
          ++est.layers_per_gpu[gi];
          ++count;
          break;
        }
      }
    }
    if (count < L + 1) {
      est.fully_loaded = false;
      overflow += last_layer;
    }
  }
  for (std::size_t i = 0; i < gpus.size(); ++i)
    if (est.layers_per_gpu[i] > 0) est.allocations[i] += est.fully_loaded ? g.full : g.partial;
  std::uint64_t partial = 0;
  for (const std::uint64_t a : est.allocations) partial += a;
  est.required_full = partial + overflow;
  const bool cpu = !gpus.empty() && gpus.front().cpu;
  est.layers = cpu ? 0 : count;
  est.required_partial = cpu || count == 0 ? 0 : partial;
  if (!v.at_least(0, 6, 1)) {
    est.weights_total = weights;
    est.weights_repeating = weights - std::min(weights, m.output_layer);
  } else {
    est.weights_total = v.at_least(0, 6, 3) ? weights + m.output_layer : weights;
    est.weights_repeating = weights;
  }
  est.weights_nonrepeating = m.output_layer;
  return est;
}

Modelfile parse_modelfile(std::string_view text, std::string_view path) {
  Modelfile mf;
  std::size_t line_no = 0;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string line(text.substr(0, nl));
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::vector<std::string> words;
    std::size_t at = 0;
    while (at < line.size()) {
      while (at < line.size() && std::isspace(static_cast<unsigned char>(line[at]))) ++at;
      const std::size_t start = at;
      while (at < line.size() && !std::isspace(static_cast<unsigned char>(line[at]))) ++at;
      if (at > start) words.push_back(line.substr(start, at - start));
    }
    if (words.empty() || words.front().front() == '#') continue;
    const std::string command = ascii_lower(words.front());
    if (command == "from" && words.size() > 1) mf.from = words[1];
    if (command != "parameter" || words.size() < 3) continue;
    const std::string name = ascii_lower(words[1]);
    const std::string& value = words[2];
    const auto number = [&](std::int64_t low) {
      std::int64_t n = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec != std::errc() || end != value.data() + value.size() || n < low)
        throw Error(fmt::format("{}:{}: PARAMETER {} '{}' is not a whole number{}", path, line_no, name, value,
                                low > 0 ? " of at least 1" : ""));
      return n;
    };
    if (name == "num_ctx") mf.num_ctx = static_cast<std::uint64_t>(number(1));
    else if (name == "num_gpu") mf.num_gpu = number(-1);
    else if (name == "num_batch") mf.num_batch = static_cast<std::uint32_t>(std::min<std::int64_t>(number(1), 1 << 30));
  }
  return mf;
}

bool ollama_forces_single(std::string_view arch, OllamaEra era) {
  static constexpr std::array<std::string_view, 10> kSingle = {"qwen3vl",   "qwen3vlmoe", "qwen35",         "qwen35moe",
                                                               "qwen3next", "lfm2",       "lfm2moe",        "nemotron_h",
                                                               "nemotron_h_moe", "nemotron_h_omni"};
  return arch == "mllama" || (era == OllamaEra::e4 && std::find(kSingle.begin(), kSingle.end(), arch) != kSingle.end());
}

OllamaResult plan_ollama(const ModelSpec& model, const std::vector<OllamaDevice>& gpus, const OllamaOptions& o,
                         std::uint64_t num_ctx_in, std::optional<std::uint32_t> parallel_in,
                         const LlamaCppModelFacts* given_facts, const OllamaModelView* given_view) {
  OllamaResult out;
  std::vector<std::string>& rules = out.rules;
  const OllamaVersion& v = o.version;
  out.era = ollama_era(v);
  if (o.words) out.version = v.text();  // read by the engine section only, which a probe never writes
  std::optional<OllamaModelView> own_view;
  if (!given_view) own_view = ollama_model_view(model, given_facts);
  const OllamaModelView& m = given_view ? *given_view : *own_view;
  out.exact = m.exact;
  out.layers_model = m.block_count + 1;
  if (gpus.empty()) throw Error("no GPU to plan for");
  if (o.words) rules.push_back(fmt::format("Ollama {}, era {}: {}", v.text(), to_string(out.era),
                              out.era == OllamaEra::e1   ? "llm/memory.go EstimateGPULayers decides the GPU layers"
                              : out.era == OllamaEra::e3 ? "llm/server.go buildLayout/assignLayers decides the GPU layers"
                                                         : "llama-server (--fit) places the layers; Ollama picks the GPUs"));
  if (!m.exact)
    if (o.words) rules.push_back("no GGUF tensor list: each block and the output layer get an even share of the checkpoint (an ESTIMATE)");

  // --- num_ctx: the request's, clamped (llm/server.go NewLlamaServer; server/sched.go).
  std::uint64_t num_ctx = num_ctx_in;
  if (m.train_ctx > 0 && num_ctx > m.train_ctx) {
    if (o.words) rules.push_back(fmt::format("num_ctx {} > the trained context {}: Ollama clamps it (\"requested context size too large "
                                "for model\")",
                                num_ctx, m.train_ctx));
    num_ctx = m.train_ctx;
  }
  if (m.arch == "gptoss" && v.at_least(0, 11, 1) && !v.at_least(0, 15, 5) && num_ctx < 8192) {
    std::uint64_t total = 0;
    for (const OllamaDevice& g : gpus) total = checked_add(total, g.total_bytes - std::min(g.total_bytes, o.gpu_overhead), "total VRAM");
    if (!v.at_least(0, 11, 4) || total >= 20 * GiB) {
      if (o.words) rules.push_back(fmt::format("gpt-oss: num_ctx raised from {} to 8192 (v0.11.1 - v0.15.4{})", num_ctx,
                                  v.at_least(0, 11, 4) ? "; not in low-VRAM mode, < 20 GiB" : ""));
      num_ctx = 8192;
    }
  }
  if (has_projector(m, v) && out.era != OllamaEra::e1 && num_ctx < 2048) {
    if (o.words) rules.push_back(fmt::format("vision model: num_ctx raised from {} to 2048", num_ctx));
    num_ctx = 2048;
  }
  out.num_ctx = num_ctx;

  // --- parallel: OLLAMA_NUM_PARALLEL, or the version's default (server/sched.go).
  std::uint32_t parallel = 1;
  std::vector<std::uint32_t> tries;
  if (parallel_in) {
    parallel = *parallel_in;
  } else if (!v.at_least(0, 10, 0)) {
    tries = {v.at_least(0, 6, 7) ? 2u : 4u, 1u};
  }
  const bool forced_single = ollama_forces_single(m.arch, out.era);
  if (forced_single && (parallel != 1 || !tries.empty())) {
    if (o.words) rules.push_back(fmt::format("{}: Ollama forces parallel 1 for this architecture (server/sched.go)", m.arch));
    parallel = 1;
    tries.clear();
  }

  // llama.cpp keeps n_ctx = num_ctx x parallel in 32 bits (the largest parallel tried counts).
  const std::uint32_t widest = tries.empty() ? parallel : *std::max_element(tries.begin(), tries.end());
  if (num_ctx > std::numeric_limits<std::uint32_t>::max() / widest)
    throw Error(fmt::format("num_ctx {} x parallel {} is more than llama.cpp's n_ctx can hold (2^32 - 1)", num_ctx, widest));

  // --- the cache type and flash attention (docs/engines/ollama.md).
  out.kv_type_requested = o.kv_cache_type;
  const bool quantized = o.kv_cache_type == "q8_0" || o.kv_cache_type == "q4_0";
  LlamaCppFlashAttn fa = LlamaCppFlashAttn::automatic;
  bool honoured = false;
  if (out.era == OllamaEra::e1) {
    const bool model_default = v.at_least(0, 11, 8) && m.arch == "gptoss";
    const bool fa_on = o.flash_attention.value_or(model_default) && m.flash_attention_capable;
    fa = fa_on ? LlamaCppFlashAttn::on : LlamaCppFlashAttn::off;
    honoured = quantized && fa_on && v.at_least(0, 5, 0);
    if (quantized && !honoured)
      if (o.words) rules.push_back(fmt::format("OLLAMA_KV_CACHE_TYPE={} needs flash attention (OLLAMA_FLASH_ATTENTION=1 on a model "
                                  "whose key and value lengths match): Ollama falls back to f16 silently",
                                  o.kv_cache_type));
  } else if (out.era == OllamaEra::e3) {
    fa = o.flash_attention ? (*o.flash_attention && m.flash_attention_capable ? LlamaCppFlashAttn::on : LlamaCppFlashAttn::off)
                           : LlamaCppFlashAttn::automatic;
    honoured = quantized && o.flash_attention.value_or(false) && m.flash_attention_capable;
    if (quantized && !honoured)
      if (o.words) rules.push_back(fmt::format("OLLAMA_KV_CACHE_TYPE={}: \"OLLAMA_FLASH_ATTENTION must be enabled to use a quantized "
                                  "OLLAMA_KV_CACHE_TYPE\" (flash attention auto does not count): the cache is f16",
                                  o.kv_cache_type));
  } else {
    fa = o.flash_attention ? (*o.flash_attention ? LlamaCppFlashAttn::on : LlamaCppFlashAttn::off) : LlamaCppFlashAttn::automatic;
    honoured = quantized;
    if (quantized)
      if (o.words) rules.push_back(fmt::format("OLLAMA_KV_CACHE_TYPE={}: passed to llama-server unchecked (--cache-type-k/-v)",
                                  o.kv_cache_type));
  }
  out.kv_type = honoured ? o.kv_cache_type : "f16";
  out.flash_attention = std::string(to_string(fa));
  const std::string est_type = honoured ? o.kv_cache_type : "";

  // --- the batch: num_batch (512), or E4's automatic batch (server/sched.go automaticGenerationBatch).
  out.num_batch = o.num_batch.value_or(512);

  const std::int64_t num_gpu = o.num_gpu.value_or(-1);

  LlamaCppSettings s;
  s.words = o.words;
  s.type_k = &ggml_type_by_name(out.kv_type);
  s.type_v = s.type_k;
  s.flash_attn = fa;
  LlamaCppModelFacts own_facts;
  if (!given_facts) own_facts = llamacpp_facts(model);
  const LlamaCppModelFacts& facts = given_facts ? *given_facts : own_facts;
  const auto run_llama = [&](std::int64_t ngl, const std::vector<float>& split, const std::vector<std::uint64_t>& free,
                             LlamaCppSplitMode mode, std::uint32_t main, LlamaCppLayerLoads* loads = nullptr) {
    s.n_ctx = num_ctx * parallel;
    s.n_parallel = parallel;
    s.n_gpu_layers = ngl;
    s.device_free = free.size() > 1 ? free : std::vector<std::uint64_t>{};
    s.tensor_split = free.size() > 1 ? split : std::vector<float>{};
    s.split_mode = mode;
    s.main_gpu = free.size() > 1 ? main : 0;
    return plan_llamacpp(model, s, facts, loads);
  };
  // E4 on one GPU: llama.cpp's plan at the -ngl the search settles on, when the search made it.
  std::optional<LlamaCppResult> planned;
  std::int64_t planned_ngl = -1;

  std::vector<std::uint64_t> reserve(gpus.size(), 0);
  std::vector<std::uint32_t> per_gpu_layers(gpus.size(), 0);
  std::uint64_t full_reserve = 0;
  std::uint32_t gpu_layers = 0;
  std::vector<std::size_t> used;  // the GPUs llama.cpp gets, in order
  LlamaCppSplitMode mode = LlamaCppSplitMode::layer;
  std::uint32_t main_gpu = 0;

  if (out.era == OllamaEra::e1 || out.era == OllamaEra::e3) {
    if (m.arch == "llama" && model.active_params > 0)
      throw Error("Ollama's estimate for llama-architecture MoE models (Mixtral) reads the expert tensors' shapes, which "
                  "kvplan does not model; use --ollama-version 0.30 or later (llama-server places the layers)",
                  ExitCode::unsupported_architecture);
    if (m.arch == "mllama")
      throw Error("Ollama's mllama estimate (cross-attention caches of 1601 x 4 tokens) is not modelled",
                  ExitCode::unsupported_architecture);
  }

  if (out.era == OllamaEra::e1) {
    std::vector<OllamaDevice> devices = gpus;
    OllamaEstimate est;
    for (std::size_t t = 0; t < std::max<std::size_t>(tries.size(), 1); ++t) {
      if (!tries.empty()) parallel = tries[t];
      est = estimate_gpu_layers(m, devices, num_ctx * parallel, parallel, out.num_batch, num_gpu, est_type, o.gpu_overhead, v);
      if (!tries.empty() && est.fully_loaded) break;
    }
    if (!tries.empty())
      if (o.words) rules.push_back(fmt::format("parallel: OLLAMA_NUM_PARALLEL not set, so Ollama tries {} then 1 and keeps the first "
                                  "that fits the GPU whole: {}",
                                  tries.front(), parallel));
    if (o.words) rules.push_back(fmt::format("EstimateGPULayers: kv {}, graph full {} / partial {}, {} of {} layers offloaded{}; "
                                "memory.required.full {} partial {}",
                                human(est.kv_total), human(est.graph_full), human(est.graph_partial), est.layers,
                                est.layers_model,
                                gpus.size() > 1 ? fmt::format(" (split {})", [&] {
                                  std::string split;
                                  for (const std::uint32_t n : est.layers_per_gpu) split += (split.empty() ? "" : ",") + std::to_string(n);
                                  return split;
                                }())
                                                : std::string(),
                                human(est.required_full), human(est.required_partial)));
    gpu_layers = est.layers;
    // A num_gpu the user set goes to the runner as it is: only num_gpu < 0 takes the estimate's
    // count (llm/server.go, read at v0.3.9 and v0.11.4; record O2 of engine-logs-serving.jsonl,
    // layers.offload=48 with --n-gpu-layers 49). The estimate may have found room for fewer: the
    // runner then loads the layers asked for, and the cards must hold them. With no layer on a GPU
    // at all Ollama runs the model on the CPU library instead, whatever num_gpu says.
    if (num_gpu >= 0 && est.layers > 0) {
      gpu_layers = static_cast<std::uint32_t>(std::min<std::int64_t>(num_gpu, est.layers_model));
      if (gpu_layers != est.layers)
        if (o.words) rules.push_back(fmt::format("num_gpu {}: the runner gets --n-gpu-layers {}, not the estimate's {} "
                                    "(llm/server.go takes the estimate only for num_gpu < 0)",
                                    num_gpu, gpu_layers, est.layers));
    }
    per_gpu_layers = est.layers_per_gpu;
    const std::uint64_t overhead = v.at_least(0, 3, 10) ? o.gpu_overhead : 0;
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      if (est.layers_per_gpu[i] == 0) continue;
      used.push_back(i);
      reserve[i] = gpus[i].minimum_bytes + overhead + est.layer_buffer + (est.fully_loaded ? est.graph_full : est.graph_partial);
    }
    if (!used.empty()) {
      const std::uint64_t projector = est.projector_weights + est.projector_graph;
      reserve[used.front()] += v.at_least(0, 7, 1) ? 0 : projector;
      if (v.at_least(0, 7, 1) && est.fully_loaded) reserve[used.back()] += projector;
    }
    full_reserve = gpus.front().minimum_bytes + overhead + est.layer_buffer + est.graph_full + est.projector_weights +
                   est.projector_graph;
    out.estimate = est;
  } else if (out.era == OllamaEra::e3) {
    Graph g = graph_size(m, num_ctx * parallel, std::min<std::uint64_t>(num_ctx * parallel, out.num_batch), parallel,
                         est_type, v);
    fill_unknown_graph(g, m);
    if (gpus.size() > 1) g.full = g.partial;
    std::vector<std::uint64_t> layers;
    for (std::uint32_t i = 0; i < m.block_count; ++i) layers.push_back(m.blk[i] + g.kv[i]);
    layers.push_back(m.output_layer + m.vision_weights + m.vision_graph);
    const std::uint64_t buffer = m.blk.front() + g.kv.front();
    // GPUs by free memory, largest first; each keeps blk.0 + kv[0], the minimum, the overhead and the graph.
    std::vector<std::size_t> order(gpus.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return gpus[a].free_bytes > gpus[b].free_bytes; });
    std::vector<std::uint64_t> graph_on(gpus.size(), 0);
    std::vector<std::vector<std::uint32_t>> assignment;
    std::size_t gpus_used = 0;
    for (int round = 0; round < 8; ++round) {
      std::vector<std::uint64_t> free;
      for (const std::size_t i : order) {
        const std::uint64_t after_buffer = gpus[i].free_bytes - std::min(gpus[i].free_bytes, buffer);
        const std::uint64_t reserved = gpus[i].minimum_bytes + o.gpu_overhead + graph_on[i];
        free.push_back(after_buffer > reserved ? after_buffer - reserved : 0);
      }
      assignment = assign_layers(layers, free, num_gpu);
      std::size_t now = 0;
      for (std::size_t k = 0; k < assignment.size(); ++k)
        if (!assignment[k].empty()) {
          ++now;
          graph_on[order[k]] = std::max(g.full, g.partial);
        }
      if (now <= gpus_used) break;
      gpus_used = now;
    }
    std::size_t total = 0;
    for (std::size_t k = 0; k < assignment.size(); ++k) {
      per_gpu_layers[order[k]] = static_cast<std::uint32_t>(assignment[k].size());
      total += assignment[k].size();
    }
    gpu_layers = static_cast<std::uint32_t>(total);
    const bool all = total == layers.size();
    for (std::size_t i = 0; i < gpus.size(); ++i)
      if (per_gpu_layers[i] > 0) {
        used.push_back(i);
        reserve[i] = gpus[i].minimum_bytes + o.gpu_overhead + buffer + (all ? g.full : g.partial);
      }
    full_reserve = gpus.front().minimum_bytes + o.gpu_overhead + buffer + g.full;
    OllamaEstimate est;
    est.kv = g.kv;
    for (const std::uint64_t kv : g.kv) est.kv_total = checked_add(est.kv_total, kv, "Ollama's memory estimate");
    est.graph_full = g.full;
    est.graph_partial = g.partial;
    est.layers_model = m.block_count + 1;
    est.layers = gpu_layers;
    est.layers_per_gpu = per_gpu_layers;
    est.layer_buffer = buffer;
    est.fully_loaded = all;
    // What the layout puts on each GPU (its layers, the graph, the reserve) and what it leaves out.
    est.allocations.assign(gpus.size(), 0);
    std::vector<bool> assigned(layers.size(), false);
    for (std::size_t k = 0; k < assignment.size(); ++k)
      for (const std::uint32_t l : assignment[k]) {
        est.allocations[order[k]] += layers[l];
        assigned[l] = true;
      }
    std::uint64_t left = 0;
    for (std::size_t l = 0; l < layers.size(); ++l)
      if (!assigned[l]) left += layers[l];
    for (const std::size_t i : used) {
      est.allocations[i] += reserve[i];
      est.required_partial += est.allocations[i];
    }
    est.required_full = est.required_partial + left;
    for (std::uint32_t i = 0; i < m.block_count; ++i) est.weights_repeating += m.blk[i];
    est.weights_nonrepeating = m.output_layer;
    est.weights_total = est.weights_repeating + m.output_layer;
    est.projector_weights = m.vision_weights;
    est.projector_graph = m.vision_graph;
    est.kv_type = est_type;
    est.layers_requested = num_gpu;
    out.estimate = est;
    if (o.words) rules.push_back(fmt::format("buildLayout: each GPU keeps blk.0 + kv[0] ({}), MinimumMemory, OLLAMA_GPU_OVERHEAD and "
                                "the graph ({}); layers from the last one down: {} of {} on the GPU{}",
                                human(buffer), human(std::max(g.full, g.partial)), gpu_layers, layers.size(),
                                gpus.size() > 1 ? " (GPUs of one performance class assumed)" : ""));
    if (m.vision_weights)
      if (o.words) rules.push_back("the vision tower travels with the output layer (an ESTIMATE: the Ollama engine measures it at load)");
  } else {
    // E4: Ollama picks the GPUs and the batch (e4_choices.h); llama-server fits the layers.
    const OllamaE4Inputs e4 = ollama_e4_inputs(m, model, gpus, o);
    const std::uint64_t predicted = ollama_e4_predicted(e4, num_ctx * parallel);
    if (!o.num_batch) {
      out.num_batch = ollama_e4_batch(e4, num_ctx * parallel);
      if (o.words) rules.push_back(fmt::format("automatic batch (server/sched.go automaticGenerationBatch): -b {0} -ub {0}", out.num_batch));
    }
    s.n_batch = out.num_batch;
    s.n_ubatch = out.num_batch;
    if (const std::optional<std::size_t> chosen = ollama_e4_single_gpu(e4, num_ctx * parallel)) {
      used = {*chosen};
      mode = LlamaCppSplitMode::none;
      if (o.words) rules.push_back(fmt::format("GPU {} alone holds the predicted {} within 80% of its available memory: "
                                  "--split-mode none --main-gpu 0 with only it visible (selectLlamaServerPlacement)",
                                  *chosen, human(predicted)));
    } else {
      for (std::size_t i = 0; i < gpus.size(); ++i) used.push_back(i);
    }
    if (gpus.size() == 1) used = {0};
    std::vector<std::uint64_t> free;
    for (const std::size_t i : used) free.push_back(gpus[i].free_bytes);
    constexpr std::uint64_t kFitMargin = 1024 * MiB;  // llama-server --fit-target default (LLAMA_ARG_FIT_TARGET)
    const auto fits_all = [&](const LlamaCppResult& r) {
      for (const LlamaCppDevice& d : r.devices) {
        const std::uint64_t need = d.weights_bytes + d.cache_bytes + r.compute_estimate_bytes.value_or(0) + kFitMargin;
        if (need > free[d.index]) return false;
      }
      return true;
    };
    std::int64_t ngl = m.block_count + 1;
    if (num_gpu >= 0) {
      ngl = std::min<std::int64_t>(num_gpu, ngl);
      if (o.words) rules.push_back(fmt::format("num_gpu {}: -ngl {} to llama-server", num_gpu, ngl));
    } else if (free.size() == 1) {
      // One GPU: the first probe plans every layer and keeps each layer's load; a probe with fewer
      // layers is then the sum of its layers' loads, the same bytes plan_llamacpp would add up.
      LlamaCppLayerLoads loads;
      LlamaCppResult first = run_llama(ngl, {}, free, LlamaCppSplitMode::layer, 0, &loads);
      if (fits_all(first)) {
        planned = std::move(first);
        planned_ngl = ngl;
      } else if (loads.usable) {
        const std::uint64_t compute = first.compute_estimate_bytes.value_or(0);
        const auto fits = [&](std::int64_t n) { return loads.gpu_bytes(n) + compute + kFitMargin <= free.front(); };
        --ngl;
        while (ngl > 0 && !fits(ngl)) --ngl;
      } else {
        --ngl;
        while (ngl > 0 && !fits_all(run_llama(ngl, {}, free, LlamaCppSplitMode::layer, 0))) --ngl;
      }
    } else {
      while (ngl > 0 && !fits_all(run_llama(ngl, {}, free, LlamaCppSplitMode::layer, 0))) --ngl;
    }
    if (num_gpu < 0) {
      // llama_params_fit (llama.cpp src/llama.cpp): nothing changes while every device keeps the
      // margin; Ollama's -c is the user's, so the context is not reduced; a dense model then gets
      // the layers per device extrapolated from measured memory, which kvplan takes as the most
      // whole layers that keep the margin. A MoE model first moves its expert tensors to host memory.
      if (o.words) rules.push_back(fmt::format("llama-server --fit (llama_params_fit; the margin of 1 GiB, LLAMA_ARG_FIT_TARGET, is "
                                  "INFERRED): the most layers from the last one down whose model buffer, cache and "
                                  "compute estimate keep the margin free: {} of {}{}",
                                  ngl, m.block_count + 1,
                                  model.active_params > 0 && ngl < static_cast<std::int64_t>(m.block_count) + 1
                                      ? "; an ESTIMATE for this MoE model: --fit moves expert tensors to host memory "
                                        "before whole layers"
                                      : ""));
      if (model.active_params > 0 && ngl < static_cast<std::int64_t>(m.block_count) + 1) out.exact = false;
    }
    gpu_layers = static_cast<std::uint32_t>(ngl);
    for (const std::size_t i : used) reserve[i] = kFitMargin;
    full_reserve = kFitMargin;
  }

  // --- what llama.cpp then allocates: the layers on the GPUs Ollama gave it.
  std::vector<std::uint64_t> free;
  std::vector<float> split;
  for (const std::size_t i : used) {
    free.push_back(gpus[i].free_bytes);
    split.push_back(static_cast<float>(per_gpu_layers[i]));
  }
  if (used.empty()) free.push_back(gpus.front().free_bytes);
  if (out.era == OllamaEra::e4) split.clear();
  const bool e4_single = out.era == OllamaEra::e4 && used.size() == 1;
  if (planned && e4_single && planned_ngl == std::int64_t{gpu_layers}) out.llama = std::move(*planned);  // the same settings
  else out.llama = run_llama(gpu_layers, split, free, e4_single ? LlamaCppSplitMode::layer : mode, main_gpu);
  out.gpu_layers = gpu_layers;
  out.partly_on_cpu = gpu_layers < m.block_count + 1;
  const std::uint64_t compute = out.era == OllamaEra::e4 ? out.llama.compute_estimate_bytes.value_or(0) : 0;
  for (std::size_t k = 0; k < used.size(); ++k) {
    OllamaGpuShare share;
    share.index = static_cast<std::uint32_t>(used[k]);
    share.capacity_bytes = gpus[used[k]].free_bytes;
    share.reserve_bytes = reserve[used[k]] + compute;
    for (const LlamaCppDevice& d : out.llama.devices)
      if (d.index == k) {
        share.layers = d.layers + (d.output ? 1 : 0);
        share.weights_bytes = d.weights_bytes;
        share.kv_bytes = d.cache_bytes;
      }
    out.gpus.push_back(share);
  }
  out.whole_weights_bytes = std::accumulate(m.blk.begin(), m.blk.end(), std::uint64_t{0}) + m.output_layer;
  out.whole_kv_bytes = out.llama.kv_bytes + out.llama.recurrent_bytes;
  out.whole_reserve_bytes = full_reserve + compute;
  out.host_kv_bytes = out.llama.host_cache_bytes;
  std::uint64_t on_gpu = 0;
  for (const OllamaGpuShare& share : out.gpus) on_gpu += share.weights_bytes;
  out.host_weights_bytes = out.whole_weights_bytes - std::min(out.whole_weights_bytes, on_gpu);
  if (o.words) rules.push_back(fmt::format("llama.cpp gets -c {} -np {} -ctk/-ctv {} -fa {} -ngl {}: its cache and buffers follow "
                              "(the llama.cpp profile's rules)",
                              num_ctx * parallel, parallel, out.kv_type, out.flash_attention, gpu_layers));
  out.parallel = parallel;
  if (out.partly_on_cpu)
    if (o.words) rules.push_back(fmt::format("{} of {} layers on the GPU{}: the rest ({} of weights, {} of cache) runs from system RAM",
                                gpu_layers, m.block_count + 1, gpus.size() == 1 ? "" : "s", human(out.host_weights_bytes),
                                human(out.host_kv_bytes)));
  return out;
}

}  // namespace kvplan
