#include "cli/gpu_auto.h"

#include <algorithm>

#include <fmt/format.h>

#include "cli/run_tool.h"
#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "kvplan/units.h"
#include "loaders/detect/detected_gpus.h"
#include "loaders/unified_memory.h"
#include "model/text.h"

namespace kvplan {

namespace {

// A driver that hangs (a GPU fallen off the bus) makes nvidia-smi wait for minutes.
constexpr std::chrono::milliseconds kToolLimit{10'000};

constexpr std::string_view kWayForward = "give --gpu NAME (kvplan gpus lists them) or --gpu SIZE";

/// The tool's first non-empty line, for an error that quotes it.
std::string first_line(std::string_view output) {
  std::size_t start = 0;
  while (start < output.size()) {
    const std::size_t end = std::min(output.find('\n', start), output.size());
    const std::string_view line = trim(output.substr(start, end - start));
    if (!line.empty()) return std::string(line.substr(0, 160));
    start = end + 1;
  }
  return "(no output)";
}

ToolResult run_or_explain(const std::string& program, const std::vector<std::string>& arguments, const std::string& path,
                          std::string_view tool) {
  try {
    ToolResult result = run_tool(program, arguments, path, kToolLimit);
    if (result.exit_status != 0)
      throw Error(fmt::format("{} failed (exit {}): {}; {}", tool, result.exit_status, first_line(result.output),
                              kWayForward));
    return result;
  } catch (const Error& error) {
    throw Error(fmt::format("--gpu auto: {}", error.what()), error.code());
  }
}

/// A detected card as kvplan's GPU: the catalog's facts (bandwidth, fp8) where its name is known,
/// always the memory the tool reported.
GpuSpec as_gpu(const DetectedGpu& detected, std::string_view tool) {
  GpuSpec gpu;
  if (const GpuSpec* known = builtin_gpus().find(detected.name)) {
    gpu = *known;
    // The CUDA-visible total came from one log of this card: it holds only at the same total.
    if (gpu.memory_bytes != detected.total_bytes) gpu.cuda_total_bytes.reset();
  } else {
    gpu.id = "detected-" + detected.index;
    gpu.name = detected.name.empty() ? fmt::format("GPU {}", detected.index) : detected.name;
  }
  gpu.memory_bytes = detected.total_bytes;
  gpu.memory_basis = "detected";
  gpu.memory_source =
      fmt::format("--gpu auto: {} GPU {} '{}', {} MiB in all{}", tool, detected.index, detected.name,
                  detected.total_bytes / MiB,
                  detected.used_bytes ? fmt::format(", {} MiB in use", *detected.used_bytes / MiB) : std::string());
  return gpu;
}

MachineGpus from_cards(const std::vector<DetectedGpu>& cards, std::string_view tool, bool need_used) {
  MachineGpus machine;
  machine.tool = std::string(tool);
  for (const DetectedGpu& card : cards) {
    machine.gpus.push_back(as_gpu(card, tool));
    if (!need_used) continue;
    if (!card.used_bytes)
      throw Error(fmt::format("--gpu auto: {} does not report the memory in use on GPU {} ('{}'): give --used SIZE, "
                              "or --ignore-used to plan for an empty card",
                              tool, card.index, card.name),
                  ExitCode::unsupported_architecture);
    // One --used for every card: the fullest card's, so that no card is promised memory it lacks.
    machine.used_bytes = std::max(machine.used_bytes.value_or(0), *card.used_bytes);
  }
  return machine;
}

/// A Mac: its unified memory's GPU working set, as `--gpu m3-max-128gb` gives it.
MachineGpus from_mac(const DetectedGpu& mac) {
  MachineGpus machine;
  machine.tool = "sysctl";
  std::string chip = mac.name;
  if (chip.rfind("Apple ", 0) == 0) chip.erase(0, 6);
  std::optional<GpuSpec> gpu;
  if (mac.total_bytes % GiB == 0) gpu = apple_silicon_gpu(fmt::format("{}-{}gb", chip, mac.total_bytes / GiB), "--gpu auto");
  if (!gpu) {
    GpuSpec plain;
    plain.id = "detected-mac";
    plain.memory_bytes = mac.total_bytes;
    gpu = as_unified_memory(plain);
    gpu->name = mac.name + " (unified memory)";
  }
  gpu->memory_source = fmt::format("--gpu auto: sysctl '{}', {} MiB of unified memory; the GPU's share is macOS's "
                                    "working set ({}), and what other apps use is not known",
                                    mac.name, mac.total_bytes / MiB, gpu->memory_source);
  machine.gpus.push_back(*gpu);
  return machine;
}

}  // namespace

MachineGpus detect_machine_gpus(const Environment& env, bool need_used) {
#ifdef __EMSCRIPTEN__
  // The web page runs no program and cannot see the machine's cards.
  throw Error(fmt::format("--gpu auto reads this machine's cards, which a web page cannot: {}", kWayForward));
#endif
  const std::string path = env.get("PATH").value_or("");
  if (const std::optional<std::string> nvidia_smi = find_on_path("nvidia-smi", path)) {
    const ToolResult result = run_or_explain(
        *nvidia_smi, {"--query-gpu=index,name,memory.total,memory.used", "--format=csv,noheader,nounits"}, path,
        "nvidia-smi");
    return from_cards(parse_nvidia_smi_csv(result.output), "nvidia-smi", need_used);
  }
  if (const std::optional<std::string> rocm_smi = find_on_path("rocm-smi", path)) {
    const ToolResult result =
        run_or_explain(*rocm_smi, {"--showproductname", "--showmeminfo", "vram", "--json"}, path, "rocm-smi");
    return from_cards(parse_rocm_smi_json(result.output), "rocm-smi", need_used);
  }
  // sysctl exists on Linux too, where hw.memsize does not: only a Mac answers.
  if (const std::optional<std::string> sysctl = find_on_path("sysctl", path)) {
    const ToolResult result = run_tool(*sysctl, {"-n", "hw.memsize", "machdep.cpu.brand_string"}, path, kToolLimit);
    if (result.exit_status == 0) return from_mac(parse_apple_sysctl(result.output));
  }
  throw Error(fmt::format("--gpu auto: no nvidia-smi or rocm-smi on the PATH, and not a Mac: {}", kWayForward));
}

}  // namespace kvplan
