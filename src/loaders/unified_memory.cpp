#include "loaders/unified_memory.h"

#include <cctype>

#include <fmt/format.h>

#include "kvplan/error.h"
#include "kvplan/gpu.h"
#include "kvplan/units.h"

namespace kvplan {

namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

// Printed by llama.cpp's Metal backend (ggml_metal_init: recommendedMaxWorkingSetSize, in MiB):
// 16 GiB -> 10922.67 (llama-cpp-python#687), 32 GiB -> 21845.34 (ollama#434): two thirds;
// 96 GiB -> 73728.00 (llama.cpp#3213): three quarters; 64 GiB -> 48 GiB and 192 GiB -> 144 GiB
// (Rapid-MLX#183's table). No source gives a Mac between 36 and 64 GiB, so they get the smaller share.
constexpr std::string_view kSources = "llama.cpp#3213, ollama#434, llama-cpp-python#687, Rapid-MLX#183";

}  // namespace

WorkingSet macos_gpu_working_set(std::uint64_t ram_bytes) {
  const bool large = ram_bytes >= 64 * kGiB;
  // ram x 3 / 4 or x 2 / 3 without overflow: divide first, then add the remainder's share.
  const std::uint64_t num = large ? 3 : 2, den = large ? 4 : 3;
  const std::uint64_t bytes = ram_bytes / den * num + ram_bytes % den * num / den;
  return {bytes, fmt::format("macOS GPU working set (recommendedMaxWorkingSetSize default): {} of {} unified memory{}; "
                             "sources {}",
                             large ? "3/4" : "2/3", format_gib(static_cast<std::int64_t>(ram_bytes)),
                             large ? "" : " (below 64 GiB)", kSources)};
}

std::optional<GpuSpec> apple_silicon_gpu(std::string_view text, std::string_view setting) {
  // m<generation>[pro|max|ultra]<RAM>gb, spaces and dashes aside: "m3max128gb".
  const std::string t = normalized_gpu_name(text);
  if (t.size() < 5 || t[0] != 'm' || !std::isdigit(static_cast<unsigned char>(t[1]))) return std::nullopt;
  // One digit of generation (M1 to M5 so far), so "m4-24gb" compacts to "m424gb" unambiguously.
  const std::string generation = t.substr(1, 1);
  std::size_t i = 2;
  std::string tier;
  for (std::string_view candidate : {"pro", "max", "ultra"})
    if (t.compare(i, candidate.size(), candidate) == 0) {
      tier = std::string(candidate);
      i += candidate.size();
    }
  const std::size_t digits = i;
  while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
  if (i == digits || t.substr(i) != "gb" || i - digits > 4) return std::nullopt;
  const std::uint64_t ram_gib = std::stoull(t.substr(digits, i - digits));
  if (ram_gib < 8 || ram_gib > 1024) 
    throw Error(fmt::format("{}: '{}': {} GB is not the memory of an Apple silicon Mac", setting, text, ram_gib));
  // Apple's "128GB" of unified memory is 128 GiB (2^30 bytes each), as the working sets above show.
  const WorkingSet set = macos_gpu_working_set(ram_gib * kGiB);
  GpuSpec gpu;
  gpu.id = fmt::format("m{}{}-{}gb", generation, tier.empty() ? "" : "-" + tier, ram_gib);
  gpu.name = fmt::format("Apple M{}{} ({} GiB unified memory)", generation,
                         tier.empty() ? "" : " " + std::string(1, static_cast<char>(std::toupper(tier[0]))) + tier.substr(1),
                         ram_gib);
  gpu.vendor = "apple";
  gpu.arch = "apple-silicon";
  gpu.memory_bytes = set.bytes;
  gpu.memory_basis = "macOS GPU working set";
  gpu.memory_source = set.rule;
  return gpu;
}

GpuSpec as_unified_memory(GpuSpec gpu) {
  const WorkingSet set = macos_gpu_working_set(gpu.memory_bytes);
  gpu.name = fmt::format("{} of unified memory", gpu.id);
  gpu.memory_bytes = set.bytes;
  gpu.memory_basis = "macOS GPU working set";
  gpu.memory_source = set.rule;
  return gpu;
}

}  // namespace kvplan
