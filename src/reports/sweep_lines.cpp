#include "reports/sweep_lines.h"

#include <fmt/format.h>

#include "reports/fields.h"

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

std::string SweepLines::line(const ModelSpec& model, const std::vector<GpuSpec>& gpus, const std::string& runtime,
                             Row&& row) {
  if (!csv_) {
    nlohmann::ordered_json fields;
    fields["model"] = model.id;
    fields["gpu"] = deployment_name(gpus);
    fields["runtime"] = runtime;
    nlohmann::ordered_json row_fields = row_to_json(row);  // kept alive while its items are moved
    for (auto& [key, value] : row_fields.items()) fields[key] = std::move(value);
    return fields.dump() + "\n";
  }
  // The CSV writer's own columns, one row at a time; its header once.
  report_.model = &model;
  report_.gpus = gpus;
  report_.plan.runtime = runtime;
  report_.plan.rows.clear();
  report_.plan.rows.push_back(std::move(row));
  const std::string text = format_csv(report_);
  const std::size_t header_end = text.find('\n');
  const bool with_header = !header_written_;
  header_written_ = true;
  return with_header || header_end == std::string::npos ? text : text.substr(header_end + 1);
}

}  // namespace kvplan
