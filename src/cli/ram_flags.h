#pragma once
// --ram auto: the system RAM this machine has available, read here, in the CLI, so that the
// library only ever sees a byte count (the llama.cpp and Ollama profiles' `ram` option): Linux's
// MemAvailable, or on a Mac (no /proc/meminfo) what its unified memory leaves beside the GPU's
// working set (`sysctl -n hw.memsize`, run as --gpu auto runs it: no shell, a time limit).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cli.h"
#include "kvplan/plan.h"

namespace kvplan {

/// MemAvailable of a /proc/meminfo text, in bytes (the kernel prints kB = 1024 bytes). Error when
/// the line is missing or not a number.
std::uint64_t parse_meminfo_available(std::string_view text, std::string_view source);

/// MemAvailable read from the meminfo file at `path` (/proc/meminfo on the machine; tests give a
/// captured one). Error naming `--ram SIZE` as the way forward when it cannot be read.
std::uint64_t read_meminfo_available(const std::string& path);

/// The bytes of `sysctl -n hw.memsize`'s output (one whole number and a newline). Error naming
/// `--ram SIZE` as the way forward otherwise.
std::uint64_t parse_hw_memsize(std::string_view text);

/// What `--ram auto` declares on a Mac of `memsize` bytes of unified memory: the RAM beside the
/// GPU's default working set (macos_gpu_working_set), which kvplan plans the GPU against, so that
/// no byte is counted twice. The bytes and the rule in words.
struct MacRam {
  std::uint64_t bytes = 0;
  std::string rule;
};
MacRam mac_ram_beside_gpu(std::uint64_t memsize);

/// `--ram auto` among `options` becomes the bytes MemAvailable of `meminfo_path` says; where that
/// file does not exist, what `sysctl -n hw.memsize` (on env's PATH) leaves beside the GPU's working
/// set. Nothing is run or read when no option says auto.
void resolve_ram_auto(std::vector<EngineOption>& options, const Environment& env = {},
                      const std::string& meminfo_path = "/proc/meminfo");

}  // namespace kvplan
