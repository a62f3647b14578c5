#include "cli/fit_command.h"

#include <algorithm>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/arguments.h"
#include "cli/plan_inputs.h"
#include "engines/core/profile.h"
#include "engines/core/request_texts.h"
#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "kvplan/fit.h"
#include "kvplan/units.h"
#include "reports/fit_report.h"

namespace kvplan {

namespace {

constexpr std::string_view kFitExamples = R"(Examples:
  kvplan fit --gpu 4090 --ctx 32k                                   # what runs on a 4090 at 32K, best first
  kvplan fit --gpu 4090 --runtime llama.cpp --ctx 16k --quality int8  # GGUF q8_0 and better, q8_0 caches too
  kvplan fit --gpu 24GiB --ctx 8k --batch 4 --family qwen --all     # every format and KV dtype of the Qwen models
  kvplan fit --gpu h100 --runtime vllm --ctx 32k --format json      # every row, with why the rejected ones do not fit

Every row is make_plan's at the settings given (the same figures as kvplan --model M --gpu G ...) and
kvplan max's largest context and batch: no second formula.)";

/// The context when none is given: a common chat window, said in the output.
constexpr std::string_view kDefaultCtx = "8k";

}  // namespace

FitCommand::FitCommand(CLI::App& app) {
  command_ = app.add_subcommand(
      "fit", "What runs on a card: every catalog model x weight format x KV dtype the engine offers, best first");
  command_->fallthrough();
  command_->add_option("--quality", quality_,
                       "The least precise level a row may use: lossless, fp8, int8, int4 (weights and KV cache) "
                       "[default: int4, any]")
      ->type_name("LEVEL");
  command_->add_option("--family", family_, "Only models whose id, name, aliases or architecture hold this word (qwen, llama)")
      ->type_name("WORD");
  command_->add_option("--min-params", min_params_, "Only models with at least this many parameters (7B, 500M)")->type_name("N");
  command_->add_option("--max-params", max_params_, "Only models with at most this many parameters (32B)")->type_name("N");
  command_->add_option("--top", top_, "Rows to show [default: 20]")->type_name("N");
  command_->add_flag("--all", all_, "Every fitting row (each weight format and KV dtype), not only each model's best; no --top limit");
  command_->footer(std::string(kFitExamples));
}

bool FitCommand::parsed() const { return command_->parsed(); }

int FitCommand::run(const PlanInputs& inputs, std::ostream& out) const {
  if (!inputs.model.empty()) throw Error("fit: evaluates every catalog model; --model is for a plan of one (kvplan --model M)");
  if (inputs.gpu.empty()) throw Error("fit: --gpu is required (a catalog name such as 4090, or a memory size such as 24GiB)");
  const PlanTexts& texts = inputs.texts;
  if (!texts.kv_dtypes.empty() || !texts.weight_dtype.empty())
    throw Error("fit: chooses the KV and weight dtypes itself (--quality narrows them)");
  if (!texts.weights.empty() || !texts.params.empty() || !texts.mtp_layers.empty() || texts.text_only)
    throw Error("fit: --weights, --params, --mtp-layers and --text-only describe one model; plan it with kvplan --model M");
  const std::string format = inputs.format.empty() ? "table" : inputs.format;
  if (format != "table" && format != "json" && format != "csv")
    throw Error(fmt::format("--format: fit writes table, json or csv, not '{}'", format));

  PlanTexts asked = texts;
  if (asked.contexts.empty()) asked.contexts = {std::string(kDefaultCtx)};
  const ModelCatalog& catalog = builtin_models();
  FitRequest request;
  // The texts name no dtype, so no model's dtype is read: any catalog model parses them.
  request.base = build_plan_request(asked, catalog.models.front(), kFlagNames);
  load_speculative_draft(request.base);
  if (request.base.contexts.size() != 1) throw Error("--ctx: fit takes one context");
  request.base.runtime = std::string(find_engine(request.base.runtime, "--runtime").name);
  request.quality = parse_quality(quality_, "--quality");
  request.family = family_;
  if (!min_params_.empty()) request.min_params = parse_param_count(min_params_, "--min-params");
  if (!max_params_.empty()) request.max_params = parse_param_count(max_params_, "--max-params");
  if (request.min_params && request.max_params && *request.min_params > *request.max_params)
    throw Error("--min-params is more than --max-params");
  const std::uint64_t top = parse_positive_integer(top_, "--top");

  FitReport report;
  report.gpus = resolve_gpus_for_cli(inputs.gpu, inputs.gpu_count, inputs.unified, "--gpu", inputs.detected);
  const FitResult result = fit_models(catalog.models, report.gpus, request);
  if (result.models == 0)
    throw Error(fmt::format("fit: no catalog model passes the filters{} (kvplan models lists them)",
                            family_.empty() ? "" : fmt::format(" (--family {})", family_)));
  report.result = &result;
  report.quality = request.quality;
  report.family = family_;
  report.all = all_;
  const std::vector<std::size_t>& ranked = all_ ? result.fitting : result.best;
  const std::size_t shown = all_ ? ranked.size() : static_cast<std::size_t>(std::min<std::uint64_t>(top, ranked.size()));
  report.shown.assign(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(shown));
  write_output(out, format == "json" ? format_fit_json(report) : format == "csv" ? format_fit_csv(report) : format_fit_table(report));
  return 0;
}

}  // namespace kvplan
