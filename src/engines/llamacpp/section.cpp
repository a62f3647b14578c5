#include "engines/llamacpp/section.h"

#include <fmt/format.h>

#include "kvplan/units.h"
#include "reports/fields.h"
#include "reports/section.h"

namespace kvplan {

namespace {

/// llama.cpp's own unit for cache lines: "%.2f MiB".
std::string mib(std::uint64_t bytes) { return fmt::format("{:.2f} MiB", static_cast<double>(bytes) / MiB); }

std::string plural(std::uint64_t n, std::string_view word) { return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s"); }

}  // namespace

nlohmann::ordered_json llamacpp_result_to_json(const LlamaCppResult& r) {
  nlohmann::ordered_json out;
  out["n_ctx"] = r.n_ctx;
  out["n_ctx_seq"] = r.n_ctx_seq;
  out["n_seq_max"] = r.n_seq_max;
  out["n_batch"] = r.n_batch;
  out["n_ubatch"] = r.n_ubatch;
  out["kv_unified"] = r.kv_unified;
  out["swa_full"] = r.swa_full;
  out["flash_attn"] = to_string(r.flash_attn_requested);
  out["flash_attn_enabled"] = r.flash_attn;
  out["v_trans"] = r.v_trans;
  out["type_k"] = r.type_k;
  out["type_v"] = r.type_v;
  nlohmann::ordered_json caches = nlohmann::ordered_json::array();
  for (const LlamaCppKvCache& c : r.caches) {
    nlohmann::ordered_json cache;
    cache["role"] = c.role;
    cache["cells"] = c.cells;
    cache["layers"] = c.layers;
    cache["streams"] = c.streams;
    cache["seqs"] = c.seqs;
    cache["k_type"] = c.k_type;
    cache["k_bytes"] = c.k_bytes;
    cache["v_type"] = c.v_type;
    cache["v_bytes"] = c.v_bytes;
    cache["v_row"] = c.v_row;
    cache["compress_ratio"] = c.compress_ratio;
    cache["gpu_layers"] = c.gpu_layers;
    cache["gpu_bytes"] = c.gpu_bytes;
    cache["host_bytes"] = c.host_bytes;
    caches.push_back(cache);
  }
  out["caches"] = caches;
  if (r.recurrent) {
    const LlamaCppRecurrent& s = *r.recurrent;
    out["recurrent"] = {{"cells", s.cells},           {"layers", s.layers},       {"logged_layers", s.logged_layers},
                        {"seqs", s.seqs},             {"r_type", "f32"},          {"r_row", s.r_row},
                        {"r_bytes", s.r_bytes},       {"s_type", "f32"},          {"s_row", s.s_row},
                        {"s_bytes", s.s_bytes},       {"gpu_layers", s.gpu_layers}, {"gpu_bytes", s.gpu_bytes},
                        {"host_bytes", s.host_bytes}};
  } else {
    out["recurrent"] = nullptr;
  }
  nlohmann::ordered_json states = nlohmann::ordered_json::array();
  for (const LlamaCppCompressorState& s : r.compressor_states)
    states.push_back({{"name", s.name},
                      {"ratio", s.ratio},
                      {"state_size", s.state_size},
                      {"n_embd_state", s.n_embd_state},
                      {"planes", s.planes},
                      {"layers", s.layers},
                      {"type", "f32"},
                      {"bytes", s.bytes},
                      {"gpu_layers", s.gpu_layers},
                      {"gpu_bytes", s.gpu_bytes},
                      {"host_bytes", s.host_bytes}});
  out["compressor_states"] = states;
  out["n_layer_all"] = r.n_layer_all;
  out["gpu_layers"] = r.gpu_layers;
  out["output_on_gpu"] = r.output_on_gpu;
  out["split_mode"] = std::string(to_string(r.split_mode));
  nlohmann::ordered_json devices = nlohmann::ordered_json::array();
  for (const LlamaCppDevice& d : r.devices)
    devices.push_back({{"index", d.index},
                       {"split_point", d.split_point},
                       {"layers", d.layers},
                       {"output", d.output},
                       {"weights_bytes", d.weights_bytes},
                       {"cache_bytes", d.cache_bytes},
                       {"state_bytes", d.state_bytes}});
  out["devices"] = devices;
  out["model_gpu_bytes"] = r.model_gpu_bytes;
  out["model_host_bytes"] = r.model_host_bytes;
  out["model_host_exact"] = r.model_host_exact;
  out["output_buffer_bytes"] = json_or_null(r.output_buffer_bytes);
  out["compute_buffer_estimate_bytes"] = json_or_null(r.compute_estimate_bytes);
  out["kv_bytes"] = r.kv_bytes;
  out["recurrent_bytes"] = r.recurrent_bytes;
  out["compressor_state_bytes"] = r.compressor_state_bytes;
  out["gpu_cache_bytes"] = r.gpu_cache_bytes;
  out["host_cache_bytes"] = r.host_cache_bytes;
  out["rules"] = r.rules;
  return out;
}

void write_llamacpp_section(const std::vector<const LlamaCppResult*>& results, EngineSection& section) {
  section.json_key = "llamacpp";
  section.engine = std::string(kLlamaCppProfileEngine);
  std::vector<std::string>& lines = section.lines;
  lines.push_back(fmt::format("{}: what it allocates for each row (cache sizes in MiB as llama.cpp logs them):",
                              kLlamaCppProfileEngine));
  for (std::size_t i = 0; i < results.size(); ++i) {
    const LlamaCppResult& r = *results[i];
    section.rows.push_back(llamacpp_result_to_json(r));
    lines.push_back(fmt::format("Row {}: n_ctx {} = {} x n_ctx_seq {}{}, n_ubatch {}, -fa {} ({}), K {}, V {}", i + 1,
                                format_thousands(r.n_ctx), plural(r.kv_unified ? 1 : r.n_seq_max, "stream"),
                                format_thousands(r.n_ctx_seq), r.kv_unified ? " (unified)" : "", r.n_ubatch,
                                to_string(r.flash_attn_requested), r.flash_attn ? "flash attention layout" : "V transposed",
                                r.type_k, r.type_v));
    for (const LlamaCppKvCache& c : r.caches)
      lines.push_back(fmt::format("  {:<11} {:>9} cells x {} x {}: K ({}) {}, V ({}) {}; GPU {}, host {}", c.role,
                                  format_thousands(c.cells), plural(c.streams, "stream"), plural(c.layers, "layer"),
                                  c.k_type, mib(c.k_bytes), c.v_type, mib(c.v_bytes), mib(c.gpu_bytes), mib(c.host_bytes)));
    if (r.recurrent)
      lines.push_back(fmt::format("  {:<11} {:>9} cells x {}: R (f32) {}, S (f32) {}; GPU {}, host {}", "recurrent",
                                  r.recurrent->cells, plural(r.recurrent->layers, "layer"), mib(r.recurrent->r_bytes),
                                  mib(r.recurrent->s_bytes), mib(r.recurrent->gpu_bytes), mib(r.recurrent->host_bytes)));
    for (const LlamaCppCompressorState& s : r.compressor_states)
      lines.push_back(fmt::format("  {:<11} {:>9} x {} x {} x {}: kv + score (f32) {}; GPU {}, host {}",
                                  s.name + " state", s.state_size, s.n_embd_state, plural(s.planes, "plane"),
                                  plural(s.layers, "layer"), mib(s.bytes), mib(s.gpu_bytes), mib(s.host_bytes)));
    lines.push_back(fmt::format("  model buffer: GPU {}, host {} ({}); {} of {} layers on the GPU", mib(r.model_gpu_bytes),
                                mib(r.model_host_bytes), r.model_host_exact ? "memory-mapped" : "approximate",
                                r.gpu_layers, r.n_layer_all + 1));
    if (r.devices.size() > 1)
      for (const LlamaCppDevice& d : r.devices)
        lines.push_back(fmt::format("  GPU {}: {}{}, model {}, cache {}", d.index, plural(d.layers, "layer"),
                                    d.output ? " + output" : "", mib(d.weights_bytes), mib(d.cache_bytes)));
    lines.push_back(fmt::format("  output buffer: {}; compute buffer: {}",
                                r.output_buffer_bytes ? mib(*r.output_buffer_bytes) + " (host)" : "unknown (no vocabulary size)",
                                r.compute_estimate_bytes ? "~" + mib(*r.compute_estimate_bytes) + " (ESTIMATE, not counted in total)"
                                                         : "no estimate (needs the hidden size and vocabulary of a GGUF file)"));
    lines.push_back("  rules applied:");
    for (const std::string& rule : r.rules) lines.push_back("    - " + rule);
  }
}

}  // namespace kvplan
