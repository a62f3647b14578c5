// `kvplan check --annotate`: GitHub Actions workflow commands, so a deployment that does not fit
// is marked on the line of the file that declares it.
// https://docs.github.com/actions/reference/workflow-commands-for-github-actions

#include <fmt/format.h>

#include "reports/check_report.h"

namespace kvplan {

namespace {

/// A workflow command's message: %, CR and LF escaped.
std::string message(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '%') out += "%25";
    else if (c == '\r') out += "%0D";
    else if (c == '\n') out += "%0A";
    else out.push_back(c);
  }
  return out;
}

/// A property value: also : and , escaped.
std::string property(std::string_view text) {
  std::string out;
  for (const char c : message(text)) {
    if (c == ':') out += "%3A";
    else if (c == ',') out += "%2C";
    else out.push_back(c);
  }
  return out;
}

}  // namespace

std::string format_check_annotations(const CheckRun& run) {
  std::string out;
  for (const CheckedDeployment& d : run.deployments) {
    if (d.verdict == CheckVerdict::fits) continue;
    const bool error = d.verdict != CheckVerdict::tight || run.strict;
    std::string properties;
    if (d.where.file != "--cmd" && d.where.file != "-") properties += "file=" + property(d.where.file) + ",";
    if (d.where.line) properties += fmt::format("line={},", d.where.line);
    properties += "title=" + property(fmt::format("kvplan check: {} ({})", d.name, to_string(d.verdict)));
    out += fmt::format("::{} {}::{}\n", error ? "error" : "warning", properties, message(d.reason));
  }
  return out;
}

}  // namespace kvplan
