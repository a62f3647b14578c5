#pragma once
// --ram auto: the system RAM this machine has available, read here, in the CLI, so that the
// library only ever sees a byte count (the llama.cpp profile's `ram` option).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kvplan/plan.h"

namespace kvplan {

/// MemAvailable of a /proc/meminfo text, in bytes (the kernel prints kB = 1024 bytes). Error when
/// the line is missing or not a number.
std::uint64_t parse_meminfo_available(std::string_view text, std::string_view source);

/// MemAvailable read from the meminfo file at `path` (/proc/meminfo on the machine; tests give a
/// captured one). Error naming `--ram SIZE` as the way forward when it cannot be read.
std::uint64_t read_meminfo_available(const std::string& path);

/// `--ram auto` among `options` becomes the bytes MemAvailable of `meminfo_path` says.
void resolve_ram_auto(std::vector<EngineOption>& options, const std::string& meminfo_path = "/proc/meminfo");

}  // namespace kvplan
