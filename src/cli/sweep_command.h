#pragma once
// `kvplan sweep`: every model x deployment x context x cache dtype as one row per line (NDJSON or
// CSV), streamed as the core settles them (kvplan/sweep.h).

#include <ostream>
#include <string>

#include "cli/plan_inputs.h"

namespace CLI {
class App;
}

namespace kvplan {

class SweepCommand {
 public:
  /// Registers the subcommand on `app`; the main command's flags fall through to it.
  explicit SweepCommand(CLI::App& app);

  bool parsed() const;
  int run(const PlanInputs& inputs, std::ostream& out, std::ostream& err) const;

 private:
  CLI::App* command_ = nullptr;
  std::string models_;  ///< --models
  std::string gpus_;    ///< --gpus
};

}  // namespace kvplan
