#include "check/check.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "check/engine_command.h"
#include "engines/core/gguf_repo.h"
#include "engines/core/profile.h"
#include "engines/core/request_texts.h"
#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "kvplan/plan.h"
#include "kvplan/units.h"
#include "loaders/draft_model.h"
#include "model/wide_int.h"

namespace kvplan {

namespace {

/// A deployment file's settings are named as its keys are.
constexpr SettingNames kFileNames{"ctx",    "batch",        "overhead", "utilization", "mtp_layers", "kv_dtype",
                                  "weight_dtype", "weights", "params", "runtime",     "gpu",        "text_only"};

/// A model path written in a deployment file is relative to that file.
std::string model_path(const std::string& model, const SourceLocation& where) {
  if (model.empty() || model.front() == '/' || where.file == "-" || where.file == "--cmd") return model;
  const std::filesystem::path beside = std::filesystem::path(where.file).parent_path() / model;
  std::error_code ec;
  return std::filesystem::exists(beside, ec) ? beside.string() : model;
}

/// The cards a deployment names; of several (a node selector's choices) the one with the least memory.
std::vector<GpuSpec> deployment_gpus(const Deployment& d, const CheckDefaults& defaults) {
  if (d.gpus.empty()) {
    if (defaults.gpu.empty())
      throw Error("no GPU: give gpu:, a nvidia.com/gpu.product node selector or a kvplan.io/gpu annotation, or --gpu");
    return resolve_builtin_gpus(defaults.gpu, "--gpu");
  }
  std::vector<GpuSpec> least;
  for (const std::string& text : d.gpus) {
    std::vector<GpuSpec> gpus = resolve_builtin_gpus(text, "gpu");
    if (least.empty() || gpus.front().memory_bytes < least.front().memory_bytes) least = std::move(gpus);
  }
  return least;
}

void refuse_beside_command(const Deployment& d) {
  const std::pair<const char*, const std::string*> settings[] = {
      {"runtime", &d.runtime}, {"ctx", &d.ctx}, {"kv_dtype", &d.kv_dtype}, {"weight_dtype", &d.weight_dtype},
      {"utilization", &d.utilization}};
  for (const auto& [key, value] : settings)
    if (!value->empty()) throw Error(fmt::format("{}: set it in the command, not beside it", key));
  if (!d.options.empty()) throw Error("options: give the engine's flags in the command, not beside it");
}

/// The row with the least headroom: the verdict is the deployment's weakest point.
std::size_t worst_row(const Plan& plan) {
  std::size_t worst = 0;
  for (std::size_t i = 1; i < plan.rows.size(); ++i) {
    const Row& a = plan.rows[i];
    const Row& b = plan.rows[worst];
    if (a.fits != b.fits ? !a.fits : a.headroom_bytes < b.headroom_bytes) worst = i;
  }
  return worst;
}

std::string blocking_text(const Row& row) {
  for (const Finding& f : row.findings)
    if (f.blocking && f.code == "engine_refuses_start") return f.text;
  for (const Finding& f : row.findings)
    if (f.blocking) return f.text;
  return "";
}

}  // namespace

std::string_view to_string(CheckVerdict verdict) {
  switch (verdict) {
    case CheckVerdict::fits: return "fits";
    case CheckVerdict::tight: return "tight";
    case CheckVerdict::no_fit: return "no_fit";
    case CheckVerdict::invalid: return "invalid";
    case CheckVerdict::unsupported: return "unsupported";
  }
  return "invalid";
}

int CheckRun::exit_code() const {
  const auto any = [&](CheckVerdict v) {
    return std::any_of(deployments.begin(), deployments.end(), [&](const CheckedDeployment& d) { return d.verdict == v; });
  };
  if (any(CheckVerdict::invalid)) return static_cast<int>(ExitCode::invalid_input);
  if (any(CheckVerdict::unsupported)) return static_cast<int>(ExitCode::unsupported_architecture);
  if (any(CheckVerdict::no_fit) || (strict && any(CheckVerdict::tight))) return static_cast<int>(ExitCode::does_not_fit);
  return 0;
}

std::uint32_t parse_margin(std::string_view text, std::string_view setting) {
  // "5%" or "0.05": a decimal with at most 6 places of a fraction, exact.
  std::string_view number = text;
  const bool percent = !number.empty() && number.back() == '%';
  if (percent) number.remove_suffix(1);
  std::uint64_t whole = 0;
  std::uint64_t fraction = 0;
  int places = 0;
  bool point = false;
  bool digits = false;
  for (const char c : number) {
    if (c == '.' && !point) {
      point = true;
      continue;
    }
    if (c < '0' || c > '9' || whole > 1'000'000 || places >= 6)
      throw Error(fmt::format("{}: '{}' is not a margin (5% or 0.05 of the budget)", setting, text));
    digits = true;
    if (point) fraction = fraction * 10 + static_cast<std::uint64_t>(c - '0'), ++places;
    else whole = whole * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (!digits) throw Error(fmt::format("{}: '{}' is not a margin (5% or 0.05 of the budget)", setting, text));
  for (int p = places; p < 6; ++p) fraction *= 10;
  // millionths of the budget: a percentage is 10,000 millionths per point.
  const std::uint64_t millionths = percent ? whole * 10'000 + fraction / 100 : whole * 1'000'000 + fraction;
  if (percent && fraction % 100 != 0)
    throw Error(fmt::format("{}: '{}' has more places than a millionth of the budget", setting, text));
  if (millionths >= 1'000'000) throw Error(fmt::format("{}: '{}' is the whole budget or more", setting, text));
  return static_cast<std::uint32_t>(millionths);
}

CheckedDeployment check_deployment(const Deployment& d, const CheckDefaults& defaults) {
  CheckedDeployment out;
  out.name = d.name;
  out.where = d.where;
  // A command's engine is known once it is read; "-" until then.
  out.runtime = !d.runtime.empty() ? d.runtime : d.commands.empty() ? "generic" : "-";
  if (!d.problem.empty()) {
    out.verdict = CheckVerdict::invalid;
    out.reason = d.problem;
    return out;
  }
  if (!d.unsupported.empty()) {
    out.verdict = CheckVerdict::unsupported;
    out.reason = d.unsupported;
    return out;
  }
  try {
    out.margin_millionths = d.margin.empty() ? parse_margin(defaults.margin, "--margin") : parse_margin(d.margin, "margin");
    PlanTexts texts;
    std::string model = d.model;
    std::uint64_t parallel = 0;
    const bool has_command = !d.commands.empty();
    if (has_command) {
      refuse_beside_command(d);
      CommandSettings command = read_engine_command(d.commands.front());
      texts = std::move(command.texts);
      if (model.empty()) model = command.model;
      parallel = command.parallel;
      out.runtime = command.runtime;
    } else {
      texts.runtime = d.runtime;
      if (!d.ctx.empty()) texts.contexts.push_back(d.ctx);
      if (!d.kv_dtype.empty()) texts.kv_dtypes.push_back(d.kv_dtype);
      texts.weight_dtype = d.weight_dtype;
      texts.utilization = d.utilization;
      for (const auto& [name, value] : d.options) texts.engine_options.push_back({name, value, "options." + name});
    }
    texts.batch = d.batch;
    if (!defaults.model.empty()) model = defaults.model;
    if (model.empty())
      throw Error("no model: give model: (a catalog id, a Hugging Face repo id, a config.json or a GGUF path) or --model");

    std::vector<GpuSpec> gpus = deployment_gpus(d, defaults);
    std::optional<std::uint64_t> count;
    if (!d.gpu_count.empty()) count = parse_positive_integer(d.gpu_count, "count");
    if (count && *count > 4096) throw Error("count: more than 4096 GPUs");
    if (has_command && parallel > 0) {
      // vLLM, SGLang and TensorRT-LLM run on tensor x pipeline parallel GPUs, however many the
      // container is given.
      if (count && *count < parallel)
        throw Error(fmt::format("the deployment gets {} GPU{} but its command runs on {} (tensor x pipeline parallel)",
                                *count, *count == 1 ? "" : "s", parallel));
      if (parallel > 4096) throw Error("the command runs on more than 4096 GPUs");
      if (gpus.size() != 1 && gpus.size() != parallel)
        throw Error(fmt::format("gpu: {} cards named, but the command runs on {}", gpus.size(), parallel));
      gpus = std::vector<GpuSpec>(parallel, gpus.front());  // not assign(): its value may not alias the vector
    } else if (count) {
      if (gpus.size() != 1) throw Error("count: give one card in gpu: (or write gpu: 4xh100 without count)");
      gpus = std::vector<GpuSpec>(*count, gpus.front());
    }

    std::shared_ptr<ModelSpec> spec;
    try {
      // llama-server -hf org/Name-GGUF[:QUANT] too: the catalog model at that quantization.
      spec = std::make_shared<ModelSpec>(load_model_or_gguf_repo(model_path(model, d.where)));
    } catch (const Error& error) {
      // The loader speaks in --model; here the model came from a file or a command line.
      std::string text = error.what();
      if (text.rfind("--model: unknown model", 0) == 0)
        throw Error("model" + text.substr(7) +
                        " (Hugging Face repo ids resolve through the catalog's aliases, offline: for another model "
                        "give its config.json as model:)",
                    error.code());
      throw;
    }
    PlanRequest request = build_plan_request(texts, *spec, kFileNames);
    // A draft checkpoint the engine's command line names (--speculative-config's model), relative
    // to the deployment file as the model is; the Hugging Face cache is not read here.
    if (const std::optional<std::string> draft = draft_checkpoint_named(request))
      request.draft_model = load_draft_model(model_path(*draft, d.where), "");
    Report report;
    report.model = spec.get();
    report.gpus = gpus;
    report.plan = make_plan(*spec, gpus, request);
    out.runtime = report.plan.runtime;
    out.model = spec;
    const std::size_t worst = worst_row(report.plan);
    const Row& row = report.plan.rows.at(worst);
    out.worst_row = worst;
    if (!row.fits) {
      out.verdict = CheckVerdict::no_fit;
      const std::string blocking = blocking_text(row);
      out.reason = row.verdict == Verdict::engine_refuses || (row.headroom_bytes >= 0 && !blocking.empty())
                       ? blocking
                       : fmt::format("ctx {} x {}: needs {} of {} ({} over)", format_thousands(row.ctx), row.batch,
                                     format_gib(static_cast<std::int64_t>(row.total_bytes)),
                                     format_gib(static_cast<std::int64_t>(row.capacity_bytes)),
                                     format_gib(-row.headroom_bytes));
    } else {
      // Tight: headroom < margin x budget, compared exactly (128-bit products).
      const u128 headroom = static_cast<u128>(row.headroom_bytes) * 1'000'000u;
      const u128 wanted = static_cast<u128>(row.capacity_bytes) * out.margin_millionths;
      out.verdict = headroom < wanted ? CheckVerdict::tight : CheckVerdict::fits;
      out.reason = fmt::format("ctx {} x {}: {} of {}, headroom {}{}", format_thousands(row.ctx), row.batch,
                               format_gib(static_cast<std::int64_t>(row.total_bytes)),
                               format_gib(static_cast<std::int64_t>(row.capacity_bytes)), format_gib(row.headroom_bytes),
                               out.verdict == CheckVerdict::tight
                                   ? fmt::format(" is under the margin ({} of the budget)", format_percent(out.margin_millionths))
                                   : "");
    }
    out.report = std::move(report);
  } catch (const OverflowError& error) {
    out.verdict = CheckVerdict::invalid;
    out.reason = error.what();
  } catch (const Error& error) {
    out.verdict = error.code() == ExitCode::unsupported_architecture ? CheckVerdict::unsupported : CheckVerdict::invalid;
    out.reason = error.what();
  }
  return out;
}

}  // namespace kvplan
