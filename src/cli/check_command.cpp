#include "cli/check_command.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "check/check.h"
#include "cli/arguments.h"
#include "cli/exit_for.h"
#include "kvplan/error.h"
#include "loaders/deployments/deployment_files.h"
#include "reports/check_report.h"

namespace kvplan {

namespace {

constexpr std::string_view kCheckExamples = R"(Examples:
  kvplan check examples/deployments.yaml
  kvplan check --cmd 'vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 65536 --kv-cache-dtype fp8' --gpu h100
  kvplan check --cmd 'llama-server -m qwen3-8b -c 32768 -ctk q8_0 -ctv q8_0 -np 4' --gpu 4090
  kvplan check examples/k8s/vllm-deployment.yaml --format junit --output kvplan.xml --annotate
  helm template my-chart | kvplan check - --gpu h100 --strict

Exit codes: 0 every deployment fits (tight too, unless --strict), 1 one does not fit (or is tight
with --strict), 2 invalid input, 3 unsupported (an engine, flag or architecture kvplan does not
model), 5 the output could not be written.)";

/// Files larger than this are not deployment files.
constexpr std::uintmax_t kMaxFileBytes = 16u << 20;

std::string read_input(const std::string& file, std::istream& in) {
  if (file == "-") {
    std::string text;
    char buffer[65536];
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
      text.append(buffer, static_cast<std::size_t>(in.gcount()));
      if (text.size() > kMaxFileBytes) throw Error("-: more than 16 MiB on stdin");
    }
    return text;
  }
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) throw Error(fmt::format("{}: no such file", file));
  if (std::filesystem::file_size(file, ec) > kMaxFileBytes) throw Error(fmt::format("{}: larger than 16 MiB", file));
  std::ifstream stream(file, std::ios::binary);
  if (!stream) throw Error(fmt::format("{}: cannot be read", file));
  std::ostringstream text;
  text << stream.rdbuf();
  return text.str();
}

struct CheckFlags {
  std::vector<std::string> files;
  std::vector<std::string> commands;
  std::string format = "table";
  std::string output;
  std::string summary;
  bool annotate = false;
  CheckDefaults defaults;
};

int run(const CheckFlags& flags, std::istream& in, std::ostream& out) {
  const CheckFormat format = parse_check_format(flags.format, "--format");
  if (flags.files.empty() && flags.commands.empty())
    throw Error("check: give deployment files (- for stdin) or --cmd 'COMMAND LINE'");
  if (flags.annotate && flags.output.empty() && (format == CheckFormat::json || format == CheckFormat::junit))
    throw Error("--annotate writes to stdout: give --output FILE for the json or junit report");
  parse_margin(flags.defaults.margin, "--margin");  // refused before any work

  std::vector<Deployment> deployments;
  for (const std::string& file : flags.files) {
    std::vector<Deployment> read = read_deployments(read_input(file, in), file);
    if (read.empty()) throw Error(fmt::format("{}: no deployment in it (a deployments list, a workload or a compose service)", file));
    for (Deployment& d : read) deployments.push_back(std::move(d));
  }
  for (std::size_t i = 0; i < flags.commands.size(); ++i)
    deployments.push_back(deployment_from_command_line(flags.commands[i], i + 1));

  CheckRun run;
  run.strict = flags.defaults.strict;
  for (const Deployment& d : deployments) run.deployments.push_back(check_deployment(d, flags.defaults));

  std::string report;
  switch (format) {
    case CheckFormat::table: report = format_check_table(run); break;
    case CheckFormat::json: report = format_check_json(run); break;
    case CheckFormat::markdown: report = format_check_markdown(run); break;
    case CheckFormat::junit: report = format_check_junit(run); break;
  }
  if (flags.annotate) write_output(out, format_check_annotations(run));
  if (!flags.output.empty()) {
    std::ofstream file(flags.output, std::ios::binary | std::ios::trunc);
    if (!file) throw OutputError(fmt::format("{}: cannot be written", flags.output), false);
    write_output(file, report);
  } else {
    write_output(out, report);
  }
  if (!flags.summary.empty()) {
    // $GITHUB_STEP_SUMMARY is appended to, as every step's summary is.
    std::ofstream file(flags.summary, std::ios::binary | std::ios::app);
    if (!file) throw OutputError(fmt::format("{}: cannot be written", flags.summary), false);
    write_output(file, format_check_markdown(run));
  }
  return run.exit_code();
}

}  // namespace

int run_check_command(int argc, const char* const* argv, std::istream& in, std::ostream& out, std::ostream& err) {
  CLI::App app{"kvplan check: will every deployment in these files (or these engine command lines) fit? One verdict "
               "each: fits, tight, no fit, invalid, unsupported.",
               "kvplan check"};
  app.footer(std::string(kCheckExamples));
  CheckFlags flags;
  app.add_option("files", flags.files,
                 "Deployment files: kvplan's deployments list (JSON or YAML), Kubernetes manifests (several documents "
                 "allowed), KServe InferenceServices, docker-compose files; - reads stdin")
      ->type_name("FILE");
  app.add_option("--cmd", flags.commands,
                 "An engine's command line as it is run (vllm serve ..., python -m sglang.launch_server ..., "
                 "llama-server ..., trtllm-serve ..., OLLAMA_...=... ollama serve); repeatable")
      ->type_name("LINE");
  app.add_option("-g,--gpu", flags.defaults.gpu, "The GPU of deployments that do not say theirs (h100, 2x4090, 24GiB)")
      ->type_name("NAME|SIZE");
  app.add_option("-m,--model", flags.defaults.model,
                 "The model of every deployment, in place of theirs (a catalog id, config.json or GGUF path)")
      ->type_name("NAME|PATH");
  app.add_option("--margin", flags.defaults.margin, "Headroom under this share of the budget is tight (5% or 0.05) [default: 5%]")
      ->type_name("FRACTION");
  app.add_flag("--strict", flags.defaults.strict, "A tight deployment fails (exit 1)");
  app.add_option("-f,--format", flags.format, "Output: table, json, markdown, junit [default: table]")->type_name("FORMAT");
  app.add_option("-o,--output", flags.output, "Write the report to FILE instead of stdout")->type_name("FILE");
  app.add_option("--summary", flags.summary, "Also append the Markdown report to FILE (such as $GITHUB_STEP_SUMMARY)")
      ->type_name("FILE");
  app.add_flag("--annotate", flags.annotate,
               "Print GitHub Actions annotations (::error file=F,line=L::...) on stdout for every deployment that does not fit");
  try {
    std::vector<std::string> args(argv + 1, argv + argc);  // "check" is the program name here
    refuse_unknown_flags(app, args);
    app.parse(std::vector<std::string>(args.rbegin(), args.rend() - 1));
    refuse_empty_values(app);
  } catch (...) {
    return exit_for_parse_error(std::current_exception(), app, out, err, "kvplan check --help");
  }
  try {
    return run(flags, in, out);
  } catch (...) {
    return exit_for_run_error(std::current_exception(), err);
  }
}

}  // namespace kvplan
