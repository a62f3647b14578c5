#pragma once
// `kvplan check`: deployment files and engine command lines checked for CI (docs/check.md).

#include <iosfwd>

namespace kvplan {

/// Runs `kvplan check <args>` (argv[0] is "kvplan", argv[1] "check"); "-" reads `in`. Returns the
/// exit code: 0 all fit, 1 a deployment does not fit (or is tight under --strict), 2 invalid, 3
/// unsupported, 5 output not written.
int run_check_command(int argc, const char* const* argv, std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace kvplan
