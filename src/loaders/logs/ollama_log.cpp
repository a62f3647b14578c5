// Ollama's own lines (its Go logger: time=... level=INFO source=server.go:138 msg=offload
// key="value" ...): the scheduler's estimate before it starts a runner, the runner's command line,
// and the new engine's allocations (backend.go, from 0.11). The runner's llama.cpp lines are read
// by llamacpp_log.cpp. Real examples are in tests/fixtures/logs/.

#include "loaders/logs/engine_lines.h"
#include "loaders/logs/line_cleanup.h"

namespace kvplan::logs {

namespace {

constexpr LogEngine kOllama = LogEngine::ollama;

/// A figure from key="12.5 GiB" (or "[12.5 GiB 12.5 GiB]": the first GPU's).
void keyed_figure(const LogLine& line, FactSink& sink, std::string_view key, std::string_view name,
                  std::string_view device = {}) {
  sink.keyed_figure(line, kOllama, key, name, {}, device);
}

/// The value of a "--flag N" on the runner's command line.
void flag_setting(const LogLine& line, FactSink& sink, std::string_view flag, std::string_view name) {
  const auto rest = after(line.body, std::string(flag) + " ");
  if (!rest) return;
  if (const auto n = leading_number(*rest)) sink.setting(line, kOllama, name, *n);
}

}  // namespace

bool read_ollama_line(const LogLine& line, FactSink& sink) {
  const std::string_view body = line.body;
  // The runner's command line, also when a paste cut the logger's fields off ("... msg=...").
  if (body.find("msg=\"starting llama server\"") != std::string_view::npos) {
    flag_setting(line, sink, "--ctx-size", "n_ctx");
    flag_setting(line, sink, "--batch-size", "n_batch");
    flag_setting(line, sink, "--n-gpu-layers", "n_gpu_layers");
    flag_setting(line, sink, "--parallel", "parallel");
    return true;
  }
  const bool go_logger = body.find("level=") != std::string_view::npos && body.find("source=") != std::string_view::npos;
  if (!go_logger) return false;
  if (body.find("msg=offload") != std::string_view::npos || body.find("msg=\"offload to") != std::string_view::npos) {
    if (const auto v = keyed_value(body, "layers.model")) sink.setting(line, kOllama, "layers_model", *v);
    if (const auto v = keyed_value(body, "layers.offload")) sink.setting(line, kOllama, "n_gpu_layers", *v);
    if (const auto v = keyed_value(body, "library")) sink.setting(line, kOllama, "library", *v);
    keyed_figure(line, sink, "memory.available", "memory_available");
    keyed_figure(line, sink, "memory.gpu_overhead", "gpu_overhead");
    keyed_figure(line, sink, "memory.required.full", "required_full");
    keyed_figure(line, sink, "memory.required.partial", "required_partial");
    keyed_figure(line, sink, "memory.required.kv", "kv_cache");
    keyed_figure(line, sink, "memory.weights.total", "weights");
    keyed_figure(line, sink, "memory.weights.repeating", "weights_repeating");
    keyed_figure(line, sink, "memory.weights.nonrepeating", "weights_nonrepeating");
    keyed_figure(line, sink, "memory.graph.full", "graph_full");
    keyed_figure(line, sink, "memory.graph.partial", "graph_partial");
    return true;
  }
  if (body.find("msg=\"kv cache\"") != std::string_view::npos) {
    keyed_figure(line, sink, "size", "kv_cache", keyed_value(body, "device").value_or(""));
    return true;
  }
  if (body.find("msg=\"compute graph\"") != std::string_view::npos) {
    keyed_figure(line, sink, "size", "compute_buffer", keyed_value(body, "device").value_or(""));
    return true;
  }
  if (body.find("msg=\"model weights\"") != std::string_view::npos) {
    keyed_figure(line, sink, "size", "weights", keyed_value(body, "device").value_or(""));
    return true;
  }
  if (body.find("msg=\"total memory\"") != std::string_view::npos) {
    keyed_figure(line, sink, "size", "total_memory");
    return true;
  }
  if (body.find("msg=\"updating cuda memory data\"") != std::string_view::npos ||
      body.find("msg=\"inference compute\"") != std::string_view::npos) {
    if (const auto v = keyed_value(body, "name")) sink.setting(line, kOllama, "gpu", *v);
    keyed_figure(line, sink, "before.total", "total_memory");
    keyed_figure(line, sink, "total", "total_memory");
    return true;
  }
  if (body.find("msg=\"gpu memory\"") != std::string_view::npos) {
    keyed_figure(line, sink, "available", "memory_available");
    return true;
  }
  return body.find("source=server.go") != std::string_view::npos || body.find("source=sched.go") != std::string_view::npos;
}

}  // namespace kvplan::logs
