// kvplan check: the shell-word splitter, the engines' command lines, deployment files and
// manifests, the margin, the verdicts and exit codes, every output format, every shipped example,
// and the CI packaging (the GitHub Action's steps, the pre-commit hook, the container's binary).

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "check/check.h"
#include "check/engine_command.h"
#include "kvplan/error.h"
#include "loaders/deployments/deployment_files.h"
#include "loaders/deployments/shell_words.h"
#include "loaders/deployments/yaml_loader.h"
#include "support/run_binary.h"
#include "support/temp_dir.h"

namespace kvplan {
namespace {

using testing::read_file;
using testing::run_kvplan;
using testing::source_path;
using testing::TempDir;
using Words = std::vector<std::string>;

std::string write(const TempDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.file(name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

ExitCode code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& error) {
    return error.code();
  }
  return ExitCode::ok;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

CommandSettings read_line(const std::string& line, std::map<std::string, std::string> env = {}) {
  return read_engine_command({{"sh", "-c", line}, std::move(env), ""});
}

const EngineOption* option(const CommandSettings& s, std::string_view name) {
  for (const EngineOption& o : s.texts.engine_options)
    if (o.name == name) return &o;
  return nullptr;
}

}  // namespace

TEST_CASE("shell words: quotes, escapes, continuations and comments", "[check]") {
  CHECK(split_shell_words("vllm serve m --max-model-len=8k \\\n  -tp 2") ==
        Words{"vllm", "serve", "m", "--max-model-len=8k", "-tp", "2"});
  CHECK(split_shell_words(R"(a 'b c' "d \"e\" \$f" g\ h '' x#y # comment)") ==
        Words{"a", "b c", "d \"e\" $f", "g h", "", "x#y"});
  CHECK(split_shell_words("a \"b\\\nc\"") == Words{"a", "bc"});
  CHECK(split_shell_words("a\\\r\nb") == Words{"ab"});
  CHECK(code_of([] { split_shell_words("a 'b"); }) == ExitCode::invalid_input);
  CHECK(code_of([] { split_shell_words("a \"b"); }) == ExitCode::invalid_input);
  CHECK(split_shell_commands("pip list | grep x\nexec vllm serve m > log 2>&1 && echo done; true") ==
        std::vector<Words>{{"pip", "list"}, {"exec", "vllm", "serve", "m"}, {"echo", "done"}, {"true"}});
}

TEST_CASE("engine command lines map to kvplan's settings through the engines' own flags", "[check]") {
  SECTION("vllm serve") {
    const CommandSettings s = read_line(
        "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 65536 --kv-cache-dtype fp8 -tp 2 "
        "--gpu-memory-utilization 0.9 --max-num-seqs 64 --host 0.0.0.0 --port=8000 --served-model-name a b --trust-remote-code");
    CHECK(s.runtime == "vllm");
    CHECK(s.model == "meta-llama/Llama-3.1-8B-Instruct");
    CHECK(s.texts.contexts == Words{"65536"});
    CHECK(s.texts.kv_dtypes == Words{"fp8"});
    CHECK(s.texts.utilization == "0.9");
    REQUIRE(option(s, "tensor-parallel-size"));
    CHECK(option(s, "tensor-parallel-size")->value == "2");
    CHECK(option(s, "tensor-parallel-size")->shown_as == "-tp");
    CHECK(option(s, "max-num-seqs")->value == "64");
    CHECK(s.parallel == 2);
  }
  SECTION("python -m vllm.entrypoints.openai.api_server, underscores and --flag=value") {
    const CommandSettings s = read_line("python3 -m vllm.entrypoints.openai.api_server --model=Qwen/Qwen3-8B --max_model_len=16384");
    CHECK(s.runtime == "vllm");
    CHECK(s.model == "Qwen/Qwen3-8B");
    CHECK(s.texts.contexts == Words{"16384"});
    CHECK(s.parallel == 1);  // vLLM runs on one GPU unless -tp says more
  }
  SECTION("vllm serve with pipeline stages and a dtype: tp x pp GPUs") {
    const CommandSettings s = read_line("VLLM_PP_LAYER_PARTITION=10,22 vllm serve m -tp 2 --pipeline-parallel-size 2 --dtype half");
    CHECK(s.parallel == 4);
    CHECK(option(s, "pipeline-parallel-size")->value == "2");
    CHECK(option(s, "dtype")->value == "half");
    REQUIRE(option(s, "pp-layer-partition"));
    CHECK(option(s, "pp-layer-partition")->shown_as == "VLLM_PP_LAYER_PARTITION");
  }
  SECTION("sglang") {
    const CommandSettings s = read_line(
        "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-70B-Instruct --context-length 32768 "
        "--mem-fraction-static 0.85 --tp 2 --pp-size 2");
    CHECK(s.runtime == "sglang");
    CHECK(s.model == "meta-llama/Llama-3.1-70B-Instruct");
    CHECK(option(s, "context-length")->value == "32768");
    CHECK(option(s, "mem-fraction-static")->value == "0.85");
    CHECK(option(s, "tp-size")->shown_as == "--tp");
    CHECK(s.parallel == 4);  // tp 2 x pp 2
  }
  SECTION("llama-server: short spellings, -fa as a switch, every GPU it sees") {
    const CommandSettings s = read_line("./llama-server -m model.gguf -c 32768 -ctk q8_0 -ctv q8_0 -np 4 -fa -ngl 99 -t 8");
    CHECK(s.runtime == "llama.cpp");
    CHECK(s.model == "model.gguf");
    CHECK(option(s, "ctx-size")->value == "32768");
    CHECK(option(s, "cache-type-k")->value == "q8_0");
    CHECK(option(s, "cache-type-v")->value == "q8_0");
    CHECK(option(s, "parallel")->value == "4");
    CHECK(option(s, "flash-attn")->value == "on");
    CHECK(option(s, "n-gpu-layers")->value == "99");
    CHECK(s.parallel == 0);
  }
  SECTION("trtllm-serve") {
    const CommandSettings s = read_line("trtllm-serve meta-llama/Llama-3.1-8B-Instruct --max_seq_len 8192 --tp_size 2 --backend pytorch");
    CHECK(s.runtime == "trtllm");
    CHECK(s.model == "meta-llama/Llama-3.1-8B-Instruct");
    CHECK(option(s, "max_seq_len")->value == "8192");
    CHECK(s.parallel == 2);
  }
  SECTION("Ollama: its variables, as VAR=value words or the container's environment") {
    const CommandSettings s = read_line("OLLAMA_CONTEXT_LENGTH=8192 ollama run qwen3:32b 'hello there'", {{"OLLAMA_KV_CACHE_TYPE", "q8_0"}});
    CHECK(s.runtime == "ollama");
    CHECK(s.model == "qwen3:32b");
    CHECK(option(s, "num-ctx")->value == "8192");
    CHECK(option(s, "num-ctx")->shown_as == "OLLAMA_CONTEXT_LENGTH");
    CHECK(option(s, "kv-cache-type")->value == "q8_0");
  }
  SECTION("a manifest's args alone: the image names the entrypoint, and its tag the release") {
    const CommandSettings s = read_engine_command({{"--model", "Qwen/Qwen3-8B", "--max-model-len", "8192"}, {}, "vllm/vllm-openai:v0.11.0"});
    CHECK(s.runtime == "vllm");
    CHECK(s.model == "Qwen/Qwen3-8B");
    REQUIRE(option(s, "vllm-version"));
    CHECK(option(s, "vllm-version")->value == "0.11.0");
    CHECK(option(s, "vllm-version")->shown_as == "the image tag of vllm/vllm-openai:v0.11.0");
    // A flag wins over the tag; a tag that is no release leaves the latest rules.
    const auto version_of = [](std::vector<std::string> argv, const std::string& image) {
      const CommandSettings read = read_engine_command({std::move(argv), {}, image});
      const EngineOption* o = option(read, read.runtime + "-version");
      return o ? o->value : std::string("latest");
    };
    CHECK(version_of({"--model", "m", "--vllm-version", "0.19"}, "vllm/vllm-openai:v0.11.0") == "0.19");
    CHECK(version_of({"--model", "m"}, "vllm/vllm-openai:latest") == "latest");
    CHECK(version_of({"--model", "m"}, "vllm/vllm-openai@sha256:0123abcd") == "latest");
    CHECK(version_of({"--model", "m"}, "registry.local:5000/vllm-openai") == "latest");
    CHECK(version_of({"--model-path", "m"}, "lmsysorg/sglang:v0.5.4.post1-cu126") == "0.5.4.post1");
    CHECK(version_of({"ollama", "serve"}, "ollama/ollama:0.6.2") == "0.6.2");
    // A release the profile has no rules for: unsupported, naming the image.
    CHECK(code_of([] { read_engine_command({{"--model", "m"}, {}, "vllm/vllm-openai:v0.9.2"}); }) ==
          ExitCode::unsupported_architecture);
    CHECK_THAT(message_of([] { read_engine_command({{"--model", "m"}, {}, "vllm/vllm-openai:v0.9.2"}); }),
               Catch::Contains("the image vllm/vllm-openai:v0.9.2 is vLLM 0.9.2, a release kvplan has no rules for"));
  }
  SECTION("fail closed: what kvplan does not understand is exit 3, naming it") {
    CHECK(code_of([] { read_line("vllm serve m --data-parallel-size 2"); }) == ExitCode::unsupported_architecture);
    CHECK_THAT(message_of([] { read_line("vllm serve m --data-parallel-size 2"); }),
               Catch::Contains("--data-parallel-size is not a flag kvplan reads"));
    CHECK(code_of([] { read_line("vllm serve m --quantization fp8"); }) == ExitCode::unsupported_architecture);
    CHECK(code_of([] { read_line("vllm serve m --dtype float32"); }) == ExitCode::ok);  // vLLM's --dtype, read
    CHECK(code_of([] { read_line("vllm serve m --dtype auto"); }) == ExitCode::ok);
    CHECK(code_of([] { read_line("vllm serve m --max-model-len $MAX_LEN"); }) == ExitCode::unsupported_architecture);
    CHECK(code_of([] { read_line("OLLAMA_SCHED_SPREAD=1 ollama serve"); }) == ExitCode::unsupported_architecture);
    CHECK(code_of([] { read_line("OLLAMA_HOST=0.0.0.0 ollama serve"); }) == ExitCode::ok);
    CHECK(code_of([] { read_line("text-generation-launcher --model-id m"); }) == ExitCode::unsupported_architecture);
    CHECK(code_of([] { read_line("vllm serve a && llama-server -m b"); }) == ExitCode::unsupported_architecture);
    CHECK(code_of([] { read_line("vllm serve m --max-num-seqs"); }) == ExitCode::invalid_input);
    CHECK(code_of([] { read_line("vllm serve m extra"); }) == ExitCode::invalid_input);
  }
}

TEST_CASE("deployment files: kvplan's list in YAML and JSON, with lines", "[check]") {
  const std::vector<Deployment> yaml = read_deployments(
      "# comment\n"
      "deployments:\n"
      "  - name: a\n"
      "    model: llama3.1-8b\n"
      "    gpu: 4090\n"
      "    ctx: 32k\n"
      "    options: {max-num-seqs: 8}\n"
      "  - name: b\n"
      "    command: vllm serve m\n"
      "    env: {VLLM_ALLOW_LONG_MAX_MODEL_LEN: 1}\n"
      "  - name: c\n"
      "    ctxx: 1\n",
      "d.yaml");
  REQUIRE(yaml.size() == 3);
  CHECK(yaml[0].where.text() == "d.yaml:3");
  CHECK(yaml[0].ctx == "32k");
  CHECK(yaml[0].gpus == Words{"4090"});
  CHECK(yaml[0].options.at("max-num-seqs") == "8");
  CHECK(yaml[1].where.line == 8);
  REQUIRE(yaml[1].commands.size() == 1);
  CHECK(yaml[1].commands[0].argv == Words{"vllm", "serve", "m"});
  CHECK(yaml[1].commands[0].env.at("VLLM_ALLOW_LONG_MAX_MODEL_LEN") == "1");
  CHECK_THAT(yaml[2].problem, Catch::Contains("unknown setting 'ctxx' (did you mean"));

  const std::vector<Deployment> json = read_deployments(
      "{\"deployments\": [\n  {\"name\": \"x\", \"model\": \"phi4\", \"ctx\": 16384},\n  {\"model\": \"phi4\"}\n]}\n", "d.json");
  REQUIRE(json.size() == 2);
  CHECK(json[0].where.text() == "d.json:2");  // the line its name is written on
  CHECK(json[0].ctx == "16384");
  CHECK(json[1].where.text() == "d.json (deployment 2)");
  CHECK(json[1].name == "deployment 2");

  CHECK_THAT(message_of([] { read_deployments("a: [1,\n  b: 2\n", "bad.yaml"); }), Catch::StartsWith("bad.yaml:"));
  CHECK_THAT(message_of([] { read_deployments("{\"deployments\": [}", "bad.json"); }), Catch::StartsWith("bad.json: not valid JSON"));
}

TEST_CASE("Kubernetes manifests, KServe and docker-compose", "[check]") {
  const std::vector<Deployment> k8s = read_deployments(read_file(source_path("examples/k8s/vllm-deployment.yaml")),
                                                       "vllm-deployment.yaml");
  REQUIRE(k8s.size() == 1);  // the Service deploys nothing
  CHECK(k8s[0].name == "llama-8b-chat");
  CHECK(k8s[0].gpu_count == "2");
  CHECK(k8s[0].gpus == Words{"NVIDIA-H100-80GB-HBM3"});
  CHECK(k8s[0].where.line == 21);  // args:
  REQUIRE(k8s[0].commands.size() == 1);
  CHECK(k8s[0].commands[0].argv.at(2) == "meta-llama/Llama-3.1-8B-Instruct");

  const std::vector<Deployment> affinity = read_deployments(
      "kind: Deployment\nmetadata: {name: n}\nspec:\n  template:\n    spec:\n      affinity:\n        nodeAffinity:\n"
      "          requiredDuringSchedulingIgnoredDuringExecution:\n            nodeSelectorTerms:\n"
      "              - matchExpressions:\n                  - {key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-L40S, NVIDIA-A100-SXM4-40GB]}\n"
      "      containers:\n        - {name: c, image: x, args: [--model, m], resources: {limits: {nvidia.com/gpu: 1}}}\n"
      "        - {name: sidecar, image: envoy}\n",
      "a.yaml");
  REQUIRE(affinity.size() == 1);
  CHECK(affinity[0].name == "n/c");
  CHECK(affinity[0].gpus == Words{"NVIDIA-L40S", "NVIDIA-A100-SXM4-40GB"});

  const std::vector<Deployment> kserve = read_deployments(read_file(source_path("examples/k8s/kserve-inferenceservice.yaml")), "k.yaml");
  REQUIRE(kserve.size() == 1);
  CHECK(kserve[0].gpus == Words{"a10g"});
  CHECK(kserve[0].commands[0].image == "kserve-huggingfaceserver");

  const std::vector<Deployment> compose = read_deployments(read_file(source_path("examples/compose/docker-compose.yaml")), "c.yaml");
  REQUIRE(compose.size() == 1);
  CHECK(compose[0].name == "llm");
  CHECK(compose[0].gpu_count == "1");
  CHECK(compose[0].model == "llama3.1-8b");
  CHECK(compose[0].commands[0].argv.at(0) == "-m");
}

TEST_CASE("the margin: 5% or 0.05, exact", "[check]") {
  CHECK(parse_margin("5%", "m") == 50'000);
  CHECK(parse_margin("0.05", "m") == 50'000);
  CHECK(parse_margin("12.63%", "m") == 126'300);
  CHECK(parse_margin("0", "m") == 0);
  CHECK(code_of([] { parse_margin("100%", "m"); }) == ExitCode::invalid_input);
  CHECK(code_of([] { parse_margin("5 %", "m"); }) == ExitCode::invalid_input);
  CHECK(code_of([] { parse_margin("0.0000001", "m"); }) == ExitCode::invalid_input);
}
}  // namespace kvplan

namespace kvplan {
namespace {

using testing::check_refused;

nlohmann::json check_json(const std::string& arguments, int expected_exit) {
  const testing::ProcessResult result = run_kvplan("check --format json " + arguments);
  INFO(result.err);
  CHECK(result.exit_code == expected_exit);
  return nlohmann::json::parse(result.out);
}

std::map<std::string, std::string> verdicts(const nlohmann::json& doc) {
  std::map<std::string, std::string> out;
  for (const auto& d : doc.at("deployments")) out[d.at("name").get<std::string>()] = d.at("verdict").get<std::string>();
  return out;
}

}  // namespace

TEST_CASE("check: the margin decides tight, exactly at the boundary", "[check]") {
  // llama3.1-8b, generic, 4090, ctx 32,768 fp16 (README's first row): budget 25,757,220,864;
  // weights 16,060,522,496 + KV 32,768 x 131,072 = 4,294,967,296 + overhead 2,147,483,648
  // = 22,502,973,440; headroom 3,254,247,424 = 12.634% of the budget.
  TempDir dir;
  const std::string file = write(dir, "deployments.yaml",
                                 "deployments:\n  - {name: r, model: llama3.1-8b, gpu: 4090, ctx: 32768, kv_dtype: fp16}\n");
  nlohmann::json fits = check_json("--margin 12.63% " + file, 0);
  CHECK(verdicts(fits).at("r") == "fits");
  const nlohmann::json& row = fits["deployments"][0]["plan"]["rows"][0];
  CHECK(row["total_bytes"] == 22'502'973'440ULL);
  CHECK(row["headroom_bytes"] == 3'254'247'424LL);
  // 12.64% of 25,757,220,864 = 3,255,712,717 > the headroom: tight (exit 0; 1 with --strict).
  CHECK(verdicts(check_json("--margin 12.64% " + file, 0)).at("r") == "tight");
  CHECK(verdicts(check_json("--margin 12.64% --strict " + file, 1)).at("r") == "tight");
}

TEST_CASE("check: every verdict is make_plan's, the same rows `kvplan --format json` prints", "[check]") {
  const nlohmann::json doc = check_json(
      "--cmd 'vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 65536 --kv-cache-dtype fp8 "
      "--gpu-memory-utilization 0.9 --max-num-seqs 64' --gpu h100",
      0);
  const testing::ProcessResult direct = run_kvplan(
      "--runtime vllm --model llama3.1-8b --gpu h100 --max-model-len 65536 --kv-cache-dtype fp8 --util 0.9 "
      "--max-num-seqs 64 --format json");
  REQUIRE(direct.exit_code == 0);
  const nlohmann::json plan = nlohmann::json::parse(direct.out);
  CHECK(doc["deployments"][0]["plan"]["rows"] == plan["rows"]);
  CHECK(doc["deployments"][0]["source"]["file"] == "--cmd");
}

TEST_CASE("check: exit codes 0, 1, 2, 3 and their order", "[check]") {
  TempDir dir;
  const std::string fits = write(dir, "fits.yaml", "- {name: a, model: llama3.1-8b, gpu: h100, ctx: 8k}\n");
  const std::string no_fit = write(dir, "nofit.yaml", "- {name: b, model: llama3.1-70b, gpu: 4090, ctx: 8k}\n");
  const std::string invalid = write(dir, "invalid.yaml", "- {name: c, model: llama3.1-8b, gpu: h100, ctx: eight}\n");
  const std::string unsupported = write(dir, "unsupported.yaml", "- {name: d, gpu: h100, command: vllm serve llama3.1-8b --cpu-offload-gb 4}\n");
  CHECK(run_kvplan("check " + fits).exit_code == 0);
  CHECK(run_kvplan("check " + fits + " " + no_fit).exit_code == 1);
  CHECK(run_kvplan("check " + no_fit + " " + unsupported).exit_code == 3);
  CHECK(run_kvplan("check " + unsupported + " " + invalid + " " + no_fit).exit_code == 2);
  const testing::ProcessResult table = run_kvplan("check " + unsupported);
  CHECK_THAT(table.out, Catch::Contains("--cpu-offload-gb is not a flag kvplan reads"));
  CHECK_THAT(table.out, Catch::Contains(unsupported + ":1"));

  const testing::ProcessResult unknown_id = run_kvplan("check --cmd 'vllm serve acme/Unknown-7B' --gpu h100");
  CHECK(unknown_id.exit_code == 2);
  CHECK_THAT(unknown_id.out, Catch::Contains("model: unknown model 'acme/Unknown-7B'"));
  CHECK_THAT(unknown_id.out, Catch::Contains("give its config.json as model:"));
  // vLLM runs on -tp GPUs: a pod given fewer is invalid.
  const testing::ProcessResult too_few = run_kvplan(
      "check --cmd 'vllm serve meta-llama/Llama-3.1-8B-Instruct -tp 4' --gpu 2xh100");
  CHECK(too_few.exit_code == 2);
  CHECK_THAT(too_few.out, Catch::Contains("2 cards named, but the command runs on 4"));
  // -tp 2 x -pp 2 is four cards too; --dtype float32 is vLLM's, and the cache follows it.
  const testing::ProcessResult staged = run_kvplan(
      "check --cmd 'vllm serve meta-llama/Llama-3.1-8B-Instruct -tp 2 -pp 2 --dtype float32 --max-model-len 8192' --gpu 2xh100");
  CHECK(staged.exit_code == 2);
  CHECK_THAT(staged.out, Catch::Contains("2 cards named, but the command runs on 4"));
  const nlohmann::json wide = check_json(
      "--cmd 'vllm serve meta-llama/Llama-3.1-8B-Instruct -tp 2 -pp 2 --dtype float32 --max-model-len 8192' --gpu 4xh100", 0);
  CHECK(wide["deployments"][0]["plan"]["rows"][0]["pp"] == 2);
  CHECK(wide["deployments"][0]["plan"]["rows"][0]["kv_dtype"] == "fp32");

  check_refused(run_kvplan("check"), "give deployment files");
  check_refused(run_kvplan("check missing.yaml"), "missing.yaml: no such file");
  check_refused(run_kvplan("check --format xml " + fits), "--format: 'xml' is not a check format");
  check_refused(run_kvplan("check --margin 5 " + fits), "--margin: '5' is the whole budget or more");
  check_refused(run_kvplan("check --annotate --format json " + fits), "give --output FILE");
  check_refused(run_kvplan("check --gpuu h100 " + fits), "--gpuu: unknown flag (did you mean --gpu?) (see kvplan check --help)");
  // kvplan's own flag given to a subcommand that does not take it: named as such, with its nearest
  // there (not "did you mean --gpu?" for --gpu).
  check_refused(run_kvplan("advise --model llama3.1-8b --gpu h100 --ctx 8k"),
                "--gpu: not a flag of kvplan advise (did you mean --gpus?) (see kvplan advise --help)");
  // --help goes through the same exit-code mapping as kvplan's: a write that fails is exit 5.
  const testing::ProcessResult help_to_full_disk = run_kvplan("check --help >/dev/full");
  CHECK(help_to_full_disk.exit_code == 5);
  CHECK_THAT(help_to_full_disk.err, Catch::StartsWith("kvplan: error: could not write the output"));
  check_refused(run_kvplan("check " + write(dir, "bad.yaml", "deployments:\n  - [\n")), "bad.yaml:");
}

TEST_CASE("check: stdin with several documents, as helm template prints them", "[check]") {
  const std::string command = std::string("cat '") + source_path("examples/k8s/vllm-deployment.yaml") + "' '" +
                              source_path("examples/k8s/sglang-statefulset.yaml") + "' | '" + KVPLAN_BINARY +
                              "' check - --format json --gpu h100";
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe);
  std::string out;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  pclose(pipe);
  const nlohmann::json doc = nlohmann::json::parse(out);
  REQUIRE(doc["deployments"].size() == 2);
  CHECK(doc["deployments"][0]["source"]["file"] == "-");
  CHECK(doc["deployments"][0]["source"]["line"] == 21);
  // The second document's lines count from the start of the stream.
  CHECK(doc["deployments"][1]["source"]["line"].get<int>() > 40);
}
}  // namespace kvplan

namespace kvplan {

TEST_CASE("check: every shipped example, its verdicts", "[check]") {
  struct Expected {
    const char* file;
    int exit_code;
    std::map<std::string, std::string> verdicts;
  };
  const Expected examples[] = {
      {"examples/deployments.yaml", 1,
       {{"chat-8b-vllm", "fits"},
        {"qwen3-8b-llama-server", "fits"},
        // SGLang refuses: 70B / 2 = 65.7 GiB of weights per H100 under --mem-fraction-static 0.85.
        {"llama-70b-sglang", "no_fit"},
        {"qwen3-32b-ollama", "fits"},
        // README's row: 131,072 x 128 KiB = 16 GiB of cache + 14.96 + 2.00 = 32.96 GiB > 23.99.
        {"llama-8b-long-context", "no_fit"}}},
      {"examples/deployments.json", 0, {{"phi4-generic", "fits"}, {"mistral-vllm-2x", "fits"}}},
      {"examples/k8s/vllm-deployment.yaml", 0, {{"llama-8b-chat", "fits"}}},
      {"examples/k8s/sglang-statefulset.yaml", 1, {{"qwen3-32b", "no_fit"}}},
      // vLLM on an A10G: 0.95 GiB of headroom is under 5% of the 20.24 GiB budget.
      {"examples/k8s/kserve-inferenceservice.yaml", 0, {{"qwen3-8b", "tight"}}},
      {"examples/compose/docker-compose.yaml", 0, {{"llm", "fits"}}},
  };
  for (const Expected& example : examples) {
    INFO(example.file);
    const nlohmann::json doc = check_json(source_path(example.file), example.exit_code);
    CHECK(verdicts(doc) == example.verdicts);
  }
  // The one whose model comes from a catalog alias through the command: the vLLM row is the one
  // `kvplan --runtime vllm` prints (tensor parallel 2 on the two H100s the node selector names).
  const nlohmann::json k8s = check_json(source_path("examples/k8s/vllm-deployment.yaml"), 0);
  const nlohmann::json& plan = k8s["deployments"][0]["plan"];
  CHECK(plan["model"]["id"] == "llama3.1-8b");
  CHECK(plan["rows"][0]["tp"] == 2);
  CHECK(plan["rows"][0]["ctx"] == 131072);
}

}  // namespace kvplan

namespace kvplan {

TEST_CASE("check: hostile deployment files are one error line, not a crash or a hang", "[check]") {
  TempDir dir;
  // Nesting past what the reader walks, and an alias bomb (10^10 nodes once expanded).
  testing::check_refused(run_kvplan("check " + write(dir, "deep.yaml", "a: " + std::string(200, '[') + std::string(200, ']') + "\n")),
                         "deep.yaml: YAML nested more than 64 levels");
  testing::check_refused(run_kvplan("check " + write(dir, "open.yaml", "a: " + std::string(100000, '[') + "\n")), "open.yaml:");
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  std::string previous = "a";
  for (int i = 1; i < 10; ++i) {
    bomb += "b" + std::to_string(i) + ": &b" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) bomb += (j ? ", *" : "*") + previous;
    bomb += "]\n";
    previous = "b" + std::to_string(i);
  }
  testing::check_refused(run_kvplan("check " + write(dir, "bomb.yaml", bomb)), "bomb.yaml: more than a million YAML nodes");
  testing::check_refused(run_kvplan("check " + dir.file("")), "no such file");  // a directory is not a file
  testing::check_refused(run_kvplan("check " + write(dir, "service.yaml", "kind: Service\nmetadata: {name: s}\n")),
                         "service.yaml: no deployment in it");
}

}  // namespace kvplan
