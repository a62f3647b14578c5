#pragma once
/// Unified-memory Macs (Apple silicon): the GPU shares the RAM, and Metal lets it use the working
/// set macOS recommends (MTLDevice.recommendedMaxWorkingSetSize), not the whole RAM. That default
/// is the budget kvplan plans against, labelled as such.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kvplan/gpu.h"

namespace kvplan {

struct WorkingSet {
  std::uint64_t bytes = 0;
  std::string rule;  ///< how it follows from the RAM, with the sources
};

/// The GPU working set macOS grants by default on a Mac with `ram_bytes` of unified memory: 2/3 of
/// the RAM below 64 GiB, 3/4 from 64 GiB, rounded down (the smaller share where the sources leave
/// it open, so that a plan never counts on more than macOS gives).
WorkingSet macos_gpu_working_set(std::uint64_t ram_bytes);

/// "m3-max-128gb", "M2 Ultra 192GB", "m4-24gb": an Apple silicon Mac by chip and RAM, with the
/// working set as its memory; nullopt when `text` does not have that shape.
std::optional<GpuSpec> apple_silicon_gpu(std::string_view text, std::string_view setting);

/// `--unified`: the memory `gpu` gives is the RAM of a unified-memory machine; its budget becomes
/// the working set.
GpuSpec as_unified_memory(GpuSpec gpu);

}  // namespace kvplan
