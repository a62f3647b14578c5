#include "kvplan/report.h"

#include <fmt/format.h>

#include "kvplan/error.h"
#include "model/suggest.h"

namespace kvplan {

std::vector<std::string_view> output_format_names() { return {"table", "json", "csv", "markdown"}; }

OutputFormat parse_output_format(std::string_view text, std::string_view setting) {
  if (text == "table") return OutputFormat::table;
  if (text == "json") return OutputFormat::json;
  if (text == "csv") return OutputFormat::csv;
  if (text == "markdown" || text == "md") return OutputFormat::markdown;
  throw Error(fmt::format("{}: unknown format '{}' (one of table, json, csv, markdown){}", setting, text,
                          did_you_mean(text, {"table", "json", "csv", "markdown"})));
}

std::string format_report(const Report& report, OutputFormat format, const TableStyle& style) {
  switch (format) {
    case OutputFormat::table: return format_table(report, style);
    case OutputFormat::json: return format_json(report);
    case OutputFormat::csv: return format_csv(report);
    case OutputFormat::markdown: return format_markdown(report);
  }
  return format_table(report, style);
}

}  // namespace kvplan
