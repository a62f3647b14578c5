// EAGLE-3 under vLLM (issue #13): the draft head Eagle3LlamaForCausalLM builds
// (model_executor/models/llama_eagle3.py), the target's embeddings and head it takes in their place
// (v1/spec_decode: _maybe_share_embeddings, _maybe_share_lm_head), its layer in the target's
// KV-cache group, and the checkpoint's tensor names read from safetensors. The weights are checked
// against a real log: vLLM 0.11 (a dev build), Llama 3.1 8B with its EAGLE-3 head converted by
// vllm-project/speculators (PR #166's test run): "Model loading took 15.8114 GiB".

#include <fstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "engines/vllm/rules.h"
#include "engines/vllm/speculative.h"
#include "kvplan/error.h"
#include "kvplan/units.h"
#include "loaders/hf_config.h"
#include "loaders/safetensors_names.h"
#include "support/catalog_entries.h"
#include "support/run_binary.h"
#include "support/temp_dir.h"

using namespace kvplan;
using kvplan::testing::catalog_gpu;
using kvplan::testing::catalog_model;
using kvplan::testing::check_refused;
using kvplan::testing::ProcessResult;
using kvplan::testing::run_kvplan;
using kvplan::testing::source_path;
using kvplan::testing::TempDir;

namespace {

const std::string kEagle3Fixture = "tests/fixtures/hf/eagle3-llama3.1-8b";

nlohmann::json eagle3_fixture_config() {
  std::ifstream in(source_path(kEagle3Fixture + "/config.json"));
  return nlohmann::json::parse(in);
}

/// A safetensors file whose header names `tensors` (each an empty F16 tensor: names are all kvplan reads).
void write_eagle3_safetensors(const std::string& path, const std::vector<std::string>& tensors) {
  nlohmann::json header = nlohmann::json::object();
  for (const std::string& name : tensors) header[name] = {{"dtype", "F16"}, {"shape", {0}}, {"data_offsets", {0, 0}}};
  const std::string text = header.dump();
  std::ofstream out(path, std::ios::binary);
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>((text.size() >> (8 * i)) & 0xff));
  out << text;
}

/// The draft's tensors as EAGLE-3 checkpoints store them: no embed_tokens (the target's is shared).
const std::vector<std::string> kEagle3Tensors = {"midlayer.self_attn.q_proj.weight", "midlayer.mlp.gate_proj.weight",
                                                 "fc.weight", "norm.weight", "lm_head.weight", "d2t", "t2d"};

std::shared_ptr<const DraftModel> eagle3_draft(const nlohmann::json& config, std::optional<bool> embeddings,
                                               std::optional<bool> head) {
  auto draft = std::make_shared<DraftModel>();
  draft->spec = model_spec_from_hf_config(config, "eagle3-llama3.1-8b", std::nullopt);
  draft->stores_embeddings = embeddings;
  draft->stores_lm_head = head;
  return draft;
}

}  // namespace

// Counted by hand from llama_eagle3.py: embed_tokens 128,256 x 4,096 = 525,336,576; layer 0's
// q, k, v read 2 x 4,096: 8,192 x (4,096 + 1,024 + 1,024) = 50,331,648; o_proj 4,096 x 4,096 =
// 16,777,216; the gated MLP 3 x 4,096 x 14,336 = 176,160,768; three RMSNorms 12,288; the final
// norm 4,096; lm_head 32,000 x 4,096 = 131,072,000. Sum 899,694,592. fc 3 x 4,096 x 4,096 =
// 50,331,648, a part of its own (every rank holds it whole).
TEST_CASE("EAGLE-3 head: its tensors counted as vLLM's Eagle3LlamaForCausalLM builds them", "[eagle3][loaders]") {
  const ModelSpec draft = model_spec_from_hf_config(eagle3_fixture_config(), "eagle3", std::nullopt);
  CHECK(draft.architecture == "llama_eagle3");
  CHECK(draft.params == 899'694'592);
  CHECK(draft.embedding_params == 525'336'576);
  CHECK(draft.lm_head_params == 131'072'000);
  REQUIRE(draft.parts.size() == 1);
  CHECK(draft.parts[0].params == 50'331'648);
  REQUIRE(draft.layers.size() == 1);
  CHECK(draft.layers[0].kind == LayerKind::full);
  CHECK(draft.layers[0].kv_heads == 8);
  CHECK(draft.layers[0].k_head_dim == 128);

  // eagle_config.use_aux_hidden_state false (gpt-oss-120b-Eagle3-v2's): no fc.
  nlohmann::json no_fc = eagle3_fixture_config();
  no_fc["eagle_config"] = {{"use_aux_hidden_state", false}};
  CHECK(model_spec_from_hf_config(no_fc, "eagle3", std::nullopt).parts.empty());
  // target_hidden_size: fc reads three of the target's widths.
  nlohmann::json wider = eagle3_fixture_config();
  wider["target_hidden_size"] = 5'120;
  CHECK(model_spec_from_hf_config(wider, "eagle3", std::nullopt).parts.at(0).params == 3 * 5'120 * 4'096);
  // An EAGLE head of another layout (SGLang's Qwen2 heads) is refused, naming it; SGLang's Llama
  // EAGLE heads are a family of their own (arch/eagle.cpp).
  nlohmann::json qwen2_head = eagle3_fixture_config();
  qwen2_head["architectures"] = {"Qwen2ForCausalLMEagle"};
  try {
    model_spec_from_hf_config(qwen2_head, "qwen2-eagle", std::nullopt);
    FAIL("an EAGLE head of Qwen2's layout was read");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::unsupported_architecture);
    CHECK(std::string(e.what()).find("Qwen2ForCausalLMEagle") != std::string::npos);
  }
  nlohmann::json sglang_head = eagle3_fixture_config();
  sglang_head["architectures"] = {"LlamaForCausalLMEagle"};
  CHECK(model_spec_from_hf_config(sglang_head, "sglang-eagle", std::nullopt).architecture == "llama_eagle");
}

// The 0.11 log: the draft shares the target's embeddings ("Assuming the EAGLE head shares the same
// vocab embedding with the target model") and keeps its own 32,000-row head ("will be loaded
// separately"). The target: 8,030,261,248 x 2 B + its llama3 rotary table 131,072 x 128 x 2 B =
// 16,094,076,928 B (14.9888 GiB, its figure alone). The draft at bf16 (the checkpoint's fp16 cast
// to the target's dtype): 899,694,592 + 50,331,648 values x 2 B, less the shared embeddings
// 525,336,576 x 2 B = 849,379,328 B; draft_id_to_target_id 32,000 x 8 B = 256,000 B; and, the
// converted config stating 131,072 positions and a rope not the target's, a second table of
// 131,072 x 128 x 2 B = 33,554,432 B. Total 16,977,266,688 B = 15.81133 GiB: the log's 15.8114 GiB.
TEST_CASE("vLLM eagle3: Llama 3.1 8B with its EAGLE-3 head loads what the 0.11 log says", "[vllm][eagle3]") {
  const ModelSpec target = catalog_model("llama3.1-8b");
  nlohmann::json converted = eagle3_fixture_config();
  converted["max_position_embeddings"] = 131'072;
  VllmSettings settings;
  settings.version = VllmVersion::v0_11;
  settings.max_model_len = 1'024;
  settings.utilization_millionths = 800'000;
  settings.speculative = parse_vllm_speculative_config(
      R"({"method": "eagle3", "model": "draft", "num_speculative_tokens": 3})", "--speculative-config", target, 1,
      eagle3_draft(converted, false, true));
  const VllmResult r = plan_vllm(target, catalog_gpu("h100"), settings);
  CHECK(r.budget.draft_weights == 849'379'328 + 256'000 + 33'554'432);
  CHECK(r.budget.weights == 16'977'266'688);
  CHECK(static_cast<double>(r.budget.weights) / static_cast<double>(GiB) == Approx(15.8114).margin(0.0001));
  // The draft's layer joins the target's group: 33 layers of 8 KV heads x 128 x 2 x 2 B a token.
  REQUIRE(r.groups.size() == 1);
  CHECK(r.groups[0].layers == 33);
  CHECK(r.kv_bytes_per_token == 33 * 4'096);
  CHECK(r.draft_layers == 1);

  // Its own embeddings in the checkpoint (from PR #28549 vLLM keeps them unless equal to the
  // target's, which kvplan cannot see): counted, 525,336,576 x 2 B more.
  settings.speculative = parse_vllm_speculative_config(
      R"({"method": "eagle3", "model": "draft", "num_speculative_tokens": 3})", "--speculative-config", target, 1,
      eagle3_draft(converted, true, true));
  CHECK(plan_vllm(target, catalog_gpu("h100"), settings).budget.draft_weights == 883'189'760 + 1'050'673'152);

  // At -tp 2 everything but fc (100,663,296 B), the token map and the rotary table is halved:
  // (849,379,328 - 100,663,296) / 2 = 374,358,016.
  settings.tensor_parallel = 2;
  settings.speculative = parse_vllm_speculative_config(
      R"({"method": "eagle3", "model": "draft", "num_speculative_tokens": 3})", "--speculative-config", target, 2,
      eagle3_draft(converted, false, true));
  CHECK(plan_vllm(target, catalog_gpu("h100"), settings).budget.draft_weights ==
        374'358'016 + 100'663'296 + 256'000 + 33'554'432);
}

TEST_CASE("vLLM eagle3: what the profile cannot price is refused with the way forward", "[vllm][eagle3]") {
  const ModelSpec target = catalog_model("llama3.1-8b");
  const auto code_of = [&](const std::string& text, std::shared_ptr<const DraftModel> draft) {
    try {
      parse_vllm_speculative_config(text, "--speculative-config", target, 1, std::move(draft));
    } catch (const Error& e) {
      return static_cast<int>(e.code());
    }
    return 0;
  };
  const std::string eagle3 = R"({"method": "eagle3", "model": "d", "num_speculative_tokens": 2})";
  CHECK(code_of(eagle3, nullptr) == 3);  // the draft was not read (the C API, kvplan check)
  CHECK(code_of(R"({"method": "eagle3", "model": "d"})", eagle3_draft(eagle3_fixture_config(), false, true)) == 2);
  auto plain = std::make_shared<DraftModel>();
  plain->spec = target;  // a model, not a draft head
  CHECK(code_of(eagle3, plain) == 3);
  CHECK(code_of(R"({"method": "eagle", "model": "d", "num_speculative_tokens": 2})", nullptr) == 3);
  CHECK(vllm_speculative_draft_name(eagle3) == std::optional<std::string>("d"));
  CHECK(!vllm_speculative_draft_name(R"({"method": "mtp", "num_speculative_tokens": 1})"));
  CHECK(!vllm_speculative_draft_name("not json"));
}

TEST_CASE("safetensors tensor names: from the index or the files' headers", "[eagle3][loaders]") {
  const TempDir dir("kvplan_safetensors");
  CHECK(!safetensors_tensor_names(dir.file("")));
  write_eagle3_safetensors(dir.file("model.safetensors"), kEagle3Tensors);
  const auto names = safetensors_tensor_names(dir.file(""));
  REQUIRE(names);
  CHECK(names->size() == kEagle3Tensors.size());
  // A length past the file is not a header: one clear error naming the file.
  {
    std::ofstream out(dir.file("broken.safetensors"), std::ios::binary);
    out << std::string("\xff\xff\xff\xff\x00\x00\x00\x00{}", 10);
  }
  CHECK_THROWS_WITH(safetensors_tensor_names(dir.file("")), Catch::Contains("broken.safetensors") && Catch::Contains("not a safetensors file"));
  // An index's weight_map is read instead of the files.
  std::ofstream(dir.file("model.safetensors.index.json")) << R"({"weight_map": {"model.embed_tokens.weight": "a"}})";
  CHECK(safetensors_tensor_names(dir.file("")) == std::optional<std::vector<std::string>>({"model.embed_tokens.weight"}));
}

// From the command line: the draft's folder is read (config.json and the safetensors' names), its
// weights priced (vLLM 0.19: the same sharing), and the mistakes a user makes get one line.
TEST_CASE("kvplan --runtime vllm --speculative-config eagle3 reads the draft's folder", "[vllm][eagle3][cli]") {
  const TempDir dir("kvplan_eagle3");
  nlohmann::json config = eagle3_fixture_config();
  config["max_position_embeddings"] = 131'072;
  std::ofstream(dir.file("config.json")) << config.dump();
  write_eagle3_safetensors(dir.file("model.safetensors"), kEagle3Tensors);
  const std::string spec = R"('{"method": "eagle3", "model": ")" + dir.file("") + R"(", "num_speculative_tokens": 3}')";
  const ProcessResult json = run_kvplan("--model llama3.1-8b --gpu h100 --runtime vllm --ctx 8k --vllm-version 0.19 "
                                        "--format json --speculative-config " + spec);
  REQUIRE(json.exit_code == 0);
  const nlohmann::json row = nlohmann::json::parse(json.out)["vllm"]["rows"][0];
  CHECK(row["budget"]["draft_weights_bytes"] == 883'189'760);
  CHECK(row["speculative"]["method"] == "eagle3");
  CHECK(row["speculative"]["draft_layers"] == 1);

  check_refused(run_kvplan("--model llama3.1-8b --gpu h100 --runtime vllm --speculative-config "
                           R"('{"method": "eagle3", "model": "nobody/no-such-draft", "num_speculative_tokens": 3}')"),
                "the draft nobody/no-such-draft is not on this machine", 3);
  check_refused(run_kvplan("--model " + source_path(kEagle3Fixture) + " --gpu h100"), "an EAGLE-3 draft head, not a model to serve alone");
  // A safetensors file whose header length runs past the file: one line, exit 2.
  {
    std::ofstream out(dir.file("model.safetensors"), std::ios::binary | std::ios::trunc);
    out << std::string("\x00\x00\x00\x00\x00\x00\x00\x80{}", 10);
  }
  check_refused(run_kvplan("--model llama3.1-8b --gpu h100 --runtime vllm --speculative-config " + spec),
                "not a safetensors file");
}

// draft_model: Llama 3.2 1B drafting for Llama 3.1 70B at -tp 4. The draft's 16 layers keep 8 KV
// heads of 64, 2 a rank: 2 x 64 x 2 x 2 B = 512 B a token a layer; the target's 80 layers 2 x 128 x
// 2 x 2 B = 1,024 B. One group of 96 layers of two sizes: a 16-token block is 80 x 16,384 + 16 x
// 8,192 = 1,441,792 B, so 30 GiB = 32,212,254,720 B hold 22,341 blocks (22,341 x 1,441,792 =
// 32,211,075,072). Its weights: 1,235,814,400 parameters x 2 B / 4 = 617,907,200 B a rank, and its
// own rotary table (head size 64: a key of its own) 131,072 x 64 x 2 B = 16,777,216 B.
TEST_CASE("vLLM draft_model: a catalog model drafts, its layers and weights beside the target's", "[vllm][speculative]") {
  const ModelSpec target = catalog_model("llama3.1-70b");
  auto draft = std::make_shared<DraftModel>();
  draft->spec = catalog_model("llama3.2-1b");
  VllmSettings settings;
  settings.tensor_parallel = 4;
  settings.kv_cache_memory_bytes = 30 * GiB;
  settings.max_model_len = 32'768;
  const std::string text = R"({"method": "draft_model", "model": "llama3.2-1b", "num_speculative_tokens": 4})";
  settings.speculative = parse_vllm_speculative_config(text, "--speculative-config", target, 4, draft);
  CHECK(settings.speculative->draft_layers == 16);
  const VllmResult r = plan_vllm(target, catalog_gpu("h100"), settings);
  REQUIRE(r.groups.size() == 1);
  CHECK(r.groups[0].layers == 96);
  CHECK(r.page_bytes * r.layers_per_block == 1'441'792);
  CHECK(r.num_blocks == 22'341);
  CHECK(r.budget.draft_weights == 617'907'200 + 16'777'216);
  CHECK(vllm_speculative_draft_name(text) == std::optional<std::string>("llama3.2-1b"));

  const auto code_of = [&](const ModelSpec& served, std::shared_ptr<const DraftModel> with) {
    try {
      parse_vllm_speculative_config(text, "--speculative-config", served, 4, std::move(with));
    } catch (const Error& e) {
      return static_cast<int>(e.code());
    }
    return 0;
  };
  auto other_vocab = std::make_shared<DraftModel>();
  other_vocab->spec = catalog_model("qwen2.5-7b");
  CHECK(code_of(target, other_vocab) == 2);  // verify_equal_vocab_size_if_draft_model
  CHECK(code_of(catalog_model("gemma3-27b"), draft) == 2);  // a multimodal target
  CHECK(code_of(target, eagle3_draft(eagle3_fixture_config(), false, true)) == 2);  // a head, not a model
  CHECK(code_of(target, nullptr) == 3);

  // kvplan check reads the draft a vllm serve line names (here a catalog alias), as the plain command does.
  const ProcessResult checked = run_kvplan(
      "check --cmd \"vllm serve meta-llama/Llama-3.1-70B-Instruct -tp 4 --max-model-len 32768 --speculative-config "
      "'{\\\"method\\\": \\\"draft_model\\\", \\\"model\\\": \\\"meta-llama/Llama-3.2-1B-Instruct\\\", "
      "\\\"num_speculative_tokens\\\": 4}'\" --gpu h100 --format json");
  REQUIRE(checked.exit_code == 0);
  const nlohmann::json row = nlohmann::json::parse(checked.out)["deployments"][0]["plan"]["vllm"]["rows"][0];
  CHECK(row["budget"]["draft_weights_bytes"] == 617'907'200 + 16'777'216);
  CHECK(row["speculative"]["draft_model"] == "llama3.2-1b");
}

// A MoE target states no hidden size; fc (3 x the target's width in) gives it, so a head whose
// checkpoint stores neither embeddings nor head shares gpt-oss-120b's (201,088 x 2,880 both). A
// head of gpt-oss's shape (a test config: 2,880 wide, 64 heads of 64, 8 KV heads, 17,280 MLP):
// layer 0's attention 26,542,080 + its 2 x hidden q/k/v input 14,745,600 + MLP 149,299,200 + norms
// 8,640 + final norm 2,880 = 190,598,400 values, fc 24,883,200: (190,598,400 + 24,883,200) x 2 B =
// 430,963,200 B, + the token map 201,088 x 8 = 1,608,704 + its rotary table 131,072 x 64 x 2 =
// 16,777,216: 449,349,120 B.
TEST_CASE("vLLM eagle3: a MoE target's embeddings shared by the shape fc implies", "[vllm][eagle3]") {
  const nlohmann::json config = {{"architectures", {"LlamaForCausalLMEagle3"}}, {"model_type", "llama"},
                                 {"hidden_size", 2880},       {"intermediate_size", 17280},
                                 {"num_attention_heads", 64}, {"num_key_value_heads", 8},
                                 {"head_dim", 64},            {"num_hidden_layers", 1},
                                 {"vocab_size", 201088},      {"draft_vocab_size", 201088},
                                 {"max_position_embeddings", 131072}, {"torch_dtype", "bfloat16"}};
  const ModelSpec target = catalog_model("gpt-oss-120b");
  VllmSettings settings;
  settings.max_model_len = 32'768;
  settings.kv_cache_memory_bytes = 10 * GiB;
  settings.speculative = parse_vllm_speculative_config(
      R"({"method": "eagle3", "model": "head", "num_speculative_tokens": 3})", "--speculative-config", target, 1,
      eagle3_draft(config, false, false));
  CHECK(plan_vllm(target, catalog_gpu("h100"), settings).budget.draft_weights == 449'349'120);
}
