#pragma once
// `kvplan plot`: memory against context length for each cache dtype, as an SVG file.

#include <ostream>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace kvplan {

class PlotCommand {
 public:
  /// Declares the subcommand and its flags on `app`.
  explicit PlotCommand(CLI::App& app);
  bool parsed() const;
  /// Runs it; throws Error for bad input and OutputError when the file cannot be written.
  int run(std::ostream& out) const;

 private:
  CLI::App* command_ = nullptr;
  std::string model_, gpu_, ctx_, batch_, runtime_, utilization_, overhead_, output_, format_ = "svg", points_ = "48";
  std::vector<std::string> kv_dtypes_;
};

}  // namespace kvplan
