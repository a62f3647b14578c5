#pragma once
// `kvplan sweep`: each row as one NDJSON line or one CSV line, in the plan's row schema (the JSON
// rows' fields, and the CSV writer's columns), named by model, GPU and runtime.

#include <string>
#include <string_view>

#include "kvplan/report.h"
#include "reports/row_json_writer.h"

namespace kvplan {

class SweepLines {
 public:
  /// `csv`: CSV lines under one header line; else NDJSON.
  explicit SweepLines(bool csv) : csv_(csv) {}

  /// Names the rows that follow: `model` on `gpus` under `runtime` (kept by reference until the
  /// next start).
  void start(const ModelSpec& model, const std::vector<GpuSpec>& gpus, std::string_view runtime);

  /// Appends the line of `row` (first in CSV, the header and the line) to `out`.
  void append(const Row& row, TextBuffer& out);
  void append(const Row& row, std::string& out);

 private:
  bool csv_;
  bool header_written_ = false;
  /// What every line of the model and deployment begins with: `{"model":...,"runtime":...,` or
  /// `model,gpu,runtime`.
  std::string prefix_;
  JsonNumberMemo numbers_;  ///< the digits of numbers the lines repeat
};

}  // namespace kvplan
