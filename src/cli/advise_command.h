#pragma once
// `kvplan advise`: the cheapest cards, counts and dtypes that run a model at a context.

#include <ostream>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace kvplan {

class AdviseCommand {
 public:
  /// Declares the subcommand and its flags on `app`.
  explicit AdviseCommand(CLI::App& app);
  bool parsed() const;
  /// Runs it; throws Error for bad input, like the plan command.
  int run(std::ostream& out) const;

 private:
  CLI::App* command_ = nullptr;
  std::string model_, ctx_, batch_, quality_ = "lossless", runtime_, gpus_, max_gpus_ = "8", top_ = "5", prices_, format_ = "table",
      utilization_, overhead_;
  bool quiet_ = false;
};

}  // namespace kvplan
