#pragma once
/// Formatters: a Report (the model, the card and the plan) in, text out. They compute nothing;
/// every figure they print is a field of the plan.

#include <string>
#include <string_view>

#include "kvplan/export.h"
#include "kvplan/gpu.h"
#include "kvplan/model_spec.h"
#include "kvplan/plan.h"

namespace kvplan {

/// The JSON document's schema version: 2 added verdicts, warnings, engine figures and model/GPU/runtime
/// columns in CSV (additive: every version-1 field is still there, with its meaning).
inline constexpr int kJsonSchemaVersion = 2;

struct Report {
  const ModelSpec* model = nullptr;
  std::vector<GpuSpec> gpus;  ///< the deployment's cards; at least one
  Plan plan;

  const GpuSpec& gpu() const { return gpus.front(); }  ///< the first card
};

enum class OutputFormat { table, json, csv, markdown };

/// The formats kvplan writes: "table", "json", "csv", "markdown".
KVPLAN_API std::vector<std::string_view> output_format_names();

/// "table", "json", "csv", "markdown" (also "md"); an Error naming `setting` and the valid ones otherwise.
KVPLAN_API OutputFormat parse_output_format(std::string_view text, std::string_view setting = "format");

/// How the human table is drawn.
struct TableStyle {
  bool color = false;  ///< ANSI colours on the verdicts
  bool wide = false;   ///< a memory bar per row (the table then needs about 125 columns)
  /// Wrap longer lines to this width (a terminal's); 0: never wrap (files, pipes).
  std::size_t columns = 0;
  /// A line per row under the table with its decode-speed roofline bound (Row::decode_bound).
  bool speed = false;
};

/// The human table with its header, rows, warnings and ways out. Its rows fit in 100 columns
/// unless wide; with `columns` set, every other line is wrapped to fit too.
KVPLAN_API std::string format_table(const Report& report, const TableStyle& style = {});
/// The versioned JSON document (docs/json.md), pretty-printed, ending in a newline.
KVPLAN_API std::string format_json(const Report& report);
/// One CSV line per row, with a header line; each line names the model, the GPU and the runtime.
KVPLAN_API std::string format_csv(const Report& report);
/// A GitHub-flavoured Markdown table of the rows, with the header lines above it.
KVPLAN_API std::string format_markdown(const Report& report);

KVPLAN_API std::string format_report(const Report& report, OutputFormat format, const TableStyle& style = {});

struct ModelCatalog;
struct GpuCatalog;
/// `kvplan models`: one line per model (table), its spec (json), or the catalog table with bytes
/// per token and 128K cache sizes per dtype (markdown; csv prints the same columns).
KVPLAN_API std::string format_model_catalog(const ModelCatalog& catalog, OutputFormat format);
/// `kvplan gpus`: one line per GPU with driver-reported memory, FP8 support and price.
KVPLAN_API std::string format_gpu_catalog(const GpuCatalog& catalog, OutputFormat format);

}  // namespace kvplan
