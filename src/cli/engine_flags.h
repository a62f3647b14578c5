#pragma once
// An engine's own flags (its OptionSpec list: vLLM's --max-num-seqs, SGLang's
// --mem-fraction-static, ...) on a command that plans: the plain command and kvplan advise
// register them the same way and read them back as the request's EngineOptions.

#include <map>
#include <string>
#include <vector>

#include "kvplan/plan.h"

namespace CLI {
class App;
}

namespace kvplan {

struct EngineEntry;
struct Environment;

class EngineFlags {
 public:
  /// One option group per engine on `app`, with the engine's own flags; only `runtime`'s when it
  /// is set: CLI11 checks every new option against all the others, and those checks were a third
  /// of the headline command's start-up (a foreign flag is still named: refuse_unknown_flags).
  void add_to(CLI::App& app, const EngineEntry* runtime);

  /// The engine options as the request carries them: given on `app`'s line, or from the
  /// environment variable the engine reads (OptionSpec::env) when not.
  std::vector<EngineOption> options(const CLI::App& app, const Environment& env, const EngineEntry* runtime) const;

 private:
  std::map<std::string, std::vector<std::string>> values_;
  std::map<std::string, bool> switches_;
};

}  // namespace kvplan
