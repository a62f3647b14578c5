#pragma once
// `--runtime vllm` on the command line: vLLM's flags (-tp is rewritten in src/engine_flags.h), and
// the plan priced with the vLLM profile (engines/vllm/rules.h). kvplan's --ctx,
// --kv-dtype and --util are vLLM's --max-model-len, --kv-cache-dtype and --gpu-memory-utilization.

#include <iosfwd>
#include <string>

#include "cli/plan_texts.h"

namespace CLI {
class App;
}

namespace kvplan {

/// vLLM's flags as text, turned into VllmSettings by run_vllm_plan.
struct VllmFlags {
  std::string tensor_parallel;         ///< --tensor-parallel-size, -tp
  std::string block_size;              ///< --block-size
  std::string max_num_seqs;            ///< --max-num-seqs
  std::string max_num_batched_tokens;  ///< --max-num-batched-tokens
  std::string kv_cache_memory;         ///< --kv-cache-memory: bytes or a size (37GiB)
  std::string version;                 ///< --vllm-version
  bool prefix_caching = false;         ///< --enable-prefix-caching
  bool no_hybrid_manager = false;      ///< --disable-hybrid-kv-cache-manager
};

/// Adds vLLM's flags to `app`, in their own option group.
void add_vllm_options(CLI::App& app, VllmFlags& flags);

/// Throws when a vLLM flag is given without --runtime vllm: it would change nothing.
void refuse_vllm_flags(const VllmFlags& flags);

/// `kvplan --runtime vllm ...`: prices every row with the vLLM profile and prints the report with
/// vLLM's figures and rules. Returns the exit code.
int run_vllm_plan(const PlanInputs& inputs, const VllmFlags& flags, std::ostream& out);

}  // namespace kvplan
