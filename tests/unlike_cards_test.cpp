// Unlike cards under engines that run every rank alike (vLLM, SGLang, TensorRT-LLM): the smallest
// card bounds them all, and the plan says so with what the larger cards leave unused (issue #18).

#include <catch2/catch.hpp>

#include "support/run_binary.h"

namespace kvplan {

using testing::run_kvplan;

TEST_CASE("unlike cards: the smallest bounds every rank, and the larger cards' memory beyond it is named", "[unlike_cards]") {
  // RTX 5090 34,190,917,632 B - RTX 3090 25,769,803,776 B = 8,421,113,856 B = 7.84 GiB.
  for (const std::string runtime : {"vllm", "sglang", "trtllm"}) {
    INFO(runtime);
    const testing::ProcessResult mixed =
        run_kvplan("--model llama3.1-8b --ctx 32k --kv-dtype fp16 --gpu 5090+3090 --runtime " + runtime);
    CHECK(mixed.exit_code == 0);
    CHECK_THAT(mixed.out, Catch::Contains("runs every rank alike: the smallest card (NVIDIA GeForce RTX 3090, 24.00 GiB) "
                                          "bounds them all; NVIDIA GeForce RTX 5090 leaves 7.84 GiB unused"));
    // Alike cards: nothing to say.
    const testing::ProcessResult alike = run_kvplan("--model llama3.1-8b --ctx 32k --kv-dtype fp16 --gpu 2x3090 --runtime " + runtime);
    CHECK_THAT(alike.out, !Catch::Contains("runs every rank alike"));
  }
  // Three 5090s beside one 3090 are named once.
  const testing::ProcessResult three =
      run_kvplan("--model llama3.1-8b --ctx 32k --kv-dtype fp16 --gpu 3x5090+3090 --runtime vllm");
  CHECK_THAT(three.out, Catch::Contains("bounds them all; NVIDIA GeForce RTX 5090 leaves 7.84 GiB unused\n"));
  // llama.cpp splits layers by each card's memory: no such note.
  CHECK_THAT(run_kvplan("--model llama3.1-8b --ctx 32k --kv-dtype fp16 --gpu 5090+3090 --runtime llama.cpp").out,
             !Catch::Contains("runs every rank alike"));
}

}  // namespace kvplan
