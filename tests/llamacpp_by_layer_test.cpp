// Placing a model a layer at a time (sum_by_layer) and searching -ngl by the layers' loads
// (LlamaCppLayerLoads, Ollama's --fit on one GPU) are shortcuts for speed (docs/performance.md,
// kvplan fit): every figure must be the one the tensor-by-tensor placement and a full plan give.
// Checked over every GGUF blob kvplan sizes (the Ollama tags of the catalog), every -ngl, one and
// two GPUs, and by hand on a small two-file model.

#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include "engines/llamacpp/rules.h"
#include "kvplan/catalog.h"
#include "kvplan/dtype.h"
#include "kvplan/error.h"
#include "kvplan/fit.h"

using namespace kvplan;

namespace {

/// The facts with the layer sums withheld: plan_llamacpp then places tensor by tensor, as it did
/// before the sums (and still does where a sum could pass 64 bits).
LlamaCppModelFacts tensor_by_tensor(LlamaCppModelFacts facts) {
  facts.by_layer = LlamaCppLayerWeights{};
  facts.by_layer.from_tensors = facts.tensors.size();  // "summed", but not exact
  return facts;
}

void check_same(const LlamaCppResult& a, const LlamaCppResult& b) {
  CHECK(a.model_gpu_bytes == b.model_gpu_bytes);
  CHECK(a.model_host_bytes == b.model_host_bytes);
  CHECK(a.model_host_layer_bytes == b.model_host_layer_bytes);
  CHECK(a.model_host_exact == b.model_host_exact);
  CHECK(a.gpu_cache_bytes == b.gpu_cache_bytes);
  CHECK(a.host_cache_bytes == b.host_cache_bytes);
  REQUIRE(a.devices.size() == b.devices.size());
  for (std::size_t i = 0; i < a.devices.size(); ++i) {
    CHECK(a.devices[i].layers == b.devices[i].layers);
    CHECK(a.devices[i].output == b.devices[i].output);
    CHECK(a.devices[i].weights_bytes == b.devices[i].weights_bytes);
    CHECK(a.devices[i].cache_bytes == b.devices[i].cache_bytes);
    CHECK(a.devices[i].state_bytes == b.devices[i].state_bytes);
  }
  CHECK(a.rules == b.rules);
}

/// Every GGUF variant kvplan sizes tensor by tensor (the catalog's Ollama tags).
std::vector<FitVariant> gguf_variants() {
  std::vector<FitVariant> out;
  for (const ModelSpec& model : builtin_models().models)
    for (FitVariant& variant : fit_variants(model, "llama.cpp"))
      if (variant.format.kind == "gguf") out.push_back(std::move(variant));
  return out;
}

LlamaCppSettings settings(std::int64_t ngl, std::vector<std::uint64_t> free = {}, std::vector<float> split = {}) {
  LlamaCppSettings s;
  s.n_ctx = 32768;
  s.n_parallel = 2;
  s.n_gpu_layers = ngl;
  s.device_free = std::move(free);
  s.tensor_split = std::move(split);
  return s;
}

}  // namespace

TEST_CASE("llama.cpp by layer: the tensor-by-tensor figures for every GGUF blob, -ngl and split", "[llamacpp]") {
  const std::vector<FitVariant> variants = gguf_variants();
  REQUIRE(variants.size() >= 40);  // 16 Ollama tags, most with several quantizations
  for (const FitVariant& variant : variants) {
    const ModelSpec& spec = variant.spec;
    const LlamaCppModelFacts facts = llamacpp_facts(spec);
    REQUIRE(facts.by_layer.exact);
    const LlamaCppModelFacts slow = tensor_by_tensor(facts);
    const std::int64_t offloadable = static_cast<std::int64_t>(spec.layers.size() + spec.mtp_layers) + 1;
    for (const std::int64_t ngl : {std::int64_t{-1}, std::int64_t{0}, std::int64_t{1}, offloadable / 2, offloadable - 1, offloadable}) {
      for (int split = 0; split < 3; ++split) {
        INFO(spec.id << " " << variant.format.name << " -ngl " << ngl << " split " << split);
        const LlamaCppSettings s = split == 0   ? settings(ngl)
                                   : split == 1 ? settings(ngl, {24 * GiB, 12 * GiB})
                                                : settings(ngl, {24 * GiB, 24 * GiB}, {3.0f, 1.0f});
        check_same(plan_llamacpp(spec, s, facts), plan_llamacpp(spec, s, slow));
      }
    }
  }
}

TEST_CASE("llama.cpp by layer: the loads give each -ngl's GPU bytes on one GPU", "[llamacpp]") {
  std::vector<ModelSpec> models;
  for (const FitVariant& variant : gguf_variants()) models.push_back(variant.spec);
  // Without a tensor list: the catalog's checkpoints (an even split, or per-layer sizes when known).
  for (const char* id : {"llama3.1-8b", "qwen3-32b", "gemma3-27b", "gpt-oss-20b"}) models.push_back(*builtin_models().find(id));
  for (const ModelSpec& spec : models) {
    const LlamaCppModelFacts facts = llamacpp_facts(spec);
    const std::int64_t offloadable = static_cast<std::int64_t>(spec.layers.size() + spec.mtp_layers) + 1;
    LlamaCppLayerLoads loads;
    const LlamaCppResult full = plan_llamacpp(spec, settings(offloadable), facts, &loads);
    REQUIRE(loads.usable);
    REQUIRE(loads.suffix.size() == static_cast<std::size_t>(offloadable) + 1);
    for (std::int64_t ngl = 0; ngl <= offloadable; ++ngl) {
      INFO(spec.id << " -ngl " << ngl);
      const LlamaCppResult r = plan_llamacpp(spec, settings(ngl), facts);
      REQUIRE(r.devices.size() == 1);
      CHECK(loads.gpu_bytes(ngl) == r.devices[0].weights_bytes + r.devices[0].cache_bytes);
    }
    CHECK(loads.gpu_bytes(offloadable) == full.devices[0].weights_bytes + full.devices[0].cache_bytes);
  }
  // Two GPUs: the loads do not say which GPU a layer lands on.
  const ModelSpec& model = *builtin_models().find("llama3.1-8b");
  LlamaCppLayerLoads loads;
  (void)plan_llamacpp(model, settings(-1, {24 * GiB, 24 * GiB}), llamacpp_facts(model), &loads);
  CHECK(!loads.usable);
}

TEST_CASE("llama.cpp by layer: a two-part file by hand", "[llamacpp]") {
  ModelSpec spec;
  spec.id = spec.name = "hand-built";
  spec.architecture = "llama";
  spec.attention_heads = 4;
  spec.params = 1'000'000;
  spec.weight_dtype = &parse_weight_dtype("bf16");
  for (int i = 0; i < 2; ++i) {
    LayerSpec layer;
    layer.kv_heads = 1;
    layer.k_head_dim = 64;
    layer.v_head_dim = 64;
    spec.layers.push_back(layer);
  }
  LlamaCppModelFacts facts;
  facts.n_vocab = 1000;
  // part 0: token_embd [0, 100), blk.0 [100, 150) and an empty blk.0 tensor at 160; part 1: blk.1
  // [0, 70), output [70, 100).
  facts.tensors = {{ModelFileTensor::input, 0, 0, 100}, {0, 0, 100, 50}, {0, 0, 160, 0}, {1, 1, 0, 70},
                   {ModelFileTensor::output, 1, 70, 30}};
  facts.by_layer = sum_by_layer(facts.tensors);
  REQUIRE(facts.by_layer.exact);
  CHECK(facts.by_layer.files == 2);
  CHECK(facts.by_layer.bytes == std::vector<std::uint64_t>{100, 30, 50, 70});  // input, output, blk.0, blk.1

  LlamaCppSettings s = settings(1);  // the output layer alone on the GPU
  const LlamaCppResult r = plan_llamacpp(spec, s, facts);
  CHECK(r.model_gpu_bytes == 30);
  CHECK(r.model_host_layer_bytes == 120);  // blk.0 50 + blk.1 70
  CHECK(r.model_host_bytes == 160 + 70);   // part 0 [0, 160) (the empty tensor ends it), part 1 [0, 70)
  check_same(r, plan_llamacpp(spec, s, tensor_by_tensor(facts)));

  // Cache per layer: K and V of 64 f16 values x 16,384 cells (pad256(32768 / 2)) x 2 streams
  // = 4 MiB each, 8 MiB a layer.
  LlamaCppLayerLoads loads;
  (void)plan_llamacpp(spec, settings(3), facts, &loads);
  REQUIRE(loads.usable);
  CHECK(loads.gpu_bytes(0) == 0);
  CHECK(loads.gpu_bytes(1) == 30);                      // the output layer
  CHECK(loads.gpu_bytes(2) == 30 + 70 + 8 * MiB);       // + blk.1 and its cache
  CHECK(loads.gpu_bytes(3) == 30 + 120 + 16 * MiB);     // every layer
  CHECK(loads.gpu_bytes(9) == loads.gpu_bytes(3));      // more than there are: all of them

  // A sum past 64 bits is not taken by layer: the tensor loop names the figures of the overflow.
  std::vector<ModelFileTensor> huge = {{0, 0, 0, UINT64_MAX / 2 + 1}, {1, 0, 0, UINT64_MAX / 2 + 1}};
  CHECK(!sum_by_layer(huge).exact);
  huge = {{0, 0, UINT64_MAX - 1, 2}};
  CHECK(!sum_by_layer(huge).exact);
  // Nor a layout whose table would be large: 4,003 slots x 41 parts.
  huge = {{4000, 40, 0, 1}};
  CHECK(!sum_by_layer(huge).exact);
  CHECK(sum_by_layer(huge).spans.empty());
}

// plan_llamacpp's shortcuts for one GPU (docs/performance.md, sixth step): the layers read once
// per profile (LlamaCppModelFacts::layout) and each cache summed a run of like layers at a time.
// Every figure must be the layer loop's: a plan that asks for the layers' loads still takes the
// loop, and one given facts without a layout reads the layers itself. Checked over every catalog
// model (dense, sliding, chunked, MLA, hybrid) at several -ngl, -fa and cache types, and on a
// hand-made model whose cache sum passes 64 bits.

namespace {

/// The plan, or the words of what it throws.
struct RunsOutcome {
  std::optional<LlamaCppResult> result;
  std::string error;
};

RunsOutcome runs_outcome(const ModelSpec& model, const LlamaCppSettings& settings, const LlamaCppModelFacts& facts,
                         bool with_loads) {
  RunsOutcome out;
  LlamaCppLayerLoads loads;
  try {
    out.result = plan_llamacpp(model, settings, facts, with_loads ? &loads : nullptr);
  } catch (const Error& error) {
    out.error = error.what();
  }
  return out;
}

void runs_check_same(const RunsOutcome& a, const RunsOutcome& b) {
  REQUIRE(a.error == b.error);
  REQUIRE(a.result.has_value() == b.result.has_value());
  if (!a.result) return;
  const LlamaCppResult& x = *a.result;
  const LlamaCppResult& y = *b.result;
  CHECK(x.kv_bytes == y.kv_bytes);
  CHECK(x.gpu_cache_bytes == y.gpu_cache_bytes);
  CHECK(x.host_cache_bytes == y.host_cache_bytes);
  CHECK(x.recurrent_bytes == y.recurrent_bytes);
  CHECK(x.model_gpu_bytes == y.model_gpu_bytes);
  CHECK(x.compute_estimate_bytes == y.compute_estimate_bytes);
  CHECK(x.rules == y.rules);
  REQUIRE(x.caches.size() == y.caches.size());
  for (std::size_t i = 0; i < x.caches.size(); ++i) {
    CHECK(x.caches[i].role == y.caches[i].role);
    CHECK(x.caches[i].cells == y.caches[i].cells);
    CHECK(x.caches[i].layers == y.caches[i].layers);
    CHECK(x.caches[i].k_bytes == y.caches[i].k_bytes);
    CHECK(x.caches[i].v_bytes == y.caches[i].v_bytes);
    CHECK(x.caches[i].v_row == y.caches[i].v_row);
    CHECK(x.caches[i].gpu_layers == y.caches[i].gpu_layers);
    CHECK(x.caches[i].gpu_bytes == y.caches[i].gpu_bytes);
    CHECK(x.caches[i].host_bytes == y.caches[i].host_bytes);
  }
  REQUIRE(x.devices.size() == y.devices.size());
  for (std::size_t i = 0; i < x.devices.size(); ++i) {
    CHECK(x.devices[i].cache_bytes == y.devices[i].cache_bytes);
    CHECK(x.devices[i].weights_bytes == y.devices[i].weights_bytes);
    CHECK(x.devices[i].state_bytes == y.devices[i].state_bytes);
  }
}

}  // namespace

TEST_CASE("llama.cpp cache runs: every catalog model's caches as the layer loop sums them", "[llamacpp]") {
  const GgmlType& q8_0 = ggml_type_by_name("q8_0");
  std::size_t planned = 0, partly_offloaded = 0;
  for (const ModelSpec& model : builtin_models().models) {
    if (weights_are_quantized_safetensors(model)) {  // not a file llama.cpp loads
      CHECK_THROWS_AS(llamacpp_facts(model), Error);
      continue;
    }
    const LlamaCppModelFacts facts = llamacpp_facts(model);
    LlamaCppModelFacts unread = facts;
    unread.layout = LlamaCppLayout{};  // the plan reads the layers itself
    for (const std::int64_t ngl : {-1, 0, 1, 5, 20}) {
      for (const LlamaCppFlashAttn fa : {LlamaCppFlashAttn::automatic, LlamaCppFlashAttn::off}) {
        for (const GgmlType* type_v : {static_cast<const GgmlType*>(nullptr), &q8_0}) {
          LlamaCppSettings s;
          s.n_ctx = 16384;
          s.n_parallel = 2;
          s.n_gpu_layers = ngl;
          s.flash_attn = fa;
          s.type_k = type_v;
          s.type_v = type_v;
          INFO(model.id << " -ngl " << ngl << " -fa " << to_string(fa) << (type_v ? " q8_0" : " f16"));
          const RunsOutcome by_runs = runs_outcome(model, s, facts, false);
          runs_check_same(by_runs, runs_outcome(model, s, facts, true));
          runs_check_same(by_runs, runs_outcome(model, s, unread, false));
          if (!by_runs.result) continue;
          ++planned;
          for (const LlamaCppKvCache& cache : by_runs.result->caches)
            if (cache.gpu_layers > 0 && cache.gpu_layers < cache.layers) ++partly_offloaded;
        }
      }
    }
  }
  // The comparison ran, and on caches split between host and GPU (where a run is cut at i_gpu_start).
  CHECK(planned > 1000);
  CHECK(partly_offloaded > 100);
}

TEST_CASE("llama.cpp cache runs: a cache sum past 64 bits throws the layer loop's error", "[llamacpp]") {
  // Two full layers of 65,536 KV heads of K width 65,536 and V width 16: K per cell 2^32 x 2 B
  // (f16) = 2^33 B, x 2^30 cells = 2^63 B per layer; V 2^20 x 2 B x 2^30 = 2^51 B. The second
  // layer's K takes the K total to 2^64: the loop's checked sum throws there, and so must the plan
  // that sums by runs.
  ModelSpec model;
  model.id = "runs-overflow";
  model.attention_heads = 65536;
  model.max_context = std::uint64_t{1} << 30;
  model.weights_bytes = 1;
  LayerSpec layer;
  layer.kv_heads = 65536;
  layer.k_head_dim = 65536;
  layer.v_head_dim = 16;
  model.layers = {layer, layer};
  LlamaCppSettings s;
  s.n_ctx = std::uint64_t{1} << 30;
  const LlamaCppModelFacts facts = llamacpp_facts(model);
  const RunsOutcome by_runs = runs_outcome(model, s, facts, false);
  CHECK_FALSE(by_runs.result.has_value());
  CHECK(by_runs.error.find("cache size") != std::string::npos);
  runs_check_same(by_runs, runs_outcome(model, s, facts, true));
}
