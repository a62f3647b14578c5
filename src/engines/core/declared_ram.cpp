#include "engines/core/declared_ram.h"

#include <algorithm>

#include <fmt/format.h>

#include "kvplan/error.h"
#include "kvplan/units.h"

namespace kvplan {

std::optional<DeclaredRam> read_declared_ram(const PlanRequest& request) {
  const EngineOption* ram = find_option(request, "ram");
  const EngineOption* bandwidth = find_option(request, "ram-bandwidth");
  if (!ram) {
    if (bandwidth) throw Error(fmt::format("{}: the bandwidth of declared system RAM; declare the RAM too", bandwidth->shown_as));
    return std::nullopt;
  }
  if (ram->value == "auto")
    throw Error(fmt::format("{} auto: the command line reads it from this machine; give a size", ram->shown_as));
  DeclaredRam out;
  out.bytes = parse_memory_size(ram->value, ram->shown_as);
  out.bandwidth = parse_ram_bandwidth(bandwidth ? std::string_view(bandwidth->value) : std::string_view(),
                                      bandwidth ? std::string_view(bandwidth->shown_as) : std::string_view("ram-bandwidth"));
  return out;
}

HostMemory against_declared(HostMemory host, const DeclaredRam& ram) {
  host.ram_bytes = ram.bytes;
  host.ram_bandwidth_gbps = ram.bandwidth.gbps;
  host.ram_bandwidth_source = ram.bandwidth.source;
  return host;
}

std::string declared_ram_text(const DeclaredRam& ram) {
  return fmt::format("system RAM: {} declared", format_gib(static_cast<std::int64_t>(std::min(ram.bytes, std::uint64_t{1} << 62))));
}

}  // namespace kvplan
