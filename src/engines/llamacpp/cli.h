#pragma once
// `--runtime llama.cpp` on the command line: llama.cpp's flags (their short spellings are in
// src/engine_flags.h), and the plan priced with the llama.cpp profile
// (engines/llamacpp/rules.h). cli.cpp adds these options in one block and hands over to
// run_llamacpp_plan when the runtime is llama.cpp.

#include <iosfwd>
#include <string>
#include <vector>

#include "cli/plan_texts.h"

namespace CLI {
class App;
}

namespace kvplan {

/// The flags as text, turned into LlamaCppSettings by run_llamacpp_plan.
struct LlamaCppFlags {
  std::vector<std::string> ctx_size;  ///< --ctx-size, a list like --ctx: one row each
  std::string parallel;
  std::string batch_size;
  std::string ubatch_size;
  std::string cache_type_k;
  std::string cache_type_v;
  std::string flash_attn;
  std::string n_gpu_layers;
  bool kv_unified = false;
  bool swa_full = false;
};

/// Adds llama.cpp's flags to `app`, in their own option group.
void add_llamacpp_options(CLI::App& app, LlamaCppFlags& flags);

/// Throws when a llama.cpp flag is given without --runtime llama.cpp: it would change nothing.
void refuse_llamacpp_flags(const LlamaCppFlags& flags);

/// `kvplan --runtime llama.cpp ...`: prices every row with the llama.cpp profile and prints the
/// report with the llama.cpp figures and rules. Returns the exit code.
int run_llamacpp_plan(const PlanInputs& inputs, const LlamaCppFlags& flags, std::ostream& out);

}  // namespace kvplan
