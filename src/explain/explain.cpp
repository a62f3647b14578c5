// Which engine's explanation a log gets, and what every log is told: the lines the engine prints
// that it did not have, and why a comparison could not be made.

#include "explain/explanation.h"

#include <span>
#include <vector>

#include <fmt/format.h>

#include "explain/explain_engines.h"
#include "explain/explain_parts.h"
#include "kvplan/error.h"

namespace kvplan {

std::string_view to_string(Agreement agreement) {
  switch (agreement) {
    case Agreement::exact: return "exact";
    case Agreement::estimate: return "estimate";
    case Agreement::differs: return "differs";
    case Agreement::not_in_log: return "not_in_log";
    case Agreement::engine_only: break;
  }
  return "engine_only";
}

namespace {

struct Expected {
  std::string_view name;
  std::string_view line;  ///< how the engine prints it, for the "not in this log" list
  bool setting = false;
};

constexpr Expected kVllmLines[] = {
    {"model", "the engine config line (\"Initializing a V1 LLM engine ... with config: model=...\")", true},
    {"max_model_len", "max_model_len (config line, \"non-default args\" or \"Maximum concurrency for N tokens\")", true},
    {"weights", "\"Model loading took X GiB\""},
    {"activation", "\"Memory profiling takes ... torch peak memory increase\" (DEBUG)"},
    {"available_kv", "\"Available KV cache memory: X GiB\""},
    {"kv_cache_tokens", "\"GPU KV cache size: N tokens\""},
    {"max_concurrency", "\"Maximum concurrency for N tokens per request: X\""},
};

constexpr Expected kLlamaLines[] = {
    {"model_name", "print_info: general.name", true},
    {"n_ctx", "llama_context: n_ctx", true},
    {"kv_cache", "\"llama_kv_cache: size = X MiB (N cells, L layers, S seqs), K (type): ..., V (type): ...\""},
    {"model_buffer", "load_tensors: \"<device> model buffer size = X MiB\""},
    {"compute_buffer", "llama_context: \"<device> compute buffer size = X MiB\""},
};

constexpr Expected kOllamaLines[] = {
    {"required_full", "msg=offload ... memory.required.full=... (the scheduler's estimate)"},
    {"n_ctx", "msg=\"starting llama server\" cmd=\"... --ctx-size N --batch-size N --n-gpu-layers N --parallel N\"", true},
    {"weights", "msg=offload ... memory.weights.total=..."},
    {"graph_full", "msg=offload ... memory.graph.full=..."},
};

constexpr Expected kSglangLines[] = {
    {"model", "server_args=ServerArgs(model_path=...)", true},
    {"avail_before_weights", "\"Load weight begin. avail mem=X GB\" (or \"Load weight end. ... mem usage=X GB\")"},
    {"avail_after_weights", "\"Load weight end. ... avail mem=X GB\""},
    {"kv_cache_k", "\"KV Cache is allocated. #tokens: N, K size: X GB, V size: X GB\""},
    {"max_total_num_tokens", "\"max_total_num_tokens=N, ... context_len=N\""},
};

constexpr Expected kTrtllmLines[] = {
    {"kv_cache", "\"[MemUsageChange] Allocated X GiB for max tokens in paged KV cache (N)\""},
    {"tokens_per_block", "\"Number of tokens per block: N.\"", true},
    {"weights", "\"Rank 0 uses X GB for model weights.\""},
};

void list_missing(const logs::EngineLog& log, std::span<const Expected> expected, Explanation& out) {
  for (const Expected& e : expected) {
    const bool present = e.setting ? log.setting(e.name) != nullptr : log.figure(e.name) != nullptr;
    if (!present) out.not_found.push_back(std::string(e.line));
  }
}

/// Runs one engine's comparison; a setting the profile refuses becomes a note, so the figures the
/// log holds are still reported.
template <typename Explain>
void compare(Explain explain, Explanation& out) {
  try {
    explain();
  } catch (const Error& error) {
    out.rows.clear();
    out.notes.push_back(fmt::format("kvplan could not price the log's settings: {}", error.what()));
  }
}

/// The model and the card (--model / --gpu, or what the log names), then `explain` when both are
/// known; what is missing becomes a note.
template <typename Explain>
void resolve_and_compare(const ExplainInputs& inputs, const logs::EngineLog& log,
                         const std::vector<explain_parts::NameCandidate>& names, const logs::LogFact* size_fact,
                         std::string_view runtime, Explain explain, Explanation& out) {
  std::optional<ModelSpec> model = explain_parts::resolve_model(inputs, names, out);
  const std::vector<GpuSpec> gpus = explain_parts::resolve_gpus(inputs, log, size_fact, out);
  if (!model || gpus.empty()) return;
  out.runtime = std::string(runtime);
  compare([&] { explain(log, *model, gpus, out); }, out);
}

}  // namespace

Explanation explain_log(logs::EngineLog log, const ExplainInputs& inputs) {
  Explanation out;
  out.source_name = inputs.source_name;
  out.log = std::move(log);
  const logs::EngineLog& l = out.log;
  using explain_parts::NameCandidate;
  switch (l.engine) {
    case logs::LogEngine::vllm: {
      list_missing(l, kVllmLines, out);
      std::vector<NameCandidate> names;
      if (const logs::LogFact* m = l.setting("model")) names.push_back({m->value, m});
      resolve_and_compare(inputs, l, names, l.figure("total_memory"), "vllm", explain_vllm, out);
      break;
    }
    case logs::LogEngine::llamacpp:
    case logs::LogEngine::ollama: {
      if (l.engine == logs::LogEngine::ollama && l.setting("layers_offload") != nullptr) {
        // The scheduler's estimate (msg=offload): set beside the Ollama profile's. The log names
        // the model by its blob's digest; a runner's llama.cpp lines may name it.
        list_missing(l, kOllamaLines, out);
        std::vector<NameCandidate> names;
        if (const logs::LogFact* m = l.setting("model_file")) names.push_back({m->value, m});
        if (const logs::LogFact* m = l.setting("model_name")) names.push_back({m->value, m});
        std::optional<ModelSpec> model = explain_parts::resolve_model(inputs, names, out);
        if (!model)
          out.notes.push_back("Ollama names the model by its blob's digest (sha256-...): give --model with the tag it "
                              "ran (gemma3:12b, llama3.1:8b), whose GGUF blob kvplan sizes as Ollama does");
        if (l.setting("library") && l.setting("library")->value == "cpu") {
          out.notes.push_back(fmt::format("library=cpu (line {}): Ollama ran on the CPU; kvplan's Ollama profile plans GPUs",
                                          l.setting("library")->line));
          break;
        }
        const std::vector<GpuSpec> gpus = ollama_log_gpus(inputs, l, out);
        if (!model || gpus.empty()) break;
        out.runtime = "ollama";
        compare([&] { explain_ollama(l, *model, gpus, out); }, out);
        break;
      }
      bool runner = false;
      for (const logs::LogFact* fact : l.all("kv_cache")) runner = runner || fact->engine == logs::LogEngine::llamacpp;
      if (l.engine == logs::LogEngine::ollama && !runner) {
        out.notes.push_back("Ollama's scheduler figures are its own estimates; kvplan compares the llama.cpp lines its "
                            "runner prints (llama_kv_cache, load_tensors), which this log does not have (OLLAMA_DEBUG=1 "
                            "or the server log shows them)");
        break;
      }
      list_missing(l, kLlamaLines, out);
      std::vector<NameCandidate> names;
      if (const logs::LogFact* m = l.setting("model_file")) names.push_back({m->value, m});
      if (const logs::LogFact* m = l.setting("model_name")) names.push_back({m->value, m});
      resolve_and_compare(inputs, l, names, l.figure("device_free"), "llama.cpp", explain_llamacpp, out);
      break;
    }
    case logs::LogEngine::sglang: {
      list_missing(l, kSglangLines, out);
      // "Load weight end. mem usage=" stands for the begin line's reading (before = after + usage).
      if (l.figure("avail_before_weights") == nullptr && l.figure("weights") != nullptr && !out.not_found.empty())
        std::erase_if(out.not_found, [](const std::string& s) { return s.find("Load weight begin") != std::string::npos; });
      if (l.figure("kv_cache_latent") != nullptr)
        std::erase_if(out.not_found, [](const std::string& s) { return s.find("K size") != std::string::npos; });
      std::vector<NameCandidate> names;
      if (const logs::LogFact* m = l.setting("model")) names.push_back({m->value, m});
      resolve_and_compare(inputs, l, names, l.figure("avail_before_weights"), "sglang", explain_sglang, out);
      break;
    }
    case logs::LogEngine::trtllm:
      list_missing(l, kTrtllmLines, out);
      resolve_and_compare(inputs, l, {}, l.figure("total_memory"), "trtllm", explain_trtllm, out);
      break;
    case logs::LogEngine::unknown:
      break;
  }
  if (l.cut_input)
    out.notes.push_back(fmt::format("the log is longer than {} MiB: only its start was read", logs::kMaxLogBytes >> 20));
  if (l.cut_lines)
    out.notes.push_back(fmt::format("{} line{} longer than {} characters, read up to that length", l.cut_lines,
                                    l.cut_lines == 1 ? " was" : "s were", logs::kMaxLineChars));
  if (l.dropped_facts) out.notes.push_back("more than 10,000 figures: the rest were not kept");
  return out;
}

}  // namespace kvplan
