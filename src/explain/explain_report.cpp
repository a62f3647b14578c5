#include "explain/explain_report.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kvplan/version.h"
#include "model/text.h"

namespace kvplan {

namespace {

using logs::LogFact;

/// "max_model_len 16384 (line 25)" for the settings line; a value is printed safely (a log is
/// outside text: no escape sequence reaches the terminal).
std::string settings_line(const logs::EngineLog& log) {
  std::string out;
  for (const LogFact& fact : log.settings)
    out += fmt::format("{}{} {}{} (line {})", out.empty() ? "" : ", ", fact.name, printable(fact.value, 80),
                       fact.unit.empty() ? "" : " " + fact.unit, fact.line);
  return out.empty() ? "none recognised" : out;
}

std::string line_numbers(const Reconciled& row) {
  std::string out;
  std::size_t shown = 0;
  std::size_t last = 0;
  for (const LogFact& fact : row.from) {
    if (fact.line == last) continue;  // a sum of two figures of one line
    last = fact.line;
    if (++shown > 3) {
      out += ",...";
      break;
    }
    out += fmt::format("{}{}", out.empty() ? "" : ",", fact.line);
  }
  return out.empty() ? "-" : out;
}

std::string pad(const std::string& text, std::size_t width, bool right) {
  // Widths count characters the way a terminal does for this ASCII table.
  if (text.size() >= width) return text;
  return right ? std::string(width - text.size(), ' ') + text : text + std::string(width - text.size(), ' ');
}

nlohmann::ordered_json fact_json(const LogFact& fact) {
  nlohmann::ordered_json out;
  out["name"] = fact.name;
  out["value"] = fact.value;
  out["unit"] = fact.unit;
  if (!fact.device.empty()) out["device"] = fact.device;
  out["line"] = fact.line;
  if (const auto band = logs::byte_band(fact)) {
    out["bytes"] = band->mid;
    out["bytes_low"] = band->low;
    out["bytes_high"] = band->high;
  }
  out["text"] = fact.text;
  return out;
}

template <typename T>
nlohmann::ordered_json optional_json(const std::optional<T>& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json();
}

}  // namespace

std::string format_explanation_text(const Explanation& e) {
  const logs::EngineLog& log = e.log;
  std::string out;
  out += fmt::format("Log       {}: {}, {} lines; {} settings and {} figures recognised\n", printable(e.source_name, 120),
                     log.engine == logs::LogEngine::unknown ? "no engine recognised" : logs::display_name(log.engine),
                     log.lines, log.settings.size(), log.figures.size());
  out += fmt::format("Settings  {}\n", settings_line(log));
  if (!e.model.empty()) out += fmt::format("Model     {}, from {}\n", printable(e.model, 120), printable(e.model_from, 200));
  if (!e.gpu.empty()) out += fmt::format("GPU       {}, from {}\n", printable(e.gpu, 80), printable(e.gpu_from, 200));
  if (!e.command.empty()) out += fmt::format("Same plan {}\n", printable(e.command, 400));
  if (!e.rows.empty()) {
    out += "Per GPU, in the units the engine prints (GiB = 2^30 bytes, MiB = 2^20, GB = 10^9).\n\n";
    std::vector<std::array<std::string, 6>> cells;
    cells.push_back({"component", "line", "engine", "kvplan", "difference", "agreement"});
    for (const Reconciled& row : e.rows)
      cells.push_back({row.component, line_numbers(row), row.engine.empty() ? "-" : row.engine,
                       row.kvplan.empty() ? "-" : row.kvplan, row.difference.empty() ? "-" : row.difference,
                       std::string(to_string(row.agreement))});
    std::array<std::size_t, 6> width{};
    for (const auto& line : cells)
      for (std::size_t i = 0; i < line.size(); ++i) width[i] = std::max(width[i], line[i].size());
    for (const auto& line : cells) {
      std::string text;
      for (std::size_t i = 0; i < line.size(); ++i) {
        const bool right = i >= 1 && i <= 4;
        text += (i ? "  " : "") + pad(line[i], width[i], right);
      }
      while (!text.empty() && text.back() == ' ') text.pop_back();
      out += text + "\n";
    }
    out += "\nRules:\n";
    for (const Reconciled& row : e.rows) out += fmt::format("  {}: {}\n", row.component, row.rule);
  } else if (!log.figures.empty()) {
    out += "\nFigures as printed:\n";
    for (const LogFact& fact : log.figures)
      out += fmt::format("  line {}: {} {}{}{}\n", fact.line, fact.name, printable(fact.value, 40),
                         fact.unit.empty() ? "" : " " + fact.unit,
                         fact.device.empty() ? "" : " (" + printable(fact.device, 40) + ")");
  }
  if (!e.notes.empty()) {
    out += "\nNotes:\n";
    for (const std::string& note : e.notes) out += "  " + printable(note, 600) + "\n";
  }
  if (!e.not_found.empty()) {
    out += fmt::format("\nNot in this log (what {} prints that was not found):\n", logs::display_name(log.engine));
    for (const std::string& line : e.not_found) out += "  " + line + "\n";
  }
  return out;
}

std::string format_explanation_json(const Explanation& e) {
  const logs::EngineLog& log = e.log;
  nlohmann::ordered_json out;
  out["kvplan_version"] = kVersion;
  out["source"] = e.source_name;
  out["engine"] = std::string(logs::to_string(log.engine));
  out["lines"] = log.lines;
  out["cut_lines"] = log.cut_lines;
  out["cut_input"] = log.cut_input;
  nlohmann::ordered_json settings = nlohmann::ordered_json::array();
  for (const LogFact& fact : log.settings) settings.push_back(fact_json(fact));
  out["settings"] = std::move(settings);
  nlohmann::ordered_json figures = nlohmann::ordered_json::array();
  for (const LogFact& fact : log.figures) figures.push_back(fact_json(fact));
  out["figures"] = std::move(figures);
  out["runtime"] = e.runtime.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(e.runtime);
  out["model"] = e.model.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json({{"id", e.model}, {"from", e.model_from}});
  out["gpu"] = e.gpu.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json({{"id", e.gpu}, {"from", e.gpu_from}});
  out["command"] = e.command.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(e.command);
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const Reconciled& row : e.rows) {
    nlohmann::ordered_json r;
    r["component"] = row.component;
    r["key"] = row.key;
    r["unit"] = row.unit;
    r["engine"] = row.engine.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(row.engine);
    r["engine_value"] = optional_json(row.engine_value);
    r["engine_low"] = optional_json(row.engine_low);
    r["engine_high"] = optional_json(row.engine_high);
    r["kvplan"] = row.kvplan.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(row.kvplan);
    r["kvplan_value"] = optional_json(row.kvplan_value);
    r["difference"] = row.difference.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(row.difference);
    r["agreement"] = std::string(to_string(row.agreement));
    r["rule"] = row.rule;
    nlohmann::ordered_json lines = nlohmann::ordered_json::array();
    for (const LogFact& fact : row.from) lines.push_back(fact.line);
    r["lines"] = std::move(lines);
    rows.push_back(std::move(r));
  }
  out["comparison"] = std::move(rows);
  out["notes"] = e.notes;
  out["not_found"] = e.not_found;
  // A log is outside text: invalid UTF-8 is replaced rather than refused.
  return out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace kvplan
