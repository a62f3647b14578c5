#pragma once
// The cards of this machine as its vendor tools print them (`kvplan --gpu auto`). Parsing only:
// running the tools is the command line's job (cli/gpu_auto), so these stay pure and testable
// against captured outputs.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvplan {

struct DetectedGpu {
  std::string index;  ///< as the tool numbers it: "0", "card1"
  std::string name;   ///< as the tool prints it: "NVIDIA GeForce RTX 4090"
  std::uint64_t total_bytes = 0;
  std::optional<std::uint64_t> used_bytes;  ///< nullopt when the tool says [N/A]
};

/// `nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv,noheader,nounits`: one
/// card per line, memory in MiB. Throws Error (exit 2) for a line of another shape, exit 3 for a
/// total of [N/A] (nothing to plan against).
std::vector<DetectedGpu> parse_nvidia_smi_csv(std::string_view text);

/// `rocm-smi --showproductname --showmeminfo vram --json`: {"card0": {"Card Series": ...,
/// "VRAM Total Memory (B)": "...", "VRAM Total Used Memory (B)": "..."}}, memory in bytes.
std::vector<DetectedGpu> parse_rocm_smi_json(std::string_view text);

/// `sysctl -n hw.memsize machdep.cpu.brand_string` on a Mac: the RAM in bytes, then the chip
/// ("Apple M3 Max"). The unified memory as one card; its working set is the caller's to apply.
DetectedGpu parse_apple_sysctl(std::string_view text);

}  // namespace kvplan
