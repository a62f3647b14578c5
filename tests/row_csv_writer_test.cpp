// The CSV row writer's cursor (sweep5) writes what append_csv_text, the cell-by-cell way, writes:
// cells sorted 16 bytes at a time, whatever byte stands wherever in a text of 1 to 40 bytes, in a
// plain cell and in the cells joined in place (assumptions, warning codes); the cut at 4 KiB; the
// breakdown phrase written in place with its thousands separators, quoted for its commas.

#include <limits>
#include <stdexcept>
#include <string>

#include <catch2/catch.hpp>

#include "kvplan/catalog.h"
#include "kvplan/plan.h"
#include "kvplan/units.h"
#include "reports/fields.h"
#include "reports/row_csv_writer.h"
#include "support/breakdown_items.h"

using namespace kvplan;

namespace {

/// A real row (Qwen3-8B on an H100, fp16, ctx 4096) to set text cells in.
Row csv_test_row() {
  const ModelSpec& model = *builtin_models().find("qwen3-8b");
  PlanRequest request;
  request.contexts = {4096};
  request.caches = {{&parse_kv_dtype("fp16", *model.weight_dtype), &parse_kv_dtype("fp16", *model.weight_dtype)}};
  return make_plan(model, *builtin_gpus().find("h100"), request).rows.at(0);
}

std::string csv_cells_of(const Row& row) {
  std::string out;
  append_row_csv_cells(out, row);
  return out;
}

std::string csv_cell_text(std::string_view text) {
  std::string out;
  append_csv_text(out, text);
  return out;
}

/// The line of `row` with `marker` (a text cell's whole text) in place of `cell`'s text: the line the
/// writer should write when that cell holds `cell`.
std::string csv_line_with(const Row& marked, std::string_view marker, std::string_view cell) {
  std::string line = csv_cells_of(marked);
  const std::size_t at = line.find(marker);
  if (at == std::string::npos) throw std::logic_error("no marker in the line");
  return line.replace(at, marker.size(), cell);
}

}  // namespace

TEST_CASE("CSV text cells written in blocks are append_csv_text's, every byte at every position", "[sweep_writer]") {
  // Each byte value at each position of texts of 1 to 40 bytes (the short block's copies of 1 to
  // 3, 4 to 7 and 8 to 15 bytes, one block, a block and an overlapping tail, several): as the
  // weights rule (a plain cell), as the only assumption and as a warning code (cells joined in
  // place). 256 x 253 texts x 3 cells.
  Row row = csv_test_row();
  const std::string marker = "MARKER";
  Row marked_rule = row;
  marked_rule.weights_rule = marker;
  Row marked_assumption = row;
  marked_assumption.assumptions = {marker};
  Row marked_code = row;
  marked_code.findings = {{marker, "text", false}};
  std::size_t differing = 0;
  for (const std::size_t size : {1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 18, 31, 32, 33, 40})
    for (std::size_t position = 0; position < size; ++position)
      for (int byte = 0; byte < 256; ++byte) {
        std::string text(size, 'a');
        text[position] = static_cast<char>(byte);
        const std::string cell = csv_cell_text(text);
        Row ruled = marked_rule;
        ruled.weights_rule = text;
        Row assumed = marked_assumption;
        assumed.assumptions = {text};
        Row coded = marked_code;
        coded.findings[0].code = text;
        const bool same = csv_cells_of(ruled) == csv_line_with(marked_rule, marker, cell) &&
                          csv_cells_of(assumed) == csv_line_with(marked_assumption, marker, cell) &&
                          csv_cells_of(coded) == csv_line_with(marked_code, marker, cell);
        if (!same) {
          ++differing;
          INFO("byte " << byte << " at " << position << " of " << size);
          CHECK(csv_cells_of(ruled) == csv_line_with(marked_rule, marker, cell));
          CHECK(csv_cells_of(assumed) == csv_line_with(marked_assumption, marker, cell));
          CHECK(csv_cells_of(coded) == csv_line_with(marked_code, marker, cell));
        }
      }
  CHECK(differing == 0);
}

TEST_CASE("CSV cells at the 4 KiB cut and joined cells with empty items", "[sweep_writer]") {
  Row row = csv_test_row();
  const std::string marker = "MARKER";
  Row marked = row;
  marked.assumptions = {marker};
  for (const std::size_t size : {std::size_t{4095}, std::size_t{4096}, std::size_t{4097}, std::size_t{9000}}) {
    INFO(size);
    // A joined cell of `size` bytes: two assumptions and their "; ".
    Row joined = row;
    joined.assumptions = {std::string(size - 3, 'x'), "y"};
    CHECK(csv_cells_of(joined) == csv_line_with(marked, marker, csv_cell_text(std::string(size - 3, 'x') + "; y")));
    // The same text as one plain cell, with a comma: quoted, or cut and quoted.
    Row plain = row;
    plain.assumptions = {std::string(size - 1, 'x') + ","};
    CHECK(csv_cells_of(plain) == csv_line_with(marked, marker, csv_cell_text(std::string(size - 1, 'x') + ",")));
  }
  // format_csv joins with a separator only after text: an empty first item adds none.
  Row empty_first = row;
  empty_first.assumptions = {"", "one", "", "two"};
  CHECK(csv_cells_of(empty_first) == csv_line_with(marked, marker, "one; ; two"));
}

TEST_CASE("the CSV breakdown cell is the phrase, written in place and quoted for its commas", "[sweep_writer]") {
  Row row = csv_test_row();
  // Every kind of part: a window, MTP, the indexer, image tokens, no tokens; and token counts of
  // 1 to 20 digits, so that every length of the first group of the thousands is written.
  row.breakdown = testing::every_kind_breakdown();
  using testing::breakdown_item;
  const std::string phrase =
      "40 sliding(1024) x 1,024 tokens + 8 full x 131,072 tokens (indexer on 8) + 1 full (MTP) x 131,072 tokens"
      " + 20 cross(6404) x 6,404 image tokens + 36 linear";
  CHECK(describe_breakdown(row) == phrase);
  CHECK(csv_cells_of(row).find(",\"" + phrase + "\",") != std::string::npos);

  std::uint64_t tokens = 0;
  for (int digits = 1; digits <= 20; ++digits) {
    tokens = tokens * 10 + static_cast<std::uint64_t>(digits % 10);  // 1, 12, 123, ..., 12345678901234567890
    row.breakdown = {breakdown_item(LayerKind::full, 36, tokens)};
    const std::string cell = csv_cell_text("36 full x " + format_thousands(tokens) + " tokens");
    INFO(tokens);
    CHECK(csv_cells_of(row).find("," + cell + ",") != std::string::npos);
  }
  // By hand: 20 digits in groups of 2, 3, ...; 4 digits; 3 digits (no comma, so no quotes).
  CHECK(format_thousands(12345678901234567890ull) == "12,345,678,901,234,567,890");
  CHECK(format_thousands(std::numeric_limits<std::uint64_t>::max()) == "18,446,744,073,709,551,615");
  CHECK(format_thousands(1000) == "1,000");
  CHECK(format_thousands(0) == "0");
  row.breakdown = {breakdown_item(LayerKind::full, 36, 999)};
  CHECK(csv_cells_of(row).find(",36 full x 999 tokens,") != std::string::npos);
}
