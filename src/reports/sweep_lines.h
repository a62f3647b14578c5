#pragma once
// `kvplan sweep`: each row as one NDJSON line or one CSV line, in the plan's row schema (the JSON
// rows' fields, and the CSV writer's columns), named by model, GPU and runtime.

#include <string>

#include "kvplan/report.h"

namespace kvplan {

class SweepLines {
 public:
  /// `csv`: CSV lines under one header line; else NDJSON.
  explicit SweepLines(bool csv) : csv_(csv) {}

  /// The line (or, first in CSV, the header and the line) of `row` of `model` on `gpus` under `runtime`.
  std::string line(const ModelSpec& model, const std::vector<GpuSpec>& gpus, const std::string& runtime, Row&& row);

 private:
  bool csv_;
  bool header_written_ = false;
  Report report_;  // one row at a time, for the CSV writer
};

}  // namespace kvplan
