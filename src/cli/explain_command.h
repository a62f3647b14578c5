#pragma once
// `kvplan explain LOG`: the subcommand's flags and its run, kept out of cli.cpp.

#include <iosfwd>
#include <memory>
#include <string>

namespace CLI {
class App;
}

namespace kvplan {

class ExplainCommand {
 public:
  /// Adds the `explain` subcommand to `app`; its flags are bound to this object.
  static std::unique_ptr<ExplainCommand> add_to(CLI::App& app);

  bool parsed() const;
  /// Reads the log (a file, or stdin for "-"), explains it and writes the report. Exit code 0, or
  /// throws Error: exit 2 when no line of the log was recognised.
  int run(std::ostream& out) const;

 private:
  CLI::App* command_ = nullptr;
  std::string log_;
  std::string model_;
  std::string gpu_;
  std::string format_;
};

}  // namespace kvplan
