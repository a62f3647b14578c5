// A recurrent layer's state under tensor parallelism (engines/core/state_split.cpp): vLLM's
// MambaStateShapeCalculator (model_executor/layers/mamba/mamba_utils.py) and MambaMixer2's
// assertions, worked by hand on the catalog's configs, and the vLLM profile's plan with them.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "kvplan/error.h"
#include "kvplan/units.h"
#include "engines/core/state_split.h"
#include "engines/vllm/rules.h"
#include "loaders/spec_json.h"
#include "support/catalog_entries.h"
#include "support/run_binary.h"

using namespace kvplan;
using kvplan::testing::catalog_gpu;
using kvplan::testing::catalog_model;

namespace {

/// The first recurrent layer's state tensors of a catalog model.
const std::vector<StateTensor>& split_state_of(const char* id) {
  for (const LayerSpec& layer : catalog_model(id).layers)
    if (layer.kind == LayerKind::linear) return layer.state;
  FAIL("no recurrent layer in " << id);
  throw;
}

ExitCode split_exit_code(const StateTensor& tensor, std::uint32_t tp) {
  try {
    state_elements_per_rank(tensor, tp, "-tp");
  } catch (const Error& e) {
    return e.code();
  }
  return ExitCode::ok;
}

}  // namespace

TEST_CASE("Mamba2 state per rank: heads split, a single group replicated on every rank", "[state_split]") {
  // Granite 4.0-H Tiny: 48 heads x 64 = d_inner 3,072, 1 group of state 128, conv kernel 4.
  // conv (4 - 1) x (3,072 + 2 x 1 x 128) = 9,984, of which the group's 3 x 256 = 768; ssm 48 x 64 x
  // 128 = 393,216.
  const std::vector<StateTensor>& state = split_state_of("granite4-h-tiny");
  REQUIRE(state.size() == 2);
  CHECK(state[0].elements == 9'984);
  CHECK(state[0].shards == 48);
  CHECK(state[0].groups == 1);
  CHECK(state[0].group_elements == 768);
  // TP 2: extra_groups_for_head_shards(1, 2) = 1, so 2 groups: (9,216 + 2 x 768) / 2 = 5,376.
  CHECK(state_elements_per_rank(state[0], 2, "-tp") == 5'376);
  CHECK(state_elements_per_rank(state[1], 2, "-tp") == 196'608);
  // TP 4: (9,216 + 4 x 768) / 4 = 3,072; ssm 12 heads a rank, 98,304.
  CHECK(state_elements_per_rank(state[0], 4, "-tp") == 3'072);
  CHECK(state_elements_per_rank(state[1], 4, "-tp") == 98'304);
  CHECK(state_elements_per_rank(state[0], 1, "-tp") == 9'984);
  // 48 heads over 5 ranks: "Tensor parallel world size must divide num heads" (exit 2).
  CHECK(split_exit_code(state[1], 5) == ExitCode::invalid_input);
}

TEST_CASE("Mamba2 groups that the ranks neither divide nor replicate are refused", "[state_split]") {
  // A Mamba2 conv of 4,096 channels (64 heads) and groups of state 128, kernel 4: 3 groups over 2
  // ranks is what MambaMixer2 asserts against ("num_groups must equal 1").
  StateTensor conv{"conv", 3 * (4'096 + 2 * 3 * 128), &parse_weight_dtype("bf16"), 64, 3, 3 * 2 * 3 * 128};
  CHECK(split_exit_code(conv, 2) == ExitCode::invalid_input);
  conv.groups = 4;
  conv.group_elements = 3 * 2 * 4 * 128;
  conv.elements = 3 * (4'096 + 2 * 4 * 128);
  // 4 groups over 2 ranks divide: (12,288 + 3,072) / 2 = 7,680.
  CHECK(state_elements_per_rank(conv, 2, "-tp") == 7'680);
  // No shards stated: not derived (exit 3).
  conv.shards = 0;
  CHECK(split_exit_code(conv, 2) == ExitCode::unsupported_architecture);
  CHECK(split_exit_code(conv, 1) == ExitCode::ok);
}

TEST_CASE("Gated DeltaNet, KDA, Mamba1 and short-conv state split by their heads or channels", "[state_split]") {
  // Qwen3.5-35B-A3B: 16 key and 32 value heads of 128, kernel 4: conv 3 x (2 x 16 x 128 + 32 x 128)
  // = 24,576 over gcd(16, 32) = 16 shards; recurrent 32 x 128 x 128 = 524,288 over the 32 value heads.
  const std::vector<StateTensor>& gdn = split_state_of("qwen3.5-35b-a3b");
  CHECK(gdn[0].shards == 16);
  CHECK(gdn[1].shards == 32);
  CHECK(state_elements_per_rank(gdn[0], 8, "-tp") == 3'072);
  CHECK(state_elements_per_rank(gdn[1], 8, "-tp") == 65'536);
  CHECK(split_exit_code(gdn[0], 32) == ExitCode::invalid_input);  // 16 key heads over 32 ranks
  // Kimi Linear: 32 heads of 128, kernel 4: conv 3 x 3 x 32 x 128, recurrent 32 x 128 x 128.
  const std::vector<StateTensor>& kda = split_state_of("kimi-linear-48b");
  CHECK(kda[0].shards == 32);
  CHECK(state_elements_per_rank(kda[1], 4, "-tp") == 131'072);
  // Jamba 1.5 Mini (Mamba1): d_inner 8,192 channels, conv 3 x 8,192, ssm 8,192 x 16.
  const std::vector<StateTensor>& mamba1 = split_state_of("jamba-1.5-mini");
  CHECK(mamba1[0].shards == 8'192);
  CHECK(state_elements_per_rank(mamba1[1], 2, "-tp") == 65'536);
  // LFM2-350M: short convolution over hidden 1,024 channels, kernel 3: 2 x 1,024.
  const std::vector<StateTensor>& conv = split_state_of("lfm2-350m");
  CHECK(conv[0].shards == 1'024);
  CHECK(state_elements_per_rank(conv[0], 4, "-tp") == 512);
}

TEST_CASE("vLLM -tp plans a hybrid's recurrent state per rank", "[state_split][vllm]") {
  // Granite 4.0-H Tiny at TP 2: per rank conv 5,376 + ssm 196,608 values, bf16: 403,968 B a layer.
  // Its attention layers keep 4 KV heads of 128 (2 a rank): 2 x 2 x 128 x 2 B = 1,024 B a token, so
  // the block is 16 x cdiv(403,968, 16 x 1,024) = 16 x 25 = 400 tokens, a page of 409,600 B.
  VllmSettings settings;
  settings.tensor_parallel = 2;
  settings.max_model_len = 131'072;
  settings.kv_cache_memory_bytes = 10 * GiB;
  const VllmResult r = plan_vllm(catalog_model("granite4-h-tiny"), catalog_gpu("h100"), settings);
  CHECK(r.page_bytes == 409'600);
  bool found = false;
  for (const std::string& rule : r.rules)
    found = found || rule.find("16 x cdiv(403,968 B of recurrent state, 16 x 1,024 B per token)") != std::string::npos;
  CHECK(found);
  // The CLI: Qwen3.5-35B-A3B on 2 H100s answers (it refused every -tp > 1 before).
  const auto run = kvplan::testing::run_kvplan("--runtime vllm --model qwen3.5-35b-a3b --gpu 2xh100 --ctx 128k "
                                              "--kv-cache-memory 10GiB --format json");
  REQUIRE(run.exit_code == 0);
  const auto doc = nlohmann::json::parse(run.out);
  // Per rank: conv 12,288 bf16 + recurrent 262,144 fp32 = 1,073,152 B; 1 KV head of 256 a rank,
  // 1,024 B a token: block 16 x cdiv(1,073,152, 16,384) = 1,056 tokens, a page of 1,081,344 B; 10
  // layers a group, 992 blocks in 10 GiB; a 131,072-token request 125 + 3 = 128 of them: 7.75x.
  CHECK(doc["vllm"]["rows"][0]["page_bytes"] == 1'081'344);
  CHECK(doc["rows"][0]["max_concurrency"] == 7.75);
  CHECK(doc["rows"][0]["kv_cache_tokens"] == 1'015'808);
}

TEST_CASE("a spec file states a state tensor's shards and groups, and round-trips them", "[state_split][spec]") {
  const ModelSpec& tiny = catalog_model("granite4-h-tiny");
  const nlohmann::json written = to_spec_json(tiny);
  const ModelSpec read = model_spec_from_json(written, "round trip");
  const std::vector<StateTensor>* state = nullptr;
  for (const LayerSpec& layer : read.layers)
    if (layer.kind == LayerKind::linear) state = &layer.state;
  REQUIRE(state != nullptr);
  CHECK((*state)[0].shards == 48);
  CHECK((*state)[0].groups == 1);
  CHECK((*state)[0].group_elements == 768);
  // Group elements without groups, more than the elements, or not whole groups: one clear line.
  nlohmann::json bad = written;
  bad["linear_state"][0].erase("groups");
  CHECK_THROWS_WITH(model_spec_from_json(bad, "bad"), Catch::Contains("group_elements"));
  bad = written;
  bad["linear_state"][0]["group_elements"] = 10'000;
  CHECK_THROWS_WITH(model_spec_from_json(bad, "bad"), Catch::Contains("at most elements"));
  bad = written;
  bad["linear_state"][0]["groups"] = 5;
  CHECK_THROWS_WITH(model_spec_from_json(bad, "bad"), Catch::Contains("whole number per group"));
}

TEST_CASE("SGLang --tp-size sizes the Mamba pool per rank", "[state_split][sglang]") {
  // Qwen3.5-35B-A3B's 30 Gated DeltaNet layers, conv at bf16 and the temporal state at fp32: one
  // request 30 x (24,576 x 2 + 524,288 x 4) = 64,389,120 B on one GPU; at --tp-size 2 each rank holds
  // half of every tensor (Mamba2StateShape.create), 32,194,560 B.
  const auto run = kvplan::testing::run_kvplan("--runtime sglang --model qwen3.5-35b-a3b --gpu 2xh100 --ctx 32k");
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.out, Catch::Contains("slots of 32,194,560 B"));
  // One H100 at SGLang's 0.835 for a text model: the default for this multimodal checkpoint is lower
  // (its vision encoder) and leaves no room beside 64.56 GiB of weights.
  const auto one = kvplan::testing::run_kvplan("--runtime sglang --model qwen3.5-35b-a3b --gpu h100 --ctx 32k "
                                               "--mem-fraction-static 0.835");
  REQUIRE(one.exit_code == 0);
  CHECK_THAT(one.out, Catch::Contains("slots of 64,389,120 B"));
  // 48 Mamba2 heads of Granite 4.0-H Tiny over 5 ranks: SGLang's divide() refuses it (exit 2).
  const auto five = kvplan::testing::run_kvplan("--runtime sglang --model granite4-h-tiny --gpu 5xh100 --tp-size 5 --ctx 8k");
  CHECK(five.exit_code == 2);
  CHECK_THAT(five.err, Catch::Contains("--tp-size 5") && Catch::Contains("splits 48 heads"));
}
