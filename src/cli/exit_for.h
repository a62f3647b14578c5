#pragma once
// What the command line prints and returns for an exception: one place, so `kvplan` and
// `kvplan check` (which parses its own arguments) cannot drift apart on the exit-code contract.

#include <exception>
#include <ostream>
#include <string_view>

namespace CLI {
class App;
}

namespace kvplan {

/// For an exception thrown while parsing `app`'s arguments: --help and --version print to `out`
/// and succeed (exit 5 when that write fails), a parse error is exit 2 pointing at `help_command`
/// ("kvplan --help"), kvplan's own errors keep their code. Anything else is rethrown.
int exit_for_parse_error(const std::exception_ptr& thrown, const CLI::App& app, std::ostream& out, std::ostream& err,
                         std::string_view help_command);

/// For an exception thrown while running a command: one line on `err` and the documented code
/// (5 for output that could not be written, quiet for a closed pipe; 4 out of memory; 2 for any
/// other standard exception). Anything that is not a std::exception is rethrown.
int exit_for_run_error(const std::exception_ptr& thrown, std::ostream& err);

}  // namespace kvplan
