#pragma once
// --unified: a memory size given with --gpu is a unified-memory Mac's RAM.

#include <vector>

#include "kvplan/gpu.h"

namespace kvplan {

/// Each card of `gpus` as a unified-memory machine's RAM, its budget the macOS working set. Only
/// memory sizes (--gpu 64GiB) take the flag: a catalog card has its own memory.
std::vector<GpuSpec> unified_memory_gpus(std::vector<GpuSpec> gpus);

}  // namespace kvplan
