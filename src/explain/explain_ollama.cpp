// Ollama's own figures beside the Ollama profile. Before it starts a runner, Ollama's scheduler
// estimates what the model needs (llm/memory.go EstimateGPULayers, logged as msg=offload with
// memory.required.*, memory.weights.*, memory.graph.*): the profile computes the same estimate
// (engines/ollama/rules.cpp), so with the model's GGUF blob (an Ollama tag such as gemma3:12b),
// the log's settings and its free memory, every printed figure must come back within its printed
// rounding (format.HumanBytes2: one decimal). The layers placed depend on the free memory, which
// the log prints to 0.1 GiB, so their count is compared against both ends of that band. Beside
// the estimate stands what the llama.cpp runner then allocates (llama_kv_cache), which is not the
// estimate: that difference is the one users see between `ollama ps` and nvidia-smi.

#include "explain/explain_engines.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "engines/ollama/engine.h"
#include "engines/ollama/rules.h"
#include "explain/explain_parts.h"
#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "kvplan/plan.h"
#include "kvplan/units.h"

namespace kvplan {

namespace {

using explain_parts::add_row;
using explain_parts::count_row;
using explain_parts::LogRequest;
using explain_parts::memory_row;
using logs::LogFact;

/// Where Ollama's offload line was printed (`source=` of msg=offload), and the releases that print
/// it there: read in Ollama's git history (`git show <tag>:llm/memory.go` and `llm/server.go`, the
/// line of the slog call, every release tag v0.2.0 - v0.12.10).
struct OffloadSource {
  std::string_view source;
  std::string_view first;
  std::string_view last;
};
constexpr std::array<OffloadSource, 17> kOffloadSources = {{
    {"memory.go:309", "0.2.0", "0.3.9"},     {"memory.go:326", "0.3.10", "0.3.14"},
    {"memory.go:343", "0.4.0", "0.4.7"},     {"memory.go:356", "0.5.0", "0.5.11"},
    {"server.go:130", "0.5.12", "0.5.13"},   {"server.go:138", "0.6.0", "0.6.7"},
    {"server.go:139", "0.6.8", "0.6.8"},     {"server.go:168", "0.7.0", "0.9.2"},
    {"server.go:175", "0.9.3", "0.11.4"},    {"server.go:531", "0.11.5", "0.11.6"},
    {"server.go:528", "0.11.7", "0.11.7"},   {"server.go:533", "0.11.8", "0.11.8"},
    {"server.go:543", "0.11.9", "0.11.10"},  {"server.go:544", "0.11.11", "0.12.3"},
    {"server.go:545", "0.12.4", "0.12.6"},   {"server.go:507", "0.12.7", "0.12.7"},
    {"server.go:522", "0.12.8", "0.12.10"},
}};

/// Ollama's releases v0.2.0 - v0.12.10 (its git tags; v0.9.7 was never released), in order.
constexpr std::array<std::string_view, 90> kReleases = {{
    "0.2.0", "0.2.1", "0.2.2", "0.2.3", "0.2.4", "0.2.5", "0.2.6", "0.2.7", "0.2.8", "0.3.0", "0.3.1", "0.3.2",
    "0.3.3", "0.3.4", "0.3.5", "0.3.6", "0.3.7", "0.3.8", "0.3.9", "0.3.10", "0.3.11", "0.3.12", "0.3.13", "0.3.14",
    "0.4.0", "0.4.1", "0.4.2", "0.4.3", "0.4.4", "0.4.5", "0.4.6", "0.4.7", "0.5.0", "0.5.1", "0.5.2", "0.5.3",
    "0.5.4", "0.5.5", "0.5.6", "0.5.7", "0.5.8", "0.5.9", "0.5.10", "0.5.11", "0.5.12", "0.5.13", "0.6.0", "0.6.1",
    "0.6.2", "0.6.3", "0.6.4", "0.6.5", "0.6.6", "0.6.7", "0.6.8", "0.7.0", "0.7.1", "0.8.0", "0.9.0", "0.9.1",
    "0.9.2", "0.9.3", "0.9.4", "0.9.5", "0.9.6", "0.10.0", "0.10.1", "0.11.0", "0.11.1", "0.11.2", "0.11.3",
    "0.11.4", "0.11.5", "0.11.6", "0.11.7", "0.11.8", "0.11.9", "0.11.10", "0.11.11", "0.12.0", "0.12.1", "0.12.2",
    "0.12.3", "0.12.4", "0.12.5", "0.12.6", "0.12.7", "0.12.8", "0.12.9", "0.12.10",
}};

/// The releases the log can be: the one it prints ("Listening on ... (version 0.5.7)"), else every
/// release that prints its offload line at its source=, else the last release that prints one.
struct Dating {
  std::vector<std::string> releases;
  const LogFact* source = nullptr;  ///< set when the releases come from source=
};

Dating date_log(const logs::EngineLog& log, Explanation& out) {
  Dating dating;
  if (const LogFact* v = log.setting("ollama_version")) {
    try {
      (void)parse_ollama_version(v->value, "ollama-version");
      dating.releases.push_back(v->value);
      return dating;
    } catch (const Error&) {
      out.notes.push_back(fmt::format("Ollama {} (line {}): not a release kvplan has rules for", v->value, v->line));
    }
  }
  if (const LogFact* source = log.setting("offload_source")) {
    for (const OffloadSource& s : kOffloadSources) {
      if (s.source != source->value) continue;
      const auto first = std::find(kReleases.begin(), kReleases.end(), s.first);
      const auto last = std::find(kReleases.begin(), kReleases.end(), s.last);
      for (auto it = first; it != kReleases.end() && it <= last; ++it) dating.releases.emplace_back(*it);
      if (dating.releases.empty()) dating.releases.emplace_back(s.last);
      dating.source = source;
      return dating;
    }
    out.notes.push_back(fmt::format("the log prints no version and its offload line's source={} (line {}) is not one "
                                    "kvplan dates: priced with v0.12.10's rules, the last release that prints it",
                                    source->value, source->line));
  }
  dating.releases.emplace_back("0.12.10");
  return dating;
}

/// A memory figure as bytes (its printed value), 0 when it is not one.
std::uint64_t printed_bytes(const LogFact* fact) {
  if (!fact) return 0;
  const auto band = logs::byte_band(*fact);
  return band ? band->mid : 0;
}

/// The cards of the offload line's memory.available, each the free memory Ollama placed layers
/// against, at the printed value and at both ends of its rounding.
struct FreeMemory {
  std::vector<const LogFact*> facts;
  std::string shown;  ///< "10.9GiB", "4x22.0GiB", "23.1GiB+9x23.4GiB"
};

FreeMemory free_memory(const logs::EngineLog& log) {
  FreeMemory out;
  const std::vector<const LogFact*> all = log.all("memory_available");
  for (const LogFact* fact : all)
    if (fact->engine == logs::LogEngine::ollama && fact->line == all.front()->line) out.facts.push_back(fact);
  // One GPU: the scheduler's "new model will fit" line prints its free memory in bytes.
  const LogFact* exact = log.figure("sched_available");
  if (exact && out.facts.size() == 1 && logs::whole_number(exact->value)) {
    out.facts = {exact};
    out.shown = exact->value + "B";
    return out;
  }
  for (std::size_t i = 0; i < out.facts.size();) {
    std::size_t same = i + 1;
    while (same < out.facts.size() && out.facts[same]->value == out.facts[i]->value &&
           out.facts[same]->unit == out.facts[i]->unit)
      ++same;
    const std::string size = out.facts[i]->value + out.facts[i]->unit;
    out.shown += (out.shown.empty() ? "" : "+") + (same - i > 1 ? fmt::format("{}x{}", same - i, size) : size);
    i = same;
  }
  return out;
}

std::vector<GpuSpec> cards_at(const std::vector<GpuSpec>& cards, const FreeMemory& available, int end) {
  std::vector<GpuSpec> out = cards;
  if (available.facts.size() != cards.size()) return out;
  for (std::size_t i = 0; i < out.size(); ++i)
    if (const auto band = logs::byte_band(*available.facts[i])) out[i].memory_bytes = end < 0 ? band->low : band->high;
  return out;
}

/// The settings the log recovered as Ollama's own (flags of the profile, the variables' names).
LogRequest ollama_request(const logs::EngineLog& log, const std::string& version, Explanation& out) {
  LogRequest req(log, "ollama", out);
  req.option("ollama-version", version, "--ollama-version");
  // Only Ollama's own lines: a runner's llama.cpp lines print n_ctx too, which is num_ctx x parallel.
  const auto own = [&](std::string_view name) {
    const LogFact* fact = log.setting(name);
    return fact && fact->engine == logs::LogEngine::ollama ? fact->value : std::string();
  };
  // Parallel: the runner's --parallel, the scheduler's parallel=, OLLAMA_NUM_PARALLEL (0 = auto).
  std::string parallel = own("parallel");
  if (parallel.empty()) parallel = req.value("sched_parallel");
  if (parallel.empty() && req.value("env_num_parallel") != "0") parallel = req.value("env_num_parallel");
  // The runner's --ctx-size is num_ctx x parallel (llm/server.go: opts.NumCtx * numParallel).
  const std::optional<std::uint64_t> ctx_size = logs::whole_number(own("n_ctx"));
  const std::optional<std::uint64_t> p = logs::whole_number(parallel);
  if (ctx_size && p && *p > 0 && *ctx_size % *p == 0) {
    req.option("num-ctx", std::to_string(*ctx_size / *p), "--num-ctx");
    if (*p > 1)
      out.notes.push_back(fmt::format("the runner's --ctx-size {} is num_ctx x parallel: num_ctx {} x {}", *ctx_size,
                                      *ctx_size / *p, *p));
  } else if (const std::string env = req.value("env_context_length"); !env.empty() && env != "0") {
    req.option("num-ctx", env, "--num-ctx");
  } else {
    out.notes.push_back(fmt::format("the log prints no context (no runner line, no OLLAMA_CONTEXT_LENGTH): Ollama v{}'s "
                                    "default num_ctx",
                                    version));
  }
  req.option("num-parallel", parallel, "--num-parallel");
  if (const std::string b = own("n_batch"); b != "512") req.option("num-batch", b, "--num-batch");
  if (const std::string n = req.value("layers_requested"); !n.empty() && n.front() != '-') req.option("num-gpu", n, "--num-gpu");
  std::string kv = req.value("runner_kv_cache_type");
  if (kv.empty()) kv = req.value("env_kv_cache_type");
  req.option("kv-cache-type", kv, "--kv-cache-type");
  // Flash attention: the runner's switch is what Ollama decided; the variable is what was asked.
  const std::string env_fa = req.value("env_flash_attention");
  if (req.value("runner_flash_attn") == "on" || !req.value("flash_attention_enabled").empty() || env_fa == "true" ||
      env_fa == "1")
    req.option("flash-attention", "1", "--flash-attention");
  std::uint64_t overhead = printed_bytes(log.figure("gpu_overhead"));
  if (overhead == 0) overhead = logs::whole_number(req.value("env_gpu_overhead")).value_or(0);
  if (overhead > 0) req.option("gpu-overhead", std::to_string(overhead), "--gpu-overhead");
  return req;
}

const LogFact* ollama_figure(const logs::EngineLog& log, std::string_view name) {
  for (const LogFact* fact : log.all(name))
    if (fact->engine == logs::LogEngine::ollama) return fact;
  return nullptr;
}

/// How many of the offload line's printed figures `e` reproduces within their printed rounding;
/// `printed`: how many it printed.
std::size_t reproduced(const logs::EngineLog& log, const OllamaEstimate& e, std::size_t& printed) {
  const std::array<std::pair<std::string_view, std::uint64_t>, 10> figures = {{
      {"weights", e.weights_total},
      {"weights_repeating", e.weights_repeating},
      {"weights_nonrepeating", e.weights_nonrepeating},
      {"kv_cache", e.kv_total},
      {"graph_full", e.graph_full},
      {"graph_partial", e.graph_partial},
      {"projector_weights", e.projector_weights},
      {"projector_graph", e.projector_graph},
      {"required_partial", e.required_partial},
      {"required_full", e.required_full},
  }};
  std::size_t matched = 0;
  printed = 0;
  for (const auto& [name, bytes] : figures) {
    const LogFact* fact = ollama_figure(log, name);
    const auto band = fact ? logs::byte_band(*fact) : std::nullopt;
    if (!band) continue;
    ++printed;
    if (bytes >= band->low && bytes <= band->high) ++matched;
  }
  if (const LogFact* offload = log.setting("layers_offload")) {
    ++printed;
    if (logs::whole_number(offload->value) == e.layers) ++matched;
  }
  return matched;
}

/// Among the releases the log can be, the one whose rules reproduce the most of its printed
/// figures (the latest of those that tie), with a note saying so.
std::string choose_release(const logs::EngineLog& log, const Dating& dating, const ModelSpec& model,
                           const std::vector<GpuSpec>& gpus, Explanation& out) {
  if (dating.releases.size() == 1) {
    if (dating.source)
      out.notes.push_back(fmt::format("the log prints no version; its offload line (source={}, line {}) is printed only "
                                      "by Ollama v{}",
                                      dating.source->value, dating.source->line, dating.releases.front()));
    return dating.releases.front();
  }
  std::size_t best = 0, printed = 0;
  std::vector<std::string> best_releases;
  for (const std::string& release : dating.releases) {
    Explanation scratch;
    scratch.model = out.model;
    scratch.gpu = out.gpu;
    try {
      const LogRequest trial = ollama_request(log, release, scratch);
      const Plan plan = make_plan(model, gpus, trial.request(model));
      const OllamaResult* r = ollama_result(plan.rows.front());
      if (!r || !r->estimate) continue;
      const std::size_t matched = reproduced(log, *r->estimate, printed);
      if (best_releases.empty() || matched > best) {
        best = matched;
        best_releases = {release};
      } else if (matched == best) {
        best_releases.push_back(release);
      }
    } catch (const Error&) {
      // A release whose rules refuse these settings is not this log's.
    }
  }
  if (best_releases.empty()) return dating.releases.back();
  const std::string rules = best_releases.size() == 1
                                ? fmt::format("v{}'s rules", best_releases.front())
                                : fmt::format("the rules of {} of them (v{} ... v{})", best_releases.size(),
                                              best_releases.front(), best_releases.back());
  out.notes.push_back(fmt::format("the log prints no version; its offload line (source={}, line {}) is printed by "
                                  "Ollama v{} - v{}; {} reproduce {} of its {} printed figures, the most: priced with "
                                  "v{}'s rules",
                                  dating.source->value, dating.source->line, dating.releases.front(),
                                  dating.releases.back(), rules, best, printed, best_releases.back()));
  return best_releases.back();
}

std::vector<const LogFact*> one(const LogFact* fact) {
  return fact ? std::vector<const LogFact*>{fact} : std::vector<const LogFact*>{};
}

bool on_host(std::string_view device) {
  return device.substr(0, 3) == "CPU" || device.find("_Host") != std::string_view::npos || device.empty();
}

/// Ollama's format.HumanBytes2, for the rules' words.
std::string human(std::uint64_t b) {
  if (b >= GiB) return fmt::format("{:.1f} GiB", static_cast<double>(b) / GiB);
  if (b >= MiB) return fmt::format("{:.1f} MiB", static_cast<double>(b) / MiB);
  return fmt::format("{} B", b);
}

}  // namespace

std::vector<GpuSpec> ollama_log_gpus(const ExplainInputs& inputs, const logs::EngineLog& log, Explanation& out) {
  if (!inputs.gpu.empty()) return explain_parts::resolve_gpus(inputs, log, nullptr, out);
  const FreeMemory available = free_memory(log);
  if (available.facts.empty()) return explain_parts::resolve_gpus(inputs, log, nullptr, out);
  try {
    std::vector<GpuSpec> gpus = resolve_builtin_gpus(available.shown, "the log's memory.available");
    out.gpu = available.shown;
    out.gpu_from = fmt::format("the free memory Ollama placed layers against ({}, line {})",
                               available.facts.front()->name == "sched_available" ? "the scheduler's available="
                                                                                   : "memory.available",
                               available.facts.front()->line);
    return gpus;
  } catch (const Error&) {
    out.notes.push_back("the log's memory.available is not a size kvplan reads: give --gpu");
    return {};
  }
}

void explain_ollama(const logs::EngineLog& log, const ModelSpec& model, const std::vector<GpuSpec>& gpus,
                    Explanation& out) {
  const Dating dating = date_log(log, out);
  const std::string version = choose_release(log, dating, model, gpus, out);
  const LogRequest req = ollama_request(log, version, out);
  out.command = req.command;
  const PlanRequest request = req.request(model);
  const Plan plan = make_plan(model, gpus, request);
  const OllamaResult* r = ollama_result(plan.rows.front());
  if (!r || !r->estimate) {
    out.notes.push_back(fmt::format("Ollama v{} makes no msg=offload estimate (its era is {})", version,
                                    r ? to_string(r->era) : "unknown"));
    return;
  }
  const OllamaEstimate& e = *r->estimate;

  // The layers at both ends of the free memory's printed rounding (when the cards are the log's).
  std::uint32_t low = e.layers, high = e.layers;
  const FreeMemory available = free_memory(log);
  if (out.gpu == available.shown && !available.facts.empty()) {
    for (const int end : {-1, 1}) {
      const Plan at = make_plan(model, cards_at(gpus, available, end), request);
      if (const OllamaResult* o = ollama_result(at.rows.front()); o && o->estimate) {
        low = std::min(low, o->estimate->layers);
        high = std::max(high, o->estimate->layers);
      }
    }
  }
  const LogFact* offload = log.setting("layers_offload");
  const bool placed_alike = offload && logs::whole_number(offload->value) == e.layers;
  const std::string placement_rule =
      placed_alike ? "" : "; the layers placed differ, so do the sums: the free memory is printed to 0.1 GiB";
  add_row(out, count_row("layers of the model", "layers_model", log.setting("layers_model"), e.layers_model,
                         e.layers_model, "layers", "block_count + 1 (the output layer): GGUF's blocks"));
  add_row(out, count_row("layers on the GPU", "layers_offload", offload, low, high, "layers",
                         fmt::format("EstimateGPULayers: blocks from the last down, then the output layer, while the "
                                     "free memory holds them with the graph, MinimumMemory and OLLAMA_GPU_OVERHEAD "
                                     "(the free memory's printed rounding gives {} - {}){}",
                                     low, high, e.layers_per_gpu.size() > 1 ? "; one GPU after another, round robin" : "")));

  // What the runner was started with: the estimate's layers when num_gpu is not set; a num_gpu
  // the user set goes through as is (llm/server.go NewLlamaServer: only NumGPU < 0 takes
  // estimate.Layers, read at v0.3.9 and v0.11.4).
  if (const LogFact* runner = log.setting("runner_gpu_layers"); runner && runner->engine == logs::LogEngine::ollama) {
    add_row(out, count_row("layers given to the runner", "runner_gpu_layers", runner, r->gpu_layers, r->gpu_layers,
                           "layers",
                           "--n-gpu-layers: the estimate's layers.offload when num_gpu is not set, num_gpu as it is "
                           "when it is"));
  }

  const bool exact_weights = r->exact;
  const OllamaVersion v = parse_ollama_version(version, "ollama-version");
  const std::string blocks = !v.at_least(0, 6, 1)   ? "the blocks with their cache estimate (to v0.6.0)"
                             : v.at_least(0, 6, 3) ? "the blocks + the output layer"
                                                   : "the blocks (without the output layer in v0.6.1 - v0.6.2)";
  const std::string weights_basis =
      exact_weights ? "the GGUF blob's tensors" : fmt::format("{} (no tensor list: an even split)", model.id);
  add_row(out, memory_row("weights", "weights", one(ollama_figure(log, "weights")), e.weights_total, exact_weights,
                          fmt::format("memory.weights.total: {}, {}", blocks, weights_basis)));
  add_row(out, memory_row("repeating weights", "weights_repeating", one(ollama_figure(log, "weights_repeating")),
                          e.weights_repeating, exact_weights, "memory.weights.repeating: the blk.N tensors"));
  add_row(out, memory_row("output layer", "weights_nonrepeating", one(ollama_figure(log, "weights_nonrepeating")),
                          e.weights_nonrepeating, exact_weights,
                          "memory.weights.nonrepeating: output_norm + output (token_embd when tied)"));
  add_row(out, memory_row("KV cache (Ollama's estimate)", "kv_cache", one(ollama_figure(log, "kv_cache")), e.kv_total,
                          true,
                          fmt::format("GraphSize: {} tokens (num_ctx {} x parallel {}) x layers x KV heads x (K + V head "
                                      "dims) x {} B an element{}; Ollama's estimate, not llama.cpp's cache",
                                      format_thousands(r->num_ctx * r->parallel), format_thousands(r->num_ctx),
                                      r->parallel, e.kv_type == "q8_0" ? "1" : e.kv_type == "q4_0" ? "0.5" : "2",
                                      v.at_least(0, 6, 3) ? " (gemma3's sliding layers and gpt-oss's even layers: "
                                                            "parallel x their window + the batch)"
                                                          : "")));

  // What the runner then allocates: llama.cpp's cache for n_ctx = num_ctx x parallel cells.
  std::vector<const LogFact*> allocated;
  for (const LogFact* fact : log.all("kv_cache"))
    if (fact->engine == logs::LogEngine::llamacpp) allocated.push_back(fact);
  if (log.setting("runner_engine") != nullptr) {
    out.notes.push_back("the runner is Ollama's own engine (--ollama-engine): its cache (kvcache/causal.go) is not "
                        "llama.cpp's, and kvplan does not price it");
  } else {
    const std::uint64_t estimate = e.kv_total;
    const std::uint64_t real = r->llama.kv_bytes;
    const std::string versus =
        estimate == real ? "the same bytes"
        : estimate > real
            ? fmt::format("{} more (it prices every layer at the full context)", human(estimate - real))
            : fmt::format("{} less (llama.cpp pads the cells and keeps its own layout)", human(real - estimate));
    add_row(out, memory_row("KV cache (llama.cpp allocates)", "kv_cache_llamacpp", allocated, real, true,
                            fmt::format("llama.cpp's own cache for -c {} -np {} ({} cache, every layer, GPU and CPU); "
                                        "Ollama's estimate above: {}",
                                        r->llama.n_ctx, r->parallel, r->kv_type, versus)));
  }

  // The runner's llama.cpp buffers on the GPUs: the layers Ollama placed there, as llama.cpp sizes them.
  if (log.setting("runner_engine") == nullptr) {
    std::uint64_t gpu_kv = 0, gpu_weights = 0;
    for (const OllamaGpuShare& share : r->gpus) {
      gpu_kv += share.kv_bytes;
      gpu_weights += share.weights_bytes;
    }
    std::vector<const LogFact*> kv_buffers, model_buffers;
    for (const LogFact* fact : log.all("kv_buffer"))
      if (fact->engine == logs::LogEngine::llamacpp && !on_host(fact->device)) kv_buffers.push_back(fact);
    for (const LogFact* fact : log.all("model_buffer"))
      if (fact->engine == logs::LogEngine::llamacpp && !on_host(fact->device)) model_buffers.push_back(fact);
    // kvplan's llama.cpp places -ngl as llama.cpp does today: the output layer counts as one of the
    // layers and goes first. The runners Ollama built in 2024 print "offloading N repeating layers":
    // N blocks on the GPU, the output layer there only when N exceeds the blocks.
    // The runner's llama.cpp put -ngl blocks on the GPU (and not the output layer) when its
    // "offloading N repeating layers" is -ngl itself.
    const LogFact* repeating = log.setting("repeating_layers_offloaded");
    if (repeating && logs::whole_number(repeating->value) != r->gpu_layers) repeating = nullptr;
    const std::string placement =
        repeating ? fmt::format("; kvplan's llama.cpp rules (today's llama.cpp) count the output layer as one of -ngl's "
                                "layers and put it on the GPU first, while this runner's llama.cpp put {} blocks there "
                                "(\"offloading {} repeating layers\", line {}) and kept the output layer in host memory",
                                repeating->value, repeating->value, repeating->line)
                  : std::string();
    Reconciled kv_row = memory_row("KV cache on the GPUs (llama.cpp)", "kv_buffer_gpu", kv_buffers, gpu_kv, true,
                                   fmt::format("the cache of the {} layers on the GPU{} (-ngl {}): cells x their K + V rows",
                                               r->gpu_layers, r->gpus.size() == 1 ? "" : "s", r->gpu_layers));
    if (kv_row.agreement == Agreement::differs) kv_row.rule += placement;
    if (!kv_buffers.empty()) add_row(out, std::move(kv_row));
    Reconciled weights_row = memory_row("weights on the GPUs (llama.cpp)", "weights_gpu", model_buffers, gpu_weights,
                                        r->exact,
                                        fmt::format("the tensors of the {} layers on the GPU{} ({})", r->gpu_layers,
                                                    r->gpus.size() == 1 ? "" : "s", weights_basis));
    if (weights_row.agreement == Agreement::differs) weights_row.rule += placement;
    if (!model_buffers.empty()) add_row(out, std::move(weights_row));
  }

  const std::string arch = ollama_model_view(model).arch;
  add_row(out, memory_row("graph, full offload", "graph_full", one(ollama_figure(log, "graph_full")), e.graph_full, true,
                          fmt::format("GraphSize's full-offload graph for {}{}", arch,
                                      e.allocations.size() > 1 ? " (with several GPUs, the partial one)" : "")));
  add_row(out, memory_row("graph, partial offload", "graph_partial", one(ollama_figure(log, "graph_partial")),
                          e.graph_partial, true, fmt::format("GraphSize's partial-offload graph for {}", arch)));
  if (e.projector_weights > 0 || ollama_figure(log, "projector_weights")) {
    add_row(out, memory_row("projector weights", "projector_weights", one(ollama_figure(log, "projector_weights")),
                            e.projector_weights, exact_weights, "the vision tower's v.* tensors in the blob"));
    add_row(out, memory_row("projector graph", "projector_graph", one(ollama_figure(log, "projector_graph")),
                            e.projector_graph, true, "the vision graph (GraphSize of the projector)"));
  }
  const std::uint64_t minimum = 457 * MiB;
  const std::uint64_t graph = e.fully_loaded ? e.graph_full : e.graph_partial;
  add_row(out, memory_row("reserve on each GPU used", "overhead", {}, minimum + e.layer_buffer + graph, true,
                          fmt::format("in each allocation: MinimumMemory 457 MiB + a one-layer buffer (blk.0 + kv[0], "
                                      "{}) + the {} graph {}; Ollama prints no figure for it",
                                      human(e.layer_buffer), e.fully_loaded ? "full" : "partial", human(graph))));

  add_row(out, memory_row("required on the GPUs", "required_partial", one(ollama_figure(log, "required_partial")),
                          e.required_partial, placed_alike,
                          "memory.required.partial: the allocations summed, the VRAM Ollama plans to use" + placement_rule));
  const std::vector<const LogFact*> allocations = log.all("allocations");
  if (allocations.size() > 1 || e.allocations.size() > 1) {
    for (std::size_t i = 0; i < e.allocations.size(); ++i) {
      const LogFact* printed = i < allocations.size() ? allocations[i] : nullptr;
      add_row(out, memory_row(fmt::format("allocation on GPU {}", i), "allocations", one(printed), e.allocations[i],
                              placed_alike,
                              fmt::format("its {} layers + the reserve{}", e.layers_per_gpu[i], placement_rule)));
    }
  }
  add_row(out, memory_row("required in all", "required_full", one(ollama_figure(log, "required_full")),
                          e.required_full, placed_alike,
                          "memory.required.full: the GPUs' part + what stays in system RAM (every byte, not what a "
                          "full offload needs)" + placement_rule));
  if (const LogFact* sched = ollama_figure(log, "sched_required"))
    add_row(out, memory_row("the scheduler's required", "sched_required", {sched}, e.required_partial, placed_alike,
                            "\"new model will fit in available VRAM\": the estimate's VRAM size (memory.required.partial)"));

  // A release range's rules may change inside it (v0.6.3's gemma3 window, v0.6.1's weights.total):
  // an exact rule that differs may be the release, not the settings.
  const bool dated = dating.releases.size() > 1;
  const bool any_differs = std::any_of(out.rows.begin(), out.rows.end(), [](const Reconciled& row) {
    const bool llamacpp = row.key == "kv_cache_llamacpp" || row.key == "kv_buffer_gpu" || row.key == "weights_gpu" ||
                          row.key == "runner_gpu_layers";
    return !llamacpp && row.agreement == Agreement::differs;
  });
  if (dated && any_differs)
    out.notes.push_back(fmt::format("Ollama's rules change between the releases that print this offload line: a figure "
                                    "that differs may be v{}'s rules, not this log's release, or a setting the log "
                                    "does not print (num_ctx, OLLAMA_KV_CACHE_TYPE)",
                                    version));
  if (r->partly_on_cpu)
    out.notes.push_back(fmt::format("{} of {} layers on the GPU: the rest runs from system RAM", e.layers, e.layers_model));
  for (const std::string& rule : r->rules)
    if (rule.find("needs flash attention") != std::string::npos || rule.find("raised") != std::string::npos)
      out.notes.push_back(rule);
}

}  // namespace kvplan
