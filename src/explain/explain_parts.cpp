#include "explain/explain_parts.h"

#include <algorithm>

#include <fmt/format.h>

#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "kvplan/model_loader.h"
#include "kvplan/units.h"
#include "loaders/logs/engine_log.h"
#include "model/text.h"

namespace kvplan::explain_parts {

std::uint64_t unit_bytes(std::string_view unit) {
  if (unit == "B") return 1;
  if (unit == "KiB") return std::uint64_t{1} << 10;
  if (unit == "MiB") return std::uint64_t{1} << 20;
  if (unit == "GiB") return std::uint64_t{1} << 30;
  if (unit == "KB" || unit == "kB") return 1000;
  if (unit == "MB") return 1000'000;
  if (unit == "GB") return 1000'000'000;
  return 0;
}

int decimals_of(std::string_view printed) {
  const std::size_t point = printed.find('.');
  return point == std::string_view::npos ? 0 : static_cast<int>(printed.size() - point - 1);
}

std::string in_unit(std::uint64_t bytes, std::string_view unit, int decimals) {
  const std::uint64_t one = unit_bytes(unit);
  if (one == 0) return fmt::format("{} B", bytes);
  return fmt::format("{:.{}f} {}", static_cast<double>(bytes) / static_cast<double>(one), decimals, unit);
}

namespace {

/// `to - from` in `unit`, signed; for display only (the exact bytes are in the JSON).
std::string difference_in_unit(std::uint64_t to, std::uint64_t from, std::string_view unit, int decimals) {
  const std::uint64_t one = unit_bytes(unit);
  const double value = (static_cast<double>(to) - static_cast<double>(from)) / static_cast<double>(one == 0 ? 1 : one);
  return fmt::format("{:+.{}f} {}", value, decimals, unit);
}

/// The ways a log names a model that the catalog may know: as printed, the last part of a path,
/// a GGUF file's stem with its quantization parts dropped one by one, a general.name in lower
/// case with dashes ("Gpt Oss 20b" -> "gpt-oss-20b").
std::vector<std::string> spellings(std::string_view name) {
  std::vector<std::string> out{std::string(name)};
  std::string_view base = name;
  if (const std::size_t slash = base.find_last_of("/\\"); slash != std::string_view::npos && slash + 1 < base.size()) {
    base.remove_prefix(slash + 1);
    out.emplace_back(base);
  }
  std::string stem(base);
  if (stem.size() > 5 && ascii_lower(stem.substr(stem.size() - 5)) == ".gguf") stem.resize(stem.size() - 5);
  std::string dashed = ascii_lower(stem);
  std::replace(dashed.begin(), dashed.end(), ' ', '-');
  std::replace(dashed.begin(), dashed.end(), '_', '-');
  out.push_back(dashed);
  // "qwen-qwen3-30b-a3b-q4-k-m" -> "qwen-qwen3-30b-a3b-q4-k" -> ... each a candidate.
  std::string cut = dashed;
  for (int i = 0; i < 6; ++i) {
    const std::size_t dash = cut.find_last_of('-');
    if (dash == std::string::npos || dash == 0) break;
    cut.resize(dash);
    out.push_back(cut);
    // "meta-llama-3.1-8b-instruct" style names: without their organisation's first word too.
    if (const std::size_t first = cut.find('-'); first != std::string::npos) out.push_back(cut.substr(first + 1));
  }
  if (const std::size_t first = dashed.find('-'); first != std::string::npos) out.push_back(dashed.substr(first + 1));
  return out;
}

}  // namespace

std::optional<ModelSpec> resolve_model(const ExplainInputs& inputs, const std::vector<NameCandidate>& candidates,
                                       Explanation& out) {
  if (!inputs.model.empty()) {
    out.model_from = "--model";
    ModelSpec model = load_model(inputs.model);
    out.model = model.id;
    return model;
  }
  for (const NameCandidate& candidate : candidates) {
    if (candidate.name.empty()) continue;
    for (const std::string& spelling : spellings(candidate.name)) {
      if (spelling.size() < 3) continue;
      if (std::optional<ModelSpec> model = find_builtin_model(spelling)) {
        out.model = model->id;
        out.model_from = candidate.fact ? fmt::format("the log's {} '{}' (line {})", candidate.fact->name,
                                                      candidate.name, candidate.fact->line)
                                        : candidate.name;
        return model;
      }
    }
  }
  std::string names;
  for (const NameCandidate& candidate : candidates)
    if (!candidate.name.empty()) names += fmt::format("{}'{}'", names.empty() ? "" : ", ", candidate.name);
  out.notes.push_back(names.empty()
                          ? "the log names no model: give --model (a catalog id, a config.json or its folder, a GGUF file)"
                          : fmt::format("kvplan's catalog has no model named {}: give --model (a catalog id, a "
                                        "config.json or its folder, a GGUF file) to compare",
                                        names));
  return std::nullopt;
}

std::vector<GpuSpec> resolve_gpus(const ExplainInputs& inputs, const logs::EngineLog& log, const logs::LogFact* size_fact,
                                  Explanation& out) {
  if (!inputs.gpu.empty()) {
    out.gpu_from = "--gpu";
    std::vector<GpuSpec> gpus = resolve_builtin_gpus(inputs.gpu, "--gpu");
    out.gpu = inputs.gpu;
    return gpus;
  }
  if (const logs::LogFact* named = log.setting("gpu")) {
    std::string name = named->value;
    for (const std::string_view prefix : {"", "NVIDIA ", "NVIDIA GeForce "}) {
      std::string_view trial = name;
      if (!prefix.empty()) {
        if (trial.substr(0, prefix.size()) != prefix) continue;
        trial.remove_prefix(prefix.size());
      }
      if (const GpuSpec* gpu = builtin_gpus().find(trial)) {
        out.gpu = gpu->id;
        out.gpu_from = fmt::format("the log's card '{}' (line {})", named->value, named->line);
        return {*gpu};
      }
    }
    out.notes.push_back(fmt::format("the log's card '{}' (line {}) is not in kvplan's GPU catalog", named->value, named->line));
  }
  if (size_fact) {
    const std::string size = size_fact->value + size_fact->unit;
    try {
      std::vector<GpuSpec> gpus = resolve_builtin_gpus(size, "the log's memory figure");
      out.gpu = size;
      out.gpu_from = fmt::format("a card of the log's {} ({} {}, line {}); give --gpu for the catalog's card",
                                 size_fact->name, size_fact->value, size_fact->unit, size_fact->line);
      return gpus;
    } catch (const Error&) {
      // Not a size kvplan reads: fall through to the note.
    }
  }
  out.notes.push_back("the log names no card kvplan knows: give --gpu (a catalog name such as h100, or a size such as 24GiB)");
  return {};
}

LogRequest::LogRequest(const logs::EngineLog& log, std::string_view runtime, const Explanation& out) : log_(log) {
  texts.runtime = std::string(runtime);
  command = fmt::format("kvplan --runtime {} --model {} --gpu {}", runtime, out.model, out.gpu);
}

std::string LogRequest::value(std::string_view setting) const {
  const logs::LogFact* fact = log_.setting(setting);
  return fact ? fact->value : std::string();
}

void LogRequest::option(std::string_view name, const std::string& value, std::string_view flag) {
  if (value.empty()) return;
  texts.engine_options.push_back({std::string(name), value, std::string(flag)});
  command += fmt::format(" {} {}", flag, value);
}

void LogRequest::flag(std::string_view name, std::string_view flag) {
  texts.engine_options.push_back({std::string(name), "", std::string(flag)});
  command += fmt::format(" {}", flag);
}

PlanRequest LogRequest::request(const ModelSpec& model, const std::vector<EngineOption>& extra) const {
  if (extra.empty()) return build_plan_request(texts, model, SettingNames{});
  PlanTexts fed = texts;
  fed.engine_options.insert(fed.engine_options.end(), extra.begin(), extra.end());
  return build_plan_request(fed, model, SettingNames{});
}

Reconciled count_row(std::string component, std::string key, const logs::LogFact* fact, std::optional<std::uint64_t> low,
                     std::optional<std::uint64_t> high, std::string unit, std::string rule) {
  Reconciled row;
  row.component = std::move(component);
  row.key = std::move(key);
  row.unit = std::move(unit);
  row.rule = std::move(rule);
  if (fact) {
    row.from.push_back(*fact);
    row.engine = fact->value + (row.unit == "x" ? "x" : "");
  }
  if (!low || !high) return row;
  // Concurrency is compared in hundredths, as vLLM prints it.
  const auto shown = [&](std::uint64_t v) {
    return row.unit == "x" ? fmt::format("{}.{:02}x", v / 100, v % 100) : format_thousands(v);
  };
  row.kvplan = *low == *high ? shown(*low) : fmt::format("{} - {}", shown(*low), shown(*high));
  row.kvplan_value = *low;
  if (!fact) {
    row.agreement = Agreement::not_in_log;
    return row;
  }
  const auto printed = logs::parse_decimal(fact->value);
  if (!printed) return row;
  std::uint64_t value = printed->digits;
  if (row.unit == "x") {
    // "29.05" -> 2905 hundredths, whatever the printed decimals.
    for (std::uint32_t d = printed->decimals; d < 2; ++d) value *= 10;
    for (std::uint32_t d = 2; d < printed->decimals; ++d) value /= 10;
  }
  row.engine_value = value;
  row.agreement = value >= *low && value <= *high ? Agreement::exact : Agreement::differs;
  if (row.agreement == Agreement::differs) {
    // kvplan's nearest end minus the engine's figure, signed.
    const bool below = value < *low;
    const std::uint64_t off = below ? *low - value : value - *high;
    const char sign = below ? '+' : '-';
    row.difference = row.unit == "x" ? fmt::format("{}{}.{:02}x", sign, off / 100, off % 100)
                                     : fmt::format("{}{}", sign, format_thousands(off));
  } else {
    row.difference = "0";
  }
  return row;
}

void add_row(Explanation& out, Reconciled row) {
  if (row.from.empty() && row.kvplan.empty()) return;
  out.rows.push_back(std::move(row));
}

Reconciled memory_row(std::string component, std::string key, std::vector<const logs::LogFact*> facts,
                      std::optional<std::uint64_t> kvplan_bytes, bool exact_rule, std::string rule) {
  Reconciled row;
  row.component = std::move(component);
  row.key = std::move(key);
  row.rule = std::move(rule);
  row.unit = "bytes";
  std::string unit = "GiB";
  int decimals = 2;
  std::uint64_t low = 0, mid = 0, high = 0;
  bool any = false;
  for (const logs::LogFact* fact : facts) {
    if (!fact) continue;
    const auto band = logs::byte_band(*fact);
    // A sum past 64 bits is no figure (a log can print anything): the fact is left out of it.
    if (!band || band->high > ~std::uint64_t{0} - high) continue;
    if (!any) {
      unit = fact->unit;
      decimals = decimals_of(fact->value);
    }
    any = true;
    decimals = std::max(decimals, decimals_of(fact->value));
    low += band->low;
    mid += band->mid;
    high += band->high;
    row.from.push_back(*fact);
  }
  if (any) {
    row.engine_value = mid;
    row.engine_low = low;
    row.engine_high = high;
    row.engine = in_unit(mid, unit, decimals);
  }
  if (kvplan_bytes) {
    row.kvplan_value = *kvplan_bytes;
    row.kvplan = in_unit(*kvplan_bytes, unit, decimals);
  }
  if (any && kvplan_bytes) {
    row.difference = difference_in_unit(*kvplan_bytes, mid, unit, decimals);
    if (exact_rule) row.agreement = *kvplan_bytes >= low && *kvplan_bytes <= high ? Agreement::exact : Agreement::differs;
    else row.agreement = Agreement::estimate;
  } else {
    row.agreement = any ? Agreement::engine_only : Agreement::not_in_log;
  }
  return row;
}

}  // namespace kvplan::explain_parts
