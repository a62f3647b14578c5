#include "cli/engine_flags.h"

#include <algorithm>

#include <CLI/CLI.hpp>

#include "cli/arguments.h"
#include "cli/cli.h"
#include "engines/core/profile.h"

namespace kvplan {

void EngineFlags::add_to(CLI::App& app, const EngineEntry* runtime) {
  for (const EngineEntry& engine : engines()) {
    if (runtime && &engine != runtime) continue;
    for (const OptionSpec& spec : engine.options) {
      const std::string name(spec.name);
      if (values_.count(name) || switches_.count(name)) continue;  // declared by an earlier engine too
      std::string names = "--" + name;
      for (const std::string& other : split_words(spec.spellings))
        if (other.rfind("--", 0) == 0) names += "," + other;
      if (spec.value_name.empty()) {
        app.add_flag(names, switches_[name], std::string(spec.help))->group(std::string(engine.options_title));
      } else {
        app.add_option(names, values_[name], std::string(spec.help))
            ->type_name(std::string(spec.value_name))
            ->group(std::string(engine.options_title));
      }
    }
  }
}

std::vector<EngineOption> EngineFlags::options(const CLI::App& app, const Environment& env,
                                               const EngineEntry* runtime) const {
  std::vector<EngineOption> options;
  for (const EngineEntry& engine : engines()) {
    // Only registered options can have been given, and only the runtime's read the environment.
    if (runtime && &engine != runtime) continue;
    for (const OptionSpec& spec : engine.options) {
      const std::string name(spec.name);
      if (std::any_of(options.begin(), options.end(), [&](const EngineOption& o) { return o.name == name; })) continue;
      const std::string flag = "--" + name;
      const bool given = app.get_option_no_throw(flag) != nullptr && app.count(flag) > 0;
      if (given) {
        // Given more than once (a list such as -c 8k -c 16k): one comma-separated value.
        std::string joined;
        if (const auto value = values_.find(name); value != values_.end())
          for (const std::string& part : value->second) joined += (joined.empty() ? "" : ",") + part;
        options.push_back({name, joined, flag});
        continue;
      }
      // An engine's environment variables speak only to that engine: VLLM_ALLOW_LONG_MAX_MODEL_LEN
      // in the shell does not make a generic plan refuse a vLLM setting.
      if (spec.env.empty() || &engine != runtime) continue;
      if (const std::optional<std::string> from_env = env.get(std::string(spec.env)); from_env && !from_env->empty()) {
        if (spec.value_name.empty() && (*from_env == "0" || *from_env == "false" || *from_env == "False")) continue;
        options.push_back({name, *from_env, std::string(spec.env)});
      }
    }
  }
  return options;
}

}  // namespace kvplan
