#pragma once
// `kvplan plot`'s outputs: the memory chart as a self-contained SVG (no scripts, no external
// fonts or links), or as text bars for a terminal. They draw the series; they compute none.

#include <string>

#include "kvplan/chart.h"

namespace kvplan {

std::string format_chart_svg(const MemoryChart& chart);
std::string format_chart_text(const MemoryChart& chart);

}  // namespace kvplan
