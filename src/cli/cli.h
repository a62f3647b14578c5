#pragma once
/// The command line: flags in, a report on `out`, errors as one line on `err`, an exit code back.

#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kvplan {

struct Terminal {
  bool stdout_is_tty = false;
  bool no_color_env = false;  ///< NO_COLOR is set
  std::size_t columns = 0;    ///< the terminal's width when stdout is one; 0 otherwise
};

/// The environment variables a run sees (the engines' own: VLLM_ALLOW_LONG_MAX_MODEL_LEN, ...).
/// main() fills it from the process; tests and fuzzers pass their own, so a run is reproducible.
struct Environment {
  std::map<std::string, std::string> variables;
  std::optional<std::string> get(const std::string& name) const;
};

/// Runs kvplan as `kvplan <args>` would and returns the exit code (docs/cli.md, "Exit codes").
int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err, const Terminal& terminal,
            const Environment& env = {});

/// The environment variables kvplan reads, for main() to copy from the process.
std::vector<std::string> environment_names();

}  // namespace kvplan
