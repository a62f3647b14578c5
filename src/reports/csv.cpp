#include <fmt/format.h>

#include "reports/fields.h"

namespace kvplan {

namespace {

/// RFC 4180: quote a field that holds a comma, a quote or a line break; double inner quotes.
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string cell(const nlohmann::ordered_json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  return value.dump();
}

}  // namespace

std::string format_csv(const Report& report) {
  std::string out;
  bool header_written = false;
  for (const Row& row : report.plan.rows) {
    nlohmann::ordered_json fields = row_to_json(row);
    fields["kv_breakdown"] = describe_breakdown(row);  // one cell: the nested list as a phrase
    if (!header_written) {
      std::string header;
      for (const auto& [key, value] : fields.items()) {
        if (!header.empty()) header += ',';
        header += key;
      }
      out += header + "\n";
      header_written = true;
    }
    std::string line;
    bool first = true;
    for (const auto& [key, value] : fields.items()) {
      if (!first) line += ',';
      line += csv_field(cell(value));
      first = false;
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace kvplan
