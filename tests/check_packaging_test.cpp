// kvplan check where CI users meet it, each run here without a network: the GitHub Action's
// steps through bash, the pre-commit hook's command, the container's static binary, and the
// JUnit report against tests/junit/junit.xsd (xmllint).

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "loaders/deployments/yaml_loader.h"
#include "support/run_binary.h"
#include "support/temp_dir.h"

namespace kvplan {
namespace {

namespace fs = std::filesystem;
using testing::read_file;
using testing::source_path;
using testing::TempDir;

struct Shell {
  int exit_code = -1;
  std::string out;
};

Shell shell(const std::string& command) {
  Shell result;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return result;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.out.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  return result;
}

std::string sh_quote(const std::string& text) { return "'" + std::regex_replace(text, std::regex("'"), "'\\''") + "'"; }

/// The action's steps run as the runner runs a composite action: each `run` through bash with its
/// `env` (inputs substituted), GITHUB_ENV read back between steps.
Shell run_action(const std::map<std::string, std::string>& inputs, const TempDir& dir) {
  const std::vector<TreeDocument> docs = read_yaml_documents(read_file(source_path("packaging/github-action/action.yml")), "action.yml");
  REQUIRE(docs.size() == 1);
  const nlohmann::json& action = docs[0].value;
  REQUIRE(action["runs"]["using"] == "composite");
  std::map<std::string, std::string> values;
  for (const auto& [name, spec] : action["inputs"].items())
    values[name] = spec.contains("default") ? spec["default"].get<std::string>() : "";
  for (const auto& [name, value] : inputs) {
    REQUIRE(action["inputs"].contains(name));
    values[name] = value;
  }
  const std::string github_env = dir.file("github_env");
  std::ofstream(github_env).close();
  std::map<std::string, std::string> exported;
  Shell last;
  int step = 0;
  for (const auto& s : action["runs"]["steps"]) {
    REQUIRE(s["shell"] == "bash");
    std::string env = "GITHUB_ENV=" + sh_quote(github_env) + " GITHUB_STEP_SUMMARY=" + sh_quote(dir.file("summary.md")) +
                      " RUNNER_TEMP=" + sh_quote(dir.file("")) + " GITHUB_ACTION_PATH=" +
                      sh_quote(source_path("packaging/github-action"));
    for (const auto& [name, value] : exported) env += " " + name + "=" + sh_quote(value);
    if (s.contains("env"))
      for (const auto& [name, value] : s["env"].items()) {
        std::string text = value.get<std::string>();
        static const std::regex input(R"(\$\{\{\s*inputs\.([A-Za-z_-]+)\s*\}\})");
        std::smatch match;
        while (std::regex_search(text, match, input)) text = match.prefix().str() + values.at(match[1]) + match.suffix().str();
        env += " " + name + "=" + sh_quote(text);
      }
    const std::string script = dir.file("step" + std::to_string(step++) + ".sh");
    std::ofstream(script) << s["run"].get<std::string>();
    last = shell("cd " + sh_quote(source_path("")) + " && env -i PATH=/usr/bin:/bin " + env + " bash " + sh_quote(script));
    if (last.exit_code != 0) return last;
    // What a step appended to GITHUB_ENV is in the environment of the next.
    std::ifstream lines(github_env);
    for (std::string line; std::getline(lines, line);)
      if (const std::size_t eq = line.find('='); eq != std::string::npos) exported[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return last;
}

}  // namespace

TEST_CASE("the GitHub Action's steps run kvplan check, annotate and write the summary", "[check]") {
  TempDir dir;
  // examples/deployments.yaml: llama-8b-long-context does not fit (exit 1).
  Shell fails = run_action({{"files", "examples/deployments.y*ml"}, {"kvplan", KVPLAN_BINARY}}, dir);
  INFO(fails.out);
  CHECK(fails.exit_code == 1);
  CHECK_THAT(fails.out, Catch::Contains("::error file=examples/deployments.yaml,line="));
  CHECK_THAT(fails.out, Catch::Contains("llama-8b-long-context"));
  CHECK_THAT(read_file(dir.file("summary.md")), Catch::StartsWith("### kvplan check"));

  TempDir other;
  Shell passes = run_action({{"files", "examples/k8s/vllm-deployment.yaml"}, {"kvplan", KVPLAN_BINARY},
                             {"junit", other.file("kvplan.xml")}},
                            other);
  INFO(passes.out);
  CHECK(passes.exit_code == 0);
  CHECK_THAT(read_file(other.file("kvplan.xml")), Catch::Contains("<testcase name=\"llama-8b-chat\""));
}

TEST_CASE("the pre-commit hook's command checks the files it is given", "[check]") {
  const std::vector<TreeDocument> docs = read_yaml_documents(read_file(source_path(".pre-commit-hooks.yaml")), "hooks");
  REQUIRE(docs.size() == 1);
  const nlohmann::json& hook = docs[0].value.at(0);
  CHECK(hook["id"] == "kvplan-check");
  CHECK(hook["language"] == "system");
  const std::regex files(hook["files"].get<std::string>());
  CHECK(std::regex_search("examples/deployments.yaml", files));
  CHECK(std::regex_search("deploy/kvplan.json", files));
  CHECK_FALSE(std::regex_search("examples/k8s/sglang-statefulset.yaml", files));
  // pre-commit (not in Debian 12 or npm) runs `entry args files` with the kvplan on PATH.
  TempDir dir;
  fs::create_directories(dir.file("bin"));
  fs::create_symlink(KVPLAN_BINARY, dir.file("bin/kvplan"));
  const std::string entry = hook["entry"].get<std::string>();
  const Shell fits = shell("cd " + sh_quote(source_path("")) + " && PATH=" + sh_quote(dir.file("bin")) + ":/usr/bin:/bin " +
                           entry + " examples/deployments.json");
  INFO(fits.out);
  CHECK(fits.exit_code == 0);
  const Shell fails = shell("cd " + sh_quote(source_path("")) + " && PATH=" + sh_quote(dir.file("bin")) + ":/usr/bin:/bin " +
                            entry + " examples/deployments.yaml");
  CHECK(fails.exit_code == 1);
}

TEST_CASE("the container holds the static binary alone, and it runs there", "[check]") {
  const std::string recipe = read_file(source_path("packaging/Containerfile"));
  const std::size_t last_from = recipe.rfind("\nFROM ");
  REQUIRE(last_from != std::string::npos);
  CHECK(recipe.compare(last_from, 13, "\nFROM scratch") == 0);
  CHECK_THAT(recipe.substr(last_from), Catch::Contains("COPY --from=build /build/kvplan /kvplan"));
  CHECK_THAT(recipe, Catch::Contains("libyaml-cpp-dev"));
  // FROM scratch has no loader and no libraries: the binary needs neither (not in sanitizer
  // builds, whose runtimes are shared).
  const Shell headers = shell("readelf -l -d " + sh_quote(KVPLAN_BINARY));
  REQUIRE(headers.exit_code == 0);
  if (headers.out.find("NEEDED") != std::string::npos) {
    WARN("kvplan is linked dynamically in this build (sanitizers): the container check is for the release build");
    return;
  }
  CHECK(headers.out.find("INTERP") == std::string::npos);
  // As in the image: no environment, no files but the ones given.
  TempDir dir;
  const Shell run = shell("cd " + sh_quote(dir.file("")) + " && env -i " + sh_quote(KVPLAN_BINARY) +
                          " check --cmd 'llama-server -m qwen3-8b -c 32768 -ctk q8_0 -ctv q8_0 -np 4 -fa on' --gpu 4090");
  INFO(run.out);
  CHECK(run.exit_code == 0);
  CHECK_THAT(run.out, Catch::Contains("✅ fits"));
}

TEST_CASE("the JUnit report validates against the JUnit schema", "[check]") {
  if (shell("command -v xmllint").exit_code != 0) FAIL("xmllint is missing: apt-get install libxml2-utils");
  TempDir dir;
  const std::string report = dir.file("report.xml");
  // Every kind of testcase: fits, no fit (failure), invalid and unsupported (error), tight.
  const std::string extra = dir.file("extra.yaml");
  std::ofstream(extra) << "- {name: 'bad <&> \"name\"', model: llama3.1-8b, gpu: h100, ctx: x}\n"
                          "- {name: unknown-flag, gpu: h100, command: vllm serve llama3.1-8b --cpu-offload-gb 4}\n"
                          "- {name: tight, model: llama3.1-8b, gpu: 4090, ctx: 32768, kv_dtype: fp16, margin: 20%}\n";
  const Shell run = shell(sh_quote(KVPLAN_BINARY) + " check --format junit --output " + sh_quote(report) + " " +
                          sh_quote(source_path("examples/deployments.yaml")) + " " + sh_quote(extra));
  CHECK(run.exit_code == 2);
  const std::string xml = read_file(report);
  CHECK_THAT(xml, Catch::Contains("<failure message="));
  CHECK_THAT(xml, Catch::Contains("<error message="));
  CHECK_THAT(xml, Catch::Contains("bad &lt;&amp;&gt; &quot;name&quot;"));
  const Shell valid = shell("xmllint --noout --schema " + sh_quote(source_path("tests/junit/junit.xsd")) + " " + sh_quote(report));
  INFO(valid.out);
  CHECK(valid.exit_code == 0);
  // The schema is not a rubber stamp: a testcase without a name is refused.
  std::ofstream(dir.file("broken.xml")) << "<testsuites><testsuite name=\"s\" tests=\"1\"><testcase/></testsuite></testsuites>\n";
  CHECK(shell("xmllint --noout --schema " + sh_quote(source_path("tests/junit/junit.xsd")) + " " + sh_quote(dir.file("broken.xml")))
            .exit_code != 0);
}

}  // namespace kvplan
