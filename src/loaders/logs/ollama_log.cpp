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

/// The word after "--flag " on the runner's command line ("--kv-cache-type q8_0", "--tensor-split 11,11").
void flag_word(const LogLine& line, FactSink& sink, std::string_view flag, std::string_view name) {
  const auto rest = after(line.body, std::string(flag) + " ");
  if (!rest) return;
  const std::size_t end = rest->find_first_of(" \t\"");
  sink.setting(line, kOllama, name, rest->substr(0, end));
}

/// A switch on the runner's command line ("--flash-attn"), followed by a space, a quote or the end.
bool has_switch(std::string_view body, std::string_view flag) {
  std::size_t at = body.find(flag);
  while (at != std::string_view::npos) {
    const std::size_t end = at + flag.size();
    if (end == body.size() || body[end] == ' ' || body[end] == '"') return true;
    at = body.find(flag, end);
  }
  return false;
}

/// Every entry of a bracketed list of sizes (memory.available="[22.0 GiB 22.0 GiB]"), one figure
/// each, the device named by its place ("GPU0", "GPU1", ...). A single size has no brackets.
void listed_figures(const LogLine& line, FactSink& sink, std::string_view key, std::string_view name) {
  const auto value = keyed_value(line.body, key);
  if (!value) return;
  std::string_view rest = *value;
  if (rest.empty() || rest.front() != '[') {
    sink.keyed_figure(line, kOllama, key, name);
    return;
  }
  rest.remove_prefix(1);
  for (std::size_t index = 0; index < 64; ++index) {
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    const auto number = leading_number(rest);
    if (!number) return;
    const std::string_view unit = unit_after(rest, *number);
    if (unit.empty()) return;
    sink.figure(line, kOllama, name, *number, unit, "GPU" + std::to_string(index));
    const std::size_t at = rest.find(unit, number->size());
    if (at == std::string_view::npos) return;
    rest.remove_prefix(at + unit.size());
  }
}

/// The Go map the server prints at start ("server config" env="map[... OLLAMA_NUM_PARALLEL:4 ...]"):
/// KEY:value up to the next space; an empty value (unset) is no setting.
void env_setting(const LogLine& line, FactSink& sink, std::string_view key, std::string_view name) {
  const std::string anchor = " " + std::string(key) + ":";
  std::size_t at = line.body.find(anchor);
  if (at == std::string_view::npos) {
    const std::string first = "map[" + std::string(key) + ":";
    at = line.body.find(first);
    if (at == std::string_view::npos) return;
    at += 3;
  }
  std::string_view rest = line.body.substr(at + anchor.size());
  const std::size_t end = rest.find_first_of(" ]\"");
  // A value the paste cut off ("... OLLAMA_SCHED_SPREAD:true R") is kept only when a separator ends it.
  if (end == std::string_view::npos) return;
  sink.setting(line, kOllama, name, rest.substr(0, end));
}

/// The runner's command line: "starting llama server" cmd="... runner --model ... --ctx-size N ...",
/// also when a paste kept only the command ("... ollama_llama_server --model ... --ctx-size 2048").
bool is_runner_line(std::string_view body) {
  if (body.find("msg=\"starting llama server\"") != std::string_view::npos) return true;
  return body.find("--ctx-size ") != std::string_view::npos && body.find("--model ") != std::string_view::npos &&
         (body.find(" runner ") != std::string_view::npos || body.find("ollama_llama_server") != std::string_view::npos);
}

}  // namespace

bool read_ollama_line(const LogLine& line, FactSink& sink) {
  const std::string_view body = line.body;
  // The runner's command line, also when a paste cut the logger's fields off ("... msg=...").
  if (is_runner_line(body)) {
    flag_setting(line, sink, "--ctx-size", "n_ctx");
    flag_setting(line, sink, "--batch-size", "n_batch");
    flag_setting(line, sink, "--n-gpu-layers", "n_gpu_layers");
    flag_setting(line, sink, "--n-gpu-layers", "runner_gpu_layers");
    flag_setting(line, sink, "--parallel", "parallel");
    flag_word(line, sink, "--kv-cache-type", "runner_kv_cache_type");
    flag_word(line, sink, "--tensor-split", "runner_tensor_split");
    // The runner has flash attention exactly when the server passed the switch (llm/server.go).
    sink.setting(line, kOllama, "runner_flash_attn", has_switch(body, "--flash-attn") ? "on" : "off");
    if (has_switch(body, "--ollama-engine")) sink.setting(line, kOllama, "runner_engine", "ollama");
    return true;
  }
  // msg="server config" env="map[...]"; before v0.3 Go's log package: "routes.go:1096: INFO server config env=...".
  if (body.find("msg=\"server config\"") != std::string_view::npos ||
      body.find("INFO server config env=") != std::string_view::npos) {
    env_setting(line, sink, "OLLAMA_CONTEXT_LENGTH", "env_context_length");
    env_setting(line, sink, "OLLAMA_NUM_PARALLEL", "env_num_parallel");
    env_setting(line, sink, "OLLAMA_KV_CACHE_TYPE", "env_kv_cache_type");
    env_setting(line, sink, "OLLAMA_FLASH_ATTENTION", "env_flash_attention");
    env_setting(line, sink, "OLLAMA_GPU_OVERHEAD", "env_gpu_overhead");
    env_setting(line, sink, "OLLAMA_NEW_ENGINE", "env_new_engine");
    return true;
  }
  if (const auto rest = after(body, "(version ")) {
    if (body.find("Listening on") != std::string_view::npos) {
      const std::size_t end = rest->find(')');
      if (end != std::string_view::npos) sink.setting(line, kOllama, "ollama_version", rest->substr(0, end));
      return true;
    }
  }
  const bool go_logger = body.find("level=") != std::string_view::npos && body.find("source=") != std::string_view::npos;
  if (!go_logger) return false;
  if (body.find("msg=offload") != std::string_view::npos || body.find("msg=\"offload to") != std::string_view::npos) {
    if (const auto v = keyed_value(body, "layers.model")) sink.setting(line, kOllama, "layers_model", *v);
    if (const auto v = keyed_value(body, "layers.offload")) sink.setting(line, kOllama, "n_gpu_layers", *v);
    if (const auto v = keyed_value(body, "layers.offload")) sink.setting(line, kOllama, "layers_offload", *v);
    if (const auto v = keyed_value(body, "layers.requested")) sink.setting(line, kOllama, "layers_requested", *v);
    if (const auto v = keyed_value(body, "library")) sink.setting(line, kOllama, "library", *v);
    // "layers.split=11,11,11,11" (unquoted, commas inside): up to the next space.
    if (const auto rest = after(body, " layers.split=")) {
      const std::string_view split = rest->substr(0, rest->find(' '));
      if (split != "\"\"") sink.setting(line, kOllama, "layers_split", split);
    }
    // The source line dates the release (its offload call moved between versions).
    if (const auto v = keyed_value(body, "source")) sink.setting(line, kOllama, "offload_source", *v);
    listed_figures(line, sink, "memory.available", "memory_available");
    keyed_figure(line, sink, "memory.gpu_overhead", "gpu_overhead");
    keyed_figure(line, sink, "memory.required.full", "required_full");
    keyed_figure(line, sink, "memory.required.partial", "required_partial");
    keyed_figure(line, sink, "memory.required.kv", "kv_cache");
    listed_figures(line, sink, "memory.required.allocations", "allocations");
    keyed_figure(line, sink, "projector.weights", "projector_weights");
    keyed_figure(line, sink, "projector.graph", "projector_graph");
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
  if (body.find("msg=\"new model will fit in available VRAM") != std::string_view::npos) {
    // The scheduler's verdict: parallel=1 available=34336186368 (bytes) required="26.8 GiB".
    if (const auto v = keyed_value(body, "parallel")) sink.setting(line, kOllama, "sched_parallel", *v);
    sink.keyed_figure(line, kOllama, "available", "sched_available", "B");
    keyed_figure(line, sink, "required", "sched_required");
    return true;
  }
  if (body.find("msg=\"enabling flash attention\"") != std::string_view::npos) {
    sink.setting(line, kOllama, "flash_attention_enabled", "true");
    return true;
  }
  if (body.find("msg=\"gpu memory\"") != std::string_view::npos) {
    keyed_figure(line, sink, "available", "memory_available");
    return true;
  }
  return body.find("source=server.go") != std::string_view::npos || body.find("source=sched.go") != std::string_view::npos;
}

}  // namespace kvplan::logs
