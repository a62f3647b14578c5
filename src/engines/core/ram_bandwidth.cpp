#include "engines/core/ram_bandwidth.h"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "kvplan/error.h"
#include "model/text.h"

namespace kvplan {

namespace {

/// Peak bandwidth of a dual-channel desktop: transfers per second x 8 bytes per 64-bit channel x 2
/// channels. The transfer rates are JEDEC's speed bins (JESD79-4 for DDR4, JESD79-5 for DDR5).
struct MemoryType {
  std::string_view name;
  double gbps;
};
constexpr std::array<MemoryType, 5> kMemoryTypes = {{
    {"ddr4-3200", 51.2},   // 3,200 MT/s x 8 B x 2 = 51.2 GB/s
    {"ddr5-4800", 76.8},   // 4,800 x 8 x 2
    {"ddr5-5600", 89.6},   // 5,600 x 8 x 2: the default
    {"ddr5-6000", 96.0},   // 6,000 x 8 x 2
    {"ddr5-6400", 102.4},  // 6,400 x 8 x 2
}};
constexpr std::string_view kDefaultType = "ddr5-5600";

/// std::from_chars for a double. Emscripten 3.1.6's libc++ (the web page's build) has no
/// floating-point from_chars; strtod reads the same numbers in the C locale once the text is
/// limited to what from_chars accepts (no space, no '+' first, no hex, no inf or nan).
std::from_chars_result parse_double(const char* first, const char* last, double& value) {
#ifdef __EMSCRIPTEN__
  const std::string text(first, last);
  const bool plain = !text.empty() && text.front() != '+' &&
                     text.find_first_not_of("0123456789.eE+-") == std::string::npos;
  if (!plain) return {first, std::errc::invalid_argument};
  char* end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return {first + (end - text.c_str()), end == text.c_str() ? std::errc::invalid_argument : std::errc()};
#else
  return std::from_chars(first, last, value);
#endif
}

}  // namespace

RamBandwidth parse_ram_bandwidth(std::string_view text, std::string_view setting) {
  const std::string name = ascii_lower(text.empty() ? kDefaultType : text);
  for (const MemoryType& type : kMemoryTypes)
    if (type.name == name)
      return {type.gbps, fmt::format("{}dual-channel {}: JEDEC transfer rate x 8 B x 2 channels = {:g} GB/s peak",
                                     text.empty() ? "assumed " : "", type.name, type.gbps)};
  double gbps = 0;
  const auto [end, ec] = parse_double(text.data(), text.data() + text.size(), gbps);
  if (ec != std::errc() || end != text.data() + text.size() || !(gbps > 0) || !std::isfinite(gbps) || gbps > 1e6) {
    std::string names;
    for (const MemoryType& type : kMemoryTypes) names += fmt::format("{}{}", names.empty() ? "" : ", ", type.name);
    throw Error(fmt::format("{}: '{}' is not GB/s (a number above 0) or a memory type ({})", setting, text, names));
  }
  return {gbps, fmt::format("{} {:g} GB/s, as given", setting, gbps)};
}

}  // namespace kvplan
