#pragma once
// `--runtime llama.cpp` on the command line: llama.cpp's own flag spellings, and the plan priced
// with the llama.cpp profile (include/kvplan/llamacpp_profile.h). cli.cpp adds these options in one
// block and hands over to run_llamacpp_plan when the runtime is llama.cpp.

#include <iosfwd>
#include <string>
#include <vector>

#include "plan_texts.h"

namespace CLI {
class App;
}

namespace kvplan {

/// CLI11 takes no multi-letter short flags, so llama.cpp's spellings are rewritten to long names
/// before parsing: -ctk -ctv -np -ub -fa -ngl -kvu. With `--runtime llama.cpp` on the line, -c and
/// -b take llama.cpp's meaning too (-c = --ctx-size, the total context of all sequences; -b =
/// --batch-size, the logical batch); without it they stay kvplan's --ctx and --batch. Arguments after
/// "--" are left alone. args[0] is the program name.
std::vector<std::string> rewrite_llamacpp_flags(const std::vector<std::string>& args);

/// The flags as text, turned into LlamaCppSettings by run_llamacpp_plan.
struct LlamaCppFlags {
  std::string runtime = "generic";
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

/// Adds --runtime and llama.cpp's flags to `app`, in their own option group.
void add_llamacpp_options(CLI::App& app, LlamaCppFlags& flags);

/// True for --runtime llama.cpp (also "llamacpp", "llama-cpp"); false for "generic". Throws for an
/// unknown runtime, and for llama.cpp flags given with the generic runtime.
bool wants_llamacpp_runtime(const LlamaCppFlags& flags);

/// `kvplan --runtime llama.cpp ...`: prices every row with the llama.cpp profile and prints the
/// report with the llama.cpp figures and rules. Returns the exit code.
int run_llamacpp_plan(const PlanInputs& inputs, const LlamaCppFlags& flags, std::ostream& out);

}  // namespace kvplan
