#include "cli/advise_command.h"
#include "cli/hf_hub_cache.h"
#include "cli/plan_inputs.h"

#include <algorithm>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/arguments.h"
#include "cli/cli.h"
#include "engines/core/profile.h"
#include "engines/core/request_texts.h"
#include "kvplan/advise.h"
#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "kvplan/model_loader.h"
#include "kvplan/units.h"
#include "loaders/json_reader.h"
#include "reports/advice.h"

namespace kvplan {

namespace {

constexpr std::string_view kExamples = R"(Examples:
  kvplan advise --model llama3.1-8b --ctx 64k                      # the cheapest cards at the model's own dtypes
  kvplan advise --model llama3.1-70b --ctx 32k --quality fp8 --top 3
  kvplan advise --model qwen3-8b --ctx 32k --batch 8 --runtime vllm --gpus 4090,l40s,h100
  kvplan advise --model llama3.1-8b --ctx 128k --quality int4 --prices my-prices.csv   # lines "id,price"
  kvplan advise --model llama3.1-8b --ctx 64k --format json        # configs, cheapest first
  kvplan advise --model qwen3-8b --ctx 32k --runtime sglang --mem-fraction-static 0.8   # the engine's own flags

Prices are approximate USD per GPU-hour with their dates (kvplan gpus --format json has each source);
only priced cards are tried unless --gpus names them.)";

constexpr SettingNames kAdviseNames{"--ctx",     "--batch",  "--overhead", "--util",    "--mtp-layers", "--kv-dtype",
                                    "--weight-dtype", "--weights", "--params", "--runtime", "--gpus",      "--text-only"};

/// Engine options that fix the deployment's split, which the advisor searches.
constexpr std::string_view kSplitOptions[] = {"tensor-parallel-size", "tp-size", "pp-size", "pipeline-parallel-size", "tp_size", "pp_size"};

/// The cards to try: --gpus, else every catalog card with a price (or with one in --prices).
std::vector<PricedGpu> candidates(const std::string& gpus, const std::vector<GivenPrice>& given, bool from_file) {
  std::vector<PricedGpu> out;
  const GpuCatalog& catalog = builtin_gpus();
  const auto given_price = [&](const GpuSpec& gpu) -> std::optional<double> {
    for (const GivenPrice& price : given)
      if (catalog.find(price.id) == catalog.find(gpu.id)) return price.usd_per_hour;
    return std::nullopt;
  };
  const auto add = [&](const GpuSpec& gpu) {
    for (const PricedGpu& have : out)
      if (have.gpu.id == gpu.id) return;
    PricedGpu card = priced(gpu);
    if (from_file) {
      card.usd_per_hour = given_price(gpu);
      card.price_date = card.usd_per_hour ? "given" : "";
    }
    out.push_back(std::move(card));
  };
  if (!gpus.empty()) {
    for (const std::string& name : split_list({gpus})) {
      if (name.empty()) throw Error("--gpus: an empty item in the list");
      const GpuSpec gpu = resolve_gpu(name, catalog, "--gpus");
      if (gpu.memory_basis == "given")
        throw Error(fmt::format("--gpus: '{}' is a memory size; the advisor chooses among catalog cards (kvplan gpus)", name));
      add(gpu);
    }
    return out;
  }
  for (const GpuSpec& gpu : catalog.gpus) {
    const bool has_price = from_file ? given_price(gpu).has_value() : gpu.price_usd_per_hour.has_value();
    if (has_price) add(gpu);
  }
  return out;
}

}  // namespace

AdviseCommand::AdviseCommand(CLI::App& app, const EngineEntry* runtime) : engine_(runtime) {
  command_ = app.add_subcommand("advise", "The cheapest cards, GPU counts and dtypes that run a model at a context");
  command_->add_option("-m,--model", model_, "Catalog name or alias, config.json, GGUF or spec file")->type_name("NAME|PATH");
  command_->add_option("-c,--ctx", ctx_, "Context length per sequence (one): 65536, 64k")->type_name("TOKENS");
  command_->add_option("-b,--batch", batch_, "Concurrent sequences, each holding ctx tokens [default: 1]")->type_name("N");
  command_->add_option("--quality", quality_,
                       "What may be quantized: lossless (the model's own dtypes), fp8 (+ fp8 weights and cache), int8 "
                       "(+ int8, q8_0), int4 (+ int4, q4_0, nvfp4) [default: lossless]")
      ->type_name("LEVEL");
  command_->add_option("--runtime", runtime_, "Engine profile (generic, llama.cpp, vllm, sglang, trtllm, ollama) [default: generic]")
      ->type_name("ENGINE");
  command_->add_option("--gpus", gpus_, "Cards to try, comma-separated (4090,l40s,h100) [default: every priced catalog card]")
      ->type_name("LIST");
  command_->add_option("--max-gpus", max_gpus_, "Most GPUs of one card: 1, 2, 4, 8, ... up to this [default: 8]")->type_name("N");
  command_->add_option("--top", top_, "Configurations that fit to show [default: 5]")->type_name("N");
  command_->add_option("--prices", prices_, "Your own prices, USD per GPU-hour: JSON {\"rtx4090\": 0.44} or CSV lines id,price")
      ->type_name("FILE");
  command_->add_option("-u,--util,--gpu-memory-utilization", utilization_, "Fraction of GPU memory the budget may use")
      ->type_name("FRACTION");
  command_->add_option("--overhead", overhead_, "Runtime memory beyond weights and KV, with its unit (generic)")->type_name("SIZE");
  command_->add_option("-f,--format", format_, "Output: table or json [default: table]")->type_name("FORMAT");
  command_->add_flag("-q,--quiet", quiet_, "No quality notes under the table (the JSON keeps them)");
  engine_flags_.add_to(*command_, runtime);
  command_->footer(std::string(kExamples));
}

bool AdviseCommand::parsed() const { return command_->parsed(); }

int AdviseCommand::run(std::ostream& out, const Environment& env) const {
  if (model_.empty()) throw Error("advise: --model is required");
  if (ctx_.empty()) throw Error("advise: --ctx is required (one context, e.g. 64k)");
  const OutputFormat format = parse_output_format(format_, "--format");
  if (format != OutputFormat::table && format != OutputFormat::json) throw Error("--format: advise writes table or json");
  PlanTexts texts;
  texts.contexts = {ctx_};
  texts.batch = batch_;
  texts.runtime = runtime_;
  texts.utilization = utilization_;
  texts.overhead = overhead_;
  texts.engine_options = engine_flags_.options(*command_, env, engine_);
  // The advisor chooses the GPU count and how the model is split over it.
  for (const EngineOption& option : texts.engine_options)
    for (const std::string_view split : kSplitOptions)
      if (option.name == split)
        throw Error(fmt::format("{}: the advisor tries 1, 2, 4, ... GPUs and their splits itself (--max-gpus caps the count)",
                                option.shown_as));
  const ModelSpec model = load_model(model_, hf_hub_cache_from_environment());
  AdviseRequest request;
  request.base = build_plan_request(texts, model, kAdviseNames);
  load_speculative_draft(request.base);
  if (request.base.contexts.size() != 1) throw Error("--ctx: give one context");
  request.base.runtime = std::string(find_engine(request.base.runtime, "--runtime").name);
  request.quality = parse_quality(quality_, "--quality");
  const std::uint32_t max_gpus = parse_positive_u32(max_gpus_, "--max-gpus");
  if (max_gpus > 64) throw Error("--max-gpus: at most 64");
  request.max_gpus = max_gpus;
  const std::uint64_t top = parse_positive_integer(top_, "--top");
  request.top = static_cast<std::size_t>(std::min<std::uint64_t>(top, 1000));
  std::vector<GivenPrice> given;
  if (!prices_.empty()) {
    given = parse_price_list(read_text_file(prices_), prices_);
    for (const GivenPrice& price : given) {
      const GpuSpec gpu = resolve_gpu(price.id, builtin_gpus(), prices_);
      if (gpu.memory_basis == "given") throw Error(fmt::format("{}: '{}' is not a catalog card (kvplan gpus)", prices_, price.id));
    }
  }
  request.candidates = candidates(gpus_, given, !prices_.empty());

  AdviceReport report;
  report.model = &model;
  report.request = &request;
  report.prices_origin = prices_;
  report.advice = advise(model, request);
  if (quiet_ && format != OutputFormat::json) report.advice.notes.clear();
  write_output(out, format == OutputFormat::json ? format_advice_json(report) : format_advice_table(report));
  return 0;
}

}  // namespace kvplan
