#include "reports/sweep_lines.h"

#include <fmt/format.h>

#include "reports/row_csv_writer.h"
#include "reports/row_json_writer.h"

namespace kvplan {

namespace {

/// "2xh100", "5090+3090": the deployment as --gpu takes it.
std::string deployment_name(const std::vector<GpuSpec>& gpus) {
  std::string out;
  for (std::size_t i = 0; i < gpus.size();) {
    std::size_t same = i + 1;
    while (same < gpus.size() && gpus[same].id == gpus[i].id) ++same;
    out += fmt::format("{}{}{}", out.empty() ? "" : "+", same - i > 1 ? fmt::format("{}x", same - i) : "",
                       gpus[i].id.empty() ? gpus[i].name : gpus[i].id);
    i = same;
  }
  return out;
}

}  // namespace

void SweepLines::start(const ModelSpec& model, const std::vector<GpuSpec>& gpus, std::string_view runtime) {
  // The names every line of this model and deployment begins with, written once.
  prefix_.clear();
  if (csv_) {
    append_csv_text(prefix_, model.id);
    prefix_ += ',';
    append_csv_text(prefix_, deployment_name(gpus));
    prefix_ += ',';
    append_csv_text(prefix_, runtime);
    return;
  }
  prefix_ = "{\"model\":";
  append_json_string(prefix_, model.id);
  prefix_ += ",\"gpu\":";
  append_json_string(prefix_, deployment_name(gpus));
  prefix_ += ",\"runtime\":";
  append_json_string(prefix_, runtime);
  prefix_ += ',';
}

void SweepLines::append(const Row& row, TextBuffer& out) {
  if (csv_) {
    if (!header_written_) {
      std::string header;
      append_csv_header(header);
      out.append(header);
      header_written_ = true;
    }
    out.append(prefix_);
    append_row_csv_cells(out, row, numbers_);
    return;
  }
  out.append(prefix_);
  append_row_json_members(out, row, numbers_);
  out.append("}\n");
}

void SweepLines::append(const Row& row, std::string& out) {
  TextBuffer text;
  append(row, text);
  out += text.view();
}

}  // namespace kvplan
