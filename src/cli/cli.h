#pragma once
/// The command line: flags in, a report on `out`, errors as one line on `err`, an exit code back.

#include <iosfwd>

namespace kvplan {

struct Terminal {
  bool stdout_is_tty = false;
  bool no_color_env = false;  ///< NO_COLOR is set
};

/// Runs kvplan as `kvplan <args>` would and returns the exit code (README "Exit codes").
int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err, const Terminal& terminal);

}  // namespace kvplan
