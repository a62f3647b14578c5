#pragma once
// A row's CSV line written straight into a string: the columns, and the cells byte for byte, of
// format_csv (reports/csv.cpp), without a JSON tree per row. kvplan sweep --format csv streams
// with it (tests/row_json_writer_test.cpp compares the two).

#include <string>
#include <string_view>

#include "kvplan/plan.h"
#include "reports/row_json_writer.h"

namespace kvplan {

/// format_csv's header line, newline included.
void append_csv_header(std::string& out);

/// One text cell as format_csv writes it: control characters shown as \xNN, cut at 4 KiB, quoted
/// when it holds a comma, a quote or a line break.
void append_csv_text(std::string& out, std::string_view text);

/// The row's cells after model, gpu and runtime (",4096,1,fp16,...") and the newline.
void append_row_csv_cells(std::string& out, const Row& row);
/// The same, written into `out` with a memo of numbers kept from row to row (a sweep's lines
/// allocate nothing).
void append_row_csv_cells(TextBuffer& out, const Row& row, JsonNumberMemo& memo);

}  // namespace kvplan
