#pragma once
// `kvplan max`: the largest context, the largest batch and the fewest GPUs for each cache dtype
// (kvplan/search.h), as a table or JSON.

#include <ostream>
#include <string>

#include "cli/plan_inputs.h"

namespace CLI {
class App;
}

namespace kvplan {

class MaxCommand {
 public:
  /// Registers the subcommand on `app`; the main command's flags fall through to it.
  explicit MaxCommand(CLI::App& app);

  bool parsed() const;
  /// Runs the searches for what the flags ask and writes the answer; the exit code.
  int run(const PlanInputs& inputs, std::ostream& out) const;

 private:
  CLI::App* command_ = nullptr;
  std::string cap_;  ///< --max-ctx-cap
};

}  // namespace kvplan
