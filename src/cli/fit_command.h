#pragma once
// `kvplan fit`: what runs on a card. Every catalog model x weight format x KV dtype the engine
// offers, priced by the planning core (kvplan/fit.h), ranked, as a table, CSV or JSON.

#include <ostream>
#include <string>

#include "cli/plan_inputs.h"

namespace CLI {
class App;
}

namespace kvplan {

class FitCommand {
 public:
  /// Registers the subcommand on `app`; the main command's flags (--gpu, --ctx, --runtime, engine
  /// flags, --format) fall through to it.
  explicit FitCommand(CLI::App& app);

  bool parsed() const;
  /// Evaluates the catalog for what the flags ask and writes the answer; the exit code.
  int run(const PlanInputs& inputs, std::ostream& out) const;

 private:
  CLI::App* command_ = nullptr;
  std::string quality_ = "int4", family_, min_params_, max_params_, top_ = "20";
  bool all_ = false;
};

}  // namespace kvplan
