#pragma once
// The plain command (`kvplan --model M --gpu G ...`): its flags as parsed and the run that turns
// them into a report. The CLI11 path (cli.cpp) and the headline fast path (headline_fast_path.cpp)
// both end here, so that what a line prints does not depend on which of them read it.

#include <ostream>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "engines/core/request_texts.h"
#include "kvplan/gpu.h"
#include "kvplan/report.h"

namespace kvplan {

struct PlanFlags {
  std::string model;
  std::string gpu;
  std::string format;
  std::string gpu_count;  ///< --gpus N
  bool unified = false;   ///< --unified: --gpu's memory is a unified-memory machine's RAM
  bool ignore_used = false;  ///< --ignore-used: --gpu auto plans for empty cards
  std::vector<GpuSpec> detected;  ///< --gpu auto: this machine's cards
  PlanTexts texts;
  bool check = false;
  bool quiet = false;  ///< no quality notes under the table (JSON keeps them)
  bool wide = false;
  bool no_color = false;
  bool speed = false;  ///< --speed
};

/// The table's look: colour only on a terminal without NO_COLOR or --no-color, wrapped to its width.
TableStyle table_style(const PlanFlags& flags, const Terminal& terminal);

/// Plans what the flags ask and writes the report to `out`; the exit code (1: --check and a row
/// does not fit). Throws Error for bad input.
int run_plan(const PlanFlags& flags, const TableStyle& style, std::ostream& out);

}  // namespace kvplan
