// The quality notes under a table: each once, with the rows it applies to when not all.

#include <fmt/format.h>

#include "reports/text.h"

namespace kvplan {

std::vector<std::string> quality_lines(const std::vector<QualityNote>& notes, std::size_t row_count) {
  std::vector<std::string> lines;
  for (const QualityNote& note : notes) {
    std::string where;
    if (row_count > 1 && note.rows.size() < row_count) {
      for (const std::size_t r : note.rows) where += (where.empty() ? "" : ", ") + std::to_string(r + 1);
      where = fmt::format(" (row{} {})", note.rows.size() == 1 ? "" : "s", where);
    }
    lines.push_back(fmt::format("Quality {}: {}{}", note.code, note.text, where));
  }
  return lines;
}

}  // namespace kvplan
