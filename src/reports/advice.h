#pragma once
// `kvplan advise`'s output: the advisor's answer in, text out. Computes nothing: every figure is
// a field of the Advice or of a configuration's row.

#include <string>

#include "kvplan/advise.h"
#include "kvplan/report.h"

namespace kvplan {

struct AdviceReport {
  const ModelSpec* model = nullptr;
  const AdviseRequest* request = nullptr;
  Advice advice;
  std::string prices_origin;  ///< "" for the catalog's prices, else the --prices file
};

/// The ranked table, why each fits, why the cheaper ones do not, warnings and quality notes.
std::string format_advice_table(const AdviceReport& report);
/// {"configs": [...], "notes": [...], ...}: docs/advise.md.
std::string format_advice_json(const AdviceReport& report);

}  // namespace kvplan
