#pragma once
// `kvplan fit`: the rows fit_models computed (kvplan/fit.h) as a table, CSV or a JSON document.
// Like every formatter it computes nothing: which rows to show is decided before it.

#include <string>
#include <vector>

#include "kvplan/fit.h"
#include "kvplan/gpu.h"

namespace kvplan {

struct FitReport {
  const FitResult* result = nullptr;
  std::vector<GpuSpec> gpus;        ///< at least one
  Quality quality = Quality::int4;  ///< the level asked for
  std::string family;               ///< the --family word, "" when none
  std::vector<std::size_t> shown;   ///< indices into result->rows, in the order to print
  bool all = false;                 ///< shown holds every fitting row, not the best of each model
};

/// Header lines (card, settings, the ranking rule), one line per shown row, a count of the rest.
std::string format_fit_table(const FitReport& report);
/// One line per shown row, with a header line.
std::string format_fit_csv(const FitReport& report);
/// Every evaluated row (fitting or not, with why not), the refusals and the ranking (docs/fit.md).
std::string format_fit_json(const FitReport& report);

}  // namespace kvplan
