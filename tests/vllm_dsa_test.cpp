// DSA models under vLLM (issue #13: "the DSA indexer cache"): DeepSeek-V3.2 and GLM-5's sparse MLA
// keeps, beside each layer's latent, the lightning indexer's keys in a cache of their own
// (model_executor/models/deepseek_v2.py: DeepseekV32IndexerCache, an MLAAttentionSpec of one
// 132-byte head: 128 fp8 values and an fp32 scale), on every layer with an indexer (GLM-5.2: the 21
// "full" ones of 78, as its index_topk_freq 4 and index_skip_topk_offset 3 give them) and on the
// MTP layer. vLLM counts the indexer caches as layers of one UniformTypeKVCacheSpecs group, blocks
// of 64 tokens (platforms/cuda.py); at fp8 the latent is fp8_ds_mla, 656 B (DeepseekV32ForCausalLM
// verify_and_update_config). Checked against a vLLM 0.26 log of a cut-down GLM-5.2 (pocketInfer).

#include <string>

#include <catch2/catch.hpp>

#include "engines/vllm/rules.h"
#include "engines/vllm/speculative.h"
#include "kvplan/error.h"
#include "kvplan/units.h"
#include "loaders/hf_config.h"
#include "support/catalog_entries.h"
#include "support/run_binary.h"
#include "support/vllm_exit_code.h"

using namespace kvplan;
using kvplan::testing::catalog_gpu;
using kvplan::testing::catalog_model;
using kvplan::testing::vllm_plan_exit_code;
using kvplan::testing::source_path;

namespace {

VllmSettings dsa_settings(std::uint32_t tp, std::uint64_t memory, std::uint64_t max_len) {
  VllmSettings settings;
  settings.tensor_parallel = tp;
  settings.kv_cache_memory_bytes = memory;
  settings.max_model_len = max_len;
  return settings;
}

}  // namespace

// DeepSeek-V3.2 at -tp 8 on H200s, 40 GiB = 42,949,672,960 B of cache. bf16: a layer keeps 576 x 2
// = 1,152 B a token of latent and 132 B of indexer keys, so a 64-token block of the 61 layers is
// 64 x 61 x 1,284 = 5,012,736 B: 8,568 blocks (8,568 x 5,012,736 = 42,949,122,048). fp8: the latent
// as fp8_ds_mla, 512 + 512 / 128 x 4 + 64 x 2 = 656 B, a block 64 x 61 x 788 = 3,076,352 B: 13,961
// blocks. The MTP layer adds one of each: 64 x 62 x 1,284 = 5,094,912 B, 8,429 blocks.
TEST_CASE("vLLM DSA: DeepSeek-V3.2's indexer caches beside its latents, one group of 64-token blocks", "[vllm][dsa]") {
  ModelSpec model = catalog_model("deepseek-v3.2");
  const GpuSpec h200 = catalog_gpu("h200");
  VllmSettings settings = dsa_settings(8, 40 * GiB, 163'840);
  VllmResult r = plan_vllm(model, h200, settings);
  REQUIRE(r.groups.size() == 1);
  CHECK(r.groups[0].layers == 122);
  CHECK(r.groups[0].block_size == 64);
  CHECK(r.page_bytes == 5'012'736);
  CHECK(r.num_blocks == 8'568);
  CHECK(r.kv_bytes_per_token == 61 * 1'284);

  settings.kv_dtype = &parse_kv_dtype("fp8", *model.weight_dtype);
  r = plan_vllm(model, h200, settings);
  CHECK(r.page_bytes == 3'076'352);
  CHECK(r.num_blocks == 13'961);
  // vLLM 0.11.0 stored auto as fp8_ds_mla too.
  settings.kv_dtype = nullptr;
  settings.dsa_auto_is_fp8 = true;
  CHECK(plan_vllm(model, h200, settings).page_bytes == 3'076'352);
  settings.dsa_auto_is_fp8 = false;

  model.weights_source = "safetensors total_size (test)";
  settings.speculative = parse_vllm_speculative_config(R"({"method": "mtp", "num_speculative_tokens": 1})",
                                                       "--speculative-config", model, 8);
  r = plan_vllm(model, h200, settings);
  CHECK(r.groups[0].layers == 124);
  CHECK(r.page_bytes == 5'094'912);
  CHECK(r.num_blocks == 8'429);

  // What is not modelled: the kernels below Hopper, pipeline stages, an e5m2 cache.
  VllmSettings plain = dsa_settings(8, 40 * GiB, 163'840);
  CHECK(vllm_plan_exit_code(catalog_model("deepseek-v3.2"), catalog_gpu("a100"), plain) == 3);
  VllmSettings staged = plain;
  staged.tensor_parallel = 4;
  staged.pipeline_parallel = 2;
  CHECK(vllm_plan_exit_code(catalog_model("deepseek-v3.2"), h200, staged) == 3);
  VllmSettings e5m2 = plain;
  e5m2.kv_dtype = &parse_kv_dtype("fp8_e5m2", *model.weight_dtype);
  CHECK(vllm_plan_exit_code(catalog_model("deepseek-v3.2"), h200, e5m2) == 3);
}

// GLM-5.2: indexers on 21 of its 78 layers (indexer_types "full"), and on its MTP layer: a block
// at -tp 8 is 64 x (79 x 1,152 + 22 x 132) = 6,010,368 B.
TEST_CASE("vLLM DSA: GLM-5.2 keeps indexer caches only where its layers have their own indexer", "[vllm][dsa]") {
  ModelSpec model = catalog_model("glm5.2");
  model.weights_source = "safetensors total_size (test)";
  VllmSettings settings = dsa_settings(8, 40 * GiB, 131'072);
  settings.speculative = parse_vllm_speculative_config(R"({"method": "mtp", "num_speculative_tokens": 1})",
                                                       "--speculative-config", model, 8);
  const VllmResult r = plan_vllm(model, catalog_gpu("h200"), settings);
  CHECK(r.groups.at(0).layers == 79 + 22);
  CHECK(r.page_bytes == 6'010'368);
}

// pocketInfer's GLM-5.2-dummy (11 layers, indexers on 0, 1, 2, 6 and 10) on vLLM 0.26.0, one GPU,
// bf16, --max-model-len 4096: "Available KV cache memory: 12.29 GiB", "GPU KV cache size: 990,144
// tokens" = 15,471 blocks of 64. A block is 64 x (11 x 1,152 + 5 x 132) = 853,248 B; the printed
// 12.29 GiB (12.285 to 12.295 GiB) holds 15,459 to 15,472 of them, 15,471 among them. Its "Model
// loading took 15.36 GiB": kvplan's 15.30 GiB is within 1%.
TEST_CASE("vLLM DSA: a cut-down GLM-5.2's capacity as vLLM 0.26 printed it", "[vllm][dsa]") {
  const ModelSpec model = load_hf_model(source_path("tests/fixtures/hf/glm-5.2-dummy"));
  const GpuSpec h100 = catalog_gpu("h100");
  const auto blocks_at = [&](double gib) {
    VllmSettings settings = dsa_settings(1, static_cast<std::uint64_t>(gib * static_cast<double>(GiB)), 4'096);
    const VllmResult r = plan_vllm(model, h100, settings);
    CHECK(r.page_bytes == 853'248);
    return r.num_blocks;
  };
  CHECK(blocks_at(12.285) <= 15'471);
  CHECK(blocks_at(12.295) >= 15'471);
  VllmSettings settings = dsa_settings(1, 15'471ull * 853'248, 4'096);
  const VllmResult r = plan_vllm(model, h100, settings);
  CHECK(r.num_blocks == 15'471);
  CHECK(static_cast<std::uint64_t>(r.max_concurrency() * 4'096) == 990'144);
  const double weights = static_cast<double>(r.budget.weights) / static_cast<double>(GiB);
  CHECK(weights == Approx(15.36).epsilon(0.01));
}
