#include <fmt/format.h>

#include "reports/text.h"

namespace kvplan {

namespace {

constexpr std::string_view kGreen = "\x1b[32m";
constexpr std::string_view kRed = "\x1b[31m";
constexpr std::string_view kReset = "\x1b[0m";

std::string pad(const std::string& text, std::size_t width, bool right) {
  const std::size_t have = display_width(text);
  const std::string fill(width > have ? width - have : 0, ' ');
  return right ? fill + text : text + fill;
}

}  // namespace

std::string format_table(const Report& report, bool color) {
  const TextTable table = rows_table(report);
  std::vector<std::size_t> widths(table.headers.size());
  for (std::size_t c = 0; c < widths.size(); ++c) {
    widths[c] = display_width(table.headers[c]);
    for (const auto& row : table.rows) widths[c] = std::max(widths[c], display_width(row[c]));
  }
  const std::size_t verdict_column = 9;

  std::string out;
  for (const std::string& line : header_lines(report)) out += line + "\n";
  out += "\n";
  std::string header;
  for (std::size_t c = 0; c < widths.size(); ++c)
    header += (c ? "  " : "") + pad(table.headers[c], widths[c], table.right_aligned[c]);
  while (!header.empty() && header.back() == ' ') header.pop_back();
  out += header + "\n";
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    std::string line;
    for (std::size_t c = 0; c < widths.size(); ++c) {
      std::string cell = pad(table.rows[r][c], widths[c], table.right_aligned[c]);
      // Colour after padding, so escape codes never count towards the width.
      if (color && c == verdict_column) cell = fmt::format("{}{}{}", table.row_fits[r] ? kGreen : kRed, cell, kReset);
      line += (c ? "  " : "") + cell;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  const std::vector<std::string> ways = ways_out_lines(report);
  if (!ways.empty()) out += "\n";
  for (const std::string& line : ways) out += line + "\n";
  return out;
}

}  // namespace kvplan
