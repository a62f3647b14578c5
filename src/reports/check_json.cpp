// `kvplan check --format json`: per deployment its name, place, verdict and reason, and the whole
// plan document `kvplan --format json` prints for it (the same rows, the same schema).

#include <nlohmann/json.hpp>

#include "kvplan/version.h"
#include "reports/check_report.h"
#include "reports/fields.h"

namespace kvplan {

/// The check document's own version: its fields around the plan documents.
inline constexpr int kCheckJsonVersion = 1;

std::string format_check_json(const CheckRun& run) {
  nlohmann::ordered_json doc;
  doc["kvplan_check_version"] = kCheckJsonVersion;
  doc["kvplan_version"] = kVersion;
  doc["exit_code"] = run.exit_code();
  doc["strict"] = run.strict;
  doc["summary"] = check_summary(run);
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const CheckedDeployment& d : run.deployments) {
    nlohmann::ordered_json item;
    item["name"] = d.name;
    item["source"] = {{"file", d.where.file},
                      {"line", d.where.line ? nlohmann::ordered_json(d.where.line) : nlohmann::ordered_json(nullptr)},
                      {"index", d.where.index}};
    item["verdict"] = std::string(to_string(d.verdict));
    item["reason"] = d.reason;
    item["runtime"] = d.runtime;
    item["margin_millionths"] = d.margin_millionths;
    item["worst_row"] = d.worst_row ? nlohmann::ordered_json(*d.worst_row) : nlohmann::ordered_json(nullptr);
    item["plan"] = d.report ? report_to_json(*d.report) : nlohmann::ordered_json(nullptr);
    list.push_back(std::move(item));
  }
  doc["deployments"] = std::move(list);
  return doc.dump(2) + "\n";
}

}  // namespace kvplan
