// EAGLE-1 heads under vLLM (issue #13): --speculative-config '{"method": "eagle", "model": HEAD}'
// with a head whose config is a one-layer Llama's (yuhuili/EAGLE-LLaMA3-Instruct-8B, the EAGLE
// authors' config), built as vLLM's EagleLlamaForCausalLM (model_executor/models/llama_eagle.py):
// embed_tokens, its decoder layers (the first without its input RMSNorm), fc of 2 x hidden, no final
// norm and no lm_head of its own. Counted by hand; no vLLM log of an EAGLE-1 run was found.

#include <memory>
#include <string>

#include <catch2/catch.hpp>

#include "engines/vllm/rules.h"
#include "engines/vllm/speculative.h"
#include "kvplan/error.h"
#include "kvplan/model_loader.h"
#include "support/catalog_entries.h"
#include "support/run_binary.h"

using namespace kvplan;
using kvplan::testing::catalog_gpu;
using kvplan::testing::catalog_model;
using kvplan::testing::check_refused;
using kvplan::testing::run_kvplan;
using kvplan::testing::source_path;

namespace {

const std::string kEagle1Head = "tests/fixtures/hf/eagle-llama3-instruct-8b";
const std::string kEagle1Config = R"({"method": "eagle", "model": "head", "num_speculative_tokens": 3})";

std::shared_ptr<const DraftModel> eagle1_head(std::optional<bool> stores_embeddings) {
  auto head = std::make_shared<DraftModel>();
  head->spec = load_model(source_path(kEagle1Head));
  head->stores_embeddings = stores_embeddings;
  return head;
}

VllmSettings eagle1_settings(const ModelSpec& target, std::uint32_t tp, std::optional<bool> stores_embeddings) {
  VllmSettings settings;
  settings.max_model_len = 8'192;
  settings.tensor_parallel = tp;
  settings.speculative = parse_vllm_speculative_config(kEagle1Config, "--speculative-config", target, tp,
                                                       eagle1_head(stores_embeddings));
  return settings;
}

}  // namespace

// The head's config counts 1,268,789,248 values as a Llama: embed_tokens and lm_head 128,256 x
// 4,096 = 525,336,576 each, one layer 218,112,000 (q and o 4,096 x 4,096, k and v 4,096 x 1,024,
// the MLP 3 x 4,096 x 14,336, two norms of 4,096), the final norm 4,096. vLLM builds the layer
// without its input norm, 218,107,904 values, and fc 8,192 x 4,096 = 33,554,432, at the target's
// bfloat16: 436,215,808 + 67,108,864 B; its rotary table 2,048 positions x 128 x 2 B = 524,288 B.
TEST_CASE("vLLM eagle: an EAGLE-1 head's weights as EagleLlamaForCausalLM builds them", "[vllm][eagle1]") {
  const ModelSpec target = catalog_model("llama3.1-8b");
  const ModelSpec head = load_model(source_path(kEagle1Head));
  CHECK(head.params == 1'268'789'248);

  // Its checkpoint stores no embeddings: the target's are shared (same 128,256 x 4,096 shape).
  const VllmResult shared = plan_vllm(target, catalog_gpu("h100"), eagle1_settings(target, 1, false));
  CHECK(shared.budget.draft_weights == 436'215'808ull + 67'108'864 + 524'288);
  // The draft's layer joins the target's KV-cache group: 33 layers of 8 x 128 x 2 x 2 B a token.
  REQUIRE(shared.groups.size() == 1);
  CHECK(shared.groups[0].layers == 33);
  CHECK(shared.kv_bytes_per_token == 33 * 4'096);

  // Its tensors unread (EAGLE-1 heads ship pytorch_model.bin): the embeddings counted, an upper bound.
  const VllmResult unread = plan_vllm(target, catalog_gpu("h100"), eagle1_settings(target, 1, std::nullopt));
  CHECK(unread.budget.draft_weights == 436'215'808ull + 1'050'673'152 + 67'108'864 + 524'288);

  // At -tp 2 the layer (and counted embeddings) split, fc and the rotary table whole on each rank.
  const VllmResult split = plan_vllm(target, catalog_gpu("h100"), eagle1_settings(target, 2, false));
  CHECK(split.budget.draft_weights == 218'107'904ull + 67'108'864 + 524'288);
}

TEST_CASE("vLLM eagle: what is not an EAGLE-1 head of Llama's layout is refused", "[vllm][eagle1]") {
  const ModelSpec target = catalog_model("llama3.1-8b");
  const auto code_of = [&](const std::string& text, std::shared_ptr<const DraftModel> draft) {
    try {
      parse_vllm_speculative_config(text, "--speculative-config", target, 1, std::move(draft));
    } catch (const Error& e) {
      return static_cast<int>(e.code());
    }
    return 0;
  };
  CHECK(code_of(kEagle1Config, eagle1_head(false)) == 0);
  auto eagle3 = std::make_shared<DraftModel>();
  eagle3->spec = load_model(source_path("tests/fixtures/hf/eagle3-llama3.1-8b"));
  CHECK(code_of(kEagle1Config, eagle3) == 2);  // an EAGLE-3 head: "method": "eagle3"
  auto qwen = std::make_shared<DraftModel>();
  qwen->spec = catalog_model("qwen2.5-0.5b");
  CHECK(code_of(kEagle1Config, qwen) == 3);  // an EAGLE head of another layout
  CHECK(code_of(R"({"method": "eagle", "num_speculative_tokens": 3})", nullptr) == 2);  // no model
  CHECK(vllm_speculative_draft_name(kEagle1Config) == std::optional<std::string>("head"));

  // From the command line the head's folder is read as --model's is.
  const auto r = run_kvplan("--runtime vllm --model llama3.1-8b --gpu h100 --ctx 8k --speculative-config '{\"method\": "
                            "\"eagle\", \"model\": \"" + source_path(kEagle1Head) + "\", \"num_speculative_tokens\": 3}'");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("the EAGLE draft +1.45 GiB") != std::string::npos);
  check_refused(run_kvplan("--runtime vllm --model llama3.1-8b --gpu h100 --speculative-config '{\"method\": \"eagle\", "
                           "\"model\": \"" + source_path("tests/fixtures/hf/eagle3-llama3.1-8b") +
                           "\", \"num_speculative_tokens\": 3}'"),
                "is an EAGLE-3 head", 2);
}
