#include "loaders/gpu_facts.h"

namespace kvplan {

GpuSpec gpu_from_facts(const embedded::GpuFacts& facts) {
  GpuSpec gpu;
  gpu.id = facts.id;
  gpu.name = facts.name;
  gpu.aliases = embedded::items_of(facts.aliases);
  gpu.vendor = facts.vendor;
  gpu.arch = facts.arch;
  gpu.memory_bytes = facts.memory_bytes;
  gpu.memory_basis = facts.memory_basis;
  gpu.memory_source = facts.memory_source;
  if (facts.has_cuda_total) gpu.cuda_total_bytes = facts.cuda_total_bytes;
  gpu.cuda_total_source = facts.cuda_total_source;
  gpu.fp8 = facts.fp8;
  gpu.int8 = facts.int8;
  if (facts.has_bandwidth) gpu.bandwidth_gbps = facts.bandwidth_gbps;
  if (facts.has_price) gpu.price_usd_per_hour = facts.price_usd_per_hour;
  gpu.price_source = facts.price_source;
  return gpu;
}

}  // namespace kvplan
