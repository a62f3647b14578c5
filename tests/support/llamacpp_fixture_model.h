#pragma once
// A llama.cpp fixture read back the way kvplan reads a user's file: written to a scratch directory
// and loaded from there; and what the GGUF architecture tests ask of one.

#include <cstdint>
#include <string>
#include <utility>

#include "engines/llamacpp/rules.h"
#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "kvplan/plan.h"
#include "loaders/gguf_model.h"
#include "support/gguf_writer.h"
#include "support/llamacpp_fixtures.h"
#include "support/temp_dir.h"

namespace kvplan::testing {

inline GgufModel load_llamacpp_fixture(const std::string& name) {
  TempDir dir;
  const std::string path = dir.file(name + ".gguf");
  make_llamacpp_fixture(name).write(path);
  return load_gguf_model(path);
}

/// A file with only the keys every architecture reads (4 blocks of 128, 4 heads, 8,192 tokens) and
/// a token embedding: the start of a file that lacks a key one architecture requires.
inline GgufWriter gguf_bare_file(const std::string& arch) {
  GgufWriter w;
  w.add_string("general.architecture", arch);
  w.add_uint32(arch + ".block_count", 4);
  w.add_uint32(arch + ".embedding_length", 128);
  w.add_uint32(arch + ".context_length", 8192);
  w.add_uint32(arch + ".attention.head_count", 4);
  w.add_tensor("token_embd.weight", 0, {128, 8});
  return w;
}

/// Loading the file `w` writes: the exit code and the message (ok and "" when it loads).
inline std::pair<ExitCode, std::string> gguf_load_outcome(const GgufWriter& w) {
  TempDir dir;
  const std::string path = dir.file("model.gguf");
  w.write(path);
  try {
    load_gguf_model(path);
  } catch (const Error& e) {
    return {e.code(), e.what()};
  }
  return {ExitCode::ok, ""};
}

/// Planning `spec` under `runtime` at a context of 4,096 on an H200: the exit code and the message
/// (ok and "" when it plans). For what an engine refuses of a GGUF file's layout.
inline std::pair<ExitCode, std::string> plan_outcome(const ModelSpec& spec, const std::string& runtime) {
  PlanRequest request;
  request.runtime = runtime;
  request.contexts = {4096};
  try {
    make_plan(spec, *builtin_gpus().find("h200"), request);
  } catch (const Error& e) {
    return {e.code(), e.what()};
  }
  return {ExitCode::ok, ""};
}

/// The cross-check's CPU run: K and V f16, flash attention off, no layer offloaded, n_batch =
/// n_ubatch = `ubatch`.
inline LlamaCppResult llamacpp_cpu_plan(const GgufModel& m, std::uint64_t n_ctx, std::uint32_t seqs,
                                        std::uint32_t ubatch = 512) {
  LlamaCppSettings s;
  s.n_ctx = n_ctx;
  s.n_parallel = seqs;
  s.type_k = &ggml_type_by_name("f16");
  s.type_v = &ggml_type_by_name("f16");
  s.flash_attn = LlamaCppFlashAttn::off;
  s.n_batch = s.n_ubatch = ubatch;
  s.n_gpu_layers = 0;
  return plan_llamacpp(m.spec, s, llamacpp_facts(m.spec));
}

}  // namespace kvplan::testing
