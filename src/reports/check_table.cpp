// `kvplan check`'s table: one line per deployment (its row with the least headroom), then why for
// every deployment that is not a plain fit, then the count and the exit code.

#include <fmt/format.h>

#include "reports/check_report.h"
#include "reports/text.h"

namespace kvplan {

std::string format_check_table(const CheckRun& run) {
  const std::vector<std::string> headers = {"deployment", "source", "runtime", "model", "GPUs", "ctx", "batch",
                                            "KV dtype", "total", "budget", "headroom", "verdict"};
  const std::vector<bool> right = {false, false, false, false, false, true, true, false, true, true, true, false};
  std::vector<std::vector<std::string>> rows;
  for (const CheckedDeployment& d : run.deployments) {
    std::vector<std::string> cells = {d.name, d.where.text(), d.runtime};
    std::vector<std::string> figures = check_row_cells(d);
    if (figures.empty()) figures.assign(8, "-");
    cells.insert(cells.end(), figures.begin(), figures.end());
    cells.push_back(check_verdict_label(d.verdict));
    rows.push_back(std::move(cells));
  }
  std::vector<std::size_t> widths(headers.size());
  for (std::size_t c = 0; c < headers.size(); ++c) {
    widths[c] = display_width(headers[c]);
    for (const auto& row : rows) widths[c] = std::max(widths[c], display_width(row[c]));
  }
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string pad(widths[c] - display_width(cells[c]), ' ');
      if (c) text += "  ";
      text += right[c] ? pad + cells[c] : (c + 1 == cells.size() ? cells[c] : cells[c] + pad);
    }
    return text + "\n";
  };
  std::string out = "Sizes in GiB (1 GiB = 2^30 bytes), per GPU; each deployment's row with the least headroom.\n\n";
  out += line(headers);
  for (const auto& row : rows) out += line(row);
  bool first = true;
  for (const CheckedDeployment& d : run.deployments) {
    if (d.verdict == CheckVerdict::fits) continue;
    if (first) out += "\n";
    first = false;
    out += fmt::format("{} {} ({}): {}\n", check_verdict_label(d.verdict), d.name, d.where.text(), d.reason);
  }
  out += "\n" + check_summary(run) + "\n";
  return out;
}

}  // namespace kvplan
