// eagle and eagle3 (src/loaders/arch/eagle.cpp, eagle3.cpp): EAGLE draft heads of Llama's layout;
// sources in tests/fixtures/hf/SOURCES.md. The engines' use of them: tests/sglang_speculative_test.cpp
// and tests/vllm_eagle3_test.cpp.

#include "arch/arch_test.h"

using namespace kvplan;
using namespace kvplan::testing;

TEST_CASE("eagle: SGLang's LlamaForCausalLMEagle heads, no final norm, fc with its bias") {
  // Llama 2 chat 7B's head: embed_tokens and lm_head 2 x 32,000 x 4,096 = 262,144,000; one layer of
  // 4 x 4,096^2 + 3 x 4,096 x 11,008 + its post-attention norm 4,096 (layer 0 has no input norm) =
  // 202,379,264; no final norm: 464,523,264. fc 8,192 x 4,096 + 4,096 = 33,558,528, a part. At fp16,
  // 996,163,584 B: the "mem usage=0.93 GB" of SGLang's docs run loading it.
  const ModelSpec llama2 = hf_model("sglang-eagle-llama2-chat-7b");
  CHECK(llama2.architecture == "llama_eagle");
  CHECK(llama2.params == 464'523'264ull);
  CHECK(part_params(llama2, "fc (the target's hidden state in)") == 33'558'528ull);
  CHECK(estimate_weights(llama2, nullptr).bytes == 996'163'584ull);
  // One cached layer of 32 KV heads of 128: 16,384 B a token at fp16.
  CHECK(cache_bytes(llama2).per_token == 2 * 32 * 128 * 2);
  // Llama 3 8B's: 2 x 128,256 x 4,096 + 218,107,904 = 1,268,781,056, + fc = 2,604,679,168 B ("2.43 GB").
  const ModelSpec llama3 = hf_model("sglang-eagle-llama3-instruct-8b");
  CHECK(llama3.params == 1'268'781'056ull);
  CHECK(estimate_weights(llama3, nullptr).bytes == 2'604'679'168ull);
}

TEST_CASE("eagle3: vLLM's Eagle3LlamaForCausalLM heads, layer 0's q/k/v reading 2 x hidden") {
  // 899,694,592 + fc 3 x 4,096 x 4,096 = 50,331,648 as a part (tests/vllm_eagle3_test.cpp has the sum).
  const ModelSpec head = hf_model("eagle3-llama3.1-8b");
  CHECK(head.architecture == "llama_eagle3");
  CHECK(head.params == 899'694'592ull);
  CHECK(head.lm_head_params == 32'000ull * 4'096);
  CHECK(cache_bytes(head).per_token == 2 * 8 * 128 * 2);
}
