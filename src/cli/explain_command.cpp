#include "cli/explain_command.h"

#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/arguments.h"
#include "explain/explain_report.h"
#include "explain/explanation.h"
#include "kvplan/error.h"
#include "loaders/logs/engine_log.h"
#include "loaders/logs/log_input.h"

namespace kvplan {

namespace {

constexpr std::string_view kExplainExamples = R"(Examples:
  kvplan explain vllm.log                        # vLLM's startup log (or docker logs, journalctl, a paste)
  kvplan explain llama-server.log --gpu 4090     # the card, when the log does not name one kvplan knows
  kvplan explain - < ollama-server.log           # from stdin
  kvplan explain vllm.log --model llama3.1-8b --format json

Recognises vLLM (V0, V1, /metrics), llama.cpp / llama-server, Ollama, SGLang and TensorRT-LLM lines;
compares each with kvplan's profile for that engine. Exit 2 when no line was recognised.)";

}  // namespace

std::unique_ptr<ExplainCommand> ExplainCommand::add_to(CLI::App& app) {
  auto command = std::make_unique<ExplainCommand>();
  CLI::App* sub = app.add_subcommand(
      "explain", "Read an engine's startup log and set its figures beside kvplan's plan for the same settings");
  sub->add_option("log", command->log_, "The log file, or - for stdin")->type_name("LOG");
  sub->add_option("-m,--model", command->model_,
                  "The model, when the log does not name one kvplan's catalog knows (catalog id, config.json, GGUF)")
      ->type_name("NAME|PATH");
  sub->add_option("-g,--gpu", command->gpu_, "The card, when the log does not name one (4090, h100, 24GiB)")
      ->type_name("NAME|SIZE");
  sub->add_option("-f,--format", command->format_, "Output: table or json [default: table]")->type_name("FORMAT");
  sub->footer(std::string(kExplainExamples));
  command->command_ = sub;
  return command;
}

bool ExplainCommand::parsed() const { return command_ != nullptr && command_->parsed(); }

int ExplainCommand::run(std::ostream& out) const {
  if (log_.empty()) throw Error("explain: give the log file (or - for stdin): kvplan explain vllm.log");
  const std::string format = format_.empty() ? "table" : format_;
  if (format != "table" && format != "json")
    throw Error(fmt::format("--format: '{}' is not an explain format (table, json)", format));
  const logs::LogText text = log_ == "-" ? logs::read_log_stream(std::cin) : logs::read_log_file(log_);
  logs::EngineLog log = logs::read_engine_log(text.text);
  log.cut_input = log.cut_input || text.cut;
  if (log.empty())
    throw Error(fmt::format("explain: no line of {} is one kvplan recognises (vLLM, llama.cpp, Ollama, SGLang or "
                            "TensorRT-LLM startup lines, or vLLM's /metrics)",
                            log_ == "-" ? std::string("stdin") : log_));
  ExplainInputs inputs;
  inputs.model = model_;
  inputs.gpu = gpu_;
  inputs.source_name = log_ == "-" ? "stdin" : log_;
  const Explanation explanation = explain_log(std::move(log), inputs);
  write_output(out, format == "json" ? format_explanation_json(explanation) : format_explanation_text(explanation));
  return 0;
}

}  // namespace kvplan
