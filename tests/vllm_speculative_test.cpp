// vLLM's --speculative-config (issue #13), as read in vllm-project/vllm: config/speculative.py
// (SpeculativeConfig at 002e77c1: the MTP model types fold into "mtp", n_predict =
// num_nextn_predict_layers, num_speculative_tokens divisible by it past it), models/deepseek_mtp.py
// (03356f8c: one DeepseekV2DecoderLayer per num_nextn_predict_layers, reused for every further
// token), v1/spec_decode/llm_base_proposer.py (00c4f22d: load_model finds the draft's attention
// layers beside the target's; MTP drafts share the target's embeddings and head) and
// model_executor/layers/mamba/abstract.py (MambaBase.get_kv_cache_spec: num_speculative_blocks =
// num_speculative_tokens). --kv-cache-memory makes the memory exact, so every figure is by hand.

#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "engines/vllm/rules.h"
#include "engines/vllm/speculative.h"
#include "kvplan/error.h"
#include "kvplan/units.h"
#include "loaders/hf_config.h"
#include "support/catalog_entries.h"
#include "support/run_binary.h"

using namespace kvplan;
using kvplan::testing::catalog_gpu;
using kvplan::testing::catalog_model;

namespace {

/// The catalog model with a weights figure that holds its MTP layers (as a safetensors total does).
ModelSpec speculative_with_checkpoint_total(const char* id) {
  ModelSpec model = catalog_model(id);
  model.weights_source = "safetensors total_size (test)";
  return model;
}

VllmSpeculative speculative_read(const std::string& text, const ModelSpec& model, std::uint32_t tp = 8) {
  return parse_vllm_speculative_config(text, "--speculative-config", model, tp);
}

/// An MTP draft of `k` tokens at `tp` for 131,072-token requests, the cache's memory given.
VllmSettings speculative_mtp_settings(const ModelSpec& model, std::uint32_t tp, std::uint64_t memory, unsigned k) {
  VllmSettings settings;
  settings.tensor_parallel = tp;
  settings.kv_cache_memory_bytes = memory;
  settings.max_model_len = 131'072;
  settings.speculative = speculative_read(
      R"({"method": "mtp", "num_speculative_tokens": )" + std::to_string(k) + "}", model, tp);
  return settings;
}

int speculative_exit_code(const std::string& text, const ModelSpec& model, std::uint32_t tp = 8) {
  try {
    speculative_read(text, model, tp);
  } catch (const Error& e) {
    return static_cast<int>(e.code());
  }
  return 0;
}

}  // namespace

// DeepSeek-V3 (MLA): 576 values x 2 B = 1,152 B a token a layer on every rank; FlashMLA's 64-token
// blocks on the H200 make a page 64 x 1,152 = 73,728 B. The MTP draft adds num_nextn_predict_layers
// = 1 MLA layer to the one group: a block is 62 x 73,728 = 4,571,136 B (61 x 73,728 = 4,497,408
// without it). 40 GiB = 42,949,672,960 B hold floor(42,949,672,960 / 4,571,136) = 9,395 blocks
// (9,395 x 4,571,136 = 42,945,822,720; 3,850,240 B left), against 9,549 without the draft.
TEST_CASE("vLLM --speculative-config mtp: DeepSeek-V3's MTP layer joins the MLA group", "[vllm][speculative]") {
  const ModelSpec model = speculative_with_checkpoint_total("deepseek-v3");
  const GpuSpec gpu = catalog_gpu("h200");
  VllmSettings settings;
  settings.tensor_parallel = 8;
  settings.kv_cache_memory_bytes = 40 * GiB;
  settings.max_model_len = 163'840;
  settings.speculative = speculative_read(R"({"method": "mtp", "num_speculative_tokens": 1})", model);
  CHECK(settings.speculative->method == "mtp");
  CHECK(settings.speculative->draft_layers == 1);

  const VllmResult r = plan_vllm(model, gpu, settings);
  REQUIRE(r.groups.size() == 1);
  CHECK(r.groups[0].kind == LayerKind::mla);
  CHECK(r.groups[0].layers == 62);
  CHECK(r.draft_layers == 1);
  CHECK(r.page_bytes == 73'728);
  CHECK(r.layers_per_block == 62);
  // 62 x 1,152 = 71,424 B a token (61 x 1,152 = 70,272 without the draft).
  CHECK(r.kv_bytes_per_token == 71'424);
  CHECK(r.num_blocks == 9'395);
  // cdiv(163,840, 64) = 2,560 blocks a request; 9,395 / 2,560 = 3.6699x; int(3.669921875 x 163,840)
  // = 601,280 tokens (= 9,395 x 64); one request 2,560 x 4,571,136 = 11,702,108,160 B.
  CHECK(r.blocks_per_request == 2'560);
  CHECK(r.max_concurrency() == Approx(3.669921875));
  CHECK(r.gpu_kv_cache_tokens == 601'280);
  CHECK(r.request_bytes == 11'702'108'160ull);
  CHECK(r.starts);

  settings.speculative.reset();
  CHECK(plan_vllm(model, gpu, settings).num_blocks == 9'549);

  SECTION("k = 3 runs the one MTP layer three times: the same 62 layers (spec_step_idx % n_predict)") {
    settings.speculative = speculative_read(R"({"method": "deepseek_mtp", "num_speculative_tokens": 3})", model);
    CHECK(settings.speculative->method == "mtp");  // the deprecated name folds into mtp
    const VllmResult three = plan_vllm(model, gpu, settings);
    CHECK(three.groups[0].layers == 62);
    CHECK(three.num_blocks == 9'395);
  }
  SECTION("the sampler warm-up: 16 B x 1,024 seqs x 129,280 vocab at k = 1; (4 + 8 x 3) = 28 B at k = 3") {
    settings.kv_cache_memory_bytes.reset();
    settings.speculative = speculative_read(R"({"method": "mtp", "num_speculative_tokens": 1})", model);
    // 16 x 1,024 x 129,280 = 2,118,123,520 B, on the MoE workspace the forward pass keeps:
    // 8,192 tokens x 8 experts x (7,168 + 7,168) x 2 B = 1,879,048,192 (vllm_moe_workspace_test).
    const VllmBudget one = plan_vllm(model, gpu, settings).budget;
    CHECK(one.moe_workspace == 1'879'048'192ull);
    CHECK(one.activation == 2'118'123'520ull + 1'879'048'192ull);
    settings.speculative = speculative_read(R"({"method": "mtp", "num_speculative_tokens": 3})", model);
    // 28 x 1,024 x 129,280 = 3,706,716,160 B.
    CHECK(plan_vllm(model, gpu, settings).budget.activation == 3'706'716'160ull + 1'879'048'192ull);
  }
}

// GLM-4.5-Air (glm4_moe, Glm4MoeMTP): 46 layers of 8 KV heads x (128 + 128) at bf16. At -tp 4 a
// rank keeps 2 heads: 2 x 256 x 2 B = 1,024 B a token a layer, a 16-token page 16,384 B. With the
// draft's one layer a block is 47 x 16,384 = 770,048 B: 40 GiB hold floor(42,949,672,960 /
// 770,048) = 55,775 blocks (46 layers: 753,664 B, 56,987 blocks). A request of 131,072 tokens is
// cdiv(131,072, 16) = 8,192 blocks: 55,775 / 8,192 = 6.8085x.
TEST_CASE("vLLM --speculative-config mtp: GLM-4.5-Air's MTP layer is a grouped-query layer like the others",
          "[vllm][speculative]") {
  const ModelSpec model = speculative_with_checkpoint_total("glm4.5-air");
  const GpuSpec gpu = catalog_gpu("h100");
  VllmSettings settings = speculative_mtp_settings(model, 4, 40 * GiB, 1);
  const VllmResult r = plan_vllm(model, gpu, settings);
  REQUIRE(r.groups.size() == 1);
  CHECK(r.groups[0].kind == LayerKind::full);
  CHECK(r.groups[0].layers == 47);
  CHECK(r.page_bytes == 16'384);
  CHECK(r.num_blocks == 55'775);
  CHECK(r.blocks_per_request == 8'192);
  CHECK(r.max_concurrency() == Approx(6.8084716796875));
  CHECK(r.request_bytes == 8'192ull * 770'048);
  settings.speculative.reset();
  CHECK(plan_vllm(model, gpu, settings).num_blocks == 56'987);
}

TEST_CASE("vLLM --speculative-config mtp: GLM-4.7-Flash's MTP layer is one more MLA layer", "[vllm][speculative]") {
  // glm4_moe_lite_mtp: a Glm4MoeLiteDecoderLayer from the target's config, so its MLA latent (512 +
  // 64 rope = 576 values, 1,152 B a token in bf16) beside the 47 target layers. A 64-token page is
  // 73,728 B; a block of 48 layers 3,538,944 B, and 20 GiB hold floor(21,474,836,480 / 3,538,944) =
  // 6,068 (47 layers: 3,465,216 B, 6,197). 131,072 tokens take 2,048 blocks: 6,068 / 2,048 =
  // 2.962890625x, int(that x 131,072) = 388,352 tokens.
  const ModelSpec model = speculative_with_checkpoint_total("glm4.7-flash");
  VllmSettings settings = speculative_mtp_settings(model, 1, 20 * GiB, 1);
  CHECK(settings.speculative->draft_layers == 1);
  const VllmResult r = plan_vllm(model, catalog_gpu("h100"), settings);
  REQUIRE(r.groups.size() == 1);
  CHECK(r.groups[0].kind == LayerKind::mla);
  CHECK(r.groups[0].layers == 48);
  CHECK(r.page_bytes == 73'728);
  CHECK(r.kv_bytes_per_token == 48 * 1'152);
  CHECK(r.num_blocks == 6'068);
  CHECK(r.blocks_per_request == 2'048);
  CHECK(r.gpu_kv_cache_tokens == 388'352);
  settings.speculative.reset();
  CHECK(plan_vllm(model, catalog_gpu("h100"), settings).num_blocks == 6'197);
}

TEST_CASE("vLLM --speculative-config mtp: Qwen3-Next's one MTP layer, which its config does not state",
          "[vllm][speculative]") {
  // qwen3_next_mtp builds getattr(config, "num_nextn_predict_layers", 1) full-attention layers; the
  // config states none, so one, and n_predict stays unset (no divisibility rule for k).
  const ModelSpec model = speculative_with_checkpoint_total("qwen3-next-80b-a3b");
  REQUIRE(model.mtp_layers == 0);
  const VllmSettings settings = speculative_mtp_settings(model, 4, 10 * GiB, 3);
  CHECK(settings.speculative->draft_layers == 1);
  // Per rank at TP 4: conv 3 x (2 x 16 x 128 + 32 x 128) / 4 = 6,144 bf16 values and recurrent
  // 32 x 128 x 128 / 4 = 131,072 bf16: 274,432 B; 1 KV head of 256 a rank (2 replicated over 4):
  // 1,024 B a token. Block 16 x cdiv(274,432, 16,384) = 272 tokens, a page of 278,528 B. 12 + 1
  // full layers: the group size 13, the 36 Gated DeltaNet layers 3 groups of 12 + 1 padding. 10 GiB
  // hold floor(10,737,418,240 / (13 x 278,528)) = 2,965 blocks; a 131,072-token request
  // cdiv(131,072, 272) = 482 + 3 state groups x (1 + k = 4) = 494.
  const VllmResult r = plan_vllm(model, catalog_gpu("h100"), settings);
  REQUIRE(r.groups.size() == 4);
  CHECK(r.page_bytes == 278'528);
  CHECK(r.layers_per_block == 13);
  CHECK(r.groups[3].kind == LayerKind::full);
  CHECK(r.groups[3].layers == 13);
  CHECK(r.num_blocks == 2'965);
  CHECK(r.blocks_per_request == 494);
}

// Qwen3.5-35B-A3B: 30 Gated DeltaNet + 10 full layers; the state (2,146,304 B) grows the attention
// block to 16 x cdiv(2,146,304, 16 x 2,048) = 1,056 tokens, a page of 2,162,688 B, 4 groups of 10.
// 20 GiB hold floor(21,474,836,480 / (10 x 2,162,688)) = 992 blocks. A request of 131,072 tokens:
// cdiv(131,072, 1,056) = 125 full blocks + 3 state groups x 1 = 128 (992 / 128 = 7.75x); ngram
// with k = 2 keeps 1 + 2 blocks a state group: 125 + 9 = 134 (992 / 134 = 7.4030x). No draft layer.
TEST_CASE("vLLM --speculative-config: Mamba-style layers keep 1 + k blocks a request", "[vllm][speculative]") {
  const ModelSpec model = catalog_model("qwen3.5-35b-a3b");
  const GpuSpec gpu = catalog_gpu("h100");
  VllmSettings settings;
  settings.kv_cache_memory_bytes = 20 * GiB;
  settings.max_model_len = 131'072;
  const VllmResult plain = plan_vllm(model, gpu, settings);
  settings.speculative = speculative_read(R"({"method": "ngram", "num_speculative_tokens": 2})", model, 1);
  CHECK(settings.speculative->draft_layers == 0);
  const VllmResult spec = plan_vllm(model, gpu, settings);
  CHECK(plain.num_blocks == 992);
  CHECK(spec.num_blocks == 992);
  CHECK(plain.blocks_per_request == 128);
  CHECK(spec.blocks_per_request == 134);
  CHECK(spec.max_concurrency() == Approx(992.0 / 134));
  CHECK(spec.groups.size() == 4);
  CHECK(spec.draft_layers == 0);
  SECTION("with prefix caching (align mode): 2 + k blocks, 125 + 3 x 4 = 137") {
    settings.prefix_caching = true;
    CHECK(plan_vllm(model, gpu, settings).blocks_per_request == 137);
  }
}

// The same model with its MTP layer (qwen3_5_mtp: mtp_num_hidden_layers = 1, built as a full
// attention layer): 11 full layers, so the group size is 11 and the 30 Gated DeltaNet layers go
// to 3 groups of 10 + 1 padding. 10 GiB hold floor(10,737,418,240 / (11 x 2,162,688)) = 451
// blocks (496 of 10 layers without the draft); a 32,768-token request needs cdiv(32,768, 1,056) =
// 32 full blocks + 3 state groups x (1 + 1) = 38: 451 / 38 = 11.868x, int(x 32,768) = 388,904.
TEST_CASE("vLLM --speculative-config mtp: Qwen3.5's MTP layer is one more full-attention layer", "[vllm][speculative]") {
  const ModelSpec model = speculative_with_checkpoint_total("qwen3.5-35b-a3b");
  const GpuSpec gpu = catalog_gpu("h100");
  VllmSettings settings;
  settings.kv_cache_memory_bytes = 10 * GiB;
  settings.max_model_len = 32'768;
  CHECK(plan_vllm(model, gpu, settings).num_blocks == 496);
  settings.speculative = speculative_read(R"({"method": "mtp", "num_speculative_tokens": 1})", model, 1);
  CHECK(settings.speculative->draft_layers == 1);
  const VllmResult r = plan_vllm(model, gpu, settings);
  REQUIRE(r.groups.size() == 4);
  for (int g = 0; g < 3; ++g) {
    CHECK(r.groups[g].layers == 10);
    CHECK(r.groups[g].padding_layers == 1);
  }
  CHECK(r.groups[3].kind == LayerKind::full);
  CHECK(r.groups[3].layers == 11);
  CHECK(r.page_bytes == 2'162'688);
  CHECK(r.num_blocks == 451);
  CHECK(r.blocks_per_request == 38);
  CHECK(r.gpu_kv_cache_tokens == 388'904);
  // The pool: 11 tensors (the group size) of 451 pages, each shared by one layer of every group,
  // 10,729,095,168 B of the 10 GiB (kvplan once multiplied it by the 4 groups).
  CHECK(r.cache_bytes == 451ull * 11 * 2'162'688);
}

TEST_CASE("vLLM --speculative-config: what vLLM refuses (exit 2) and what is not derived (exit 3)", "[vllm][speculative]") {
  const ModelSpec deepseek = speculative_with_checkpoint_total("deepseek-v3");
  // vLLM's own refusals.
  CHECK(speculative_exit_code("{method: mtp}", deepseek) == 2);
  CHECK(speculative_exit_code("[1]", deepseek) == 2);
  CHECK(speculative_exit_code(R"({"method": "mtp"})", deepseek) == 2);  // no num_speculative_tokens
  CHECK(speculative_exit_code(R"({"method": "mtp", "num_speculative_tokens": 0})", deepseek) == 2);
  CHECK(speculative_exit_code(R"({"method": "mtp", "num_speculative_tokens": "1"})", deepseek) == 2);
  CHECK(speculative_exit_code(R"({"num_speculative_tokens": 1})", deepseek) == 2);  // draft_model without a model
  CHECK(speculative_exit_code(R"({"method": "mpt", "num_speculative_tokens": 1})", deepseek) == 2);
  CHECK(speculative_exit_code(R"({"method": "mtp", "num_speculative_tokens": 1, "tensor_parallel_size": 8})", deepseek) == 2);
  CHECK(speculative_exit_code(R"({"method": "mtp", "num_speculative_tokens": 1, "draft_tensor_parallel_size": 4})", deepseek) == 2);
  CHECK(speculative_exit_code(R"({"method": "ngram", "num_speculative_tokens": 2, "prompt_lookup_min": 6, "prompt_lookup_max": 3})",
                              deepseek) == 2);
  CHECK(speculative_exit_code(R"({"method": "mtp", "num_speculative_tokens": 1})", catalog_model("llama3.1-8b")) == 2);
  // Two MTP layers: k = 3 is neither at most 2 nor a multiple of it.
  ModelSpec two = deepseek;
  two.mtp_layers = 2;
  try {
    speculative_read(R"({"method": "mtp", "num_speculative_tokens": 3})", two);
    FAIL("k = 3 with n_predict = 2 was taken");
  } catch (const Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("num_speculative_tokens:3 must be divisible by n_predict=2"));
  }
  CHECK(speculative_read(R"({"method": "mtp", "num_speculative_tokens": 4})", two).draft_layers == 2);
  // Not derived: separate drafts, fields that change the draft, unread MTP families.
  CHECK(speculative_exit_code(R"({"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 3})",
                              deepseek) == 3);
  CHECK(speculative_exit_code(R"({"model": "meta-llama/Llama-3.2-1B", "num_speculative_tokens": 3})", deepseek) == 3);
  CHECK(speculative_exit_code(R"({"method": "mtp", "num_speculative_tokens": 1, "kv_cache_dtype": "fp8"})", deepseek) == 3);
  CHECK(speculative_exit_code(R"({"method": "mtp", "num_speculative_tokens": 1, "draft_tensor_parallel_size": 1})", deepseek) == 3);
  // MiniMax-M2.7's three MTP modules: vLLM maps no minimax_m2 type to a draft (minimax_m3 only).
  CHECK(speculative_exit_code(R"({"method": "mtp", "num_speculative_tokens": 1})", catalog_model("minimax-m2.7"), 1) == 3);
}

TEST_CASE("kvplan --runtime vllm --speculative-config: the CLI, the JSON, kvplan check and the refusals",
          "[vllm][speculative]") {
  using kvplan::testing::check_refused;
  using kvplan::testing::run_kvplan;
  const std::string mtp = R"( --speculative-config '{"method": "mtp", "num_speculative_tokens": 1}')";
  const std::string deepseek = "--runtime vllm --model deepseek-v3 --gpu h200 -tp 8 --kv-cache-memory 40GiB ";
  // --weights stands for a figure that holds the MTP layer (the catalog's is computed without it).
  const auto json = run_kvplan(deepseek + "--weights 689GB --format json" + mtp);
  REQUIRE(json.exit_code == 0);
  const nlohmann::json out = nlohmann::json::parse(json.out);
  const nlohmann::json& row = out.at("vllm").at("rows").at(0);
  CHECK(row.at("speculative") == nlohmann::json::parse(R"({"method": "mtp", "num_speculative_tokens": 1, "draft_layers": 1, "draft_model": null})"));
  CHECK(row.at("num_blocks") == 9'395);
  CHECK(row.at("groups").at(0).at("layers") == 62);
  CHECK(out.at("settings").at("mtp_layers") == 1);
  const auto table = run_kvplan(deepseek + "--weights 689GB" + mtp);
  CHECK(table.exit_code == 0);
  CHECK_THAT(table.out, Catch::Contains("Speculative decoding: mtp, 1 token a step; 1 draft layer in the KV cache"));
  CHECK_THAT(table.out, Catch::Contains("MTP     1 of 1 next-token prediction layer counted as cached"));

  // The catalog's computed weights leave the MTP layer out; its count (15,424,227,552 B: eh_proj's
  // 205,520,896 whole on each of the 8 ranks, the rest split) is added, with the copies of the
  // embeddings and head vLLM frees: an upper bound.
  const auto counted = run_kvplan(deepseek + "--format json" + mtp);
  REQUIRE(counted.exit_code == 0);
  CHECK(nlohmann::json::parse(counted.out)["vllm"]["rows"][0]["budget"]["draft_weights_bytes"] == 2'107'859'228);
  // Qwen3.5-27B's MTP layer as counted (tests/hf_config_test.cpp): 849,398,784 B, all on one GPU.
  const auto qwen = run_kvplan("--runtime vllm --model qwen3.5-27b --gpu h200 --format json" + mtp);
  REQUIRE(qwen.exit_code == 0);
  CHECK(nlohmann::json::parse(qwen.out)["vllm"]["rows"][0]["budget"]["draft_weights_bytes"] == 849'398'784);
  // A model whose MTP layers kvplan does not count (Nemotron 3 Ultra's): exit 3, naming the way forward.
  check_refused(run_kvplan("--runtime vllm --model nemotron3-ultra --gpu 8xh200" + mtp),
                "give --weights with the checkpoint's size including them", 3);
  check_refused(run_kvplan(deepseek + "--weights 689GB -pp 2" + mtp), "--speculative-config with -pp 2", 3);
  check_refused(run_kvplan(deepseek + "--weights 689GB -dcp 8" + mtp), "--speculative-config method mtp with -dcp 8", 3);
  check_refused(run_kvplan(deepseek + "--speculative-config '{\"method\": \"eagle\", \"model\": \"x/EAGLE-DeepSeek\", "
                                      "\"num_speculative_tokens\": 2}'"),
                "the draft x/EAGLE-DeepSeek is not on this machine", 3);  // EAGLE heads are read from their folder
  check_refused(run_kvplan(deepseek + "--speculative-config 'mtp'"), "--speculative-config mtp: not JSON");
  check_refused(run_kvplan(deepseek + "--mtp-layers 1"), "--mtp-layers does not apply to the vLLM profile");

  // kvplan check reads the flag in a vllm serve line: ngram prices (no draft), mtp its layers' weights.
  const auto ngram = run_kvplan("check --cmd 'vllm serve deepseek-ai/DeepSeek-V3 -tp 8 --kv-cache-memory 40GiB "
                                "--speculative-config \"{\\\"method\\\": \\\"ngram\\\", \\\"num_speculative_tokens\\\": 3}\"' "
                                "--gpu h200 --format json");
  CHECK(ngram.exit_code == 0);
  CHECK_THAT(ngram.out, Catch::Contains("--speculative-config ngram, 3 speculative tokens: no draft model"));
  const auto drafted = run_kvplan("check --cmd 'vllm serve deepseek-ai/DeepSeek-V3 -tp 8 --kv-cache-memory 40GiB "
                                  "--speculative-config \"{\\\"method\\\": \\\"mtp\\\", \\\"num_speculative_tokens\\\": 1}\"' "
                                  "--gpu h200");
  CHECK(drafted.exit_code == 0);
  CHECK_THAT(drafted.out, Catch::Contains("1 deployment: 1 fit"));
}

// ERNIE 4.5 MoE (ernie_mtp: ErnieMultiTokenPredictorLayer, a LlamaDecoderLayer built from the
// target's config) with the num_nextn_predict_layers of 1 its published config states (the trimmed
// fixture leaves it out): 28 + 1 layers of 4 KV heads x 128 x 2 x 2 B = 2,048 B a token, a 16-token
// block 29 x 32,768 = 950,272 B; 20 GiB = 21,474,836,480 B hold 22,598 of them.
TEST_CASE("vLLM --speculative-config mtp: ERNIE 4.5's MTP layer is one more grouped-query layer", "[vllm][speculative]") {
  nlohmann::json config = nlohmann::json::parse(kvplan::testing::read_file(
      kvplan::testing::source_path("tests/fixtures/hf/ernie-4.5-21b-a3b/config.json")));
  config["num_nextn_predict_layers"] = 1;
  const ModelSpec model = model_spec_from_hf_config(config, "ernie-4.5-21b-a3b", 43'698'000'000ull);
  VllmSettings settings;
  settings.kv_cache_memory_bytes = 20 * GiB;
  settings.max_model_len = 32'768;
  settings.speculative = speculative_read(R"({"method": "mtp", "num_speculative_tokens": 2})", model, 1);
  CHECK(settings.speculative->draft_layers == 1);
  const VllmResult r = plan_vllm(model, catalog_gpu("h100"), settings);
  REQUIRE(r.groups.size() == 1);
  CHECK(r.groups[0].layers == 29);
  CHECK(r.page_bytes * r.layers_per_block == 950'272);
  CHECK(r.num_blocks == 22'598);
  // k past n_predict must be whole cycles of it: 1 divides every k.
  CHECK(speculative_exit_code(R"({"method": "mtp", "num_speculative_tokens": 3})", model, 1) == 0);
}

// Nemotron 3 Ultra (nemotron_h_mtp: one MTP step of its mtp_layers_block_type [attention, moe],
// the attention a layer like the target's): 13 attention layers beside 48 Mamba2 layers, so the
// group size is 13 and the Mamba layers go to 4 groups of 12 + 1 padding; pages of 1,064,960 B
// (2,080-token blocks), a block 13 pages = 13,844,480 B: 40 GiB hold 3,102. A 131,072-token
// request needs cdiv(131,072, 2,080) = 64 attention blocks + 4 state groups x (1 + k = 3) = 76.
TEST_CASE("vLLM --speculative-config mtp: Nemotron-H's MTP attention layer joins the hybrid's groups",
          "[vllm][speculative]") {
  const ModelSpec model = speculative_with_checkpoint_total("nemotron3-ultra");
  VllmSettings settings = speculative_mtp_settings(model, 8, 40 * GiB, 2);
  CHECK(settings.speculative->draft_layers == 1);
  const VllmResult r = plan_vllm(model, catalog_gpu("h200"), settings);
  REQUIRE(r.groups.size() == 5);
  for (int g = 0; g < 4; ++g) CHECK(r.groups[g].padding_layers == 1);
  CHECK(r.groups[4].kind == LayerKind::full);
  CHECK(r.groups[4].layers == 13);
  CHECK(r.page_bytes == 1'064'960);
  CHECK(r.num_blocks == 3'102);
  CHECK(r.blocks_per_request == 76);
}

// __post_init__ without a method: a model is a draft model, a dotted import path a custom class.
TEST_CASE("vLLM --speculative-config without a method: the draft model, or a custom proposer", "[vllm][speculative]") {
  CHECK(vllm_speculative_draft_name(R"({"model": "meta-llama/Llama-3.2-1B", "num_speculative_tokens": 4})") ==
        std::optional<std::string>("meta-llama/Llama-3.2-1B"));
  CHECK(!vllm_speculative_draft_name(R"({"model": "my_pkg.MyProposer", "num_speculative_tokens": 4})"));
  CHECK(!vllm_speculative_draft_name(R"({"model": "ngram", "num_speculative_tokens": 4})"));
  const ModelSpec target = catalog_model("llama3.1-70b");
  auto draft = std::make_shared<DraftModel>();
  draft->spec = catalog_model("llama3.2-1b");
  const VllmSpeculative spec = parse_vllm_speculative_config(R"({"model": "llama3.2-1b", "num_speculative_tokens": 4})",
                                                             "--speculative-config", target, 4, draft);
  CHECK(spec.method == "draft_model");
  CHECK(spec.draft_layers == 16);
  CHECK(speculative_exit_code(R"({"model": "my_pkg.MyProposer", "num_speculative_tokens": 4})", target, 4) == 3);
  CHECK(speculative_read(R"({"model": "ngram", "num_speculative_tokens": 4})", target, 4).method == "ngram");
}
