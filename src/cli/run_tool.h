#pragma once
// Runs a machine tool (nvidia-smi, rocm-smi, sysctl) for `--gpu auto`: found on the PATH kvplan
// was given, run without a shell, with a time limit and a bound on what it may print, so that a
// hung driver or a chatty tool is one clear error and never a hang.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace kvplan {

struct ToolResult {
  int exit_status = 0;  ///< the tool's exit code
  std::string output;   ///< its stdout
};

/// The first executable `name` in the directories of `path` (a PATH value); nullopt when none is.
std::optional<std::string> find_on_path(const std::string& name, const std::string& path);

/// Runs `program` (a full path) with `arguments`, PATH=`path` and LC_ALL=C; its stdout and stderr
/// together are the output. Throws Error (exit 2)
/// when it cannot start, runs past `limit` (it is killed), prints more than 1 MiB or dies by a
/// signal.
ToolResult run_tool(const std::string& program, const std::vector<std::string>& arguments, const std::string& path,
                    std::chrono::milliseconds limit);

}  // namespace kvplan
