// SGLang's startup lines (python/sglang/srt/model_executor/model_runner.py, managers/scheduler.py):
// the memory left after the weights, the KV pool it allocates and the token capacity it derives.
// Real examples are in tests/fixtures/logs/.

#include "loaders/logs/engine_lines.h"
#include "loaders/logs/line_cleanup.h"

namespace kvplan::logs {

namespace {

constexpr LogEngine kSglang = LogEngine::sglang;

void keyed_figure(const LogLine& line, FactSink& sink, std::string_view key, std::string_view name,
                  std::string_view unit = {}) {
  sink.keyed_figure(line, kSglang, key, name, unit);
}

}  // namespace

bool read_sglang_line(const LogLine& line, FactSink& sink) {
  const std::string_view body = line.body;
  if (body.find("Load weight end.") != std::string_view::npos) {
    // "Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=62.36 GB, mem usage=15.13 GB."
    if (const auto v = keyed_value(body, "dtype")) sink.setting(line, kSglang, "dtype", v->substr(v->find('.') + 1));
    // A speculative draft loads second ("type=LlamaForCausalLMEagle3", "MiMoMTP", "...NextN").
    if (const auto type = keyed_value(body, "type");
        type && (type->find("Eagle") != std::string_view::npos || type->find("MTP") != std::string_view::npos ||
                 type->find("NextN") != std::string_view::npos))
      sink.setting(line, kSglang, "speculative_draft", *type);
    sink.figure_after(line, kSglang, "mem usage=", "weights");
    sink.figure_after(line, kSglang, "avail mem=", "avail_after_weights");
    return true;
  }
  if (body.find("Load weight begin.") != std::string_view::npos) {
    sink.figure_after(line, kSglang, "avail mem=", "avail_before_weights");
    return true;
  }
  if (body.find("KV Cache is allocated.") != std::string_view::npos) {
    // "KV Cache is allocated. #tokens: 367404, K size: 8.23 GB, V size: 8.23 GB"
    // Before 2025-03 the line has no #tokens ("KV Cache is allocated. K size: 27.13 GB, V size:
    // 27.13 GB."); MLA models print one latent buffer ("#tokens: N, KV size: X GB").
    if (const auto rest = after(body, "#tokens:")) {
      if (const auto n = leading_number(*rest)) sink.figure(line, kSglang, "kv_cache_tokens", *n, "tokens");
    }
    if (!sink.figure_after(line, kSglang, "KV size:", "kv_cache_latent")) {
      sink.figure_after(line, kSglang, "K size:", "kv_cache_k");
      sink.figure_after(line, kSglang, "V size:", "kv_cache_v");
    }
    if (const auto v = keyed_value(body, "dtype")) sink.setting(line, kSglang, "kv_cache_dtype", v->substr(v->find('.') + 1));
    return true;
  }
  if (const auto rest = after(body, "Using KV cache dtype:")) {
    std::string_view v = *rest;
    while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
    sink.setting(line, kSglang, "kv_cache_dtype", v.substr(v.find('.') + 1));
    return true;
  }
  if (body.find("max_total_num_tokens=") != std::string_view::npos) {
    keyed_figure(line, sink, "max_total_num_tokens", "max_total_num_tokens", "tokens");
    sink.figure_after(line, kSglang, "available_gpu_mem=", "available_gpu_mem");
    if (const auto v = keyed_value(body, "context_len")) sink.setting(line, kSglang, "context_length", *v);
    // What the scheduler derived (clamp(#tokens / context x 512, 2048, 4096) unless given): a figure.
    keyed_figure(line, sink, "max_running_requests", "max_running_requests", "requests");
    if (const auto v = keyed_value(body, "chunked_prefill_size")) sink.setting(line, kSglang, "chunked_prefill_size", *v);
    return true;
  }
  if (body.find("Memory pool end.") != std::string_view::npos) {
    sink.figure_after(line, kSglang, "avail mem=", "avail_after_kv");
    return true;
  }
  if (body.find("Capture cuda graph end.") != std::string_view::npos) {
    sink.figure_after(line, kSglang, "mem usage=", "cuda_graphs");
    sink.figure_after(line, kSglang, "avail mem=", "avail_after_graphs");
    return true;
  }
  if (body.find("Capture cuda graph begin.") != std::string_view::npos) return true;
  if (body.find("server_args=ServerArgs(") != std::string_view::npos) {
    if (const auto v = keyed_value(body, "model_path")) sink.setting(line, kSglang, "model", *v);
    if (const auto v = keyed_value(body, "tp_size")) sink.setting(line, kSglang, "tensor_parallel_size", *v);
    if (const auto v = keyed_value(body, "mem_fraction_static")) sink.setting(line, kSglang, "mem_fraction_static", *v);
    if (const auto v = keyed_value(body, "context_length")) {
      if (*v != "None") sink.setting(line, kSglang, "context_length", *v);
    }
    if (const auto v = keyed_value(body, "kv_cache_dtype")) sink.setting(line, kSglang, "kv_cache_dtype", *v);
    if (const auto v = keyed_value(body, "speculative_algorithm"); v && *v != "None")
      sink.setting(line, kSglang, "speculative_algorithm", *v);
    // The flags that size the pool or its default fraction; None is SGLang's "not given".
    for (const std::string_view key : {"pp_size", "page_size", "chunked_prefill_size", "max_total_tokens",
                                       "max_running_requests"}) {
      const auto v = keyed_value(body, key);
      if (v && *v != "None") sink.setting(line, kSglang, key == "pp_size" ? "pipeline_parallel_size" : key, *v);
    }
    return true;
  }
  return false;
}

}  // namespace kvplan::logs
