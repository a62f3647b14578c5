#include <fmt/format.h>

#include "reports/section.h"
#include "model/text.h"
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

/// Lines longer than the terminal are wrapped at spaces, continuing under the text after their
/// label ("Budget  ", "  - "), so that the terminal itself never breaks one.
std::size_t hanging_indent(const std::string& line) {
  const std::size_t lead = line.find_first_not_of(' ');
  if (lead == std::string::npos) return 0;
  if (line.compare(lead, 2, "- ") == 0) return lead + 2;
  if (lead == 0) {
    // "Budget  text", "Warning code: text": a label padded to eight columns.
    const std::size_t space = line.find(' ');
    if (space != std::string::npos && space < 8 && line.find_first_not_of(' ', space) == 8) return 8;
    return 4;
  }
  return lead + 2;
}

std::string wrapped(const std::string& raw, std::size_t columns) {
  // Lines quote names from the model's files: escaped, so a name cannot clear the screen.
  const std::string line = printable(raw, 4096);
  if (columns == 0 || display_width(line) <= columns) return line + "\n";
  const std::string indent(hanging_indent(line), ' ');
  std::string out;
  std::string current;
  std::size_t start = 0;
  while (start < line.size()) {
    std::size_t end = line.find(' ', start + 1);
    if (end == std::string::npos) end = line.size();
    const std::string word = line.substr(start, end - start);  // with its leading space, if any
    if (!current.empty() && display_width(current + word) > columns && current.find_first_not_of(' ') != std::string::npos) {
      out += current + "\n";
      current = indent + word.substr(word.find_first_not_of(' ') == std::string::npos ? word.size() : word.find_first_not_of(' '));
    } else {
      current += word;
    }
    start = end;
  }
  return out + current + "\n";
}

}  // namespace

std::string format_table(const Report& report, const TableStyle& style) {
  const bool color = style.color;
  const TextTable table = rows_table(report, style.wide);
  std::vector<std::size_t> widths(table.headers.size());
  for (std::size_t c = 0; c < widths.size(); ++c) {
    widths[c] = display_width(table.headers[c]);
    for (const auto& row : table.rows) widths[c] = std::max(widths[c], display_width(row[c]));
  }
  const std::size_t verdict_column = 9;

  std::string out;
  for (const std::string& line : header_lines(report)) out += wrapped(line, style.columns);
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
  if (style.speed) {
    // One line per row: the roofline bound, never a prediction (docs/planning.md, "Speed bound").
    out += "\n";
    for (const Row& row : report.plan.rows) {
      const std::string which = fmt::format("ctx {} {}", format_thousands(row.ctx), row.cache.label());
      if (!row.decode_bound) {
        out += wrapped(fmt::format("Speed   {}: no bound (the catalog has no memory bandwidth for this card)", which), style.columns);
        continue;
      }
      const DecodeBound& bound = *row.decode_bound;
      out += wrapped(fmt::format("Speed   {}: at most {:.1f} tokens/s per sequence, {:.1f} for the batch of {} ({})", which,
                                 bound.tokens_per_s_per_sequence, bound.tokens_per_s_batch, row.batch, bound.rule),
                     style.columns);
    }
  }
  std::vector<std::string> under = findings_lines(report);
  const std::vector<std::string> ways = ways_out_lines(report);
  under.insert(under.end(), ways.begin(), ways.end());
  const std::vector<std::string> notes = quality_lines(report.plan.quality_notes, report.plan.rows.size());
  under.insert(under.end(), notes.begin(), notes.end());
  if (!under.empty()) out += "\n";
  for (const std::string& line : under) out += wrapped(line, style.columns);
  if (const std::optional<EngineSection> section = engine_section(report.plan)) {
    out += "\n";
    for (const std::string& line : section->lines) out += wrapped(line, style.columns);
  }
  return out;
}

}  // namespace kvplan
