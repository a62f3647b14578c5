// The catalog listings: `kvplan models` and `kvplan gpus` in each output format.

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kvplan/plan.h"
#include "kvplan/catalog.h"
#include "kvplan/report.h"
#include "loaders/spec_json.h"
#include "kvplan/units.h"
#include "reports/text.h"

namespace kvplan {

namespace {

/// The catalog documents (`kvplan models/gpus --format json`) have their own version.
constexpr int kCatalogSchemaVersion = 1;

/// "sliding+full": the kinds of layer a model uses, in order of first appearance; "indexer" marks
/// a DSA indexer cache beside MLA layers, "shared" KV-shared layers.
std::string layer_kinds_used(const ModelSpec& model) {
  std::vector<std::string_view> kinds;
  const auto add = [&](std::string_view kind) {
    if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) kinds.push_back(kind);
  };
  for (const LayerSpec& layer : model.layers) {
    add(to_string(layer.kind));
    if (layer.index_head_dim) add("indexer");
  }
  std::string text;
  for (std::string_view kind : kinds) {
    if (!text.empty()) text += '+';
    text += kind;
  }
  return text;
}

/// One sequence of `model` at `ctx` tokens with cache dtype `name`.
Row one_sequence(const ModelSpec& model, std::uint64_t ctx, std::string_view name) {
  const Dtype& dtype = parse_kv_dtype(name, *model.weight_dtype);
  RowSettings settings;
  settings.ctx = ctx;
  settings.cache = {&dtype, &dtype};
  return plan_row(model, settings);
}

std::string model_table(const ModelCatalog& catalog) {
  std::string out = fmt::format("{:<20} {:<26} {:>8} {:>10} {:>11}  {:<20} {}\n", "id", "name", "params", "max ctx",
                                "KV fp16/tok", "kinds", "layers");
  for (const ModelSpec& model : catalog.models)
    out += fmt::format("{:<20} {:<26} {:>8} {:>10} {:>11}  {:<20} {}\n", model.id, model.name,
                       (weights_are_estimate(model) ? "~" : "") + format_param_count(model.params), model.max_context ? format_thousands(model.max_context) : "-",
                       format_bytes_compact(one_sequence(model, 1, "fp16").kv_bytes_per_token), layer_kinds_used(model),
                       describe_layers(model));
  return out;
}

/// The README's catalog table: what one token costs and what one 128K sequence holds.
std::string model_markdown(const ModelCatalog& catalog) {
  std::string out =
      "| id | params | layers | KV/token fp16 | KV/token fp8 | 128K cache fp16 | 128K cache fp8 | fixed state / seq |\n"
      "|---|---:|---|---:|---:|---:|---:|---:|\n";
  for (const ModelSpec& model : catalog.models) {
    const Row fp16 = one_sequence(model, 131'072, "fp16");
    const Row fp8 = one_sequence(model, 131'072, "fp8");
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", model.id, describe_params(model), describe_layers(model),
                       format_bytes_compact(fp16.kv_bytes_per_token), format_bytes_compact(fp8.kv_bytes_per_token),
                       format_gib(static_cast<std::int64_t>(fp16.kv_bytes)), format_gib(static_cast<std::int64_t>(fp8.kv_bytes)),
                       fp16.state_bytes ? format_bytes_compact(fp16.state_bytes) : "-");
  }
  return out;
}

}  // namespace

std::string format_model_catalog(const ModelCatalog& catalog, OutputFormat format) {
  if (format == OutputFormat::json) {
    nlohmann::json list = nlohmann::json::array();
    for (const ModelSpec& model : catalog.models) list.push_back(to_spec_json(model));
    return nlohmann::json{{"schema_version", kCatalogSchemaVersion}, {"models", list}}.dump(2) + "\n";
  }
  if (format == OutputFormat::markdown || format == OutputFormat::csv) return model_markdown(catalog);
  return model_table(catalog);
}

std::string format_gpu_catalog(const GpuCatalog& catalog, OutputFormat format) {
  if (format == OutputFormat::json) {
    nlohmann::json list = nlohmann::json::array();
    for (const GpuSpec& gpu : catalog.gpus) {
      nlohmann::json entry{{"id", gpu.id},
                           {"name", gpu.name},
                           {"aliases", gpu.aliases},
                           {"vendor", gpu.vendor},
                           {"arch", gpu.arch},
                           {"memory_bytes", gpu.memory_bytes},
                           {"memory_basis", gpu.memory_basis},
                           {"fp8", gpu.fp8},
                           {"int8", gpu.int8}};
      if (gpu.cuda_total_bytes) {
        entry["cuda_total_bytes"] = *gpu.cuda_total_bytes;
        entry["cuda_total_source"] = gpu.cuda_total_source;
      }
      if (gpu.price_usd_per_hour) entry["price_usd_per_hour"] = *gpu.price_usd_per_hour;
      list.push_back(entry);
    }
    return nlohmann::json{{"schema_version", kCatalogSchemaVersion}, {"gpus", list}}.dump(2) + "\n";
  }
  const bool markdown = format != OutputFormat::table;
  // Columns as wide as their longest entry (a MIG id, "macOS GPU working set"), so rows stay aligned.
  std::size_t id_width = 2, name_width = 4, basis_width = 5;
  for (const GpuSpec& gpu : catalog.gpus) {
    id_width = std::max(id_width, gpu.id.size());
    name_width = std::max(name_width, gpu.name.size());
    basis_width = std::max(basis_width, gpu.memory_basis.size());
  }
  const auto table_row = [&](std::string_view id, std::string_view name, std::string_view memory, std::string_view basis,
                             std::string_view fp8, std::string_view price) {
    return fmt::format("{:<{}} {:<{}} {:>10}  {:<{}} {:<4} {}\n", id, id_width, name, name_width, memory, basis,
                       basis_width, fp8, price);
  };
  std::string out = markdown ? "| id | name | memory | basis | fp8 | ~$/h |\n|---|---|---:|---|---|---:|\n"
                             : table_row("id", "name", "memory", "basis", "fp8", "~$/h");
  for (const GpuSpec& gpu : catalog.gpus) {
    const std::string price = gpu.price_usd_per_hour ? fmt::format("{:.2f}", *gpu.price_usd_per_hour) : "-";
    const std::string memory = format_gib(static_cast<std::int64_t>(gpu.memory_bytes));
    const char* fp8 = gpu.fp8 ? "yes" : "no";
    out += markdown ? fmt::format("| {} | {} | {} | {} | {} | {} |\n", gpu.id, gpu.name, memory, gpu.memory_basis, fp8, price)
                    : table_row(gpu.id, gpu.name, memory, gpu.memory_basis, fp8, price);
  }
  return out;
}

}  // namespace kvplan
