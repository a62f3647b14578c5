#include <fmt/format.h>

#include "model/text.h"
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
  if (value.is_string()) return printable(value.get<std::string>(), 4096);
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  if (value.is_null()) return "";
  return value.dump();
}

}  // namespace

std::string format_csv(const Report& report) {
  std::string out;
  bool header_written = false;
  for (const Row& row : report.plan.rows) {
    // Each line says what it describes: the model, the card and the engine.
    nlohmann::ordered_json fields;
    fields["model"] = report.model->id;
    std::string gpus;
    for (std::size_t i = 0; i < report.gpus.size();) {
      std::size_t same = i + 1;
      while (same < report.gpus.size() && report.gpus[same].id == report.gpus[i].id) ++same;
      gpus += fmt::format("{}{}{}", gpus.empty() ? "" : "+", same - i > 1 ? fmt::format("{}x", same - i) : "",
                          report.gpus[i].id.empty() ? report.gpus[i].name : report.gpus[i].id);
      i = same;
    }
    fields["gpu"] = gpus;  // as --gpu takes it: "4090", "2x4090", "5090+3090"
    fields["runtime"] = report.plan.runtime;
    const nlohmann::ordered_json row_fields = row_to_json(row);
    for (const auto& [key, value] : row_fields.items()) fields[key] = value;
    fields["kv_breakdown"] = describe_breakdown(row);  // one cell: the nested list as a phrase
    fields.erase("per_gpu");  // one line per row: the worst GPU's figures are the row's own
    // The roofline bound as two plain cells (empty when the card's bandwidth is unknown).
    fields.erase("decode_bound");
    fields.erase("system_ram");  // the JSON's; the CSV's columns stay as they were
    fields["decode_tokens_per_s_per_sequence"] = row_fields.at("decode_bound").is_null()
                                                     ? nlohmann::ordered_json()
                                                     : row_fields.at("decode_bound")["tokens_per_s_per_sequence"];
    fields["decode_tokens_per_s_batch"] = row_fields.at("decode_bound").is_null()
                                              ? nlohmann::ordered_json()
                                              : row_fields.at("decode_bound")["tokens_per_s_batch"];
    std::string assumed;
    for (const std::string& assumption : row.assumptions) assumed += (assumed.empty() ? "" : "; ") + assumption;
    fields["assumptions"] = assumed;
    std::string codes;
    for (const Finding& finding : row.findings) codes += (codes.empty() ? "" : ";") + finding.code;
    fields["warnings"] = codes;  // the codes; the texts are in the JSON and the table
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
