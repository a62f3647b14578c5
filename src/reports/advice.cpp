#include "reports/advice.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kvplan/units.h"
#include "kvplan/version.h"
#include "model/text.h"
#include "reports/text.h"

namespace kvplan {

namespace {

std::string gib(std::uint64_t bytes) { return format_gib_number(static_cast<std::int64_t>(bytes)); }

const PricedGpu& card(const AdviceReport& report, const AdviseConfig& config) {
  return report.request->candidates[config.candidate];
}

std::string deployment(const AdviceReport& report, const AdviseConfig& config) {
  std::string text = fmt::format("{} x{}", card(report, config).gpu.id, config.count);
  if (config.row.pp > 1) text += fmt::format(" (tp {} x pp {})", config.row.tp, config.row.pp);
  return text;
}

std::string price(const AdviseConfig& config) {
  return config.usd_per_hour ? fmt::format("{:.2f}", *config.usd_per_hour) : std::string("?");
}

std::string kv_held(const Row& row) { return gib(std::max(row.kv_bytes, row.kv_pool_bytes.value_or(0))); }

/// "weights 14.96 + KV 4.00 + overhead 2.00 = 20.96 GiB <= 23.99 GiB per GPU"
std::string sum(const Row& row) {
  return fmt::format("weights {} + KV {} + overhead {} = {} GiB {} {} GiB{}", gib(row.weights_bytes), kv_held(row),
                     gib(row.overhead_bytes), gib(row.total_bytes), row.total_bytes <= row.capacity_bytes ? "<=" : ">",
                     gib(row.capacity_bytes), row.per_gpu.size() > 1 ? " on the fullest GPU" : "");
}

std::string blocking_codes(const Row& row) {
  std::string codes;
  for (const Finding& f : row.findings)
    if (f.blocking) codes += (codes.empty() ? "" : ", ") + f.code;
  return codes;
}

std::string quality_phrase(Quality quality) {
  switch (quality) {
    case Quality::lossless: return "lossless: the model's own weights, a cache at its own float type";
    case Quality::fp8: return "fp8: also fp8 (E4M3) weights and cache";
    case Quality::int8: return "int8: also fp8 and int8 weights, fp8, int8 and q8_0 caches";
    case Quality::int4: return "int4: also fp8, int8 and int4 weights, 8- and 4-bit caches (int4, q4_0, nvfp4)";
  }
  return "";
}

std::string counts_tried(const AdviseRequest& request) {
  std::string text;
  for (std::uint32_t count = 1; count <= request.max_gpus; count *= 2) {
    text += (text.empty() ? "" : ", ") + std::to_string(count);
    if (count > request.max_gpus / 2) break;
  }
  return text;
}

/// Every warning once, with the ranks (1-based) of the configurations it applies to.
std::vector<std::string> warning_lines(const std::vector<AdviseConfig>& configs) {
  struct Seen {
    const Finding* finding;
    std::vector<std::size_t> rows;
  };
  std::vector<Seen> seen;
  for (std::size_t r = 0; r < configs.size(); ++r)
    for (const Finding& finding : configs[r].row.findings) {
      auto it = std::find_if(seen.begin(), seen.end(), [&](const Seen& s) {
        return s.finding->code == finding.code && s.finding->text == finding.text;
      });
      if (it == seen.end()) seen.push_back({&finding, {r}});
      else it->rows.push_back(r);
    }
  std::vector<std::string> lines;
  for (const Seen& s : seen) {
    std::string where;
    for (const std::size_t r : s.rows) where += (where.empty() ? "" : ", ") + std::to_string(r + 1);
    lines.push_back(fmt::format("Warning {}: {} (#{})", s.finding->code, s.finding->text, where));
  }
  return lines;
}

}  // namespace

std::string format_advice_table(const AdviceReport& report) {
  const ModelSpec& model = *report.model;
  const AdviseRequest& request = *report.request;
  const Advice& advice = report.advice;
  std::vector<std::string> lines;
  lines.push_back(fmt::format("Model   {} ({}): {} layers [{}], {} params", model.name, model.id, model.layer_count(),
                              describe_layers(model), describe_params(model)));
  lines.push_back(fmt::format("Asked   ctx {}, batch {}, runtime {}, quality {}", format_thousands(request.base.contexts.front()),
                              request.base.batch, request.base.runtime, quality_phrase(request.quality)));
  lines.push_back(fmt::format("Tried   {} configurations: {} card{} x {} GPUs; {} fit, {} not offered by the engine{}",
                              format_thousands(advice.tried), request.candidates.size(),
                              request.candidates.size() == 1 ? "" : "s", counts_tried(request),
                              format_thousands(advice.fit_count), format_thousands(advice.not_offered),
                              advice.not_modelled ? fmt::format("; {} pipeline split{} left out (not modelled)",
                                                                format_thousands(advice.not_modelled),
                                                                advice.not_modelled == 1 ? "" : "s")
                                                  : ""));
  lines.push_back(report.prices_origin.empty()
                      ? std::string("Prices  approximate USD per hour for all the GPUs, from the catalog's dated cloud "
                                    "list and community prices (kvplan gpus --format json has each source)")
                      : fmt::format("Prices  USD per hour for all the GPUs, from {}", report.prices_origin));
  lines.push_back("Sizes in GiB (1 GiB = 2^30 bytes), per GPU (the fullest one).");
  std::string out;
  for (const std::string& line : lines) out += printable(line, 4096) + "\n";
  out += "\n";

  if (advice.fitting.empty()) {
    out += "Nothing fits";
    out += request.candidates.empty() ? ": no card to try (give --gpus or --prices).\n" : ".\n";
  } else {
    TextTable table;
    table.headers = {"#", "GPU", "count", "tp", "pp", "weights", "KV dtype", "$/h", "price date", "total", "capacity",
                     "headroom"};
    table.right_aligned = {true, false, true, true, true, false, false, true, false, true, true, true};
    for (std::size_t i = 0; i < advice.fitting.size(); ++i) {
      const AdviseConfig& config = advice.fitting[i];
      const Row& row = config.row;
      table.rows.push_back({std::to_string(i + 1), card(report, config).gpu.id, std::to_string(config.count),
                            std::to_string(row.tp), std::to_string(row.pp), std::string(row.weight_dtype->name),
                            row.cache.label(), (report.prices_origin.empty() && config.usd_per_hour ? "~" : "") + price(config),
                            card(report, config).price_date, gib(row.total_bytes), gib(row.capacity_bytes),
                            format_gib_number(row.headroom_bytes)});
    }
    std::vector<std::size_t> widths(table.headers.size());
    for (std::size_t c = 0; c < widths.size(); ++c) {
      widths[c] = table.headers[c].size();
      for (const auto& row : table.rows) widths[c] = std::max(widths[c], row[c].size());
    }
    const auto line_of = [&](const std::vector<std::string>& cells) {
      std::string line;
      for (std::size_t c = 0; c < cells.size(); ++c) {
        const std::string fill(widths[c] - cells[c].size(), ' ');
        line += (c ? "  " : "") + (table.right_aligned[c] ? fill + cells[c] : cells[c] + fill);
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      return printable(line, 4096) + "\n";
    };
    out += line_of(table.headers);
    for (const auto& row : table.rows) out += line_of(row);
    out += "\nWhy they fit:\n";
    for (std::size_t i = 0; i < advice.fitting.size(); ++i)
      out += printable(fmt::format("  {}. {}: {}", i + 1, deployment(report, advice.fitting[i]), sum(advice.fitting[i].row)),
                       4096) +
             "\n";
  }

  if (!advice.cheaper.empty()) {
    out += advice.fitting.empty() ? "\nWhy none fits (each deployment at its best allowed dtypes):\n"
                                  : "\nWhy the cheaper ones do not (each at its best allowed dtypes):\n";
    constexpr std::size_t kShown = 12;
    for (std::size_t i = 0; i < std::min(advice.cheaper.size(), kShown); ++i) {
      const AdviseConfig& config = advice.cheaper[i];
      const Row& row = config.row;
      std::string line = fmt::format("  {} ({}), {} weights, {} cache: ", deployment(report, config),
                                     config.usd_per_hour ? fmt::format("{}${}/h", report.prices_origin.empty() ? "~" : "", price(config))
                                                         : std::string("no price"),
                                     row.weight_dtype->name, row.cache.label());
      if (row.total_bytes > row.capacity_bytes) line += fmt::format("{} ({} GiB over)", sum(row), format_gib_number(-row.headroom_bytes));
      else line += fmt::format("{}, but blocked: {}", sum(row), blocking_codes(row));
      out += printable(line, 4096) + "\n";
    }
    if (advice.cheaper.size() > kShown)
      out += fmt::format("  ... and {} more (--format json lists them)\n", advice.cheaper.size() - kShown);
  }
  if (!advice.not_offered_reasons.empty()) {
    out += "\nNot offered by the engine:\n";
    for (const std::string& reason : advice.not_offered_reasons) out += printable("  " + reason, 4096) + "\n";
  }
  if (!advice.not_modelled_reasons.empty()) {
    out += "\nLeft out, not modelled by kvplan (no verdict):\n";
    for (const std::string& reason : advice.not_modelled_reasons) out += printable("  " + reason, 4096) + "\n";
  }
  std::vector<std::string> under = warning_lines(advice.fitting);
  for (const QualityNote& note : advice.notes) {
    std::string where;
    for (const std::size_t r : note.rows) where += (where.empty() ? "" : ", ") + std::to_string(r + 1);
    under.push_back(fmt::format("Quality {}: {} (#{})", note.code, note.text, where));
  }
  if (!under.empty()) out += "\n";
  for (const std::string& line : under) out += printable(line, 4096) + "\n";
  return out;
}

std::string format_advice_json(const AdviceReport& report) {
  const AdviseRequest& request = *report.request;
  const Advice& advice = report.advice;
  nlohmann::ordered_json out;
  out["kvplan_version"] = kVersion;
  out["model"] = {{"id", report.model->id}, {"name", report.model->name}};
  nlohmann::ordered_json asked;
  asked["ctx"] = request.base.contexts.front();
  asked["batch"] = request.base.batch;
  asked["runtime"] = request.base.runtime;
  asked["quality"] = to_string(request.quality);
  asked["max_gpus"] = request.max_gpus;
  asked["top"] = request.top;
  asked["prices"] = report.prices_origin.empty() ? "catalog (approximate, dated)" : report.prices_origin;
  out["request"] = asked;
  out["tried"] = advice.tried;
  out["fit_count"] = advice.fit_count;
  out["not_offered"] = advice.not_offered;
  out["not_offered_reasons"] = advice.not_offered_reasons;
  out["not_modelled"] = advice.not_modelled;
  out["not_modelled_reasons"] = advice.not_modelled_reasons;
  nlohmann::ordered_json configs = nlohmann::ordered_json::array();
  // The cheaper ones are each cheaper than the first that fits: together, cheapest first.
  const auto add = [&](const AdviseConfig& config) {
    const Row& row = config.row;
    const PricedGpu& gpu = card(report, config);
    nlohmann::ordered_json entry;
    entry["gpu"] = gpu.gpu.id;
    entry["count"] = config.count;
    entry["tp"] = row.tp;
    entry["pp"] = row.pp;
    entry["weight_dtype"] = row.weight_dtype->name;
    entry["kv_dtype"] = row.cache.label();
    entry["price_per_hour"] = config.usd_per_hour ? nlohmann::ordered_json(*config.usd_per_hour) : nlohmann::ordered_json();
    entry["price_date"] = gpu.price_date;
    entry["price_approximate"] = report.prices_origin.empty();
    entry["weights_bytes"] = row.weights_bytes;
    entry["kv_bytes"] = std::max(row.kv_bytes, row.kv_pool_bytes.value_or(0));
    entry["overhead_bytes"] = row.overhead_bytes;
    entry["total_bytes"] = row.total_bytes;
    entry["capacity_bytes"] = row.capacity_bytes;
    entry["headroom_bytes"] = row.headroom_bytes;
    entry["fits"] = row.fits;
    entry["verdict"] = to_string(row.verdict);
    nlohmann::ordered_json warnings = nlohmann::ordered_json::array();
    for (const Finding& f : row.findings) warnings.push_back({{"code", f.code}, {"text", f.text}, {"blocking", f.blocking}});
    entry["warnings"] = warnings;
    configs.push_back(entry);
  };
  for (const AdviseConfig& config : advice.cheaper) add(config);
  for (const AdviseConfig& config : advice.fitting) add(config);
  out["configs"] = configs;
  nlohmann::ordered_json notes = nlohmann::ordered_json::array();
  for (const QualityNote& note : advice.notes) {
    std::vector<std::size_t> rows;  // indices into configs: the fitting ones follow the cheaper ones
    for (const std::size_t r : note.rows) rows.push_back(advice.cheaper.size() + r);
    notes.push_back({{"code", note.code}, {"text", note.text}, {"configs", rows}});
  }
  out["notes"] = notes;
  return out.dump(2) + "\n";
}

}  // namespace kvplan
