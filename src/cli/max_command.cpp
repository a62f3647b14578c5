#include "cli/max_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/arguments.h"
#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "kvplan/model_loader.h"
#include "kvplan/units.h"
#include "reports/limits_report.h"

namespace kvplan {

namespace {

constexpr std::string_view kMaxExamples = R"(Examples:
  kvplan max --model qwen3-8b --gpu 24GB --util 0.9 --overhead 0 --ctx 4700 --batch 8
  kvplan max --model llama3.1-8b --gpu 4090 --runtime vllm --max-ctx-cap 1M
  kvplan max --model llama3.1-70b --gpu h100 --runtime sglang --ctx 32k --format json

Every answer is exact under the runtime's rules: it fits, and one more token, one more sequence
(or any deployment with fewer GPUs) does not.)";

}  // namespace

MaxCommand::MaxCommand(CLI::App& app) {
  command_ = app.add_subcommand(
      "max", "The largest context, the largest batch and the fewest GPUs that fit, per cache dtype (the plan's flags apply)");
  command_->fallthrough();
  command_->add_option("--max-ctx-cap", cap_, "Stop the context search here (32k, 1M) [default: the model's trained context]")
      ->type_name("N");
  command_->footer(std::string(kMaxExamples));
}

bool MaxCommand::parsed() const { return command_->parsed(); }

int MaxCommand::run(const PlanInputs& inputs, std::ostream& out) const {
  if (inputs.model.empty()) throw Error("max: --model is required");
  if (inputs.gpu.empty()) throw Error("max: --gpu is required (a catalog name such as 4090, or a memory size such as 24GiB)");
  const std::string format = inputs.format.empty() ? "table" : inputs.format;
  if (format != "table" && format != "json") throw Error(fmt::format("--format: max writes table or json, not '{}'", format));
  LimitsReport report;
  const ModelSpec model = load_model_for_cli(inputs.model, inputs.texts);
  report.model = &model;
  report.gpus = resolve_gpus_for_cli(inputs.gpu, inputs.gpu_count, inputs.unified, "--gpu", inputs.detected);
  LimitsRequest request;
  request.plan = build_plan_request(request_texts_for(inputs.model, inputs.texts), model, kFlagNames);
  load_speculative_draft(request.plan);
  if (!cap_.empty()) {
    request.ctx_cap = parse_token_count(cap_, "--max-ctx-cap");
    if (*request.ctx_cap == 0) throw Error("--max-ctx-cap: must be at least 1 token");
  }
  report.limits = find_limits(model, report.gpus, request);
  write_output(out, format == "json" ? format_limits_json(report) : format_limits_table(report));
  return 0;
}

}  // namespace kvplan
