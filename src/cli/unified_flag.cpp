#include "cli/unified_flag.h"

#include <fmt/format.h>

#include "kvplan/error.h"
#include "loaders/unified_memory.h"

namespace kvplan {

std::vector<GpuSpec> unified_memory_gpus(std::vector<GpuSpec> gpus) {
  for (GpuSpec& gpu : gpus) {
    if (gpu.memory_basis != "given")
      throw Error(fmt::format("--unified: takes a memory size (--gpu 64GiB --unified), not the card {}{}", gpu.id,
                              gpu.memory_basis == "macOS GPU working set" ? ", whose budget is the working set already"
                                                                          : ""));
    gpu = as_unified_memory(gpu);
  }
  return gpus;
}

}  // namespace kvplan
