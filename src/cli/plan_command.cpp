#include "cli/plan_command.h"

#include "cli/arguments.h"
#include "cli/plan_inputs.h"
#include "kvplan/error.h"
#include "kvplan/model_loader.h"
#include "kvplan/plan.h"

namespace kvplan {

TableStyle table_style(const PlanFlags& flags, const Terminal& terminal) {
  TableStyle style;
  style.color = terminal.stdout_is_tty && !terminal.no_color_env && !flags.no_color;
  style.wide = flags.wide;
  style.speed = flags.speed;
  style.columns = terminal.stdout_is_tty ? terminal.columns : 0;
  return style;
}

int run_plan(const PlanFlags& flags, const TableStyle& style, std::ostream& out) {
  if (flags.model.empty()) throw Error("--model is required (a catalog name such as llama3.1-8b, a config.json, a GGUF file or a spec file)");
  if (flags.gpu.empty()) throw Error("--gpu is required (a catalog name such as 4090, or a memory size such as 24GiB)");
  const OutputFormat format = parse_output_format(flags.format.empty() ? "table" : flags.format, "--format");
  Report report;
  const ModelSpec model = load_model_for_cli(flags.model, flags.texts);
  report.model = &model;
  report.gpus = resolve_gpus_for_cli(flags.gpu, flags.gpu_count, flags.unified, "--gpu", &flags.detected);
  PlanRequest request = build_plan_request(request_texts_for(flags.model, flags.texts), model, kFlagNames);
  load_speculative_draft(request);
  report.plan = make_plan(model, report.gpus, request);
  if (flags.quiet && format != OutputFormat::json) report.plan.quality_notes.clear();
  write_output(out, format_report(report, format, style));
  return flags.check && !report.plan.all_fit() ? static_cast<int>(ExitCode::does_not_fit) : 0;
}

}  // namespace kvplan
