#include "reports/fit_report.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kvplan/units.h"
#include "kvplan/report.h"
#include "kvplan/version.h"
#include "reports/fields.h"

namespace kvplan {

namespace {

/// "32.8B", "494M": parameters in decimal units, as the catalog lists them.
std::string params_cell(std::uint64_t params) {
  if (params >= 1'000'000'000) return fmt::format("{:.1f}B", static_cast<double>(params) / 1e9);
  return fmt::format("{:.0f}M", static_cast<double>(params) / 1e6);
}

/// "trained", "memory", "max_num_seqs" ...: what stops a search, as a cell.
std::string bound_cell(const SearchStop& stop) {
  switch (stop.bound) {
    case SearchBound::memory: return "memory";
    case SearchBound::trained_context: return "trained";
    case SearchBound::cap: return "cap";
    case SearchBound::search_limit: return "search limit";
    case SearchBound::engine: return stop.code.empty() ? "engine" : stop.code;
  }
  return "memory";
}

std::string count_cell(const std::optional<std::uint64_t>& value) { return value ? format_thousands(*value) : "none"; }

std::string speed_cell(const Row& row) {
  return row.decode_bound ? fmt::format("{:.0f}", row.decode_bound->tokens_per_s_per_sequence) : "-";
}

std::string gib_cell(std::int64_t bytes) { return format_gib_number(bytes); }

std::string gpu_line(const std::vector<GpuSpec>& gpus) {
  const GpuSpec& gpu = gpus.front();
  return fmt::format("GPU     {}{}: {}{} ({} bytes, {})", gpus.size() > 1 ? fmt::format("{} x ", gpus.size()) : "", gpu.name,
                     format_gib(static_cast<std::int64_t>(gpu.memory_bytes)), gpus.size() > 1 ? " each" : "",
                     format_thousands(gpu.memory_bytes), gpu.memory_basis);
}

std::string filters_words(const FitReport& report) {
  std::string words = fmt::format("quality up to {}", to_string(report.quality));
  if (!report.family.empty()) words += fmt::format(", models holding '{}'", report.family);
  return words;
}

struct Column {
  std::string header;
  bool right = false;
};

std::vector<std::string> cells_of(const FitRow& r, std::size_t rank) {
  return {std::to_string(rank),
          r.model_id,
          params_cell(r.params),
          r.format.kind == "gguf" ? "gguf " + r.format.name : r.format.name,
          r.row.cache.label(),
          std::string(to_string(r.quality)),
          gib_cell(static_cast<std::int64_t>(r.row.total_bytes)),
          gib_cell(r.row.headroom_bytes),
          count_cell(r.max_ctx),
          bound_cell(r.ctx_stop),
          count_cell(r.max_batch),
          speed_cell(r.row)};
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

nlohmann::ordered_json stop_json(const SearchStop& stop) {
  return {{"bound", to_string(stop.bound)}, {"code", stop.code.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(stop.code)}};
}

}  // namespace

std::string format_fit_table(const FitReport& report) {
  const FitResult& result = *report.result;
  std::string out = gpu_line(report.gpus) + "\n";
  if (!result.settings.budget_rule.empty()) out += "Budget  " + result.settings.budget_rule + "\n";
  out += fmt::format("Asked   {} at ctx {} per sequence, batch {}; {}\n", result.runtime, format_thousands(result.ctx),
                     result.batch, filters_words(report));
  out += fmt::format("Ranked  {}\n", fit_ranking_rule());
  out += fmt::format("Found   {} of {} models fit ({} of {} rows: model x weight format x KV dtype; {} not taken by the "
                     "engine)\n",
                     result.best.size(), result.models, result.fitting.size(), result.rows.size(), result.refusals.size());
  out += "Sizes in GiB (2^30 bytes); max ctx at the batch, up to the trained context; seqs: sequences of the ctx that "
         "fit; tok/s: the decode bound per sequence (bandwidth; not a prediction)\n\n";
  if (report.shown.empty()) return out + "Nothing fits: --format json says why each row does not.\n";

  const std::vector<Column> columns = {{"#", true},      {"model"},        {"params", true}, {"weights"},
                                       {"KV"},           {"quality"},      {"total", true},  {"headroom", true},
                                       {"max ctx", true}, {"bound"},       {"seqs", true},   {"tok/s", true}};
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < report.shown.size(); ++i) rows.push_back(cells_of(result.rows[report.shown[i]], i + 1));
  std::vector<std::size_t> widths(columns.size());
  for (std::size_t c = 0; c < columns.size(); ++c) {
    widths[c] = columns[c].header.size();
    for (const auto& row : rows) widths[c] = std::max(widths[c], row[c].size());
  }
  const auto line_of = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string fill(widths[c] - cells[c].size(), ' ');
      line += (c ? "  " : "") + (columns[c].right ? fill + cells[c] : cells[c] + fill);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line + "\n";
  };
  std::vector<std::string> headers;
  for (const Column& column : columns) headers.push_back(column.header);
  out += line_of(headers);
  for (const auto& row : rows) out += line_of(row);
  const std::size_t listed = report.all ? result.fitting.size() : result.best.size();
  if (listed > report.shown.size())
    out += fmt::format("\n{} more fit{} (--top N, --all)\n", listed - report.shown.size(),
                       report.all ? "" : fmt::format("; {} rows in all", result.fitting.size()));
  return out;
}

std::string format_fit_csv(const FitReport& report) {
  const FitResult& result = *report.result;
  std::string out =
      "rank,model,params,weights,kv_dtype,quality,total_bytes,headroom_bytes,max_ctx,max_ctx_bound,max_batch,tokens_per_s\n";
  for (std::size_t i = 0; i < report.shown.size(); ++i) {
    const FitRow& r = result.rows[report.shown[i]];
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{}\n", i + 1, csv_field(r.model_id), r.params, csv_field(r.format.name),
                       csv_field(r.row.cache.label()), to_string(r.quality), r.row.total_bytes, r.row.headroom_bytes,
                       r.max_ctx ? std::to_string(*r.max_ctx) : "", to_string(r.ctx_stop.bound),
                       r.max_batch ? std::to_string(*r.max_batch) : "",
                       r.row.decode_bound ? fmt::format("{:.1f}", r.row.decode_bound->tokens_per_s_per_sequence) : "");
  }
  return out;
}

std::string format_fit_json(const FitReport& report) {
  const FitResult& result = *report.result;
  nlohmann::ordered_json out;
  out["schema_version"] = kJsonSchemaVersion;
  out["kvplan_version"] = kVersion;
  out["command"] = "fit";
  out["gpu"] = gpu_to_json(report.gpus.front(), report.gpus.size());
  out["runtime"] = result.runtime;
  out["ctx"] = result.ctx;
  out["batch"] = result.batch;
  out["quality"] = to_string(report.quality);
  out["family"] = report.family.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(report.family);
  out["settings"] = {{"overhead_bytes", result.settings.overhead_bytes},
                     {"utilization", static_cast<double>(result.settings.utilization_millionths) / 1e6},
                     {"budget_rule", result.settings.budget_rule},
                     {"notes", result.settings.notes}};
  out["ranking_rule"] = fit_ranking_rule();
  out["models_evaluated"] = result.models;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const FitRow& r : result.rows) {
    nlohmann::ordered_json j;
    j["model"] = {{"id", r.model_id},
                  {"name", r.model_name},
                  {"architecture", r.architecture},
                  {"params", r.params},
                  {"active_params", r.active_params},
                  {"trained_context", r.trained_context}};
    j["weights"] = {{"format", r.format.name}, {"kind", r.format.kind}, {"source", r.format.source},
                    {"quality", to_string(r.format.quality)}};
    j["kv_dtype"] = r.row.cache.label();
    j["kv_quality"] = to_string(r.cache_quality);
    j["quality"] = to_string(r.quality);
    j["fits"] = r.rejected.empty();
    j["rejected"] = r.rejected.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(r.rejected);
    j["max_ctx"] = json_or_null(r.max_ctx);
    j["max_ctx_stop"] = stop_json(r.ctx_stop);
    j["max_batch"] = json_or_null(r.max_batch);
    j["max_batch_stop"] = stop_json(r.batch_stop);
    j["row"] = row_to_json(r.row);
    rows.push_back(std::move(j));
  }
  out["rows"] = std::move(rows);
  out["best"] = result.best;
  out["fitting"] = result.fitting;
  out["shown"] = report.shown;
  nlohmann::ordered_json refusals = nlohmann::ordered_json::array();
  for (const FitRefusal& r : result.refusals)
    refusals.push_back({{"model", r.model_id},
                        {"weights", r.format},
                        {"weights_kind", r.format_kind},
                        {"kv_dtype", r.cache.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(r.cache)},
                        {"reason", r.reason}});
  out["not_taken"] = std::move(refusals);
  return out.dump(2) + "\n";
}

}  // namespace kvplan
