// TensorRT-LLM's startup lines ([TensorRT-LLM][INFO] from the C++ runtime's KV cache manager,
// [TRT-LLM] from the PyTorch backend): what it allocates for the paged KV cache and its blocks.
// Real examples are in tests/fixtures/logs/.

#include "loaders/logs/engine_lines.h"
#include "loaders/logs/line_cleanup.h"

namespace kvplan::logs {

namespace {

constexpr LogEngine kTrt = LogEngine::trtllm;

}  // namespace

bool read_trtllm_line(const LogLine& line, FactSink& sink) {
  const std::string_view body = line.body;
  const bool tagged = line.text.find("[TensorRT-LLM]") != std::string_view::npos ||
                      line.text.find("[TRT-LLM]") != std::string_view::npos;
  if (const auto rest = after(body, "Allocated ")) {
    // "[MemUsageChange] Allocated 52.51 GiB for max tokens in paged KV cache (860320)."
    if (const auto tail = after(*rest, "for max tokens in paged KV cache (")) {
      if (const auto n = leading_number(*rest)) sink.figure(line, kTrt, "kv_cache", *n, unit_after(*rest, *n));
      if (const auto n = leading_number(*tail)) sink.figure(line, kTrt, "kv_cache_tokens", *n, "tokens");
      return true;
    }
  }
  if (sink.setting_after(line, kTrt, "Number of tokens per block:", "tokens_per_block")) return true;
  if (const auto rest = after(body, "TensorRT-LLM version:")) {
    std::string_view v = *rest;
    while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
    sink.setting(line, kTrt, "trtllm_version", v.substr(0, v.find(' ')));
    return true;
  }
  if (const auto rest = after(body, "Both free_gpu_memory_fraction and max_tokens are set (to ")) {
    // "... are set (to 0.800000011920929 and 860308, respectively). The smaller value will be used."
    // The fraction as the engine holds it, and the tokens its memory estimate gave (max_tokens).
    if (const auto fraction = leading_number(*rest)) {
      sink.setting(line, kTrt, "free_gpu_memory_fraction", *fraction);
      if (const auto tokens = after(*rest, " and "))
        if (const auto n = leading_number(*tokens)) sink.figure(line, kTrt, "max_tokens", *n, "tokens");
    }
    return true;
  }
  if (const auto rest = after(body, "Using ")) {
    if (body.find("tokens in paged KV cache") != std::string_view::npos) {
      if (const auto n = leading_number(*rest)) sink.figure(line, kTrt, "kv_cache_tokens", *n, "tokens");
      return true;
    }
  }
  if (const auto rest = after(body, "Max tokens in paged KV cache:")) {
    if (const auto n = leading_number(*rest)) sink.figure(line, kTrt, "kv_cache_tokens", *n, "tokens");
    if (const auto bytes = after(*rest, "Allocating "))
      if (const auto n = leading_number(*bytes)) sink.figure(line, kTrt, "kv_cache", *n, "B");
    return true;
  }
  if (const auto rest = after(body, "Allocate ")) {
    // "Allocate 69524783104 bytes for k/v cache."
    if (body.find("bytes for k/v cache") != std::string_view::npos) {
      if (const auto n = leading_number(*rest)) sink.figure(line, kTrt, "kv_cache", *n, "B");
      return true;
    }
  }
  if (const auto rest = after(body, "Rank ")) {
    // "Rank 0 uses 8.46 GB for model weights."
    if (body.find("for model weights") != std::string_view::npos) {
      sink.figure_after(line, kTrt, "uses", "weights");
      return true;
    }
    (void)rest;
  }
  if (body.find("Memory usage when calculating max tokens in paged kv cache") != std::string_view::npos) {
    sink.figure_after(line, kTrt, "total:", "total_memory");
    sink.figure_after(line, kTrt, "available:", "available_kv");
    return true;
  }
  if (sink.figure_after(line, kTrt, "Number of blocks in KV cache primary pool:", "kv_blocks")) return true;
  if (body.find("max_seq_len=") != std::string_view::npos && tagged) {
    if (const auto v = keyed_value(body, "max_seq_len")) sink.setting(line, kTrt, "max_seq_len", *v);
    if (const auto v = keyed_value(body, "max_num_requests")) sink.setting(line, kTrt, "max_batch_size", *v);
    if (const auto v = keyed_value(body, "max_num_tokens")) sink.setting(line, kTrt, "max_num_tokens", *v);
    return true;
  }
  if (tagged && body.find("[MemUsageChange]") != std::string_view::npos) {
    // "... now: CPU 0, GPU 6683 (MiB)": the engine's running total on the GPU.
    if (const auto rest = after(body, "now: CPU")) {
      if (const auto gpu = after(*rest, "GPU ")) {
        if (const auto n = leading_number(*gpu)) sink.figure(line, kTrt, "gpu_in_use", *n, "MiB");
      }
    }
    return true;
  }
  return false;
}

}  // namespace kvplan::logs
