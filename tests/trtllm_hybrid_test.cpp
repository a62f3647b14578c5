// Mamba-style hybrids under TensorRT-LLM's PyTorch backend (issue #13): MambaHybridCacheManager
// (tensorrt_llm/_torch/pyexecutor/mamba_cache_manager.py, 1.0-1.2) keeps every request slot's conv
// and SSM state as torch tensors, max_batch_size of them and one for CUDA-graph padding, allocated
// before the dry run measures the free memory; the paged KV cache holds the attention layers only.

#include <string>

#include <catch2/catch.hpp>

#include "engines/trtllm/rules.h"
#include "kvplan/error.h"
#include "kvplan/units.h"
#include "support/catalog_entries.h"
#include "support/run_binary.h"

using namespace kvplan;
using kvplan::testing::catalog_cards;
using kvplan::testing::catalog_model;

// Nemotron 3 Nano 30B-A3B: 23 Mamba2 layers, each a conv state of 18,432 bf16 values (36,864 B)
// and an SSM state of 524,288 values at its config's float32 (2,097,152 B): 49,082,368 B a slot.
// --max_batch_size 64: 65 slots, 3,190,353,920 B. The pool pages its 6 attention layers only, 2
// KV heads x 128 x 2 x 2 B each: 6,144 B a token.
TEST_CASE("TensorRT-LLM hybrids: the recurrent state of every slot before the pool, the attention layers paged",
          "[trtllm][hybrid]") {
  const ModelSpec model = catalog_model("nemotron3-nano");
  TrtllmSettings s;
  s.max_batch_size = 64;
  s.max_seq_len = 8'192;
  s.state_may_be_pooled = false;  // 1.0 - 1.2
  const TrtllmResult r = plan_trtllm(model, catalog_cards("h100", 1), s);
  CHECK(r.budget.mamba_slots == 65);
  CHECK(r.budget.mamba_state == 3'190'353'920ull);
  CHECK(r.stages.at(0).bytes_per_token == 6'144);
  // The free memory the fraction multiplies is measured with the state allocated.
  CHECK(r.budget.free_memory + r.budget.weights + r.budget.activation + r.budget.non_torch + r.budget.mamba_state ==
        r.budget.cuda_total);

  // From 1.3 (PR #12185's C++ manager) the state may sit inside fraction x free: the cache then
  // gets 0.9 x (free + state) - state, 0.1 x 3,190,353,920 = 319,035,392 B less. kvplan takes the
  // lesser for 1.3 and later: free memory 3,190,353,920 x 0.1 / 0.9 = 354,483,768 B lower.
  CHECK(trtllm_state_may_be_pooled("latest"));
  CHECK(trtllm_state_may_be_pooled("1.3.0rc5"));
  CHECK_FALSE(trtllm_state_may_be_pooled("1.2"));
  CHECK_FALSE(trtllm_state_may_be_pooled("0.21.0"));
  TrtllmSettings later = s;
  later.state_may_be_pooled = true;
  const TrtllmResult pooled = plan_trtllm(model, catalog_cards("h100", 1), later);
  CHECK(r.budget.free_memory - pooled.budget.free_memory == 354'483'768);
  CHECK(static_cast<double>(r.budget.kv_budget - pooled.budget.kv_budget) == Approx(319'035'392).margin(2));

  // TensorRT-LLM's default 2,048 requests: 2,049 x 49,082,368 B = 93.66 GiB of state, more than an
  // H100 has: it would not start (TensorRT-LLM issue #8642 saw the same on a 16 GB card).
  TrtllmSettings defaults;
  defaults.max_seq_len = 8'192;
  const TrtllmResult full = plan_trtllm(model, catalog_cards("h100", 1), defaults);
  CHECK(full.budget.mamba_state == 2'049ull * 49'082'368);
  CHECK(full.budget.free_memory == 0);
  CHECK_FALSE(full.starts);
  CHECK_THAT(full.refusal, Catch::Contains("the recurrent state of 2,049 request slots"));

  // Pipeline stages: the slots per stage changed across versions, not modelled.
  TrtllmSettings staged = s;
  staged.pp = 2;
  CHECK_THROWS_AS(plan_trtllm(model, catalog_cards("h100", 2), staged), Error);
}

// Qwen3.5-27B at --tp_size 2: each rank holds half of every Gated DeltaNet layer's state (the
// value heads and the conv channels divided), as for vLLM (state_split.h).
TEST_CASE("TensorRT-LLM hybrids: a Gated DeltaNet state split over the ranks", "[trtllm][hybrid]") {
  const ModelSpec model = catalog_model("qwen3.5-27b");
  TrtllmSettings one;
  one.max_batch_size = 8;
  one.max_seq_len = 32'768;
  TrtllmSettings two = one;
  two.tp = 2;
  const TrtllmResult r1 = plan_trtllm(model, catalog_cards("h100", 1), one);
  const TrtllmResult r2 = plan_trtllm(model, catalog_cards("h100", 2), two);
  CHECK(r1.budget.mamba_state == 2 * r2.budget.mamba_state);
  CHECK(r1.budget.mamba_slots == 9);
}
