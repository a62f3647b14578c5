#pragma once
// The cells and sentences the human formats (table, Markdown) share, so both print the same
// figures the same way.

#include <string>
#include <vector>

#include "kvplan/report.h"

namespace kvplan {

struct TextTable {
  std::vector<std::string> headers;
  std::vector<bool> right_aligned;
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> row_fits;  ///< per row, for colouring
};

/// One line per row: ctx, dtype, KV/token, KV, weights, overhead, total, budget, headroom, verdict
/// (and with `wide`, a memory bar).
TextTable rows_table(const Report& report, bool wide);

/// The lines above the table: model, card, budget rule, weights rule, units.
std::vector<std::string> header_lines(const Report& report);

/// The lines under the table: every warning once, with the rows it applies to.
std::vector<std::string> findings_lines(const Report& report);

/// The lines under the warnings: the largest context, and for each row that does not fit why,
/// and what would make it fit.
std::vector<std::string> ways_out_lines(const Report& report);

/// "Quality code: text (rows 2, 4)": the plan's quality notes, one line each, rows named when a
/// note applies to some of the `row_count` rows only.
std::vector<std::string> quality_lines(const std::vector<QualityNote>& notes, std::size_t row_count);

/// "30.53B (3.35B active)"; each figure with "~" when the model's weights are an estimate.
std::string describe_params(const ModelSpec& model);

/// A bar of `width` cells: weights, KV and overhead against the budget.
std::string memory_bar(const Row& row, std::size_t width);

/// Terminal columns a UTF-8 string occupies (emoji verdicts count two).
std::size_t display_width(const std::string& text);

}  // namespace kvplan
