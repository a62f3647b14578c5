#include "cli/ram_flags.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "cli/run_tool.h"
#include "kvplan/error.h"
#include "loaders/unified_memory.h"
#include "kvplan/units.h"

namespace kvplan {

std::uint64_t parse_meminfo_available(std::string_view text, std::string_view source) {
  constexpr std::string_view key = "MemAvailable:";
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    std::string_view line = text.substr(at, end - at);
    at = end + 1;
    if (line.substr(0, key.size()) != key) continue;
    line.remove_prefix(key.size());
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    std::uint64_t kib = 0;
    const auto [rest, ec] = std::from_chars(line.data(), line.data() + line.size(), kib);
    const std::string_view unit(rest, static_cast<std::size_t>(line.data() + line.size() - rest));
    if (ec != std::errc() || (unit != " kB" && unit != " kB\r"))
      throw Error(fmt::format("--ram auto: {}: the MemAvailable line is not 'N kB'; give --ram SIZE", source));
    return checked_mul(kib, 1024, "--ram auto");
  }
  throw Error(fmt::format("--ram auto: {} has no MemAvailable line (a kernel before 3.14?); give --ram SIZE", source));
}

std::uint64_t read_meminfo_available(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw Error(fmt::format("--ram auto: cannot read {}; give --ram SIZE", path));
  std::string text(64 * 1024, '\0');  // /proc/meminfo is a few KiB
  file.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(file.gcount()));
  return parse_meminfo_available(text, path);
}

std::uint64_t parse_hw_memsize(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  std::uint64_t bytes = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), bytes);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || bytes == 0)
    throw Error("--ram auto: 'sysctl -n hw.memsize' did not print a number of bytes; give --ram SIZE");
  return bytes;
}

MacRam mac_ram_beside_gpu(std::uint64_t memsize) {
  const WorkingSet gpu = macos_gpu_working_set(memsize);
  MacRam out;
  out.bytes = memsize - std::min(memsize, gpu.bytes);
  out.rule = fmt::format("unified memory: {} of RAM less the GPU's working set {} ({})", format_gib(static_cast<std::int64_t>(memsize)),
                         format_gib(static_cast<std::int64_t>(gpu.bytes)), gpu.rule);
  return out;
}

namespace {

/// A Mac's RAM beside its GPU's working set, from sysctl on env's PATH.
std::uint64_t mac_ram(const Environment& env, const std::string& meminfo_path) {
  const std::string path = env.get("PATH").value_or("");
  const std::optional<std::string> sysctl = find_on_path("sysctl", path);
  if (!sysctl) throw Error(fmt::format("--ram auto: no {} and no sysctl on the PATH; give --ram SIZE", meminfo_path));
  const ToolResult result = run_tool(*sysctl, {"-n", "hw.memsize"}, path, std::chrono::milliseconds(10'000));
  if (result.exit_status != 0)
    throw Error(fmt::format("--ram auto: no {}, and 'sysctl -n hw.memsize' failed (exit {}): not a Mac; give --ram SIZE",
                            meminfo_path, result.exit_status));
  return mac_ram_beside_gpu(parse_hw_memsize(result.output)).bytes;
}

}  // namespace

void resolve_ram_auto(std::vector<EngineOption>& options, const Environment& env, const std::string& meminfo_path) {
  for (EngineOption& option : options)
    if (option.name == "ram" && option.value == "auto") {
      std::error_code error;
      const bool linux_like = std::filesystem::exists(meminfo_path, error);
      option.value = fmt::format("{}B", linux_like ? read_meminfo_available(meminfo_path) : mac_ram(env, meminfo_path));
    }
}

}  // namespace kvplan
