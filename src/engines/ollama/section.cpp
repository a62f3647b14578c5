#include "engines/ollama/section.h"

#include <fmt/format.h>

#include "engines/llamacpp/section.h"
#include "kvplan/units.h"

namespace kvplan {

namespace {

/// Ollama's own unit: format.HumanBytes2, %.1f of GiB / MiB / KiB.
std::string human(std::uint64_t b) {
  if (b >= GiB) return fmt::format("{:.1f} GiB", static_cast<double>(b) / GiB);
  if (b >= MiB) return fmt::format("{:.1f} MiB", static_cast<double>(b) / MiB);
  if (b >= 1024) return fmt::format("{:.1f} KiB", static_cast<double>(b) / 1024);
  return fmt::format("{} B", b);
}

nlohmann::ordered_json estimate_json(const OllamaEstimate& e) {
  nlohmann::ordered_json out;
  out["layers_requested"] = e.layers_requested;
  out["layers_model"] = e.layers_model;
  out["layers_offload"] = e.layers;
  out["layers_split"] = e.layers_per_gpu;
  out["kv_type"] = e.kv_type.empty() ? "f16" : e.kv_type;
  out["required_full_bytes"] = e.required_full;
  out["required_partial_bytes"] = e.required_partial;
  out["required_kv_bytes"] = e.kv_total;
  out["allocations_bytes"] = e.allocations;
  out["weights_total_bytes"] = e.weights_total;
  out["weights_repeating_bytes"] = e.weights_repeating;
  out["weights_nonrepeating_bytes"] = e.weights_nonrepeating;
  out["graph_full_bytes"] = e.graph_full;
  out["graph_partial_bytes"] = e.graph_partial;
  out["projector_weights_bytes"] = e.projector_weights;
  out["projector_graph_bytes"] = e.projector_graph;
  out["layer_buffer_bytes"] = e.layer_buffer;
  out["fully_loaded"] = e.fully_loaded;
  return out;
}

}  // namespace

void write_ollama_section(const std::vector<const OllamaResult*>& results, EngineSection& section) {
  section.json_key = "ollama";
  section.engine = std::string(kOllamaProfileEngine);
  std::vector<std::string>& lines = section.lines;
  lines.push_back(fmt::format("{}: what it decides and what llama.cpp then allocates (sizes as Ollama logs them):",
                              kOllamaProfileEngine));
  for (std::size_t i = 0; i < results.size(); ++i) {
    const OllamaResult& r = *results[i];
    nlohmann::ordered_json row;
    row["era"] = std::string(to_string(r.era));
    row["version"] = r.version;
    row["num_ctx"] = r.num_ctx;
    row["parallel"] = r.parallel;
    row["num_batch"] = r.num_batch;
    row["kv_cache_type_requested"] = r.kv_type_requested;
    row["kv_cache_type"] = r.kv_type;
    row["flash_attention"] = r.flash_attention;
    row["layers_model"] = r.layers_model;
    row["gpu_layers"] = r.gpu_layers;
    row["partly_on_cpu"] = r.partly_on_cpu;
    nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
    for (const OllamaGpuShare& g : r.gpus)
      gpus.push_back({{"index", g.index},
                      {"layers", g.layers},
                      {"weights_bytes", g.weights_bytes},
                      {"kv_bytes", g.kv_bytes},
                      {"reserve_bytes", g.reserve_bytes},
                      {"capacity_bytes", g.capacity_bytes}});
    row["gpus"] = gpus;
    row["host_weights_bytes"] = r.host_weights_bytes;
    row["host_kv_bytes"] = r.host_kv_bytes;
    row["estimate"] = r.estimate ? estimate_json(*r.estimate) : nlohmann::ordered_json(nullptr);
    row["exact"] = r.exact;
    nlohmann::ordered_json llama;
    llama["row"] = i;
    llama.update(llamacpp_result_to_json(r.llama));
    row["llamacpp"] = llama;
    row["rules"] = r.rules;
    section.rows.push_back(row);

    lines.push_back(fmt::format("Row {}: {} {}, num_ctx {} x parallel {}, cache {} (asked {}), flash attention {}: {} of {} "
                                "layers on the GPU{}",
                                i + 1, to_string(r.era), r.version, format_thousands(r.num_ctx), r.parallel, r.kv_type,
                                r.kv_type_requested.empty() ? "default" : r.kv_type_requested, r.flash_attention,
                                r.gpu_layers, r.layers_model, r.partly_on_cpu ? " (the rest in system RAM)" : ""));
    if (r.estimate) {
      const OllamaEstimate& e = *r.estimate;
      std::string alloc;
      for (const std::uint64_t a : e.allocations) alloc += (alloc.empty() ? "" : " ") + human(a);
      lines.push_back(fmt::format("  Ollama's estimate: offload {}/{}, required full {} partial {} kv {} allocations [{}], "
                                  "graph full {} partial {}",
                                  e.layers, e.layers_model, human(e.required_full), human(e.required_partial),
                                  human(e.kv_total), alloc, human(e.graph_full), human(e.graph_partial)));
    }
    for (const OllamaGpuShare& g : r.gpus)
      lines.push_back(fmt::format("  GPU {}: {} layers, weights {}, cache {}, reserve {}, free {}", g.index, g.layers,
                                  human(g.weights_bytes), human(g.kv_bytes), human(g.reserve_bytes), human(g.capacity_bytes)));
    if (r.partly_on_cpu)
      lines.push_back(fmt::format("  system RAM: weights {}, cache {}", human(r.host_weights_bytes), human(r.host_kv_bytes)));
    lines.push_back("  rules applied:");
    for (const std::string& rule : r.rules) lines.push_back("    - " + rule);
    for (const std::string& rule : r.llama.rules) lines.push_back("    - llama.cpp: " + rule);
  }
}

}  // namespace kvplan
