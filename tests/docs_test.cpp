// Every kvplan command the README and docs/ show runs here, against the built binary, and where
// they show its output, the output is exactly what the binary prints. The docs cannot drift.
//
// In a fenced code block:
//   $ kvplan ARGS            a command; the lines up to the next "$ " or the block's end are its
//                            exact stdout ("..." on a line of its own skips any lines)
//   kvplan ARGS [# comment]  a command that must succeed; "# exit N" in the comment: must exit N
// Commands run through /bin/sh in a scratch folder where tests/, models/ and examples/ are the
// repository's, one block after another (a file a command writes is there for the next one), with
// the built kvplan first on PATH. A line whose command names a file placeholder (<...>) is skipped.

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "support/run_binary.h"
#include "support/temp_dir.h"
#include "support/text_lines.h"

namespace fs = std::filesystem;
using kvplan::testing::lines_of;
using kvplan::testing::read_file;
using kvplan::testing::source_path;

namespace {

struct Example {
  std::string file;
  std::size_t line = 0;
  std::string command;     ///< after "kvplan "
  bool shows_output = false;
  std::vector<std::string> output;
  int exit_code = 0;
  std::size_t output_line = 0;  ///< index of the first output line in the file
};


std::vector<Example> examples_in(const std::string& relative) {
  const std::vector<std::string> lines = lines_of(read_file(source_path(relative)));
  std::vector<Example> found;
  bool in_block = false;
  Example* open = nullptr;  // a "$ kvplan" example still collecting its output
  static const std::regex exit_comment(R"(#\s*exit\s+(\d+))");
  // A command continued with a trailing backslash is one command.
  const auto joined = [&](std::size_t& i) {
    std::string command = lines[i];
    while (!command.empty() && command.back() == '\\' && i + 1 < lines.size()) {
      command.pop_back();
      const std::string& next = lines[++i];
      command += next.substr(std::min(next.find_first_not_of(' '), next.size()));
    }
    return command;
  };
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::size_t first = i;
    const std::string line = lines[i].rfind("```", 0) == 0 || !in_block || open ? lines[i] : joined(i);
    if (line.rfind("```", 0) == 0) {
      in_block = !in_block;
      open = nullptr;
      continue;
    }
    if (!in_block) continue;
    if (line.rfind("$ ", 0) == 0) {
      open = nullptr;
      if (line.rfind("$ kvplan ", 0) != 0 && line != "$ kvplan") continue;
      found.push_back({relative, first + 1, line.substr(8), true, {}, 0, i + 1});
      open = &found.back();
      continue;
    }
    if (open) {
      open->output.push_back(line);
      continue;
    }
    if (line.rfind("kvplan ", 0) == 0) {
      Example example{relative, first + 1, line.substr(7), false, {}, 0};
      std::smatch match;
      if (std::regex_search(example.command, match, exit_comment)) example.exit_code = std::stoi(match[1]);
      found.push_back(example);
    }
  }
  return found;
}

std::vector<std::string> documents() {
  std::vector<std::string> files{"README.md", "HACKING.md"};
  for (const auto& entry : fs::recursive_directory_iterator(source_path("docs")))
    if (entry.path().extension() == ".md")
      files.push_back(fs::relative(entry.path(), source_path("")).string());
  std::sort(files.begin() + 2, files.end());
  return files;
}

/// "..." matches any run of lines; every other line must be equal.
bool matches(const std::vector<std::string>& expected, std::size_t e, const std::vector<std::string>& actual,
             std::size_t a) {
  if (e == expected.size()) return a == actual.size();
  if (expected[e] == "...") {
    for (std::size_t skip = a; skip <= actual.size(); ++skip)
      if (matches(expected, e + 1, actual, skip)) return true;
    return false;
  }
  return a < actual.size() && expected[e] == actual[a] && matches(expected, e + 1, actual, a + 1);
}

}  // namespace

TEST_CASE("every command in the README and docs runs, and shows its real output", "[docs]") {
  kvplan::testing::TempDir scratch("kvplan_docs");
  const fs::path work = scratch.file("work");
  fs::create_directories(work / "bin");
  for (const char* shared : {"tests", "models", "examples", "gpus", "schema"})
    if (fs::exists(source_path(shared))) fs::create_directory_symlink(source_path(shared), work / shared);
  fs::create_symlink(KVPLAN_BINARY, work / "bin" / "kvplan");

  // The Hugging Face cache the examples see is tests/fixtures/hub, never the machine's.
  // KVPLAN_UPDATE_GOLDEN=1 writes the real output into examples that show a whole output (not
  // those with "..."), as for the golden files; review the diff.
  const bool update = std::getenv("KVPLAN_UPDATE_GOLDEN") != nullptr;
  std::size_t commands = 0;
  for (const std::string& document : documents()) {
    std::vector<std::string> rewritten = lines_of(read_file(source_path(document)));
    std::vector<std::pair<const Example*, std::vector<std::string>>> updates;  // applied last to first
    const std::vector<Example> examples = examples_in(document);
    for (const Example& example : examples) {
      if (example.command.find('<') != std::string::npos && example.command.find("< ") == std::string::npos)
        continue;  // a placeholder such as <model.gguf>
      INFO(example.file << ":" << example.line << ": kvplan " << example.command);
      const std::string shell = "cd '" + work.string() + "' && env -u NO_COLOR -u HF_HOME PATH='" + (work / "bin").string() +
                                ":/usr/bin:/bin' COLUMNS=100 HF_HUB_CACHE=tests/fixtures/hub sh -c 'kvplan " +
                                std::regex_replace(example.command, std::regex("'"), "'\\''") + "' 2>/dev/null";
      FILE* pipe = popen(shell.c_str(), "r");
      REQUIRE(pipe != nullptr);
      std::string out;
      char buffer[4096];
      std::size_t n = 0;
      while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
      const int status = pclose(pipe);
      const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
      ++commands;
      if (example.shows_output) {
        std::vector<std::string> expected = example.output;
        while (!expected.empty() && expected.back().empty()) expected.pop_back();
        std::vector<std::string> actual = lines_of(out);
        while (!actual.empty() && actual.back().empty()) actual.pop_back();
        INFO("printed:\n" << out);
        const bool partial = std::find(expected.begin(), expected.end(), "...") != expected.end();
        if (update && !partial) {
          updates.emplace_back(&example, actual);
          continue;
        }
        CHECK(matches(expected, 0, actual, 0));
        CHECK(code <= 1);  // an example may show a row that does not fit (--check: 1)
      } else {
        CHECK(code == example.exit_code);
      }
    }
    if (update && !updates.empty()) {
      for (auto it = updates.rbegin(); it != updates.rend(); ++it) {
        const Example& example = *it->first;
        std::size_t shown = example.output.size();
        while (shown > 0 && example.output[shown - 1].empty()) --shown;
        const auto from = rewritten.begin() + static_cast<std::ptrdiff_t>(example.output_line);
        rewritten.erase(from, from + static_cast<std::ptrdiff_t>(shown));
        rewritten.insert(rewritten.begin() + static_cast<std::ptrdiff_t>(example.output_line), it->second.begin(),
                         it->second.end());
      }
      std::ofstream file(source_path(document), std::ios::binary);
      for (const std::string& line : rewritten) file << line << "\n";
    }
  }
  CHECK(commands > 30);  // the docs show the tool: if this drops, the parser broke
}
