// llama.cpp's buffers beside the llama.cpp profile. The cache is exact (llama_kv_cache's cells x
// layers x row bytes, llama-kv-cache.cpp), so its printed size must fall within half a last digit
// of kvplan's; the model buffers are exact only when kvplan read the same GGUF; the compute
// buffers are llama.cpp's graph reservation, which kvplan's overhead only estimates.

#include "explain/explain_engines.h"

#include <fmt/format.h>

#include "engines/core/request_texts.h"
#include "explain/explain_parts.h"
#include "kvplan/plan.h"
#include "kvplan/units.h"

namespace kvplan {

namespace {

using explain_parts::LogRequest;
using explain_parts::memory_row;
using logs::LogFact;

/// llama_context prints flash_attn as 0/1 (before b6200) or auto/enabled/disabled.
std::string flash_attn_flag(std::string_view printed) {
  if (printed == "1" || printed == "enabled" || printed == "true" || printed == "on") return "on";
  if (printed == "0" || printed == "disabled" || printed == "false" || printed == "off") return "off";
  if (printed == "auto") return "auto";
  return {};
}

/// The llama.cpp lines' figures of a name: an Ollama log also has Ollama's own estimates under
/// the same names (its scheduler's memory.required.kv), which are not what llama.cpp allocated.
std::vector<const LogFact*> llama_all(const logs::EngineLog& log, std::string_view name) {
  std::vector<const LogFact*> found;
  for (const LogFact* fact : log.all(name))
    if (fact->engine == logs::LogEngine::llamacpp) found.push_back(fact);
  return found;
}

bool on_host(std::string_view device) {
  return device.substr(0, 3) == "CPU" || device.find("_Host") != std::string_view::npos || device.empty();
}

LogRequest llamacpp_request(const logs::EngineLog& log, Explanation& out) {
  LogRequest req(log, "llama.cpp", out);
  req.option("ctx-size", req.value("n_ctx"), "-c");
  std::string parallel = req.value("n_seq_max");
  if (parallel.empty()) parallel = req.value("parallel");
  req.option("parallel", parallel, "-np");
  const std::string k = req.value("cache_type_k");
  const std::string v = req.value("cache_type_v");
  if (!k.empty() && k != "f16") req.option("cache-type-k", k, "-ctk");
  if (!v.empty() && v != "f16") req.option("cache-type-v", v, "-ctv");
  const std::string fa = flash_attn_flag(req.value("flash_attn"));
  if (!fa.empty() && fa != "auto") req.option("flash-attn", fa, "-fa");
  if (req.value("kv_unified") == "true" || req.value("kv_unified") == "1") req.flag("kv-unified", "-kvu");
  if (const std::string b = req.value("n_batch"); !b.empty() && b != "2048") req.option("batch-size", b, "-b");
  if (const std::string ub = req.value("n_ubatch"); !ub.empty() && ub != "512") req.option("ubatch-size", ub, "-ub");
  const std::string offloaded = req.value("n_gpu_layers");
  const std::string offloadable = req.value("offloadable_layers");
  if (!offloaded.empty() && offloaded != offloadable) req.option("n-gpu-layers", offloaded, "-ngl");
  if (req.value("n_ctx").empty()) out.notes.push_back("the log prints no n_ctx: llama.cpp's default, the trained context");
  return req;
}

}  // namespace

void explain_llamacpp(const logs::EngineLog& log, const ModelSpec& model, const std::vector<GpuSpec>& gpus,
                      Explanation& out) {
  const LogRequest req = llamacpp_request(log, out);
  out.command = req.command;
  const Plan plan = make_plan(model, gpus, req.request(model));
  const Row& row = plan.rows.front();
  const bool same_file = model.file != nullptr;

  std::uint64_t kv = row.kv_bytes;
  if (!row.per_gpu.empty()) {
    kv = 0;
    for (const GpuShare& share : row.per_gpu) kv = checked_add(kv, share.kv_bytes, "KV cache");
  }
  const std::uint64_t state = row.state_bytes;
  std::string cells;
  for (const LogFact* fact : llama_all(log, "kv_cache_cells")) cells += (cells.empty() ? "" : " + ") + fact->value;
  out.rows.push_back(memory_row(
      "KV cache", "kv_cache", llama_all(log, "kv_cache"), kv >= state ? kv - state : kv, true,
      fmt::format("cells x layers x (K + V row bytes) as llama_kv_cache allocates them{}",
                  cells.empty() ? std::string() : fmt::format(" ({} cells)", cells))));
  if (!llama_all(log, "recurrent").empty())
    out.rows.push_back(memory_row("recurrent state", "recurrent", llama_all(log, "recurrent"), state, true,
                                  "llama_memory_recurrent: one cell per sequence, R (conv) and S (SSM) state in f32"));
  if (!llama_all(log, "compressor_state").empty())
    out.rows.push_back(memory_row("compressor state", "compressor_state", llama_all(log, "compressor_state"), state, true,
                                  "llama_dsv4_comp_state (deepseek4): per layer of its ratio a kv and a score tensor "
                                  "of f32, one plane per sequence"));

  std::vector<const LogFact*> gpu_weights, host_weights, gpu_compute, host_compute;
  for (const LogFact* fact : llama_all(log, "model_buffer")) (on_host(fact->device) ? host_weights : gpu_weights).push_back(fact);
  for (const LogFact* fact : llama_all(log, "compute_buffer")) (on_host(fact->device) ? host_compute : gpu_compute).push_back(fact);
  std::uint64_t weights = row.weights_bytes;
  if (!row.per_gpu.empty()) {
    weights = 0;
    for (const GpuShare& share : row.per_gpu) weights = checked_add(weights, share.weights_bytes, "weights");
  }
  if (!gpu_weights.empty())
    out.rows.push_back(memory_row("weights on the GPU", "weights", gpu_weights, weights, same_file,
                                  same_file ? "the GGUF's tensors of the layers on the GPU (load_tensors' model buffers)"
                                            : fmt::format("kvplan priced {} ({}), not the GGUF this log loaded: give "
                                                          "--model FILE.gguf to compare exactly; tensors the engine kept "
                                                          "in host memory (-ngl, --n-cpu-moe, -ot) show below",
                                                          model.id, row.weights_rule)));
  if (!host_weights.empty())
    out.rows.push_back(memory_row("weights in host memory", "weights_host", host_weights, std::nullopt, false,
                                  "layers and tensors kept in host memory (memory-mapped): not on the GPU"));
  if (!gpu_compute.empty())
    out.rows.push_back(memory_row("compute buffers", "overhead", gpu_compute, row.overhead_bytes, false,
                                  fmt::format("llama.cpp reserves its graph's worst case per device; kvplan's flat "
                                              "overhead of {} (--overhead) stands in for it",
                                              format_gib(static_cast<std::int64_t>(row.overhead_bytes)))));
  if (!host_compute.empty())
    out.rows.push_back(memory_row("host compute buffers", "compute_host", host_compute, std::nullopt, false,
                                  "the graph's part on the host (CUDA_Host, CPU): not on the GPU"));
  if (const LogFact* output = log.figure("output_buffer"))
    out.rows.push_back(memory_row("output buffer", "output_buffer", {output}, std::nullopt, false,
                                  "logits of n_seq_max sequences x n_vocab floats, in host memory"));
  for (const std::string& text : row.assumptions) out.notes.push_back(text);
}

}  // namespace kvplan
