#pragma once
// System RAM the user declared for an engine that keeps layers there (llama.cpp, Ollama): the
// `ram` and `ram-bandwidth` options, read once by the profile. Without `ram` nothing is declared,
// and a row never counts system RAM.

#include <cstdint>
#include <optional>
#include <string>

#include "engines/core/profile.h"
#include "engines/core/ram_bandwidth.h"

namespace kvplan {

struct DeclaredRam {
  std::uint64_t bytes = 0;
  RamBandwidth bandwidth;
};

/// The request's `ram` (a size: the command line reads `auto` before the library sees it) and
/// `ram-bandwidth`. nullopt without `ram`; Error when `ram-bandwidth` comes without it, or for a
/// value that is not a size.
std::optional<DeclaredRam> read_declared_ram(const PlanRequest& request);

/// `host` (what the engine keeps in system RAM) against the declared RAM, for the core's verdict
/// and the decode bound.
HostMemory against_declared(HostMemory host, const DeclaredRam& ram);

/// "system RAM: 64.00 GiB declared": the start of the settings' note.
std::string declared_ram_text(const DeclaredRam& ram);

}  // namespace kvplan
