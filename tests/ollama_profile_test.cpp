// The Ollama profile against real Ollama logs (/work/staging/engines/vectors-ollama-vllmpp.jsonl,
// records O1-O15: each `msg=offload` figure asserted as Ollama prints it, format.HumanBytes2's
// %.1f), and its settings through the command line.

#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engines/ollama/rules.h"
#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "kvplan/model_loader.h"
#include "kvplan/plan.h"
#include "kvplan/units.h"
#include "loaders/ollama_tags.h"
#include "support/run_binary.h"
#include "support/temp_dir.h"

using kvplan::GiB;
using kvplan::MiB;
using kvplan::OllamaDevice;
using kvplan::OllamaEstimate;
using kvplan::OllamaVersion;

namespace {

/// format.HumanBytes2: %.1f of GiB, MiB or KiB, "%d B" below.
std::string hb2(std::uint64_t b) {
  if (b >= GiB) return fmt::format("{:.1f} GiB", static_cast<double>(b) / GiB);
  if (b >= MiB) return fmt::format("{:.1f} MiB", static_cast<double>(b) / MiB);
  if (b >= 1024) return fmt::format("{:.1f} KiB", static_cast<double>(b) / 1024);
  return fmt::format("{} B", b);
}

/// Free memory as the log prints it ("22.0 GiB"), read back as Go's float: int(22.0 * GiB).
std::uint64_t gib(double printed) { return static_cast<std::uint64_t>(printed * static_cast<double>(GiB)); }

std::vector<OllamaDevice> cards(std::vector<double> free_gib) {
  std::vector<OllamaDevice> out;
  for (const double f : free_gib) {
    OllamaDevice d;
    d.free_bytes = d.total_bytes = gib(f);
    out.push_back(d);
  }
  return out;
}

OllamaVersion version(const char* text) { return kvplan::parse_ollama_version(text, "--ollama-version"); }

kvplan::ModelSpec tag(const char* name) { return kvplan::load_ollama_tag(name, kvplan::builtin_models()); }

OllamaEstimate estimate(const char* model, std::vector<OllamaDevice> gpus, std::uint64_t ctx_total, std::uint32_t parallel,
                        const char* ver, std::int64_t num_gpu = -1, const char* kv = "", std::uint64_t overhead = 0) {
  const kvplan::ModelSpec spec = tag(model);
  return kvplan::estimate_gpu_layers(kvplan::ollama_model_view(spec), gpus, ctx_total, parallel, 512, num_gpu, kv, overhead,
                                     version(ver));
}

std::string list(const std::vector<std::uint64_t>& bytes) {
  std::string out;
  for (const std::uint64_t b : bytes) out += (out.empty() ? "" : " ") + hb2(b);
  return "[" + out + "]";
}

}  // namespace

TEST_CASE("O1: Llama-3.x-70B Q8_0 on 4 GPUs, v0.5.12 (msg=offload, server.go:130)", "[ollama]") {
  // num_ctx 64000, batch 512, FA on with the default cache type (f16), 4 GPUs of 22.0 GiB free.
  const OllamaEstimate e = estimate("llama3.3:70b-q8_0", cards({22.0, 22.0, 22.0, 22.0}), 64000, 1, "0.5.12");
  CHECK(e.layers_model == 81);
  CHECK(e.layers == 44);
  CHECK(e.layers_per_gpu == std::vector<std::uint32_t>{11, 11, 11, 11});
  CHECK(hb2(e.required_full) == "127.4 GiB");
  CHECK(hb2(e.required_partial) == "87.1 GiB");
  CHECK(hb2(e.kv_total) == "19.5 GiB");
  CHECK(list(e.allocations) == "[21.8 GiB 21.8 GiB 21.8 GiB 21.8 GiB]");
  CHECK(hb2(e.weights_total) == "87.3 GiB");  // to v0.6.0 the weights include the cache
  CHECK(hb2(e.weights_repeating) == "86.2 GiB");
  CHECK(hb2(e.weights_nonrepeating) == "1.0 GiB");
  CHECK(hb2(e.graph_full) == "8.2 GiB");
  CHECK(hb2(e.graph_partial) == "8.2 GiB");
  // The runner line: --n-gpu-layers 44 --tensor-split 11,11,11,11; llama.cpp then puts the output
  // layer and blocks 37-79 on the GPUs, 11 slots on each (split points 0.25, 0.5, 0.75, 1.0).
  kvplan::OllamaOptions options;
  options.version = version("0.5.12");
  options.flash_attention = true;
  const kvplan::OllamaResult r =
      kvplan::plan_ollama(tag("llama3.3:70b-q8_0"), cards({22.0, 22.0, 22.0, 22.0}), options, 64000, 1u);
  CHECK(r.gpu_layers == 44);
  CHECK(r.flash_attention == "on");
  REQUIRE(r.llama.devices.size() == 4);
  for (const kvplan::LlamaCppDevice& d : r.llama.devices) CHECK(d.layers + (d.output ? 1 : 0) == 11);
  CHECK(r.partly_on_cpu);
}

TEST_CASE("O2, O3: gemma3:12b with its projector on the output layer, v0.9.3 - v0.11 (server.go:175)", "[ollama]") {
  // O2: num_ctx 2048, num_gpu 49, 10.9 GiB free: the 1.6 GiB last layer (output + projector) does not fit.
  const OllamaEstimate o2 = estimate("gemma3:12b", cards({10.9}), 2048, 1, "0.10.0", 49);
  CHECK(o2.layers_model == 49);
  CHECK(o2.layers == 48);
  CHECK(hb2(o2.required_full) == "11.0 GiB");
  CHECK(hb2(o2.required_partial) == "8.5 GiB");
  CHECK(hb2(o2.kv_total) == "608.0 MiB");
  CHECK(list(o2.allocations) == "[8.5 GiB]");
  CHECK(hb2(o2.weights_total) == "6.8 GiB");
  CHECK(hb2(o2.weights_repeating) == "6.0 GiB");
  CHECK(hb2(o2.weights_nonrepeating) == "787.5 MiB");
  CHECK(hb2(o2.graph_full) == "519.5 MiB");
  CHECK(hb2(o2.graph_partial) == "1.3 GiB");
  CHECK(hb2(o2.projector_weights) == "795.9 MiB");
  CHECK(hb2(o2.projector_graph) == "1.0 GiB");
  // O3: num_ctx 8192 on 11.1 GiB free: 8 global layers x 8192 + 40 sliding layers x (1024 + 512).
  const OllamaEstimate o3 = estimate("gemma3:12b", cards({11.1}), 8192, 1, "0.10.0");
  CHECK(o3.layers == 48);
  CHECK(hb2(o3.required_full) == "11.4 GiB");
  CHECK(hb2(o3.required_partial) == "8.9 GiB");
  CHECK(hb2(o3.kv_total) == "992.0 MiB");
  CHECK(list(o3.allocations) == "[8.9 GiB]");
  CHECK(hb2(o3.weights_total) == "6.8 GiB");
  CHECK(hb2(o3.graph_full) == "519.5 MiB");
  CHECK(hb2(o3.graph_partial) == "1.3 GiB");
}

TEST_CASE("O4: gemma3:12b on the CPU library, v0.7.0 - v0.9.2: MinimumMemory 0, partial 0 B", "[ollama]") {
  OllamaDevice cpu;
  cpu.cpu = true;
  cpu.minimum_bytes = 0;
  cpu.free_bytes = cpu.total_bytes = gib(29.5);
  // num_ctx 4096 x parallel 2 (the default of v0.6.7 - v0.9.6) = 8192.
  const OllamaEstimate e = estimate("gemma3:12b", {cpu}, 8192, 2, "0.9.0");
  CHECK(e.layers == 0);
  CHECK(e.layers_model == 49);
  CHECK(hb2(e.required_full) == "10.5 GiB");
  CHECK(hb2(e.required_partial) == "0 B");
  CHECK(list(e.allocations) == "[10.5 GiB]");  // the CPU device's allocation is still logged
  CHECK(hb2(e.kv_total) == "1.3 GiB");
  CHECK(hb2(e.weights_total) == "6.8 GiB");
  CHECK(hb2(e.graph_full) == "519.5 MiB");
  CHECK(hb2(e.graph_partial) == "1.3 GiB");
  CHECK(hb2(e.projector_weights) == "795.9 MiB");
  CHECK(hb2(e.projector_graph) == "1.0 GiB");
}

TEST_CASE("O5: qwen2 72B Q4_K_S on ROCm, v0.2.0 - v0.3.9: the k-quant fallback of ffn_down", "[ollama]") {
  // dolphin-qwen2:72b-v2.9.2-q4_k_s has Qwen2-72B's shapes; 29568 % 256 != 0, so ffn_down's
  // Q4_K / Q5_K fall back to Q5_0 / Q5_1 (llama-quant.cpp).
  const OllamaEstimate e = estimate("qwen2.5:72b-q4_K_S", cards({24.0}), 2048, 1, "0.3.0");
  CHECK(e.layers_model == 81);
  CHECK(e.layers == 43);
  CHECK(hb2(e.required_full) == "43.1 GiB");
  CHECK(hb2(e.required_partial) == "23.7 GiB");
  CHECK(hb2(e.kv_total) == "640.0 MiB");
  CHECK(list(e.allocations) == "[23.7 GiB]");
  CHECK(hb2(e.weights_total) == "39.9 GiB");
  CHECK(hb2(e.weights_repeating) == "38.9 GiB");
  CHECK(hb2(e.weights_nonrepeating) == "974.6 MiB");
  CHECK(hb2(e.graph_full) == "313.0 MiB");
  CHECK(hb2(e.graph_partial) == "1.3 GiB");
}

TEST_CASE("O6: llama3.2:3b, v0.5.0 - v0.5.11: the automatic parallel 4 fits whole", "[ollama]") {
  const kvplan::ModelSpec spec = tag("llama3.2:3b");
  kvplan::OllamaOptions options;
  options.version = version("0.5.7");
  const std::vector<OllamaDevice> gpus = cards({78.6});
  const kvplan::OllamaResult r = kvplan::plan_ollama(spec, gpus, options, 2048, std::nullopt);
  REQUIRE(r.estimate);
  const OllamaEstimate& e = *r.estimate;
  CHECK(r.parallel == 4);  // defaultParallel 4 of v0.2.0 - v0.6.6, tried first and fitting
  // The runner line: --ctx-size 8192 --batch-size 512 --n-gpu-layers 29 --parallel 4.
  CHECK(r.llama.n_ctx == 8192);
  CHECK(r.llama.n_seq_max == 4);
  CHECK(r.gpu_layers == 29);
  CHECK(list(e.allocations) == "[3.7 GiB]");
  CHECK(e.layers == 29);
  CHECK(hb2(e.required_full) == "3.7 GiB");
  CHECK(hb2(e.required_partial) == "3.7 GiB");
  CHECK(hb2(e.kv_total) == "896.0 MiB");
  CHECK(hb2(e.weights_total) == "2.4 GiB");
  CHECK(hb2(e.weights_repeating) == "2.1 GiB");
  CHECK(hb2(e.weights_nonrepeating) == "308.2 MiB");
  CHECK(hb2(e.graph_full) == "424.0 MiB");
  CHECK(hb2(e.graph_partial) == "570.7 MiB");
  CHECK_FALSE(r.partly_on_cpu);
  // llama.cpp's real cache for -c 8192 -np 4: 28 layers x 8 KV heads x 128 x 2 B x 2 (K, V) x 8192 cells.
  CHECK(r.llama.kv_bytes == 28ull * 8 * 128 * 2 * 2 * 8192);
}

TEST_CASE("O7: a Qwen2.5-14B-shaped Q4_K_M (deepseek-r1:14b), v0.5.x, on an RTX 4080", "[ollama]") {
  // The kv 384 MiB fixes num_ctx 2048 x parallel 1 (the log does not print the setting).
  const OllamaEstimate e = estimate("qwen2.5:14b", cards({15.4}), 2048, 1, "0.5.7");
  CHECK(e.layers == 49);
  CHECK(hb2(e.required_full) == "9.2 GiB");
  CHECK(hb2(e.required_partial) == "9.2 GiB");
  CHECK(hb2(e.kv_total) == "384.0 MiB");
  CHECK(hb2(e.weights_total) == "7.7 GiB");
  CHECK(hb2(e.weights_repeating) == "7.1 GiB");
  CHECK(hb2(e.weights_nonrepeating) == "609.1 MiB");
  CHECK(list(e.allocations) == "[9.2 GiB]");
  CHECK(hb2(e.graph_full) == "307.0 MiB");
  CHECK(hb2(e.graph_partial) == "916.1 MiB");
}

TEST_CASE("O8, O9: deepseek-r1:671b, v0.5.x: the round robin over 10 RTX 3090s, and 3 layers on one GPU", "[ollama]") {
  // O8: free 23.1 GiB and 9 x 23.4 GiB; EstimateGPULayers tries GPU i % j for block i.
  const OllamaEstimate o8 = estimate("deepseek-r1:671b", cards({23.1, 23.4, 23.4, 23.4, 23.4, 23.4, 23.4, 23.4, 23.4, 23.4}),
                                     2048, 1, "0.5.7");
  CHECK(o8.layers_model == 62);
  CHECK(o8.layers == 33);
  CHECK(o8.layers_per_gpu == std::vector<std::uint32_t>{4, 4, 4, 3, 3, 3, 3, 3, 3, 3});
  CHECK(hb2(o8.kv_total) == "9.5 GiB");
  CHECK(hb2(o8.required_partial) == "217.4 GiB");
  CHECK(hb2(o8.required_full) == "416.8 GiB");
  // O9: one GPU of 6.9 GiB free.
  const OllamaEstimate o9 = estimate("deepseek-r1:671b", cards({6.9}), 2048, 1, "0.5.7");
  CHECK(o9.layers == 3);
  CHECK(hb2(o9.kv_total) == "9.5 GiB");
  CHECK(hb2(o9.required_full) == "415.7 GiB");
  CHECK(hb2(o9.required_partial) == "3.4 GiB");
  CHECK(list(o9.allocations) == "[3.4 GiB]");
  CHECK(hb2(o9.weights_total) == "385.0 GiB");
  CHECK(hb2(o9.weights_repeating) == "384.3 GiB");
  CHECK(hb2(o9.weights_nonrepeating) == "725.0 MiB");
  CHECK(hb2(o9.graph_full) == "654.0 MiB");
  CHECK(hb2(o9.graph_partial) == "1019.5 MiB");
}

TEST_CASE("O10: gpt-oss:20b, v0.11.3: num_ctx raised to 8192, one layer on a 3.6 GiB GPU", "[ollama]") {
  const kvplan::ModelSpec spec = tag("gpt-oss:20b");
  kvplan::OllamaOptions options;
  options.version = version("0.11.3");
  const kvplan::OllamaResult r = kvplan::plan_ollama(spec, cards({3.6}), options, 4096, 1u);
  CHECK(r.num_ctx == 8192);  // the gpt-oss minimum; no low-VRAM exemption before v0.11.4
  REQUIRE(r.estimate);
  CHECK(r.estimate->layers_model == 25);
  CHECK(r.estimate->layers == 1);
  CHECK(hb2(r.estimate->required_partial) == "3.4 GiB");
  CHECK(hb2(r.estimate->required_full) == "14.9 GiB");
  CHECK(hb2(r.estimate->kv_total).rfind("30", 0) == 0);  // the log is cut after "30"; 300.0 MiB
  CHECK(r.partly_on_cpu);
  CHECK_FALSE(r.exact == false);  // the blob's types are assumed: the tag's weights say "estimate"
  CHECK(spec.weights_source.rfind("estimate", 0) == 0);
}

TEST_CASE("O11, O12: runner-measured memory (E2) reproduces only in part", "[ollama]") {
  // O11 (~v0.12, Ollama engine, 48-block qwen3moe): the cache per layer 16,777,216 B is 8192 cells
  // x 4 KV heads x 128 x 2 B x 2 (K, V) at num_ctx 8192, which the log does not print; the block
  // weights and the compute graph are what the runner measured, so they are not asserted. The
  // cache rule itself is the llama.cpp profile's, checked here on that geometry:
  kvplan::ModelSpec moe;
  moe.id = moe.name = "qwen3moe-48";
  moe.architecture = "qwen3moe";
  moe.attention_heads = 32;
  moe.weight_dtype = &kvplan::parse_weight_dtype("bf16");
  moe.params = 1;
  for (int i = 0; i < 48; ++i) moe.layers.push_back({kvplan::LayerKind::full, 4, 128, 128});
  kvplan::LlamaCppSettings s;
  s.n_ctx = 8192;
  const kvplan::LlamaCppResult r = kvplan::plan_llamacpp(moe, s);
  REQUIRE(r.caches.size() == 1);
  CHECK((r.caches[0].k_bytes + r.caches[0].v_bytes) / 48 == 16'777'216);
  // O12 (v0.11.5 - v0.11.10, OLLAMA_NEW_ESTIMATES): the model and num_ctx are not in the excerpt;
  // BackendMemory.Log prints runner-measured sizes, so there is nothing to reproduce.
  SUCCEED("O12 cannot be matched: its model is unknown");
}

TEST_CASE("O13, O14: gemma3:27b, v0.6.1 - v0.6.2: no sliding-window estimate yet, the projector on GPU 0", "[ollama]") {
  // The logs say v0.6.0 - v0.6.2 (server.go:138); weights.total without the cache dates them to
  // v0.6.1 or v0.6.2 (commit 033cec232). O13: 11.0 GiB free, OLLAMA_GPU_OVERHEAD 1 KiB; kv 496 MiB = q8_0 at num_ctx 2048 (needs flash
  // attention; f16 at 1024 prints the same).
  const OllamaEstimate o13 = estimate("gemma3:27b", cards({11.0}), 2048, 1, "0.6.2", -1, "q8_0", 1024);
  CHECK(o13.layers_model == 63);
  CHECK(o13.layers == 28);
  CHECK(hb2(o13.required_full) == "20.5 GiB");
  CHECK(hb2(o13.required_partial) == "10.8 GiB");
  CHECK(hb2(o13.kv_total) == "496.0 MiB");
  CHECK(list(o13.allocations) == "[10.8 GiB]");
  CHECK(hb2(o13.weights_total) == "14.3 GiB");
  CHECK(hb2(o13.weights_repeating) == "14.3 GiB");
  CHECK(hb2(o13.weights_nonrepeating) == "1.1 GiB");
  CHECK(hb2(o13.graph_full) == "522.5 MiB");
  CHECK(hb2(o13.graph_partial) == "1.6 GiB");
  CHECK(hb2(o13.projector_weights) == "795.9 MiB");
  CHECK(hb2(o13.projector_graph) == "1.0 GiB");
  const OllamaEstimate f16 = estimate("gemma3:27b", cards({11.0}), 1024, 1, "0.6.2", -1, "", 1024);
  CHECK(hb2(f16.kv_total) == "496.0 MiB");
  CHECK(f16.layers == 28);
  // O14: ROCm, 32.0 GiB, num_ctx 16384 (inferred from the kv figure), everything on the GPU.
  // The scheduler printed the free memory in bytes: available=34336186368.
  std::vector<OllamaDevice> rocm = cards({32.0});
  rocm[0].free_bytes = 34'336'186'368;
  const OllamaEstimate o14 = estimate("gemma3:27b", rocm, 16384, 1, "0.6.2");
  CHECK(o14.layers == 63);
  CHECK(hb2(o14.kv_total) == "7.8 GiB");
  CHECK(hb2(o14.required_full) == "26.8 GiB");
  CHECK(hb2(o14.required_partial) == "26.8 GiB");
  CHECK(list(o14.allocations) == "[26.8 GiB]");
  CHECK(hb2(o14.weights_total) == "14.3 GiB");
}

TEST_CASE("O15: gemma3:12b, v0.6.5: every layer fits, the projector in GPU 0's overhead", "[ollama]") {
  const OllamaEstimate e = estimate("gemma3:12b", cards({11.5}), 2048, 1, "0.6.5");
  CHECK(e.layers == 49);
  CHECK(hb2(e.kv_total) == "608.0 MiB");
  CHECK(hb2(e.required_full) == "10.3 GiB");
  CHECK(hb2(e.required_partial) == "10.3 GiB");
}

TEST_CASE("Ollama's defaults by version: num_ctx, parallel, the VRAM tier", "[ollama]") {
  std::vector<OllamaDevice> one = cards({24.0});
  CHECK(kvplan::ollama_default_num_ctx(version("0.5.12"), one, 0) == 2048);
  CHECK(kvplan::ollama_default_num_ctx(version("0.6.7"), one, 0) == 4096);
  CHECK(kvplan::ollama_default_num_ctx(version("0.15.4"), one, 0) == 4096);
  // v0.15.5+: total VRAM - overhead: 24 GiB >= 23 GiB -> 32768; 48 GiB >= 47 -> 262144; 16 GiB -> 4096.
  CHECK(kvplan::ollama_default_num_ctx(version("0.15.5"), one, 0) == 32768);
  CHECK(kvplan::ollama_default_num_ctx(version("latest"), one, 2 * GiB) == 4096);  // 22 GiB < 23 GiB
  CHECK(kvplan::ollama_default_num_ctx(version("latest"), cards({24.0, 24.0}), 0) == 262144);
  CHECK(kvplan::ollama_default_num_ctx(version("latest"), cards({16.0}), 0) == 4096);
  // Parallel: 2 then 1 in v0.6.7 - v0.9.6; 1 from v0.10.0.
  kvplan::OllamaOptions options;
  options.version = version("0.9.0");
  const kvplan::ModelSpec spec = tag("llama3.1:8b");
  CHECK(kvplan::plan_ollama(spec, cards({24.0}), options, 4096, std::nullopt).parallel == 2);
  CHECK(kvplan::plan_ollama(spec, cards({6.0}), options, 4096, std::nullopt).parallel == 1);  // 2 does not fit whole
  options.version = version("0.10.0");
  CHECK(kvplan::plan_ollama(spec, cards({24.0}), options, 4096, std::nullopt).parallel == 1);
}

TEST_CASE("OLLAMA_KV_CACHE_TYPE: quantized only with flash attention, else silently f16", "[ollama]") {
  const kvplan::ModelSpec spec = tag("llama3.1:8b");
  kvplan::OllamaOptions options;
  options.kv_cache_type = "q8_0";
  options.version = version("0.9.0");
  CHECK(kvplan::plan_ollama(spec, cards({24.0}), options, 8192, 1u).kv_type == "f16");  // E1: FA not enabled
  options.flash_attention = true;
  const kvplan::OllamaResult on = kvplan::plan_ollama(spec, cards({24.0}), options, 8192, 1u);
  CHECK(on.kv_type == "q8_0");
  // q8_0: 34 B per 32 values: 32 layers x 8 x 128 x 2 (K, V) x 8192 cells x 34 / 32.
  CHECK(on.llama.kv_bytes == 32ull * 8 * 128 * 2 * 8192 * 34 / 32);
  options.version = version("0.20.0");  // E3: only an explicit OLLAMA_FLASH_ATTENTION=1 counts
  options.flash_attention.reset();
  CHECK(kvplan::plan_ollama(spec, cards({24.0}), options, 8192, 1u).kv_type == "f16");
  options.version = version("latest");  // E4: passed to llama-server unchecked
  CHECK(kvplan::plan_ollama(spec, cards({24.0}), options, 8192, 1u).kv_type == "q8_0");
  CHECK_THROWS_AS(kvplan::parse_ollama_kv_type("q5_1", "OLLAMA_KV_CACHE_TYPE"), kvplan::Error);
}

TEST_CASE("tags: llama.cpp's Q4_K_M mix from ggml's block sizes", "[ollama]") {
  // llama3.1:8b: attn_q/k/output, ffn_gate/up Q4_K (144 B / 256); attn_v and ffn_down Q6_K (210 B
  // / 256) on use_more_bits layers (i < 4, i >= 28, (i - 4) % 3 == 2: 16 of 32); norms F32;
  // output Q6_K, token_embd Q4_K. Block 0 (a Q6_K layer):
  const kvplan::ModelSpec spec = tag("llama3.1:8b");
  const std::uint64_t q4 = 144, q6 = 210, e = 4096, ff = 14336;
  const std::uint64_t block0 = (e * e + e * 1024 + e * e + 2 * e * ff) / 256 * q4 + (e * 1024 + ff * e) / 256 * q6 + 2 * e * 4;
  CHECK(spec.layer_weights_bytes[0] == block0);
  const std::uint64_t block5 = (e * e + e * 1024 + e * e + 2 * e * ff + e * 1024 + ff * e) / 256 * q4 + 2 * e * 4;  // (5-4)%3 = 1
  CHECK(spec.layer_weights_bytes[5] == block5);
  CHECK(spec.file->token_embd_bytes == 128256 * e / 256 * q4);
  CHECK(spec.weights_source.rfind("estimate", 0) != 0);
  CHECK(kvplan::load_model("qwen3:32b-q4_K_M").id == "qwen3:32b-q4_K_M");
  try {
    kvplan::load_model("llama3.1:8b-q3_K_L");
    FAIL("an unknown quantization was sized");
  } catch (const kvplan::Error& error) {
    CHECK(error.code() == kvplan::ExitCode::unsupported_architecture);
  }
}

TEST_CASE("the Ollama profile: a row that spills to system RAM says so and does not fit", "[ollama]") {
  const kvplan::ModelSpec spec = tag("llama3.1:70b");
  kvplan::PlanRequest request;
  request.runtime = "ollama";
  request.contexts = {8192};
  kvplan::GpuSpec card;
  card.id = "24GiB";
  card.memory_bytes = 24 * GiB;
  card.memory_basis = "given";
  const kvplan::Plan plan = kvplan::make_plan(spec, card, request);
  const kvplan::Row& row = plan.rows.front();
  CHECK_FALSE(row.fits);
  bool spilled = false;
  for (const kvplan::Finding& f : row.findings) spilled = spilled || (f.code == "partly_on_cpu" && f.blocking);
  CHECK(spilled);
  REQUIRE(row.per_gpu.size() == 1);
  CHECK(row.per_gpu.front().fits);  // what Ollama puts on the GPU fits; the rest is in system RAM
}

TEST_CASE("kvplan --runtime ollama: flags, the OLLAMA_* variables and a Modelfile", "[ollama][cli]") {
  using kvplan::testing::run_kvplan;
  // The environment stands in for flags not given.
  const auto env = run_kvplan("--runtime ollama --model llama3.1:8b --gpu 4090 --format json",
                              "OLLAMA_CONTEXT_LENGTH=16384 OLLAMA_NUM_PARALLEL=2 OLLAMA_KV_CACHE_TYPE=q8_0 "
                              "OLLAMA_FLASH_ATTENTION=1");
  INFO(env.err);
  REQUIRE(env.exit_code == 0);
  const nlohmann::json j = nlohmann::json::parse(env.out);
  CHECK(j["rows"][0]["ctx"] == 16384);
  CHECK(j["rows"][0]["batch"] == 2);
  CHECK(j["ollama"]["rows"][0]["kv_cache_type"] == "q8_0");
  CHECK(j["ollama"]["rows"][0]["llamacpp"]["n_ctx"] == 32768);
  // A flag beats its variable.
  const auto flag = run_kvplan("--runtime ollama --model llama3.1:8b --gpu 4090 --num-ctx 4096 --format json",
                               "OLLAMA_CONTEXT_LENGTH=16384");
  REQUIRE(flag.exit_code == 0);
  CHECK(nlohmann::json::parse(flag.out)["rows"][0]["ctx"] == 4096);
  // Without flash attention (latest: auto) the quantized type passes; at 0.9 it falls back.
  const auto old = run_kvplan("--runtime ollama --model llama3.1:8b --gpu 4090 --ollama-version 0.9.0 --format json",
                              "OLLAMA_KV_CACHE_TYPE=q4_0");
  REQUIRE(old.exit_code == 0);
  CHECK(nlohmann::json::parse(old.out)["ollama"]["rows"][0]["kv_cache_type"] == "f16");
  // OLLAMA_* variables do not reach another runtime.
  CHECK(run_kvplan("--runtime vllm --model llama3.1-8b --gpu h100", "OLLAMA_NUM_PARALLEL=4").exit_code == 0);
  // A Modelfile's PARAMETER num_ctx and num_gpu.
  kvplan::testing::TempDir dir;
  const std::string path = dir.file("Modelfile");
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    REQUIRE(f);
    std::fputs("FROM llama3.1:8b\nPARAMETER num_ctx 6144\nPARAMETER num_gpu 20\n", f);
    std::fclose(f);
  }
  const auto mf = run_kvplan("--runtime ollama --model llama3.1:8b --gpu 4090 --modelfile " + path + " --format json");
  INFO(mf.err);
  REQUIRE(mf.exit_code == 0);
  const nlohmann::json m = nlohmann::json::parse(mf.out);
  CHECK(m["rows"][0]["ctx"] == 6144);
  CHECK(m["ollama"]["rows"][0]["gpu_layers"] == 20);
  CHECK(m["rows"][0]["fits"] == false);  // 13 of 33 layers stay in system RAM
  // Refusals name the setting.
  kvplan::testing::check_refused(run_kvplan("--runtime ollama --model llama3.1:8b --gpu 4090 --kv-cache-type fp8"),
                                 "--kv-cache-type");
  kvplan::testing::check_refused(run_kvplan("--runtime ollama --model llama3.1:8b --gpu 4090", "OLLAMA_FLASH_ATTENTION=maybe"),
                                 "OLLAMA_FLASH_ATTENTION");
  kvplan::testing::check_refused(run_kvplan("--runtime ollama --model llama3.1:8b --gpu 4090 --ollama-version 0.1.30"),
                                 "--ollama-version", 3);
}

TEST_CASE("E3 buildLayout by hand: layers from the last one down, the output layer dropped when not all fit", "[ollama]") {
  // 8 blocks + output, 9 GiB without a tensor list: 1 GiB each (an even split, labelled an
  // estimate). qwen3 has no GraphSize formula: kv per layer 1024 x (128 + 128) x 8 x 2 B = 4 MiB,
  // graph = heads / heads_kv x kv_total / 6 = 32 MiB / 6 = 5,592,405 B.
  kvplan::ModelSpec m;
  m.id = m.name = "hand-built";
  m.architecture = "qwen3";
  m.attention_heads = 8;
  m.params = 1;
  m.weight_dtype = &kvplan::parse_weight_dtype("bf16");
  m.weights_bytes = 9 * GiB;
  m.max_context = 4096;
  for (int i = 0; i < 8; ++i) m.layers.push_back({kvplan::LayerKind::full, 8, 128, 128});
  kvplan::OllamaOptions options;
  options.version = version("0.20.0");
  // 6 GiB free - blk.0 + kv[0] (1 GiB + 4 MiB) - 457 MiB - the graph = 4.547 GiB for layers. The
  // output (1 GiB) and blocks 7, 6, 5 fit (4.012 GiB) but block 4 does not; without the output
  // layer, blocks 7 to 4 (4.016 GiB) fit: 4 layers.
  const kvplan::OllamaResult r = kvplan::plan_ollama(m, cards({6.0}), options, 1024, 1u);
  REQUIRE(r.estimate);
  CHECK(r.estimate->graph_partial == 33'554'432 / 6);
  CHECK(r.estimate->kv_total == 8 * 4 * MiB);
  CHECK(r.gpu_layers == 4);
  CHECK(r.partly_on_cpu);
  CHECK_FALSE(r.exact);
  // 7 GiB: blocks 7 to 3 (5.020 GiB of 5.547): 5 layers.
  CHECK(kvplan::plan_ollama(m, cards({7.0}), options, 1024, 1u).gpu_layers == 5);
}
