#pragma once
// What `kvplan check` found for each deployment: the verdict, the plan it came from, and where the
// deployment was written. Plain data for the formatters (src/reports/check_*.cpp).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvplan/report.h"
#include "loaders/deployments/deployment.h"

namespace kvplan {

enum class CheckVerdict {
  fits,
  tight,        ///< fits, with less headroom than the margin
  no_fit,       ///< a row does not fit, or the engine would refuse to start
  invalid,      ///< the deployment cannot be read as written (exit 2)
  unsupported,  ///< kvplan cannot tell: an engine, flag or architecture it does not model (exit 3)
};

/// "fits", "tight", "no_fit", "invalid", "unsupported".
std::string_view to_string(CheckVerdict verdict);

struct CheckedDeployment {
  std::string name;
  SourceLocation where;
  CheckVerdict verdict = CheckVerdict::invalid;
  /// Why, in one line: the numbers for tight and no fit, the error for invalid and unsupported.
  std::string reason;
  std::string runtime;
  std::uint32_t margin_millionths = 0;  ///< of the budget (capacity)
  /// The plan every verdict but invalid and unsupported comes from; the model it refers to is kept
  /// alive with it.
  std::shared_ptr<const ModelSpec> model;
  std::optional<Report> report;
  std::optional<std::size_t> worst_row;  ///< the row with the least headroom (or the first that does not fit)
};

struct CheckRun {
  std::vector<CheckedDeployment> deployments;
  bool strict = false;

  /// 2 if any is invalid, else 3 if any is unsupported, else 1 if any does not fit (or is tight
  /// under strict), else 0.
  int exit_code() const;
};

}  // namespace kvplan
