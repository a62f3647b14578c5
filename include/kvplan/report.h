#pragma once
/// Formatters: a Report (what was asked and what the engine answered) in, text out. They compute
/// nothing; every figure they print is a field of the engine's structs.

#include <string>
#include <string_view>

#include "kvplan/budget.h"
#include "kvplan/gpu.h"
#include "kvplan/model_spec.h"

namespace kvplan {

inline constexpr int kJsonSchemaVersion = 1;

struct Report {
  const ModelSpec* model = nullptr;
  GpuSpec gpu;
  PlanRequest request;
  Plan plan;
  /// Engine profiles that budget differently say so here; empty: "memory x utilization".
  std::string budget_rule;
  /// Where the overhead column comes from; engine profiles that estimate it say how.
  std::string overhead_rule = "runtime, --overhead";
};

enum class OutputFormat { table, json, csv, markdown };

/// "table", "json", "csv", "markdown" (also "md"); unknown names throw with "did you mean".
OutputFormat parse_output_format(std::string_view text);

/// The human table with its header, bars and ways out. `color` adds ANSI colours to the verdicts.
std::string format_table(const Report& report, bool color);
/// The versioned JSON document (README "JSON output"), pretty-printed, ending in a newline.
std::string format_json(const Report& report);
/// One CSV line per row, with a header line naming the same fields as the JSON rows.
std::string format_csv(const Report& report);
/// A GitHub-flavoured Markdown table of the rows, with a one-line summary above it.
std::string format_markdown(const Report& report);

std::string format_report(const Report& report, OutputFormat format, bool color);

struct ModelCatalog;
struct GpuCatalog;
/// `kvplan models`: one line per model (table), its spec (json), or the README's catalog table
/// with bytes per token and 128K cache sizes per dtype (markdown; csv prints the same columns).
std::string format_model_catalog(const ModelCatalog& catalog, OutputFormat format);
/// `kvplan gpus`: one line per GPU with driver-reported memory, FP8 support and price.
std::string format_gpu_catalog(const GpuCatalog& catalog, OutputFormat format);

}  // namespace kvplan
