#include "reports/section.h"
#include "model/text.h"
#include "reports/text.h"

namespace kvplan {

namespace {

/// A pipe inside a cell would end it early.
std::string escape_cell(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string format_markdown(const Report& report) {
  const TextTable table = rows_table(report, false);
  std::string out;
  for (const std::string& line : header_lines(report)) out += printable(line, 4096) + "  \n";
  out += "\n|";
  for (const std::string& header : table.headers) out.append(" ").append(escape_cell(header)).append(" |");
  out += "\n|";
  for (const bool right : table.right_aligned) out += right ? " ---: |" : " --- |";
  out += "\n";
  for (const auto& row : table.rows) {
    out += "|";
    for (const std::string& cell : row) out.append(" ").append(escape_cell(cell)).append(" |");
    out += "\n";
  }
  std::vector<std::string> under = findings_lines(report);
  const std::vector<std::string> ways = ways_out_lines(report);
  under.insert(under.end(), ways.begin(), ways.end());
  const std::vector<std::string> notes = quality_lines(report.plan.quality_notes, report.plan.rows.size());
  under.insert(under.end(), notes.begin(), notes.end());
  if (!under.empty()) out += "\n";
  for (const std::string& raw : under) {
    const std::string line = printable(raw, 4096);
    out += (line.rfind("  ", 0) == 0 ? "- " + line.substr(line.find_first_not_of(' ')) : line + "  ") + "\n";
  }
  if (const std::optional<EngineSection> section = engine_section(report.plan)) {
    out += "\n";
    for (const std::string& line : section->lines) out += printable(line, 4096) + "  \n";
  }
  return out;
}

}  // namespace kvplan
