#include "cli/ram_flags.h"

#include <algorithm>
#include <charconv>
#include <fstream>

#include <fmt/format.h>

#include "kvplan/error.h"
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

void resolve_ram_auto(std::vector<EngineOption>& options, const std::string& meminfo_path) {
  for (EngineOption& option : options)
    if (option.name == "ram" && option.value == "auto")
      option.value = fmt::format("{}B", read_meminfo_available(meminfo_path));
}

}  // namespace kvplan
