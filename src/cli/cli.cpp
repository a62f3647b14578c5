#include "cli/cli.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <ostream>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/advise_command.h"
#include "cli/arguments.h"
#include "cli/engine_flags.h"
#include "cli/hf_hub_cache.h"
#include "cli/max_command.h"
#include "cli/sweep_command.h"
#include "cli/plan_inputs.h"
#include "cli/plan_command.h"
#include "cli/exit_for.h"
#include "cli/gpu_auto.h"
#include "cli/explain_command.h"
#include "cli/fit_command.h"
#include "cli/check_command.h"
#include "cli/plot_command.h"
#include "cli/ram_flags.h"
#include "engines/core/gguf_repo.h"
#include "engines/core/profile.h"
#include "engines/core/request_texts.h"
#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "kvplan/plan.h"
#include "kvplan/report.h"
#include "kvplan/version.h"
#include "loaders/architecture.h"
#include "loaders/spec_json.h"

namespace kvplan {

namespace {

constexpr std::string_view kUsage =
    "usage: kvplan --model NAME|PATH --gpu NAME|SIZE [--ctx LIST] [--kv-dtype LIST] [--runtime ENGINE] [options]\n"
    "       kvplan max | sweep | explain LOG | models [WORD] | gpus | spec --model NAME|PATH\n"
    "       kvplan check FILE... | --cmd 'ENGINE COMMAND LINE' [--gpu NAME]   (deployments, for CI)\n"
    "       kvplan advise --model NAME --ctx N [--quality fp8] | plot --model NAME --gpu G -o chart.svg\n"
    "       kvplan fit --gpu NAME|SIZE [--ctx N] [--runtime ENGINE] [--quality int8]   (what runs on this card)\n"
    "Try: kvplan --model llama3.1-8b --ctx 128k --gpu 4090   (kvplan --help for every option)\n";

constexpr std::string_view kExamples = R"(Examples:
  kvplan --model llama3.1-8b --ctx 128k --gpu 4090
  kvplan --model llama3.1-8b --ctx 32k,64k,128k --gpu 4090 --kv-dtype fp16,fp8
  kvplan --model qwen3-8b --ctx 100000 --gpu 24GiB --kv-dtype fp16,fp8,int4 --format json
  kvplan --model llama3.1-8b --ctx 64k --gpu 4090 --kv-dtype fp16 --check   # exit 1: does not fit
  kvplan --runtime llama.cpp --model model.gguf -c 32768 -np 4 -ctk q8_0 -ctv q8_0 -fa on --gpu 4090
  kvplan --runtime vllm --model llama3.1-70b --gpu h100 -tp 4 --max-model-len 32k --kv-cache-dtype fp8
  kvplan --runtime sglang --model llama3.1-70b --gpu 4xh100 --context-length 32k --mem-fraction-static 0.85
  kvplan --runtime trtllm --model llama3.1-8b --gpu h100 --max_seq_len 8k --kv-cache-dtype fp8
  kvplan --runtime ollama --model qwen3:32b --gpu 4090 --num-ctx 16384   # OLLAMA_* variables read too
  kvplan --runtime llama.cpp --model llama3.1:70b -c 32768 --gpu 2x3090   # llama.cpp's layer split
  kvplan advise --model llama3.1-8b --ctx 64k --quality fp8   # the cheapest cards and dtypes that fit
  kvplan plot --model llama3.1-8b --gpu 4090 -o chart.svg      # memory against context, per cache dtype
  kvplan fit --gpu 4090 --ctx 32k   # every catalog model that runs on the card, largest first
  kvplan models qwen   # the built-in model catalog, filtered by a word
  kvplan gpus          # the built-in GPU catalog
  kvplan spec --model path/to/config.json   # the spec kvplan reads from a file
  kvplan check deployments.yaml --gpu h100  # CI: does every deployment fit? (kvplan check --help)

Sizes print in GiB (2^30 bytes). Exit codes: 0 success, 1 a row does not fit or the engine would
refuse to start (--check only), 2 invalid input, 3 unsupported architecture or unknown weights,
4 out of memory, 5 output could not be written.)";

constexpr std::string_view kModelsExamples = R"(Examples:
  kvplan models                    # id, name, params, max context, fp16 KV bytes per token, kinds, layout
  kvplan models qwen               # only the models whose id, name or aliases hold "qwen"
  kvplan models --format markdown  # bytes per token and 128K sizes per dtype
  kvplan models --format json      # every spec, in the model-spec format
  kvplan models --architectures    # the config.json architectures kvplan reads (docs/architectures.md))";

constexpr std::string_view kGpusExamples = R"(Examples:
  kvplan gpus                 # id, name, memory as the driver reports it, fp8 support, ~$/h
  kvplan gpus --format json)";

constexpr std::string_view kSpecExamples = R"(Examples:
  kvplan spec --model gemma3-27b              # a catalog entry's spec
  kvplan spec --model ./config.json > my.json # what kvplan read from a config.json, as an editable spec
  kvplan --model ./my.json --gpu 4090         # plan with it)";

struct CatalogFlags {
  std::string format = "table";
  std::string word;
  bool architectures = false;  ///< models --architectures: the config.json architectures, not the catalog
};

/// --gpu auto: this machine's cards, and the memory other processes hold on them as --used (unless
/// --used, --free or --ignore-used says otherwise).
void use_machine_gpus(PlanFlags& flags, const Environment& env) {
  if (flags.gpu != "auto") {
    if (flags.ignore_used) throw Error("--ignore-used: only with --gpu auto (without it, nothing in use is counted)");
    return;
  }
  const bool count_used = !flags.ignore_used && flags.texts.used.empty() && flags.texts.free.empty();
  MachineGpus machine = detect_machine_gpus(env, count_used);
  flags.detected = std::move(machine.gpus);
  if (count_used && machine.used_bytes) flags.texts.used = fmt::format("{}B", *machine.used_bytes);
}

/// `kvplan models [WORD]`: the catalog, or the entries whose id, name or aliases hold the word.
int run_models(const CatalogFlags& flags, std::ostream& out) {
  if (flags.architectures) {
    // Markdown whatever --format says: docs/architectures.md is this text.
    if (!flags.word.empty()) throw Error("models --architectures: takes no WORD");
    write_output(out, arch::architectures_markdown());
    return 0;
  }
  const OutputFormat format = parse_output_format(flags.format, "--format");
  if (flags.word.empty()) {
    write_output(out, format_model_catalog(builtin_models(), format));
    return 0;
  }
  ModelCatalog matching;
  for (const ModelSpec& model : builtin_models().models)
    if (mentions(model, flags.word)) matching.models.push_back(model);
  if (matching.models.empty())
    throw Error(fmt::format("models: no catalog model mentions '{}' (kvplan models lists them all)", flags.word));
  write_output(out, format_model_catalog(matching, format));
  return 0;
}

int run_gpus(const CatalogFlags& flags, std::ostream& out) {
  write_output(out, format_gpu_catalog(builtin_gpus(), parse_output_format(flags.format, "--format")));
  return 0;
}

/// The resolved spec of any --model input, in kvplan's spec format: turns a config.json into a
/// file that can be edited and passed back with --model.
int run_spec(const std::string& model, std::ostream& out) {
  if (model.empty()) throw Error("spec: --model is required");
  write_output(out, to_spec_json(load_model_or_gguf_repo(model, hf_hub_cache_from_environment())).dump(2) + "\n");
  return 0;
}

}  // namespace

int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err, const Terminal& terminal,
            const Environment& env) {
  if (argc <= 1) {
    err << kUsage;
    return static_cast<int>(ExitCode::invalid_input);
  }
  if (argc > 1 && std::string_view(argv[1]) == "check") return run_check_command(argc, argv, std::cin, out, err);
  CLI::App app{"kvplan: will this model, at this context and concurrency, fit on this GPU, under this engine, and "
               "with which KV-cache dtype? Exact bytes, GiB printed.",
               "kvplan"};
  app.footer(std::string(kExamples));
  app.set_version_flag("--version", std::string("kvplan ") + kVersion);
  app.require_subcommand(0, 1);

  PlanFlags plan;
  PlanTexts& texts = plan.texts;
  app.add_option("-m,--model", plan.model,
                 "Catalog id or alias (llama3.1-8b, meta-llama/Llama-3.1-8B), a config.json or its folder, a GGUF file, "
                 "a spec file, an Ollama tag of a catalog model (llama3.1:8b, qwen3:32b-q4_K_M: its GGUF blob), or a GGUF "
                 "repository as llama-server -hf names it (unsloth/Qwen3-8B-GGUF:Q4_K_M)")
      ->type_name("NAME|PATH");
  app.add_option("-g,--gpu", plan.gpu, "GPU catalog name or alias (4090, h100, a100-80g) or a memory size with its unit (24GiB, 24GB, 80G = GiB); "
                 "several: 2x4090, 4xh100, 5090+3090; auto: this machine's cards (nvidia-smi, rocm-smi, a Mac's sysctl)")
      ->type_name("NAME|SIZE");
  app.add_flag("--unified", plan.unified,
               "--gpu's memory size is the RAM of a unified-memory Mac: plan against the GPU working set macOS grants");
  app.add_option("--gpus", plan.gpu_count, "How many of the --gpu card (same as --gpu 4xh100) [default: 1]")->type_name("N");
  app.add_option("-c,--ctx,--max-model-len", texts.contexts,
                 "Context length(s) per sequence, comma-separated: 32768, 32k (=32768), 1M (=1048576) "
                 "[default: 32k,64k,128k; vLLM: the trained context]")
      ->type_name("LIST");
  app.add_option("-k,--kv-dtype,--kv-cache-dtype", texts.kv_dtypes,
                 "KV cache dtype(s): fp32 fp16 bf16 fp8 (=fp8_e4m3) fp8_e5m2 int8 int4 nvfp4 (=fp4_e2m1) q8_0 q4_0 q4_1 q5_0 q5_1 iq4_nl, "
                 "auto (= the model's compute dtype: its own float type, bf16 for quantized weights) [default: fp16,fp8,int8,int4]")
      ->type_name("LIST");
  app.add_option("-w,--weight-dtype", texts.weight_dtype, "Weight dtype: fp32 fp16 bf16 fp8 int8 int4, or a format: q4_k_m q8_0 iq4_xs ... awq gptq nvfp4 "
                 "[default: the model's own]")
      ->type_name("DTYPE");
  app.add_option("--weights", texts.weights, "The checkpoint's size, for a model whose weights kvplan cannot count (60GB, 55.9GiB)")
      ->type_name("SIZE");
  app.add_option("--params", texts.params, "The model's parameter count, overriding its own (32.5B, 494M)")->type_name("N");
  app.add_flag("--text-only", texts.text_only,
               "Leave a multimodal checkpoint's vision / audio towers and projectors out of the weights "
               "(as vLLM loads them without, with limit-mm-per-prompt 0 for every modality)");
  app.add_option("-b,--batch", texts.batch, "Concurrent sequences, each holding ctx tokens [default: 1]")->type_name("N");
  app.add_option("--overhead", texts.overhead,
                 "Runtime memory beyond weights and KV (CUDA context, activations), with its unit; 0 allowed [default: 2GiB]")
      ->type_name("SIZE");
  app.add_option("-u,--util,--gpu-memory-utilization", texts.utilization,
                 "Fraction of GPU memory the budget may use [default: 1.0; vLLM 0.9]")
      ->type_name("FRACTION");
  app.add_option("--budget", texts.budget, "An absolute memory limit per GPU the engine must stay within (10GiB: a Kubernetes "
                 "slice, an agreed share)")->type_name("SIZE");
  app.add_option("--free", texts.free, "Memory free on each GPU before the engine starts (others hold the rest)")->type_name("SIZE");
  app.add_option("--used", texts.used, "Memory other processes already hold on each GPU [--gpu auto: as detected]")->type_name("SIZE");
  app.add_flag("--ignore-used", plan.ignore_used, "With --gpu auto: plan for empty cards, not counting what other processes hold");
  app.add_flag("--speed", plan.speed, "Table: a decode-speed roofline bound per row (bandwidth; not a prediction)");
  app.add_option("-f,--format", plan.format, "Output: table, json, csv, markdown [default: table]")->type_name("FORMAT");
  app.add_flag("--wide", plan.wide, "Table: a memory bar per row (about 125 columns)");
  app.add_flag("--no-color", plan.no_color, "No colour (also off when stdout is not a terminal or NO_COLOR is set)");
  app.add_flag("-q,--quiet", plan.quiet, "No quality notes under the table (the JSON keeps them)");
  app.add_flag("--check", plan.check, "Exit 1 when any row does not fit or the engine would refuse to start (for CI)");
  app.add_option("--mtp-layers", texts.mtp_layers,
                 "Count N (or all) of the model's MTP / next-token layers as cached, for speculative decoding "
                 "[default: 0, not cached]")
      ->type_name("N|all");
  std::string runtimes;
  for (const EngineEntry& engine : engines())
    runtimes += fmt::format("{}{} ({})", runtimes.empty() ? "" : ", ", engine.name, engine.summary);
  app.add_option("--runtime", texts.runtime, "Engine profile: " + runtimes + " [default: generic]")->type_name("ENGINE");
  EngineFlags engine_flags;
  const std::vector<std::string> typed(argv, argv + argc);
  const EngineEntry* const runtime = asks_for_help(typed) ? nullptr : runtime_on_line(typed, true);
  engine_flags.add_to(app, runtime);

  CatalogFlags models_flags;
  CLI::App* models = app.add_subcommand("models", "List the built-in model catalog, one line each (a WORD filters it)");
  models->add_option("word", models_flags.word, "Only models whose id, name or aliases hold this word")->type_name("WORD");
  models->add_option("-f,--format", models_flags.format, "Output: table, json or markdown")->type_name("FORMAT");
  models->add_flag("--architectures", models_flags.architectures,
                   "Every config.json model_type kvplan reads, its family's rules and fixtures (Markdown; docs/architectures.md)");
  models->footer(std::string(kModelsExamples));
  CatalogFlags gpus_flags;
  CLI::App* gpus = app.add_subcommand("gpus", "List the built-in GPU catalog with driver-reported memory");
  gpus->add_option("-f,--format", gpus_flags.format, "Output: table, json or markdown")->type_name("FORMAT");
  gpus->footer(std::string(kGpusExamples));
  std::string spec_model;
  CLI::App* spec = app.add_subcommand("spec", "Print the resolved model spec (e.g. of a config.json) in kvplan's spec format");
  spec->add_option("-m,--model", spec_model, "Catalog name, spec file, config.json or model folder")->type_name("NAME|PATH");
  spec->footer(std::string(kSpecExamples));
  // The planning subcommands' options are registered only when the line names the subcommand (or
  // asks for help): CLI11's add_option was a third of the headline command's start-up.
  const auto named = [&](std::string_view command) {
    return asks_for_help(typed) || std::find(typed.begin() + 1, typed.end(), command) != typed.end();
  };
  std::optional<MaxCommand> max_command;
  if (named("max")) max_command.emplace(app);
  std::optional<SweepCommand> sweep_command;
  if (named("sweep")) sweep_command.emplace(app);
  const std::unique_ptr<ExplainCommand> explain = named("explain") ? ExplainCommand::add_to(app) : nullptr;
  std::optional<AdviseCommand> advise_command;
  if (named("advise")) advise_command.emplace(app, runtime);
  std::optional<PlotCommand> plot_command;
  if (named("plot")) plot_command.emplace(app);
  std::optional<FitCommand> fit_command;
  if (named("fit")) fit_command.emplace(app);

  try {
    // Engines' multi-letter short flags (-ctk, -np, -tp, ...) become long names CLI11 can parse;
    // a flag no command has is refused with the closest one, in the order typed.
    const auto takes_value = [&](const std::string& flag) {
      const CLI::Option* option = app.get_option_no_throw(flag);
      return option != nullptr && option->get_items_expected_min() > 0;
    };
    const std::vector<std::string> args = rewrite_engine_spellings(typed, takes_value);
    refuse_unknown_flags(app, args);
    std::vector<const char*> arg_pointers;
    for (const std::string& arg : args) arg_pointers.push_back(arg.c_str());
    app.parse(static_cast<int>(arg_pointers.size()), arg_pointers.data());
    refuse_empty_values(app);
  } catch (...) {
    return exit_for_parse_error(std::current_exception(), app, out, err, "kvplan --help");
  }

  try {
    if (models->parsed()) return run_models(models_flags, out);
    if (gpus->parsed()) return run_gpus(gpus_flags, out);
    if (spec->parsed()) return run_spec(spec_model, out);
    if (explain && explain->parsed()) return explain->run(out);
    if (advise_command && advise_command->parsed()) return advise_command->run(out, env);
    if (plot_command && plot_command->parsed()) return plot_command->run(out);
    texts.engine_options = engine_flags.options(app, env, runtime);
    use_machine_gpus(plan, env);
    resolve_ram_auto(texts.engine_options, env);  // --ram auto: this machine's RAM, before any command plans
    if (max_command && max_command->parsed()) return max_command->run({plan.model, plan.gpu, plan.gpu_count, plan.format, texts, plan.unified, &plan.detected}, out);
    if (fit_command && fit_command->parsed()) return fit_command->run({plan.model, plan.gpu, plan.gpu_count, plan.format, texts, plan.unified, &plan.detected}, out);
    if (sweep_command && sweep_command->parsed()) return sweep_command->run({plan.model, plan.gpu, plan.gpu_count, plan.format, texts, plan.unified}, out, err);
    return run_plan(plan, table_style(plan, terminal), out);
  } catch (...) {
    return exit_for_run_error(std::current_exception(), err);
  }
}

}  // namespace kvplan
