#include "cli/sweep_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/arguments.h"
#include "engines/core/profile.h"
#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "kvplan/model_loader.h"
#include "kvplan/sweep.h"
#include "reports/sweep_lines.h"

namespace kvplan {

namespace {

constexpr std::string_view kSweepExamples = R"(Examples:
  kvplan sweep --models llama3.1-8b,qwen3-8b --gpus 4090,h100 --ctx 4k..1M --kv-dtype all
  kvplan sweep --models qwen3-8b --gpus h100,2xh100 --ctx 8k..128k --runtime vllm --format csv
  kvplan sweep --models llama3.1-8b --gpus 4090 --ctx 1000..32000:1000 --kv-dtype fp16,fp8

--ctx takes A..B (doubling), A..B:STEP, or a list; --kv-dtype all tries every cache dtype kvplan
knows and keeps those the runtime offers. One row per line, written as computed.)";

/// Every cache dtype name kvplan parses ("auto" aside: it is one of them).
constexpr std::string_view kAllCaches[] = {"fp32", "fp16", "bf16", "fp8", "fp8_e5m2", "int8", "int4",
                                           "nvfp4", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl"};

std::vector<std::string> comma_items(const std::string& text, std::string_view flag) {
  std::vector<std::string> items = split_list({text});
  if (text.empty()) throw Error(fmt::format("sweep: {} is required", flag));
  for (const std::string& item : items)
    if (item.empty()) throw Error(fmt::format("{}: an empty item in the list", flag));
  return items;
}

/// Writes what has gathered once it is worth a write: the rows stream, a few at a time.
class Stream {
 public:
  explicit Stream(std::ostream& out) : out_(out) {}
  /// Where the next lines go.
  TextBuffer& buffer() { return buffer_; }
  void maybe_flush() {
    if (buffer_.size() >= kPiece) flush();
  }
  void flush() {
    if (buffer_.size() != 0) write_output(out_, buffer_.view());
    buffer_.clear();
  }

 private:
  static constexpr std::size_t kPiece = std::size_t{1} << 16;
  std::ostream& out_;
  TextBuffer buffer_;
};

}  // namespace

SweepCommand::SweepCommand(CLI::App& app) {
  command_ = app.add_subcommand("sweep", "Every model x GPU x context x cache dtype, one row per line (NDJSON or CSV) "
                                         "for dashboards (the plan's flags apply)");
  command_->fallthrough();
  command_->add_option("--models", models_, "Models, comma-separated (catalog names, files)")->type_name("LIST");
  command_->add_option("--gpus", gpus_, "Deployments, comma-separated, each as --gpu takes it (4090, 2xh100, 24GiB)")
      ->type_name("LIST");
  command_->footer(std::string(kSweepExamples));
}

bool SweepCommand::parsed() const { return command_->parsed(); }

int SweepCommand::run(const PlanInputs& inputs, std::ostream& out, std::ostream& err) const {
  if (!inputs.model.empty() || !inputs.gpu.empty())
    throw Error("sweep: give --models and --gpus (lists), not --model and --gpu");
  const std::string format = inputs.format.empty() ? "ndjson" : inputs.format;
  if (format != "ndjson" && format != "csv") throw Error(fmt::format("--format: sweep writes ndjson or csv, not '{}'", format));
  const std::vector<std::string> models = comma_items(models_, "--models");
  const std::vector<std::string> gpus = comma_items(gpus_, "--gpus");

  PlanTexts texts = inputs.texts;
  std::string contexts;
  for (const std::string& part : texts.contexts) contexts += (contexts.empty() ? "" : ",") + part;
  texts.contexts.clear();
  const bool all_caches = texts.kv_dtypes.size() == 1 && texts.kv_dtypes.front() == "all";
  if (all_caches) texts.kv_dtypes.clear();

  std::vector<std::vector<GpuSpec>> deployments;
  for (const std::string& gpu : gpus) deployments.push_back(resolve_gpus_for_cli(gpu, "", inputs.unified, "--gpus"));
  SweepLines lines(format == "csv");
  Stream stream(out);
  for (const std::string& name : models) {
    const ModelSpec model = load_model_for_cli(name, texts);
    PlanRequest request = build_plan_request(request_texts_for(name, texts), model, kFlagNames);
    load_speculative_draft(request);
    if (!contexts.empty()) request.contexts = parse_context_range(contexts, "--ctx");
    if (all_caches)
      for (const std::string_view cache : kAllCaches) {
        const Dtype& type = parse_kv_dtype(cache, *model.weight_dtype);
        request.caches.push_back({&type, &type});
      }
    for (const std::vector<GpuSpec>& deployment : deployments) {
      lines.start(model, deployment, find_engine(request.runtime, "--runtime").name);
      const std::vector<SweptOut> left_out = sweep_rows(model, deployment, request, [&](Row&& row) {
        lines.append(row, stream.buffer());
        stream.maybe_flush();
      });
      // What the grid lacks, on stderr: stdout stays one row per line.
      for (const SweptOut& out_of_grid : left_out)
        if (!all_caches || out_of_grid.reason.rfind("ctx ", 0) == 0)
          err << fmt::format("kvplan: note: {} on {}: {} left out: {}\n", model.id, deployment.front().id,
                             out_of_grid.kv_dtype, one_line(out_of_grid.reason));
    }
  }
  stream.flush();
  return 0;
}

}  // namespace kvplan
