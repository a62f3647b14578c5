#include "cli/plot_command.h"
#include "cli/hf_hub_cache.h"
#include "cli/plan_inputs.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/arguments.h"
#include "engines/core/request_texts.h"
#include "kvplan/catalog.h"
#include "kvplan/chart.h"
#include "kvplan/error.h"
#include "kvplan/model_loader.h"
#include "kvplan/units.h"
#include "reports/chart_svg.h"

namespace kvplan {

namespace {

constexpr std::string_view kExamples = R"(Examples:
  kvplan plot --model llama3.1-8b --gpu 4090 -o chart.svg             # fp16 fp8 int8 int4, up to the trained context
  kvplan plot --model qwen3-8b --gpu 24GiB --kv-dtype fp16,fp8 --ctx 100k -o qwen3.svg
  kvplan plot --model llama3.1-70b --gpu 4xh100 --runtime vllm --kv-dtype auto,fp8 -o vllm.svg
  kvplan plot --model llama3.1-8b --gpu 4090 --format table           # the same series as terminal bars)";

constexpr SettingNames kPlotNames{"--ctx",          "--batch",   "--overhead", "--util",    "--mtp-layers", "--kv-dtype",
                                  "--weight-dtype", "--weights", "--params",   "--runtime", "--gpu",        "--text-only"};

/// Writes `text` to a temporary file beside `path` and renames it over `path`, so that a reader
/// never sees half a chart and a failed write leaves the old file alone.
void write_file_atomically(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  fs::path temporary = target;
  temporary += fmt::format(".kvplan-{}.tmp", static_cast<long>(getpid()));
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    if (file) file.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (file) file.flush();
    if (!file) {
      std::error_code ignored;
      fs::remove(temporary, ignored);
      throw OutputError(fmt::format("-o {}: cannot write the file", path), false);
    }
  }
  std::error_code error;
  fs::rename(temporary, target, error);
  if (error) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    throw OutputError(fmt::format("-o {}: cannot replace the file ({})", path, error.message()), false);
  }
}

}  // namespace

PlotCommand::PlotCommand(CLI::App& app) {
  command_ = app.add_subcommand("plot", "Memory against context length for each cache dtype, as an SVG chart");
  command_->add_option("-m,--model", model_, "Catalog name or alias, config.json, GGUF or spec file")->type_name("NAME|PATH");
  command_->add_option("-g,--gpu", gpu_, "GPU catalog name, several (2x4090), or a memory size (24GiB)")->type_name("NAME|SIZE");
  command_->add_option("-k,--kv-dtype", kv_dtypes_, "Cache dtypes, one panel each [default: the engine's: fp16,fp8,int8,int4 for generic]")
      ->type_name("LIST");
  command_->add_option("-c,--ctx", ctx_, "The last context drawn [default: the model's trained context]")->type_name("TOKENS");
  command_->add_option("-b,--batch", batch_, "Concurrent sequences [default: 1]")->type_name("N");
  command_->add_option("--runtime", runtime_, "Engine profile [default: generic]")->type_name("ENGINE");
  command_->add_option("-u,--util,--gpu-memory-utilization", utilization_, "Fraction of GPU memory the budget may use")
      ->type_name("FRACTION");
  command_->add_option("--overhead", overhead_, "Runtime memory beyond weights and KV, with its unit (generic)")->type_name("SIZE");
  command_->add_option("--points", points_, "Contexts drawn per dtype, 2 to 512 [default: 48]")->type_name("N");
  command_->add_option("-o,--output", output_, "Write the SVG to this file (through a temporary file, renamed) [default: stdout]")
      ->type_name("FILE");
  command_->add_option("-f,--format", format_, "svg, or table for terminal bars [default: svg]")->type_name("FORMAT");
  command_->footer(std::string(kExamples));
}

bool PlotCommand::parsed() const { return command_->parsed(); }

int PlotCommand::run(std::ostream& out) const {
  if (model_.empty()) throw Error("plot: --model is required");
  if (gpu_.empty()) throw Error("plot: --gpu is required");
  if (format_ != "svg" && format_ != "table") throw Error(fmt::format("--format: '{}': plot writes svg or table", format_));
  const std::uint64_t points = parse_positive_integer(points_, "--points");
  if (points < 2 || points > 512) throw Error("--points: from 2 to 512");
  PlanTexts texts;
  if (!ctx_.empty()) texts.contexts = {ctx_};
  texts.kv_dtypes = kv_dtypes_;
  texts.batch = batch_;
  texts.runtime = runtime_;
  texts.utilization = utilization_;
  texts.overhead = overhead_;
  const ModelSpec model = load_model(model_, hf_hub_cache_from_environment());
  const std::vector<GpuSpec> gpus = resolve_gpus_for_cli(gpu_, "", false);
  PlanRequest request = build_plan_request(texts, model, kPlotNames);
  load_speculative_draft(request);
  const MemoryChart chart = memory_chart(model, gpus, request, static_cast<std::size_t>(points));
  const std::string text = format_ == "svg" ? format_chart_svg(chart) : format_chart_text(chart);
  if (output_.empty()) write_output(out, text);
  else write_file_atomically(output_, text);
  return 0;
}

}  // namespace kvplan
