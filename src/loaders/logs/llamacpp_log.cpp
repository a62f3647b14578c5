// llama.cpp's startup lines (llama-server, llama-cli, and Ollama's llama runner, which prints the
// same): the model's hparams (print_info, llm_load_print_meta before b4500), the buffers each
// device gets (load_tensors, llama_context, llama_kv_cache, llama_memory_recurrent) and the
// context's settings. The sentences are llama.cpp's own (src/llama-model.cpp, llama-context.cpp,
// llama-kv-cache.cpp, llama-memory-recurrent.cpp); real examples are in tests/fixtures/logs/.

#include "loaders/logs/engine_lines.h"
#include "loaders/logs/line_cleanup.h"

namespace kvplan::logs {

namespace {

constexpr LogEngine kLlama = LogEngine::llamacpp;

/// The word before `anchor` in "load_tensors:   CUDA0 model buffer size = ...": the device.
std::string_view device_before(std::string_view body, std::string_view anchor) {
  const std::size_t at = body.find(anchor);
  if (at == std::string_view::npos) return {};
  std::size_t end = at;
  while (end > 0 && body[end - 1] == ' ') --end;
  std::size_t begin = end;
  while (begin > 0 && body[begin - 1] != ' ' && body[begin - 1] != ':') --begin;
  return body.substr(begin, end - begin);
}

/// "name   = value" after a function prefix: the value, trimmed.
std::optional<std::string_view> print_value(std::string_view body, std::string_view key) {
  const auto rest = after(body, key);
  if (!rest) return std::nullopt;
  std::string_view v = *rest;
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  if (v.empty() || v.front() != '=') return std::nullopt;
  v.remove_prefix(1);
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  return v;
}

/// The model's hparams as print_info (llm_load_print_meta) prints them.
bool read_print_info(const LogLine& line, FactSink& sink) {
  std::string_view body = line.body;
  if (const auto rest = after(body, "print_info:")) body = *rest;
  else if (const auto old = after(body, "llm_load_print_meta:")) body = *old;
  else return false;
  while (!body.empty() && body.front() == ' ') body.remove_prefix(1);
  struct Key {
    std::string_view key;
    std::string_view name;
  };
  static constexpr Key kWords[] = {{"general.name", "model_name"}, {"file type", "file_type"}, {"arch", "architecture"},
                                   {"model type", "model_type"}};
  for (const Key& key : kWords) {
    if (body.substr(0, key.key.size()) != key.key) continue;
    if (const auto v = print_value(body.substr(key.key.size()), "")) sink.setting(line, kLlama, key.name, *v);
    return true;
  }
  static constexpr Key kNumbers[] = {{"n_ctx_train", "n_ctx_train"}, {"n_layer", "n_layer"}, {"n_head_kv", "n_head_kv"},
                                     {"n_embd_k_gqa", "n_embd_k_gqa"}, {"n_embd_v_gqa", "n_embd_v_gqa"}, {"n_swa", "n_swa"}};
  for (const Key& key : kNumbers) {
    if (body.substr(0, key.key.size()) != key.key || body.size() == key.key.size() || body[key.key.size()] != ' ') continue;
    if (const auto v = print_value(body.substr(key.key.size()), ""))
      if (const auto n = leading_number(*v)) sink.setting(line, kLlama, key.name, *n);
    return true;
  }
  if (body.substr(0, 9) == "file size") {
    const auto v = print_value(body.substr(9), "");
    if (v) {
      if (const auto n = leading_number(*v)) sink.figure(line, kLlama, "file_size", *n, unit_after(*v, *n));
    }
    return true;
  }
  if (body.substr(0, 12) == "model params") {
    if (const auto v = print_value(body.substr(12), "")) sink.setting(line, kLlama, "model_params", *v);
    return true;
  }
  return true;  // another print_info line: llama.cpp's all the same
}

/// "llama_context: n_ctx = 131072" and its older spellings.
bool read_context(const LogLine& line, FactSink& sink) {
  const std::string_view body = line.body;
  const bool context = body.substr(0, 14) == "llama_context:" || body.substr(0, 28) == "llama_new_context_with_model:" ||
                       body.substr(0, 16) == "llama_init_from_";
  if (!context) return false;
  struct Key {
    std::string_view key;
    std::string_view name;
  };
  static constexpr Key kKeys[] = {{"n_seq_max", "n_seq_max"}, {"n_ctx_per_seq", "n_ctx_seq"}, {"n_ctx_seq", "n_ctx_seq"},
                                  {"n_ctx", "n_ctx"},         {"n_batch", "n_batch"},         {"n_ubatch", "n_ubatch"},
                                  {"flash_attn", "flash_attn"}, {"kv_unified", "kv_unified"}};
  std::string_view rest = body.substr(body.find(':') + 1);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  for (const Key& key : kKeys) {
    if (rest.substr(0, key.key.size()) != key.key || rest.size() == key.key.size() || rest[key.key.size()] != ' ') continue;
    if (const auto v = print_value(rest.substr(key.key.size()), "")) sink.setting(line, kLlama, key.name, *v);
    return true;
  }
  if (body.find("output buffer size") != std::string_view::npos) {
    sink.figure_after(line, kLlama, "output buffer size", "output_buffer", device_before(body, "output buffer size"));
    return true;
  }
  return true;
}

/// "llama_kv_cache: size = 3072.00 MiB (131072 cells,  12 layers,  1/1 seqs), K (f16): 1536.00 MiB, V (f16): 1536.00 MiB"
void read_cache_size(const LogLine& line, FactSink& sink, std::string_view name, std::string_view first,
                     std::string_view second) {
  const std::string_view body = line.body;
  sink.figure_after(line, kLlama, "size =", name);
  if (const auto cells = after(body, "(")) {
    if (const auto n = leading_number(*cells)) sink.figure(line, kLlama, std::string(name) + "_cells", *n, "cells");
  }
  for (const std::string_view part : {first, second}) {
    const std::string anchor = std::string(part) + " (";
    const auto rest = after(body, ", " + anchor);
    if (!rest) continue;
    const std::size_t close = rest->find(')');
    if (close == std::string_view::npos || close > 16) continue;
    const std::string_view type = rest->substr(0, close);
    if (name == "kv_cache") sink.setting(line, kLlama, part == "K" ? "cache_type_k" : "cache_type_v", type);
    const std::string_view value = rest->substr(close + 1);
    if (const auto n = leading_number(value)) {
      sink.figure(line, kLlama, std::string(name) + "_" + (part == first ? "k" : "v"), *n, unit_after(value, *n));
    }
  }
}

}  // namespace

bool read_llamacpp_line(const LogLine& line, FactSink& sink) {
  const std::string_view body = line.body;
  if (read_print_info(line, sink)) return true;
  // The card: "Device 0: NVIDIA GeForce RTX 3070, compute capability 8.6, VMM: yes"
  if (body.substr(0, 7) == "Device " && body.find(", compute capability") != std::string_view::npos) {
    const auto name = after(body, ": ");
    if (name) sink.setting(line, kLlama, "gpu", name->substr(0, name->find(", compute capability")));
    return true;
  }
  if (const auto rest = after(body, "ggml_cuda_init: found ")) {
    if (const auto n = leading_number(*rest)) sink.setting(line, kLlama, "gpu_count", *n);
    return true;
  }
  // "llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 3070) (0000:01:00.0) - 7672 MiB free"
  if (const auto rest = after(body, "using device ")) {
    const std::string_view device = rest->substr(0, rest->find(' '));
    if (const auto open = after(*rest, "(")) {
      const std::size_t close = open->find(')');
      if (close != std::string_view::npos) sink.setting(line, kLlama, "gpu", open->substr(0, close));
    }
    if (const auto dash = after(*rest, " - ")) {
      if (const auto n = leading_number(*dash); n && dash->find("free") != std::string_view::npos)
        sink.figure(line, kLlama, "device_free", *n, unit_after(*dash, *n), device);
    }
    return true;
  }
  if (const auto rest = after(body, "build: ")) {
    if (body.substr(0, 7) == "build: ") {
      sink.setting(line, kLlama, "llamacpp_build", rest->substr(0, rest->find(" with")));
      return true;
    }
  }
  if (const auto rest = after(body, "loading model '")) {
    sink.setting(line, kLlama, "model_file", rest->substr(0, rest->find('\'')));
    return true;
  }
  if (body.find("llama_model_loader: loaded meta data") != std::string_view::npos) {
    if (const auto rest = after(body, " tensors from ")) sink.setting(line, kLlama, "model_file", rest->substr(0, rest->find(" (version")));
    return true;
  }
  // "load_tensors: offloading 24 repeating layers to GPU": the blocks -ngl put on the GPU (today
  // the output layer is one of -ngl's layers; the llama.cpp in Ollama's 2024 runners put -ngl blocks).
  if (const auto rest = after(body, "offloading ")) {
    if (body.find(" repeating layers to GPU") != std::string_view::npos) {
      if (const auto n = leading_number(*rest)) sink.setting(line, kLlama, "repeating_layers_offloaded", *n);
      return true;
    }
  }
  if (const auto rest = after(body, "offloaded ")) {
    // "load_tensors: offloaded 25/25 layers to GPU"
    if (body.find("layers to GPU") != std::string_view::npos) {
      if (const auto n = leading_number(*rest)) sink.setting(line, kLlama, "n_gpu_layers", *n);
      if (const auto total = after(*rest, "/"))
        if (const auto n = leading_number(*total)) sink.setting(line, kLlama, "offloadable_layers", *n);
      return true;
    }
  }
  if (body.find("model buffer size") != std::string_view::npos) {
    sink.figure_after(line, kLlama, "model buffer size", "model_buffer", device_before(body, "model buffer size"));
    return true;
  }
  // Before b3400 (Ollama's runners of 2024): "llm_load_tensors:      ROCm0 buffer size = 21533.93 MiB".
  if (body.substr(0, 17) == "llm_load_tensors:" && body.find(" buffer size") != std::string_view::npos) {
    sink.figure_after(line, kLlama, "buffer size", "model_buffer", device_before(body, "buffer size"));
    return true;
  }
  if (body.find("KV buffer size") != std::string_view::npos) {
    sink.figure_after(line, kLlama, "KV buffer size", "kv_buffer", device_before(body, "KV buffer size"));
    return true;
  }
  if (body.find("compute buffer size") != std::string_view::npos) {
    sink.figure_after(line, kLlama, "compute buffer size", "compute_buffer", device_before(body, "compute buffer size"));
    return true;
  }
  if (body.find("RS buffer size") != std::string_view::npos) {
    sink.figure_after(line, kLlama, "RS buffer size", "recurrent_buffer", device_before(body, "RS buffer size"));
    return true;
  }
  if (body.substr(0, 14) == "llama_kv_cache" && body.find(": size =") != std::string_view::npos) {
    read_cache_size(line, sink, "kv_cache", "K", "V");
    return true;
  }
  // deepseek4's compressor states: "llama_dsv4_comp_state: csa ratio = 4, state = 8 x 128, streams = 2,
  // rs_seq = 0, layers = 2, size =    0.03 MiB" (the buffer line before it is absent at 0 layers).
  if (body.substr(0, 21) == "llama_dsv4_comp_state" && body.find(" ratio = ") != std::string_view::npos) {
    sink.figure_after(line, kLlama, ", size =", "compressor_state");
    return true;
  }
  if (body.substr(0, 22) == "llama_memory_recurrent" && body.find(": size =") != std::string_view::npos) {
    read_cache_size(line, sink, "recurrent", "R", "S");
    return true;
  }
  // Before b5300: "llama_new_context_with_model: KV self size  = 4352.00 MiB, K (q8_0): 2176.00 MiB, ..."
  if (body.find("KV self size") != std::string_view::npos) {
    sink.figure_after(line, kLlama, "KV self size", "kv_cache");
    for (const std::string_view part : {std::string_view("K"), std::string_view("V")}) {
      const auto rest = after(body, ", " + std::string(part) + " (");
      if (!rest) continue;
      const std::size_t close = rest->find(')');
      if (close == std::string_view::npos || close > 16) continue;
      sink.setting(line, kLlama, part == "K" ? "cache_type_k" : "cache_type_v", rest->substr(0, close));
      const std::string_view value = rest->substr(close + 1);
      if (const auto n = leading_number(value))
        sink.figure(line, kLlama, part == "K" ? "kv_cache_k" : "kv_cache_v", *n, unit_after(value, *n));
    }
    return true;
  }
  // "llama_kv_cache_init: kv_size = 32768, offload = 1, type_k = 'q8_0', type_v = 'q8_0', n_layer = 64"
  if (body.find("kv_size =") != std::string_view::npos && body.find("type_k") != std::string_view::npos) {
    const auto quoted = [&](std::string_view key) -> std::string_view {
      const auto rest = after(body, key);
      if (!rest) return {};
      const auto open = after(*rest, "'");
      if (!open) return {};
      return open->substr(0, open->find('\''));
    };
    sink.setting(line, kLlama, "cache_type_k", quoted("type_k = "));
    sink.setting(line, kLlama, "cache_type_v", quoted("type_v = "));
    if (const auto rest = after(body, "kv_size =")) {
      if (const auto n = leading_number(*rest)) sink.figure(line, kLlama, "kv_cache_cells", *n, "cells");
    }
    return true;
  }
  return read_context(line, sink);
}

}  // namespace kvplan::logs
