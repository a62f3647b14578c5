#pragma once
// The bandwidth of system RAM, for the decode bound of layers kept there: a figure given in GB/s,
// or the peak of a named dual-channel memory type.

#include <string>
#include <string_view>

namespace kvplan {

struct RamBandwidth {
  double gbps = 0;     ///< 10^9 bytes per second
  std::string source;  ///< where the figure comes from, in words
};

/// `text` as GB/s (a number above 0), a memory type (ddr4-3200, ddr5-4800, ddr5-5600, ddr5-6000,
/// ddr5-6400: JEDEC transfer rate x 8 bytes x 2 channels), or empty for the assumed default,
/// dual-channel DDR5-5600 (89.6 GB/s). Error naming `setting` otherwise.
RamBandwidth parse_ram_bandwidth(std::string_view text, std::string_view setting);

}  // namespace kvplan
