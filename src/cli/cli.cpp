#include "cli/cli.h"

#include <ostream>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kvplan/budget.h"
#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "kvplan/model_loader.h"
#include "kvplan/report.h"
#include "loaders/spec_json.h"
#include "kvplan/units.h"
#include "kvplan/version.h"
#include "cli/engine_flags.h"
#include "engines/llamacpp/cli.h"
#include "cli/plan_texts.h"
#include "engines/vllm/cli.h"

namespace kvplan {

namespace {

constexpr std::string_view kExamples = R"(Examples:
  kvplan --model llama3.1-8b --ctx 128k --gpu 4090
  kvplan --model llama3.1-8b --ctx 32k,64k,128k --gpu 4090 --kv-dtype fp16,fp8
  kvplan --model qwen3-8b --ctx 100000 --gpu 24GiB --kv-dtype fp16,fp8,int4 --format json
  kvplan --model ./my-model.json --ctx 8k --batch 16 --gpu h100 --weight-dtype fp8
  kvplan --model llama3.1-8b --ctx 64k --gpu 4090 --check   # exit 1 when a row does not fit
  kvplan --runtime llama.cpp --model model.gguf -c 32768 -np 4 -ctk q8_0 -ctv q8_0 -fa on --gpu 4090
  kvplan --runtime vllm --model llama3.1-70b --gpu h100 -tp 4 --max-model-len 32k --kv-cache-dtype fp8
  kvplan models        # the built-in model catalog
  kvplan gpus          # the built-in GPU catalog
  kvplan spec --model path/to/config.json   # the spec kvplan reads from a file

Sizes print in GiB (2^30 bytes). Exit codes: 0 success, 1 a row does not fit (--check only),
2 invalid input, 3 unsupported architecture.)";

struct CatalogFlags {
  std::string format = "table";
};

struct SpecFlags {
  std::string model;
};

int run_plan(const PlanInputs& in, std::ostream& out) {
  if (in.model.empty()) throw Error("--model is required (a catalog name such as llama3.1-8b, or a spec file)");
  if (in.gpu.empty()) throw Error("--gpu is required (a catalog name such as 4090, or a capacity such as 24GiB)");
  const OutputFormat format = parse_output_format(in.format.empty() ? "table" : in.format);
  Report report;
  const ModelSpec model = load_model(in.model);
  report.model = &model;
  report.gpu = resolve_gpu(in.gpu, builtin_gpus());
  report.request = build_plan_request(in.texts, model, report.gpu);
  report.plan = make_plan(model, report.request);
  out << format_report(report, format, in.color);
  const bool all_fit = report.plan.ways_out.empty();
  return in.check && !all_fit ? static_cast<int>(ExitCode::does_not_fit) : 0;
}

int run_models(const CatalogFlags& flags, std::ostream& out) {
  out << format_model_catalog(builtin_models(), parse_output_format(flags.format));
  return 0;
}

int run_gpus(const CatalogFlags& flags, std::ostream& out) {
  out << format_gpu_catalog(builtin_gpus(), parse_output_format(flags.format));
  return 0;
}

/// The resolved spec of any --model input, in kvplan's spec format: turns a config.json into a
/// file that can be edited and passed back with --model.
int run_spec(const SpecFlags& flags, std::ostream& out) {
  if (flags.model.empty()) throw Error("spec: --model is required");
  const ModelSpec model = load_model(flags.model);
  out << to_spec_json(model).dump(2) << "\n";
  return 0;
}

/// CLI11's messages can span lines; the contract is one line on stderr.
std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

}  // namespace

int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err, const Terminal& terminal) {
  CLI::App app{"kvplan: will this model, at this context and concurrency, fit on this GPU, and with which KV-cache "
               "dtype? Exact bytes, GiB printed.",
               "kvplan"};
  app.footer(std::string(kExamples));
  app.set_version_flag("--version", std::string("kvplan ") + kVersion);
  app.require_subcommand(0, 1);

  PlanInputs plan;
  PlanTexts& texts = plan.texts;
  bool no_color = false;
  app.add_option("-m,--model", plan.model, "Catalog id or alias (llama3.1-8b, meta-llama/Llama-3.1-8B) or a spec file")
      ->type_name("NAME|PATH");
  app.add_option("-c,--ctx,--max-model-len", texts.contexts,
                 "Context length(s) per sequence, comma-separated: 32768, 32k (=32768), 1M (=1048576) "
                 "[default: 32k,64k,128k]")
      ->type_name("LIST");
  app.add_option("-g,--gpu", plan.gpu, "GPU catalog name or alias (4090, h100, a100-80g) or a capacity (24GiB, 24GB, 80G = GiB)")
      ->type_name("NAME|SIZE");
  app.add_option("-k,--kv-dtype,--kv-cache-dtype", texts.kv_dtypes,
                 "KV cache dtype(s): fp32 fp16 bf16 fp8 (=fp8_e4m3) fp8_e5m2 int8 int4 q8_0 q4_0 q4_1 q5_0 q5_1 iq4_nl, "
                 "auto (= the model's compute dtype: its own float type, bf16 for quantized weights) [default: fp16,fp8,int8,int4]")
      ->type_name("LIST");
  app.add_option("-w,--weight-dtype", texts.weight_dtype, "Weight dtype: fp32 fp16 bf16 fp8 int8 int4 [default: the model's own]")
      ->type_name("DTYPE");
  app.add_option("-b,--batch", texts.batch, "Concurrent sequences, each holding ctx tokens [default: 1]")->type_name("N");
  app.add_option("--overhead", texts.overhead,
                 "Runtime overhead beyond weights and KV (CUDA context, activations); 0 allowed [default: 2GiB]")
      ->type_name("SIZE");
  app.add_option("-u,--util,--gpu-memory-utilization", texts.utilization,
                 "Fraction of GPU memory the budget may use [default: 1.0]")
      ->type_name("FRACTION");
  app.add_option("-f,--format", plan.format, "Output: table, json, csv, markdown [default: table]")->type_name("FORMAT");
  app.add_flag("--no-color", no_color, "No colour (also off when stdout is not a terminal or NO_COLOR is set)");
  app.add_flag("--check", plan.check, "Exit 1 when any row does not fit (for CI)");
  app.add_option("--mtp-layers", texts.mtp_layers,
                 "Count N (or all) of the model's MTP / next-token layers as cached, for speculative decoding "
                 "[default: 0, not cached]")
      ->type_name("N|all");

  // Engine profiles: --runtime, then each engine's own flags (src/llamacpp_cli.h, src/vllm_cli.h).
  std::string runtime = "generic";
  app.add_option("--runtime", runtime,
                 "Engine profile: generic (engine-neutral), llama.cpp (what llama.cpp v0.4.0 allocates) or vllm (what "
                 "vLLM's V1 engine allocates, per GPU) [default: generic]")
      ->type_name("NAME");
  LlamaCppFlags llamacpp;
  add_llamacpp_options(app, llamacpp);
  VllmFlags vllm;
  add_vllm_options(app, vllm);

  CatalogFlags models_flags;
  CLI::App* models = app.add_subcommand("models", "List the built-in model catalog, one line each");
  models->add_option("-f,--format", models_flags.format, "Output: table, json or markdown")->type_name("FORMAT");
  CatalogFlags gpus_flags;
  CLI::App* gpus = app.add_subcommand("gpus", "List the built-in GPU catalog with driver-reported memory");
  gpus->add_option("-f,--format", gpus_flags.format, "Output: table, json or markdown")->type_name("FORMAT");

  SpecFlags spec_flags;
  CLI::App* spec = app.add_subcommand("spec", "Print the resolved model spec (e.g. of a config.json) in kvplan's spec format");
  spec->add_option("-m,--model", spec_flags.model, "Catalog name, spec file, config.json or model folder")->type_name("NAME|PATH");

  try {
    // Engines' multi-letter short flags (-ctk, -np, -tp, ...) become long names CLI11 can parse.
    const std::vector<std::string> args = rewrite_engine_flags(std::vector<std::string>(argv, argv + argc));
    std::vector<const char*> arg_pointers;
    for (const std::string& arg : args) arg_pointers.push_back(arg.c_str());
    app.parse(static_cast<int>(arg_pointers.size()), arg_pointers.data());
  } catch (const CLI::Success& success) {
    // --help and --version print to stdout and succeed.
    std::ostringstream ignored;
    return app.exit(success, out, ignored);
  } catch (const CLI::ParseError& error) {
    err << "kvplan: error: " << one_line(error.what()) << " (see kvplan --help)\n";
    return static_cast<int>(ExitCode::invalid_input);
  }

  try {
    if (models->parsed()) return run_models(models_flags, out);
    if (gpus->parsed()) return run_gpus(gpus_flags, out);
    if (spec->parsed()) return run_spec(spec_flags, out);
    plan.color = terminal.stdout_is_tty && !terminal.no_color_env && !no_color;
    const Runtime engine = parse_runtime(runtime);
    if (engine != Runtime::llamacpp) refuse_llamacpp_flags(llamacpp);
    if (engine != Runtime::vllm) refuse_vllm_flags(vllm);
    switch (engine) {
      case Runtime::llamacpp: return run_llamacpp_plan(plan, llamacpp, out);
      case Runtime::vllm: return run_vllm_plan(plan, vllm, out);
      case Runtime::generic: break;
    }
    return run_plan(plan, out);
  } catch (const Error& error) {
    err << "kvplan: error: " << one_line(error.what()) << "\n";
    return static_cast<int>(error.code());
  } catch (const std::exception& error) {
    err << "kvplan: error: " << one_line(error.what()) << "\n";
    return static_cast<int>(ExitCode::invalid_input);
  }
}

}  // namespace kvplan
