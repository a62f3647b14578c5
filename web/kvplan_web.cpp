// The WebAssembly module's entry: the page (or node) gives kvplan's command-line words as a JSON
// array of strings and gets back what the CLI would print on stdout and stderr, and its exit code.
// It calls run_cli, the very function the kvplan binary's main() calls, so a link in the CLI's
// flag names gives the CLI's answer, byte for byte.

#include <exception>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include <emscripten/emscripten.h>
#include <nlohmann/json.hpp>

#include "cli/cli.h"

namespace {

// The last run's output, kept until the next run so the page can read it through a pointer.
std::string last_out;
std::string last_err;

int run(const char* words_json) {
  const nlohmann::json words = nlohmann::json::parse(words_json);
  std::vector<std::string> arguments{"kvplan"};
  for (const nlohmann::json& word : words) arguments.push_back(word.get<std::string>());
  std::vector<const char*> argv;
  for (const std::string& argument : arguments) argv.push_back(argument.c_str());
  argv.push_back(nullptr);

  std::ostringstream out;
  std::ostringstream err;
  // Not a terminal (no colour, no wrapping) and no environment: a page has no PATH, no
  // VLLM_*/OLLAMA_* variables; the engines' settings come as flags.
  const kvplan::Terminal terminal;
  const kvplan::Environment environment;
  const int code = kvplan::run_cli(static_cast<int>(arguments.size()), argv.data(), out, err, terminal, environment);
  last_out = out.str();
  last_err = err.str();
  return code;
}

}  // namespace

extern "C" {

/// Runs `kvplan WORDS...` for a JSON array of strings; returns the exit code (docs/cli.md).
EMSCRIPTEN_KEEPALIVE int kvplan_web_run(const char* words_json) {
  last_out.clear();
  last_err.clear();
  try {
    return run(words_json);
  } catch (const std::bad_alloc&) {
    last_err = "kvplan: error: out of memory\n";
    return 4;
  } catch (const std::exception& error) {
    // Only a malformed word list from the page itself lands here: run_cli reports its own errors.
    last_err = std::string("kvplan: error: ") + error.what() + "\n";
    return 2;
  }
}

/// What the last run printed on stdout (UTF-8, NUL-terminated, valid until the next run).
EMSCRIPTEN_KEEPALIVE const char* kvplan_web_out() { return last_out.c_str(); }

/// What the last run printed on stderr.
EMSCRIPTEN_KEEPALIVE const char* kvplan_web_err() { return last_err.c_str(); }

}  // extern "C"
