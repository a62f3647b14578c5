#pragma once
// `kvplan max`: the searches' answers (kvplan/search.h) as a table or a JSON document. Like every
// formatter it computes nothing: each figure is a field of Limits or of a row it holds.

#include <string>
#include <vector>

#include "kvplan/gpu.h"
#include "kvplan/model_spec.h"
#include "kvplan/search.h"

namespace kvplan {

struct LimitsReport {
  const ModelSpec* model = nullptr;
  std::vector<GpuSpec> gpus;  ///< at least one
  Limits limits;
  std::string cap_flag = "--max-ctx-cap";  ///< how the cap is named in the lines under the table
};

/// The header lines, one line per cache dtype (within 100 columns) and the sentences under it.
std::string format_limits_table(const LimitsReport& report);
/// The JSON document: settings, then `results`, one per cache dtype (docs/json.md, "kvplan max").
std::string format_limits_json(const LimitsReport& report);

}  // namespace kvplan
