#pragma once
// Runs the built kvplan binary as a user would, for the CLI tests.

#include <string>

namespace kvplan::testing {

struct ProcessResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

/// Runs `kvplan <arguments>` through /bin/sh (arguments are shell words, quote as needed), with
/// NO_COLOR unset unless `environment` sets it and HF_HUB_CACHE naming no folder (no Hugging Face
/// cache of the machine's), and returns its exit code, stdout and stderr.
ProcessResult run_kvplan(const std::string& arguments, const std::string& environment = "");

/// The contract for a refused input (README "Exit codes"): exit `code`, nothing on stdout, and
/// exactly one line on stderr, starting "kvplan: error: " and containing `expected`. Checked with
/// Catch CHECKs; the caller's INFO says which command it was.
void check_refused(const ProcessResult& result, const std::string& expected, int code = 2);

/// Path of a file in the source tree, e.g. source_path("tests/golden/x.txt").
std::string source_path(const std::string& relative);

/// Whole file contents; empty when missing.
std::string read_file(const std::string& path);

}  // namespace kvplan::testing
