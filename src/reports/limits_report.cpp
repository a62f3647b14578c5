#include "reports/limits_report.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kvplan/report.h"
#include "kvplan/units.h"
#include "kvplan/version.h"
#include "reports/fields.h"
#include "reports/text.h"

namespace kvplan {

namespace {

std::string or_none(const std::optional<std::uint64_t>& value) { return value ? format_thousands(*value) : "none"; }

/// "memory", "trained context", "cap", "max_num_seqs" ...: the bound as a cell.
std::string bound_cell(const SearchStop& stop) {
  if (stop.bound == SearchBound::engine) return stop.code.empty() ? "engine" : stop.code;
  std::string text(to_string(stop.bound));
  for (char& c : text)
    if (c == '_') c = ' ';
  return text;
}

std::string deployment_cell(const CacheLimits& limits) {
  if (!limits.min_gpus || !limits.min_gpus_row) return "none tried fits";
  const Row& row = *limits.min_gpus_row;  // tp and pp as the engine runs them
  if (row.pp > 1) return fmt::format("{} (tp {} x pp {})", limits.min_gpus->gpus, row.tp, row.pp);
  return fmt::format("{} (tp {})", limits.min_gpus->gpus, row.tp);
}

nlohmann::ordered_json stop_code(const SearchStop& stop) {
  return stop.code.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(stop.code);
}

nlohmann::ordered_json row_or_null(const std::optional<Row>& row) {
  return row ? row_to_json(*row) : nlohmann::ordered_json();
}

/// The plain report's header lines (model, card, budget, weights), from the limits' settings.
std::vector<std::string> header(const LimitsReport& report) {
  Report plain;
  plain.model = report.model;
  plain.gpus = report.gpus;
  plain.plan.settings = report.limits.settings;
  plain.plan.facts = report.limits.facts;
  for (const CacheLimits& each : report.limits.caches)
    if (each.max_ctx_row && plain.plan.rows.empty()) plain.plan.rows.push_back(*each.max_ctx_row);
  return header_lines(plain);
}

std::string cap_words(const Limits& limits) {
  switch (limits.cap_kind) {
    case SearchBound::trained_context: return "the trained context";
    case SearchBound::cap: return "the cap given";
    case SearchBound::search_limit: return "kvplan's search limit";
    case SearchBound::memory:
    case SearchBound::engine: break;
  }
  return "the cap";
}

}  // namespace

std::string format_limits_table(const LimitsReport& report) {
  const Limits& limits = report.limits;
  std::string out;
  for (const std::string& line : header(report)) out += line + "\n";
  std::string tried;
  for (const GpuDeployment& d : limits.tried)
    tried += (tried.empty() ? "" : ", ") + (d.pp > 1 ? fmt::format("{}x{}", d.tp, d.pp) : std::to_string(d.tp));
  out += fmt::format("Search  max ctx at batch {} (up to {}, {}); max batch at ctx {}; fewest GPUs at ctx {} x batch {} "
                     "(tp{} {})\n\n",
                     limits.batch, format_thousands(limits.ctx_cap), cap_words(limits), format_thousands(limits.ctx),
                     format_thousands(limits.ctx), limits.batch, limits.tried.size() > 4 ? " x pp" : "", tried);

  const std::vector<std::string> headers = {"KV dtype", "max ctx", "bound", "max batch", "bound", "fewest GPUs"};
  const std::vector<bool> right = {false, true, false, true, false, false};
  std::vector<std::vector<std::string>> cells;
  for (const CacheLimits& each : limits.caches)
    cells.push_back({each.cache.label(), or_none(each.max_ctx), bound_cell(each.ctx_stop), or_none(each.max_batch),
                     bound_cell(each.batch_stop), deployment_cell(each)});
  std::vector<std::size_t> widths(headers.size());
  for (std::size_t c = 0; c < headers.size(); ++c) {
    widths[c] = headers[c].size();
    for (const auto& row : cells) widths[c] = std::max(widths[c], row[c].size());
  }
  const auto line_of = [&](const std::vector<std::string>& row) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      const std::string fill(widths[c] - row[c].size(), ' ');
      line += (c ? "  " : "") + (right[c] ? fill + row[c] : row[c] + fill);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line + "\n";
  };
  out += line_of(headers);
  for (const auto& row : cells) out += line_of(row);

  std::vector<std::string> under;
  for (const CacheLimits& each : limits.caches) {
    const bool capped = each.ctx_stop.bound == SearchBound::trained_context || each.ctx_stop.bound == SearchBound::cap;
    if (capped && each.uncapped_max_ctx)
      under.push_back(fmt::format("{}: fits {} tokens ({}); {} {} ({} raises it)", each.cache.label(),
                                  format_thousands(*each.uncapped_max_ctx), bound_cell(each.uncapped_stop),
                                  limits.cap_kind == SearchBound::trained_context ? "trained for" : "capped at",
                                  format_thousands(limits.ctx_cap), report.cap_flag));
    for (const std::string& skipped : each.skipped) under.push_back(fmt::format("{}: not planned: {}", each.cache.label(), skipped));
  }
  under.push_back("Exact: each answer fits, and one more token or sequence (or fewer GPUs) does not.");
  out += "\n";
  for (const std::string& line : under) out += line + "\n";
  return out;
}

std::string format_limits_json(const LimitsReport& report) {
  const Limits& limits = report.limits;
  nlohmann::ordered_json out;
  out["schema_version"] = kJsonSchemaVersion;
  out["kvplan_version"] = kVersion;
  out["command"] = "max";
  out["model"] = {{"id", report.model->id}, {"name", report.model->name}, {"max_context", report.model->max_context}};
  out["gpu"] = gpu_to_json(report.gpus.front(), report.gpus.size());
  out["runtime"] = limits.runtime;
  out["settings"] = {{"overhead_bytes", limits.settings.overhead_bytes},
                     {"utilization", static_cast<double>(limits.settings.utilization_millionths) / 1e6},
                     {"budget_rule", limits.settings.budget_rule},
                     {"notes", limits.settings.notes}};
  out["batch"] = limits.batch;
  out["ctx"] = limits.ctx;
  out["max_ctx_cap"] = limits.ctx_cap;
  out["cap"] = to_string(limits.cap_kind);
  nlohmann::ordered_json tried = nlohmann::ordered_json::array();
  for (const GpuDeployment& d : limits.tried) tried.push_back({{"gpus", d.gpus}, {"tp", d.tp}, {"pp", d.pp}});
  out["gpu_search"] = tried;
  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  for (const CacheLimits& each : limits.caches) {
    nlohmann::ordered_json r;
    r["kv_dtype"] = each.cache.label();
    r["max_ctx"] = json_or_null(each.max_ctx);
    r["limit"] = to_string(each.ctx_stop.bound);
    r["limit_code"] = stop_code(each.ctx_stop);
    r["uncapped_max_ctx"] = json_or_null(each.uncapped_max_ctx);
    r["uncapped_limit"] = to_string(each.uncapped_stop.bound);
    r["uncapped_limit_code"] = stop_code(each.uncapped_stop);
    r["max_batch"] = json_or_null(each.max_batch);
    r["max_batch_limit"] = to_string(each.batch_stop.bound);
    r["max_batch_limit_code"] = stop_code(each.batch_stop);
    r["min_gpus"] = each.min_gpus ? nlohmann::ordered_json(each.min_gpus->gpus) : nlohmann::ordered_json();
    r["min_gpus_tp"] = each.min_gpus_row ? nlohmann::ordered_json(each.min_gpus_row->tp) : nlohmann::ordered_json();
    r["min_gpus_pp"] = each.min_gpus_row ? nlohmann::ordered_json(each.min_gpus_row->pp) : nlohmann::ordered_json();
    r["not_planned"] = each.skipped;
    r["row"] = row_or_null(each.max_ctx_row);
    r["max_batch_row"] = row_or_null(each.max_batch_row);
    r["min_gpus_row"] = row_or_null(each.min_gpus_row);
    results.push_back(r);
  }
  out["results"] = results;
  return out.dump(2) + "\n";
}

}  // namespace kvplan
