// `kvplan check` as GitHub-flavoured Markdown, for $GITHUB_STEP_SUMMARY.

#include <fmt/format.h>

#include "reports/check_report.h"

namespace kvplan {

namespace {

/// A cell's text with the characters Markdown tables treat specially escaped.
std::string cell(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '|' || c == '\\' || c == '`' || c == '*' || c == '_' || c == '<' || c == '>' || c == '[' || c == ']') out.push_back('\\');
    if (c == '\n' || c == '\r') {
      out.push_back(' ');
      continue;
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace

std::string format_check_markdown(const CheckRun& run) {
  std::string out = "### kvplan check\n\n" + check_summary(run) + "\n\n";
  out += "| deployment | source | runtime | model | GPUs | ctx | batch | KV dtype | total GiB | budget GiB | headroom GiB | verdict |\n";
  out += "|---|---|---|---|---|---:|---:|---|---:|---:|---:|---|\n";
  for (const CheckedDeployment& d : run.deployments) {
    std::vector<std::string> figures = check_row_cells(d);
    if (figures.empty()) figures.assign(8, "-");
    out += fmt::format("| {} | {} | {} |", cell(d.name), cell(d.where.text()), cell(d.runtime));
    for (const std::string& figure : figures) out += " " + cell(figure) + " |";
    out += " " + check_verdict_label(d.verdict) + " |\n";
  }
  bool first = true;
  for (const CheckedDeployment& d : run.deployments) {
    if (d.verdict == CheckVerdict::fits) continue;
    if (first) out += "\n";
    first = false;
    out += fmt::format("- **{}** ({}): {}\n", cell(d.name), cell(d.where.text()), cell(d.reason));
  }
  out += "\nSizes in GiB (1 GiB = 2^30 bytes), per GPU; each deployment's row with the least headroom.\n";
  return out;
}

}  // namespace kvplan
