// vLLM's startup lines (V1 from 0.8, and V0's profiling sentences) and its /metrics text. The
// sentences are vLLM's own (vllm/v1/worker/gpu_worker.py, gpu_model_runner.py,
// v1/core/kv_cache_utils.py, v1/engine/core.py, worker/worker.py for V0); real examples are in
// tests/fixtures/logs/.

#include <algorithm>
#include <string>

#include "loaders/logs/engine_lines.h"
#include "loaders/logs/line_cleanup.h"

namespace kvplan::logs {

namespace {

constexpr LogEngine kVllm = LogEngine::vllm;

/// The config line's speculative decoding: "speculative_config=None", or SpeculativeConfig's
/// __repr__ (vllm/config/speculative.py): "SpeculativeConfig(method='mtp', model='...',
/// num_spec_tokens=1)". A run that speculated caches the draft's layers too, so a config kvplan
/// cannot read is recorded as such (the explanation then refuses rather than leave it out).
void read_speculative_config(const LogLine& line, FactSink& sink) {
  const auto rest = after(line.body, "speculative_config=");
  if (!rest || rest->substr(0, 4) == "None") return;
  constexpr std::string_view kOpen = "SpeculativeConfig(";
  const std::size_t close = rest->find(')');
  if (rest->substr(0, kOpen.size()) == kOpen && close != std::string_view::npos) {
    const std::string_view inside = rest->substr(kOpen.size(), close - kOpen.size());
    const auto method = keyed_value(inside, "method");
    const auto tokens = keyed_value(inside, "num_spec_tokens");
    if (method && tokens && !method->empty() && !tokens->empty()) {
      sink.setting(line, kVllm, "speculative_method", *method);
      sink.setting(line, kVllm, "num_speculative_tokens", *tokens);
      return;
    }
  }
  sink.setting(line, kVllm, "speculative_config", "unreadable");
}

/// The settings of the engine's config line and of the API server's "non-default args" dict.
void read_config(const LogLine& line, FactSink& sink, bool config_line) {
  const std::string_view body = line.body;
  struct Key {
    std::string_view key;
    std::string_view name;
  };
  static constexpr Key kKeys[] = {
      {"model", "model"},
      {"max_seq_len", "max_model_len"},
      {"max_model_len", "max_model_len"},
      {"tensor_parallel_size", "tensor_parallel_size"},
      {"pipeline_parallel_size", "pipeline_parallel_size"},
      {"decode_context_parallel_size", "decode_context_parallel_size"},
      {"kv_cache_dtype", "kv_cache_dtype"},
      {"dtype", "dtype"},
      {"quantization", "quantization"},
      {"enable_prefix_caching", "enable_prefix_caching"},
      {"gpu_memory_utilization", "gpu_memory_utilization"},
      {"max_num_seqs", "max_num_seqs"},
      {"max_num_batched_tokens", "max_num_batched_tokens"},
      {"block_size", "block_size"},
      {"kv_cache_memory_bytes", "kv_cache_memory_bytes"},
  };
  for (const Key& key : kKeys) {
    const auto value = keyed_value(body, key.key);
    if (!value || value->empty()) continue;
    // Every value of these lines is followed by a separator; one that ends the line was cut by a
    // wrap or a truncated paste ("max_seq_len=163" of 16384).
    if (value->data() + value->size() >= body.data() + body.size()) continue;
    // The config line's "dtype=torch.bfloat16": the word after the module.
    std::string_view v = *value;
    if (key.name == "dtype" && v.substr(0, 6) == "torch.") v.remove_prefix(6);
    if (key.name == "quantization" && v == "None") continue;
    sink.setting(line, kVllm, key.name, v);
  }
  read_speculative_config(line, sink);
  if (config_line) {
    // "Initializing a V1 LLM engine (v0.19.0) with config:"
    if (const auto rest = after(body, "engine (v")) {
      const std::size_t close = rest->find(')');
      if (close != std::string_view::npos && close < 40) sink.setting(line, kVllm, "vllm_version", rest->substr(0, close));
    }
    sink.setting(line, kVllm, "vllm_engine", body.find("V1 LLM engine") != std::string_view::npos ? "V1" : "V0");
  }
}

/// V0's profiling sentences: "model weights take 14.99GiB; non_torch_memory takes 0.24GiB; ...".
bool read_v0_profile(const LogLine& line, FactSink& sink) {
  bool found = false;
  if (const auto rest = after(line.body, "total_gpu_memory (")) {
    if (const auto n = leading_number(*rest)) {
      sink.figure(line, kVllm, "total_memory", *n, unit_after(*rest, *n));
      found = true;
    }
    if (const auto util = after(line.body, "gpu_memory_utilization (")) {
      if (const auto u = leading_number(*util)) sink.setting(line, kVllm, "gpu_memory_utilization", *u);
      if (const auto eq = after(*util, ") = ")) {
        if (const auto n = leading_number(*eq)) sink.figure(line, kVllm, "requested_memory", *n, unit_after(*eq, *n));
      }
    }
  }
  found |= sink.figure_after(line, kVllm, "model weights take", "weights");
  found |= sink.figure_after(line, kVllm, "non_torch_memory takes", "non_torch");
  found |= sink.figure_after(line, kVllm, "PyTorch activation peak memory takes", "activation");
  found |= sink.figure_after(line, kVllm, "reserved for KV Cache is", "available_kv");
  return found;
}

}  // namespace

bool read_vllm_line(const LogLine& line, FactSink& sink) {
  const std::string_view body = line.body;
  if (body.find("LLM engine (v") != std::string_view::npos && body.find("with config:") != std::string_view::npos) {
    read_config(line, sink, true);
    return true;
  }
  if (body.find("non-default args:") != std::string_view::npos) {
    read_config(line, sink, false);
    return true;
  }
  if (const auto rest = after(body, "vLLM API server version ")) {
    sink.setting(line, kVllm, "vllm_version", rest->substr(0, rest->find(' ')));
    return true;
  }
  if (sink.setting_after(line, kVllm, "Using max model len", "max_model_len")) return true;
  // The sampler's kernel sets the profiling peak; the line says FlashInfer's ran (topk_topp_sampler.py).
  if (body.find("Using FlashInfer for top-p & top-k sampling") != std::string_view::npos) {
    sink.setting(line, kVllm, "flashinfer_sampler", "1");
    return true;
  }
  if (body.find("Chunked prefill is enabled") != std::string_view::npos) {
    if (const auto v = keyed_value(body, "max_num_batched_tokens")) {
      if (const auto n = leading_number(*v)) sink.setting(line, kVllm, "max_num_batched_tokens", *n);
    }
    return true;
  }
  if (sink.setting_after(line, kVllm, "Defaulting max_num_seqs to", "max_num_seqs")) return true;
  if (sink.setting_after(line, kVllm, "Defaulting max_num_batched_tokens to", "max_num_batched_tokens")) return true;
  if (sink.figure_after(line, kVllm, "Model loading took", "weights")) return true;
  if (body.find("Memory profiling takes") != std::string_view::npos) {
    sink.figure_after(line, kVllm, "Total non KV cache memory:", "non_kv_total");
    sink.figure_after(line, kVllm, "torch peak memory increase:", "activation");
    sink.figure_after(line, kVllm, "non-torch forward increase memory:", "non_torch");
    return true;
  }
  if (read_v0_profile(line, sink)) return true;
  if (sink.figure_after(line, kVllm, "Available KV cache memory:", "available_kv")) return true;
  // _report_kv_cache_config (0.11-0.20) under context parallelism: "Multiplying the GPU KV cache
  // size by the cp_world_size 8 (pcp_world_size 1 * dcp_world_size 8)."
  if (body.find("Multiplying the GPU KV cache size by the cp_world_size") != std::string_view::npos) {
    sink.setting_after(line, kVllm, "dcp_world_size", "decode_context_parallel_size");
    return true;
  }
  if (const auto rest = after(body, "GPU KV cache size:")) {
    if (const auto n = leading_number(*rest)) sink.figure(line, kVllm, "kv_cache_tokens", *n, "tokens");
    return true;
  }
  if (const auto rest = after(body, "Maximum concurrency for ")) {
    // "Maximum concurrency for 16,384 tokens per request: 29.05x"
    const auto len = leading_number(*rest);
    const auto value = after(*rest, "per request:");
    if (len && value) {
      if (const auto x = leading_number(*value)) {
        sink.figure(line, kVllm, "max_concurrency", *x, "x");
        // "16,384" is printed with thousands commas; settings are kept as the engine's flags take them.
        std::string plain(*len);
        plain.erase(std::remove(plain.begin(), plain.end(), ','), plain.end());
        sink.setting(line, kVllm, "max_model_len", plain);
      }
    }
    return true;
  }
  if (const auto rest = after(body, "Graph capturing finished in")) {
    sink.figure_after(line, kVllm, "took", "cuda_graphs");
    (void)rest;
    return true;
  }
  if (const auto rest = after(body, "CUDA graph pool memory:")) {
    // "0.91 GiB (actual), 0.84 GiB (estimated), difference: ..."
    if (const auto estimated = after(*rest, "(actual),")) {
      if (const auto n = leading_number(*estimated))
        sink.figure(line, kVllm, "cuda_graphs_estimated", *n, unit_after(*estimated, *n));
    }
    return true;
  }
  if (body.find("worker init memory snapshot") != std::string_view::npos) {
    if (const auto v = keyed_value(body, "total_memory")) {
      if (const auto n = leading_number(*v)) sink.figure(line, kVllm, "total_memory", *n, unit_after(*v, *n));
    }
    return true;
  }
  if (const auto rest = after(body, "Desired GPU memory utilization is (")) {
    // "(0.95, 75.23 GiB)"
    if (const auto u = leading_number(*rest)) {
      sink.setting(line, kVllm, "gpu_memory_utilization", *u);
      if (const auto comma = after(*rest, ", ")) {
        if (const auto n = leading_number(*comma)) sink.figure(line, kVllm, "requested_memory", *n, unit_after(*comma, *n));
      }
    }
    if (const auto free = after(body, "Free memory on device (")) {
      // "(78.68/79.19 GiB)": the total is after the slash.
      if (const auto slash = after(*free, "/")) {
        if (const auto n = leading_number(*slash)) sink.figure(line, kVllm, "total_memory", *n, unit_after(*slash, *n));
      }
    }
    return true;
  }
  if (const auto rest = after(body, "# GPU blocks:")) {
    if (const auto n = leading_number(*rest)) sink.figure(line, kVllm, "num_gpu_blocks", *n, "blocks");
    return true;
  }
  if (const auto rest = after(body, "# cuda blocks:")) {
    if (const auto n = leading_number(*rest)) sink.figure(line, kVllm, "num_gpu_blocks", *n, "blocks");
    return true;
  }
  if (const auto rest = after(body, "num_gpu_blocks is:")) {
    if (const auto n = leading_number(*rest)) sink.figure(line, kVllm, "num_gpu_blocks", *n, "blocks");
    return true;
  }
  if (body.find("KV cache is needed, which is larger than the available KV cache memory") != std::string_view::npos) {
    // "To serve at least one request with the models's max seq len (221000), (10.12 GiB KV cache
    // is needed, which is larger than the available KV cache memory (5.59 GiB). Based on the
    // available memory, the estimated maximum model length is 122080."
    if (const auto rest = after(body, "), (")) {
      if (const auto n = leading_number(*rest)) sink.figure(line, kVllm, "kv_needed", *n, unit_after(*rest, *n));
    }
    sink.figure_after(line, kVllm, "available KV cache memory (", "available_kv");
    if (const auto rest = after(body, "estimated maximum model length is")) {
      if (const auto n = leading_number(*rest)) sink.figure(line, kVllm, "estimated_max_model_len", *n, "tokens");
    }
    return true;
  }
  return false;
}

bool read_vllm_metrics_line(const LogLine& line, FactSink& sink) {
  // Prometheus exposition: vllm:cache_config_info{block_size="16",cache_dtype="auto",...} 1.0
  const std::string_view body = line.body;
  if (body.substr(0, 5) != "vllm:") return false;
  if (body.substr(0, 23) == "vllm:cache_config_info{") {
    if (const auto v = keyed_value(body, "num_gpu_blocks")) {
      if (const auto n = leading_number(*v)) sink.figure(line, kVllm, "num_gpu_blocks", *n, "blocks");
    }
    if (const auto v = keyed_value(body, "block_size")) sink.setting(line, kVllm, "block_size", *v);
    if (const auto v = keyed_value(body, "cache_dtype")) sink.setting(line, kVllm, "kv_cache_dtype", *v);
    if (const auto v = keyed_value(body, "gpu_memory_utilization")) sink.setting(line, kVllm, "gpu_memory_utilization", *v);
    if (const auto v = keyed_value(body, "enable_prefix_caching")) sink.setting(line, kVllm, "enable_prefix_caching", *v);
    return true;
  }
  if (const auto v = keyed_value(body, "model_name")) {
    sink.setting(line, kVllm, "model", *v);
    return true;
  }
  return false;
}

}  // namespace kvplan::logs
