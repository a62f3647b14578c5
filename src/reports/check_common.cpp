// The cells and sentences every `kvplan check` format shares.

#include <fmt/format.h>

#include "kvplan/error.h"
#include "kvplan/units.h"
#include "reports/check_report.h"

namespace kvplan {

CheckFormat parse_check_format(std::string_view text, std::string_view setting) {
  if (text == "table") return CheckFormat::table;
  if (text == "json") return CheckFormat::json;
  if (text == "markdown" || text == "md") return CheckFormat::markdown;
  if (text == "junit") return CheckFormat::junit;
  throw Error(fmt::format("{}: '{}' is not a check format (table, json, markdown, junit)", setting, text));
}

std::string check_verdict_label(CheckVerdict verdict) {
  switch (verdict) {
    case CheckVerdict::fits: return "✅ fits";
    case CheckVerdict::tight: return "⚠️ tight";
    case CheckVerdict::no_fit: return "❌ no fit";
    case CheckVerdict::invalid: return "⛔ invalid";
    case CheckVerdict::unsupported: return "❓ unsupported";
  }
  return "";
}

std::string check_summary(const CheckRun& run) {
  std::size_t counts[5] = {};
  for (const CheckedDeployment& d : run.deployments) ++counts[static_cast<int>(d.verdict)];
  constexpr const char* names[5] = {"fit", "tight", "no fit", "invalid", "unsupported"};
  std::string parts;
  for (int v = 0; v < 5; ++v)
    if (counts[v]) parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", counts[v], names[v]);
  return fmt::format("{} deployment{}: {}; exit {}{}", run.deployments.size(), run.deployments.size() == 1 ? "" : "s",
                     parts.empty() ? "none" : parts, run.exit_code(), run.strict ? " (--strict: tight fails)" : "");
}

std::vector<std::string> check_row_cells(const CheckedDeployment& d) {
  if (!d.report || !d.worst_row) return {};
  const Report& report = *d.report;
  const Row& row = report.plan.rows.at(*d.worst_row);
  const auto gib = [](std::int64_t bytes) { return format_gib_number(bytes); };
  return {report.model->id,
          fmt::format("{}x {}", report.gpus.size(), report.gpu().id),
          format_thousands(row.ctx),
          std::to_string(row.batch),
          row.cache.label(),
          gib(static_cast<std::int64_t>(row.total_bytes)),
          gib(static_cast<std::int64_t>(row.capacity_bytes)),
          gib(row.headroom_bytes)};
}

}  // namespace kvplan
