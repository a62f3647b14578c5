#pragma once
/// Accelerators and their memory as the driver reports it (nvidia-smi's Total), which is what an
/// engine can actually allocate against, not the marketed "24 GB".

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvplan/export.h"

namespace kvplan {

struct GpuSpec {
  std::string id;  ///< short catalog id, "rtx4090"
  std::string name;
  std::vector<std::string> aliases;
  std::string vendor;
  std::string arch;
  std::uint64_t memory_bytes = 0;
  std::string memory_basis;   ///< "driver-reported", "marketed", or "given" for a raw capacity
  std::string memory_source;  ///< where the figure comes from
  /// The device total CUDA reports (torch.cuda.mem_get_info()[1]), below nvidia-smi's Total by what
  /// the driver reserves; vLLM budgets utilization against it. Only where a real log printed it.
  std::optional<std::uint64_t> cuda_total_bytes;
  std::string cuda_total_source;  ///< the log that printed it, and its precision
  bool fp8 = false;           ///< native FP8 tensor cores (matters for fp8 weights and caches)
  bool int8 = false;
  std::optional<double> bandwidth_gbps;
  std::optional<double> price_usd_per_hour;  ///< approximate; see price_source for the date
  std::string price_source;
  /// How an ambiguous name was resolved ("'a100' can mean ..."); empty when it was not.
  std::string resolution_note;
};

struct GpuCatalog {
  std::vector<GpuSpec> gpus;

  /// By id, name or alias, ignoring case, spaces, dashes and underscores; nullptr when unknown.
  KVPLAN_API const GpuSpec* find(std::string_view name) const;
  /// Every id and alias, for "did you mean".
  KVPLAN_API std::vector<std::string> names() const;
};

/// Parses the GPU catalog file format (gpus/gpus.json). `origin` names the file in errors.
KVPLAN_API GpuCatalog parse_gpu_catalog(std::string_view json_text, std::string_view origin);

/// A GPU setting: a catalog name ("4090", "h100", "a100-80g") or a memory size with its unit
/// ("24GiB", "24GB", "80G"). A name several cards of different memory share ("a100") means the
/// smallest of them, said in `resolution_note`. Errors name `setting`.
KVPLAN_API GpuSpec resolve_gpu(std::string_view text, const GpuCatalog& catalog, std::string_view setting = "gpu");

/// The GPUs of a deployment: "4090", "2x4090", "4xh100", "5090+3090", "2x3090+4090", "2x24GiB",
/// each part resolved as resolve_gpu does. At most 4,096 cards. Errors name `setting`.
KVPLAN_API std::vector<GpuSpec> resolve_gpus(std::string_view text, const GpuCatalog& catalog, std::string_view setting = "gpu");

/// "RTX 4090", "rtx-4090" and "rtx_4090" all name the same card: lower case, no spaces, dashes or
/// underscores.
KVPLAN_API std::string normalized_gpu_name(std::string_view name);

}  // namespace kvplan
