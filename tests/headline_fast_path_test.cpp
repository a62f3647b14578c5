// The headline fast path (src/cli/headline_fast_path.cpp) against the full command line: for every
// line the fast path takes, its stdout, stderr and exit code are run_cli's, byte for byte. run_cli
// never takes the fast path itself (main() tries it first), so both run here in-process: every
// doc example, each flag in each spelling, bad values, repeats, unknown flags, and random lines.

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "cli/cli.h"
#include "cli/headline_fast_path.h"
#include "support/run_binary.h"

namespace fs = std::filesystem;

namespace {

struct Outcome {
  int code = -1;
  std::string out;
  std::string err;
};

std::vector<const char*> argv_of(const std::vector<std::string>& words) {
  std::vector<const char*> argv{"kvplan"};
  for (const std::string& word : words) argv.push_back(word.c_str());
  return argv;
}

std::optional<Outcome> fast(const std::vector<std::string>& words, const kvplan::Terminal& terminal) {
  const std::vector<const char*> argv = argv_of(words);
  std::ostringstream out, err;
  const std::optional<int> code =
      kvplan::run_headline_fast_path(static_cast<int>(argv.size()), argv.data(), out, err, terminal);
  if (!code) {
    CHECK(out.str().empty());  // a line left to run_cli has written nothing
    CHECK(err.str().empty());
    return std::nullopt;
  }
  return Outcome{*code, out.str(), err.str()};
}

Outcome full(const std::vector<std::string>& words, const kvplan::Terminal& terminal) {
  const std::vector<const char*> argv = argv_of(words);
  std::ostringstream out, err;
  const int code = kvplan::run_cli(static_cast<int>(argv.size()), argv.data(), out, err, terminal);
  return {code, out.str(), err.str()};
}

std::string joined(const std::vector<std::string>& words) {
  std::string line = "kvplan";
  for (const std::string& word : words) line += " [" + word + "]";
  return line;
}

/// Compares the two paths on `words`; true when the fast path took the line.
bool same_as_full(const std::vector<std::string>& words, const kvplan::Terminal& terminal = {}) {
  INFO(joined(words));
  const std::optional<Outcome> quick = fast(words, terminal);
  if (!quick) return false;
  const Outcome slow = full(words, terminal);
  CHECK(quick->code == slow.code);
  CHECK(quick->out == slow.out);
  CHECK(quick->err == slow.err);
  return true;
}

std::vector<std::string> words_of(const std::string& line) {
  std::vector<std::string> words;
  std::istringstream in(line);
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

/// Every `kvplan ...` line in a code block of the README, HACKING.md and docs/, as words; lines
/// the shell would do more with (quotes, pipes, redirection, variables) are left out.
std::vector<std::vector<std::string>> doc_lines() {
  std::vector<std::string> files{"README.md", "HACKING.md"};
  for (const auto& entry : fs::recursive_directory_iterator(kvplan::testing::source_path("docs")))
    if (entry.path().extension() == ".md") files.push_back(fs::relative(entry.path(), kvplan::testing::source_path("")).string());
  std::vector<std::vector<std::string>> lines;
  for (const std::string& file : files) {
    std::istringstream text(kvplan::testing::read_file(kvplan::testing::source_path(file)));
    bool in_block = false;
    for (std::string line; std::getline(text, line);) {
      if (line.rfind("```", 0) == 0) in_block = !in_block;
      if (!in_block) continue;
      if (line.rfind("$ ", 0) == 0) line = line.substr(2);
      if (line.rfind("kvplan ", 0) != 0) continue;
      if (const std::size_t comment = line.find(" #"); comment != std::string::npos) line.resize(comment);
      if (line.find_first_of("'\"|<>$\\&;`*") != std::string::npos) continue;
      std::vector<std::string> words = words_of(line);
      words.erase(words.begin());
      lines.push_back(words);
    }
  }
  return lines;
}

/// Runs the block with the source tree as the working folder, as the docs' paths expect.
struct InSourceTree {
  fs::path before = fs::current_path();
  InSourceTree() { fs::current_path(kvplan::testing::source_path("")); }
  ~InSourceTree() { fs::current_path(before); }
};

}  // namespace

TEST_CASE("the fast path takes the headline forms and leaves every other line", "[fastpath]") {
  using V = std::vector<std::string>;
  const auto takes = [](const V& words) { return kvplan::read_headline_flags(static_cast<int>(argv_of(words).size()), argv_of(words).data()).has_value(); };
  CHECK(takes({"--model", "llama3.1-8b", "--ctx", "128k", "--gpu", "4090"}));
  CHECK(takes({"--model=llama3.1-8b", "--ctx=128k", "--gpu=4090", "--kv-dtype=fp8", "--batch=2", "--format=json"}));
  CHECK(takes({"-m", "llama3.1-8b", "-c", "128k", "-g", "4090", "-k", "fp8", "-b", "2", "-f", "csv", "-q"}));
  CHECK(takes({"--gpu", "4090", "--check", "--wide", "--no-color", "--quiet"}));  // --model missing: run_plan says so
  CHECK_FALSE(takes({}));
  CHECK_FALSE(takes({"--help"}));
  CHECK_FALSE(takes({"--version"}));
  CHECK_FALSE(takes({"models"}));
  CHECK_FALSE(takes({"--model", "llama3.1-8b", "--gpu", "auto"}));
  CHECK_FALSE(takes({"--model", "llama3.1-8b", "--gpu", "4090", "--runtime", "vllm"}));
  CHECK_FALSE(takes({"--model", "llama3.1-8b", "--gpu", "4090", "--ctx", "8k", "--ctx", "16k"}));  // repeated
  CHECK_FALSE(takes({"--model", "llama3.1-8b", "--gpu", "4090", "--check", "--check"}));
  CHECK_FALSE(takes({"--model", "llama3.1-8b", "--gpu"}));       // no value
  CHECK_FALSE(takes({"--model", "llama3.1-8b", "--gpu="}));      // an empty one
  CHECK_FALSE(takes({"--model", "--gpu", "4090"}));              // a flag as the value
  CHECK_FALSE(takes({"--model", "llama3.1-8b", "--gpu", "4090", "extra"}));
  CHECK_FALSE(takes({"--model", "llama3.1-8b", "--gpu", "4090", "--"}));
  CHECK_FALSE(takes({"-mllama3.1-8b", "--gpu", "4090"}));       // short flags only as `-m value`
  CHECK_FALSE(takes({"-m=llama3.1-8b", "--gpu", "4090"}));
  CHECK_FALSE(takes({"--model", "llama3.1-8b", "--gpu", "4090", "--check=true"}));
  CHECK_FALSE(takes({"--model", "llama3.1-8b", "--gpu", "4090", "--kv-dtpye", "fp8"}));
  CHECK_FALSE(takes({"--model", "llama3.1-8b", "--gpu", "4090", "-ctk", "q8_0"}));
}

TEST_CASE("the fast path leaves a line naming any subcommand to run_cli", "[fastpath]") {
  // run_cli reads a subcommand's name as the subcommand even as a flag's value: `--model models`
  // is "--gpu: unknown flag ... (see kvplan models --help)" there, so the fast path must not take
  // it. Every subcommand --help lists, and check.
  std::ostringstream help, err;
  const char* argv[] = {"kvplan", "--help"};
  REQUIRE(kvplan::run_cli(2, argv, help, err, kvplan::Terminal{}) == 0);
  const std::string text = help.str();
  const std::size_t start = text.find("\nSubcommands:\n");
  REQUIRE(start != std::string::npos);
  std::istringstream lines(text.substr(start + 14));
  std::vector<std::string> names{"check"};
  for (std::string line; std::getline(lines, line) && line.rfind("  ", 0) == 0;) names.push_back(words_of(line).front());
  CHECK(names.size() == 10);  // models gpus spec max sweep explain advise plot fit, and check
  for (const std::string& name : names) {
    INFO(name);
    const std::vector<std::string> line{"--model", name, "--gpu", "4090"};
    CHECK_FALSE(kvplan::read_headline_flags(static_cast<int>(argv_of(line).size()), argv_of(line).data()));
  }
}

TEST_CASE("the fast path prints what run_cli prints for every doc example it takes", "[fastpath]") {
  const InSourceTree here;
  int taken = 0;
  for (const std::vector<std::string>& words : doc_lines())
    if (same_as_full(words)) ++taken;
  // The README's and docs' headline examples (kvplan --model llama3.1-8b --ctx 128k --gpu 4090 ...).
  INFO(taken << " doc lines taken by the fast path");
  CHECK(taken >= 10);
}

TEST_CASE("the fast path prints what run_cli prints, flag by flag and for bad input", "[fastpath]") {
  using V = std::vector<std::string>;
  const V lines[] = {
      {"--model", "llama3.1-8b", "--ctx", "128k", "--gpu", "4090"},
      {"--model=llama3.1-8b", "--ctx=128k", "--gpu=4090"},
      {"-m", "llama3.1-8b", "-c", "128k", "-g", "4090"},
      {"--model", "qwen3-8b", "--ctx", "32k,64k,128k", "--gpu", "24GiB", "--kv-dtype", "fp16,fp8,int4"},
      {"--model", "qwen3-8b", "--ctx", "100000", "--gpu", "24GiB", "-k", "fp16,fp8,int4", "--format", "json"},
      {"--model", "llama3.1-8b", "--ctx", "64k", "--gpu", "4090", "--kv-dtype", "fp16", "--check"},
      {"--model", "llama3.1-8b", "--ctx", "8k", "--gpu", "4090", "--kv-dtype", "fp16", "--check"},
      {"--model", "llama3.1-8b", "--ctx", "32k", "--gpu", "2x4090", "--batch", "8", "-f", "csv"},
      {"--model", "llama3.1-8b", "--ctx", "32k", "--gpu", "h100", "-b", "4", "--format=markdown", "-q"},
      {"--model", "llama3.1-8b", "--ctx", "32k", "--gpu", "a100", "--wide", "--no-color", "--quiet"},
      {"--model", "gemma3-27b", "--gpu", "5090+3090"},
      {"--model", "llama3.1-8b", "--gpu", "4090"},
      {"--gpu", "4090"},                                       // --model is required
      {"--model", "llama3.1-8b"},                              // --gpu is required
      {"--model", "nonesuch", "--gpu", "4090"},                // did you mean
      {"--model", "llama3.1-8b", "--gpu", "4091"},
      {"--model", "llama3.1-8b", "--gpu", "24"},               // a number without its unit
      {"--model", "llama3.1-8b", "--gpu", "4090", "--ctx", "0"},
      {"--model", "llama3.1-8b", "--gpu", "4090", "--ctx", "32k,,64k"},
      {"--model", "llama3.1-8b", "--gpu", "4090", "--ctx", "99999999999999999999999"},
      {"--model", "llama3.1-8b", "--gpu", "4090", "--kv-dtype", "fp7"},
      {"--model", "llama3.1-8b", "--gpu", "4090", "--batch", "0"},
      {"--model", "llama3.1-8b", "--gpu", "4090", "--batch", "1e3"},
      {"--model", "llama3.1-8b", "--gpu", "4090", "--format", "xml"},
      {"--model", "./no/such/config.json", "--gpu", "4090"},
      {"--model", "tests", "--gpu", "4090"},                   // a folder without a config.json
  };
  const InSourceTree here;
  for (const V& words : lines) {
    CHECK(same_as_full(words));
    CHECK(same_as_full(words, kvplan::Terminal{true, false, 80}));  // colour, wrapped to 80 columns
    CHECK(same_as_full(words, kvplan::Terminal{true, true, 200}));  // NO_COLOR
  }
}

TEST_CASE("the fast path prints what run_cli prints on random lines", "[fastpath]") {
  // Lines drawn from flags, values and mistakes: whatever the fast path takes must match. Most
  // steps are a flag and a value, so that many lines are ones the fast path takes.
  const std::vector<std::string> flags = {"--model", "-m", "--gpu", "-g", "--ctx", "-c", "--kv-dtype", "-k",
                                          "--batch", "-b", "--format", "-f"};
  const std::vector<std::string> values = {"llama3.1-8b", "qwen3-8b", "nonesuch", "4090", "24GiB", "24", "h100",
                                           "2x4090", "a100", "128k", "32k,64k", "0", "fp8", "fp16,int4", "bogus",
                                           "4", "json", "csv", "markdown", "xml", "auto", "1M", "models", "fit"};
  const std::vector<std::string> others = {"--check", "--quiet", "-q", "--wide", "--no-color", "--model=llama3.1-8b",
                                           "--gpu=4090", "--gpu=", "--ctx=8k", "--format=markdown", "--help", "models",
                                           "--", "--runtime", "vllm", "-x", "--kv-dtpye", "--speed", "-tp", "2"};
  std::mt19937 random(20261203);
  const auto pick = [&](const std::vector<std::string>& from) { return from[random() % from.size()]; };
  const InSourceTree here;
  int taken = 0;
  for (int i = 0; i < 1500; ++i) {
    std::vector<std::string> words;
    const std::size_t steps = 1 + random() % 5;
    for (std::size_t step = 0; step < steps; ++step) {
      if (random() % 4 != 0) {
        words.push_back(pick(flags));
        words.push_back(pick(values));
      } else {
        words.push_back(pick(others));
      }
    }
    if (same_as_full(words)) ++taken;
  }
  INFO(taken << " of 1500 lines taken by the fast path");
  CHECK(taken >= 300);
}
