#pragma once
// `--gpu auto`: the cards of this machine, from nvidia-smi, rocm-smi or (on a Mac) sysctl, as
// kvplan's GPUs, with the memory other processes already hold on them.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "kvplan/gpu.h"

namespace kvplan {

struct MachineGpus {
  std::vector<GpuSpec> gpus;  ///< memory as the tool reports it; catalog facts where the name is known
  /// The most any card has in use (the plan's --used for every card), nullopt for none known.
  std::optional<std::uint64_t> used_bytes;
  std::string tool;  ///< "nvidia-smi", "rocm-smi", "sysctl"
};

/// Runs the first tool found on env's PATH (never a shell, never the process's own PATH) and reads
/// its cards. `need_used`: a card whose used memory the tool does not report is exit 3 (plan for an
/// empty card with --ignore-used, or give --used). Throws Error with the way forward (--gpu NAME)
/// when no tool is found, it fails, hangs or prints what kvplan cannot read.
MachineGpus detect_machine_gpus(const Environment& env, bool need_used);

}  // namespace kvplan
