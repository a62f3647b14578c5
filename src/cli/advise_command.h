#pragma once
// `kvplan advise`: the cheapest cards, counts and dtypes that run a model at a context.

#include <ostream>
#include <string>
#include <vector>

#include "cli/engine_flags.h"

namespace CLI {
class App;
}

namespace kvplan {

struct EngineEntry;
struct Environment;

class AdviseCommand {
 public:
  /// Declares the subcommand and its flags on `app`, with `runtime`'s own flags (every engine's
  /// when null), which apply to every configuration it tries.
  AdviseCommand(CLI::App& app, const EngineEntry* runtime);
  bool parsed() const;
  /// Runs it; throws Error for bad input, like the plan command. `env` holds the variables the
  /// engine reads.
  int run(std::ostream& out, const Environment& env) const;

 private:
  CLI::App* command_ = nullptr;
  std::string model_, ctx_, batch_, quality_ = "lossless", runtime_, gpus_, max_gpus_ = "8", top_ = "5", prices_, format_ = "table",
      utilization_, overhead_;
  bool quiet_ = false;
  const EngineEntry* engine_ = nullptr;  // the runtime named on the line (null: not known)
  EngineFlags engine_flags_;
};

}  // namespace kvplan
