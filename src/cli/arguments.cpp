#include "cli/arguments.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/cli.h"
#include "engines/core/profile.h"
#include "model/suggest.h"
#include "model/text.h"

namespace kvplan {

namespace {

/// An engine's spelling ("-ctk") and the long name it means ("--cache-type-k").
struct Spelling {
  std::string short_name;
  std::string long_name;
};

/// The engines that declare a flag ("--ram": llama.cpp and Ollama), for "--parallel is a llama.cpp
/// flag: add --runtime llama.cpp".
std::vector<const EngineEntry*> engines_declaring(std::string_view flag) {
  std::vector<const EngineEntry*> out;
  if (flag.rfind("--", 0) != 0) return out;
  for (const EngineEntry& engine : engines())
    for (const OptionSpec& spec : engine.options) {
      bool declares = spec.name == flag.substr(2);
      for (const std::string& word : split_words(spec.spellings)) declares = declares || word == flag;
      if (declares) {
        out.push_back(&engine);
        break;
      }
    }
  return out;
}

}  // namespace

bool asks_for_help(const std::vector<std::string>& args) {
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--") break;
    if (args[i] == "--help" || args[i] == "-h") return true;
  }
  return false;
}

const EngineEntry* runtime_on_line(const std::vector<std::string>& args, bool generic_if_none) {
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--") break;
    std::optional<std::string> name;
    if (args[i] == "--runtime" && i + 1 < args.size()) name = args[i + 1];
    else if (args[i].rfind("--runtime=", 0) == 0) name = args[i].substr(10);
    if (!name) continue;
    for (const EngineEntry& engine : engines()) {
      if (engine.name == *name) return &engine;
      for (const std::string& alias : split_words(engine.aliases))
        if (alias == *name) return &engine;
    }
    return nullptr;  // an unknown runtime: every engine's options, and make_plan names it
  }
  return generic_if_none ? &engines().front() : nullptr;
}

namespace {

/// `spelling` as typed ("-ctk", "-ctk=q8_0", and for one-letter flags "-c8192") in long form.
std::optional<std::string> rewrite_one(const std::string& arg, const Spelling& spelling) {
  const std::string& s = spelling.short_name;
  if (arg == s) return spelling.long_name;
  if (arg.size() > s.size() && arg.compare(0, s.size(), s) == 0) {
    if (arg[s.size()] == '=') return spelling.long_name + arg.substr(s.size());
    if (s.size() == 2) return spelling.long_name + "=" + arg.substr(2);  // -c8192
  }
  return std::nullopt;
}

/// Every --name an app (or subcommand) accepts.
std::vector<std::string> long_names(const CLI::App& app) {
  std::vector<std::string> names{"--help"};
  for (const CLI::Option* option : app.get_options())
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
  return names;
}

}  // namespace

std::optional<std::string> Environment::get(const std::string& name) const {
  const auto it = variables.find(name);
  if (it == variables.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> environment_names() {
  std::vector<std::string> names{"PATH"};  // --gpu auto finds nvidia-smi, rocm-smi or sysctl on it
  for (const EngineEntry& engine : engines())
    for (const OptionSpec& spec : engine.options)
      if (!spec.env.empty()) names.emplace_back(spec.env);
  return names;
}

std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> words;
  while (!text.empty()) {
    const std::size_t space = text.find(' ');
    if (space != 0) words.emplace_back(text.substr(0, space));
    if (space == std::string_view::npos) break;
    text.remove_prefix(space + 1);
  }
  return words;
}

std::vector<std::string> rewrite_engine_spellings(const std::vector<std::string>& args,
                                                  const std::function<bool(const std::string&)>& takes_value) {
  std::vector<Spelling> always;
  std::vector<Spelling> under_runtime;
  const EngineEntry* runtime = runtime_on_line(args);
  for (const EngineEntry& engine : engines()) {
    for (const OptionSpec& spec : engine.options) {
      const std::string long_name = "--" + std::string(spec.name);
      for (const std::string& word : split_words(spec.spellings))
        if (word.size() > 1 && word[0] == '-' && word[1] != '-') always.push_back({word, long_name});
      if (&engine == runtime)
        for (const std::string& word : split_words(spec.runtime_spellings)) under_runtime.push_back({word, long_name});
    }
  }
  std::vector<std::string> out;
  out.reserve(args.size());
  bool after_terminator = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const bool is_value = i > 1 && takes_value && args[i - 1].find('=') == std::string::npos && takes_value(out.back());
    if (i == 0 || after_terminator || is_value || arg.size() < 2 || arg[0] != '-' || arg[1] == '-') {
      after_terminator = after_terminator || arg == "--";
      out.push_back(arg);
      continue;
    }
    // Multi-letter spellings first, so that "-ctk" is never read as "-c" with the value "tk".
    std::optional<std::string> rewritten;
    for (const Spelling& s : always)
      if (!rewritten) rewritten = rewrite_one(arg, s);
    for (const Spelling& s : under_runtime)
      if (!rewritten) rewritten = rewrite_one(arg, s);
    out.push_back(rewritten.value_or(arg));
  }
  return out;
}

void refuse_unknown_flags(const CLI::App& app, const std::vector<std::string>& args) {
  const CLI::App* command = &app;
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") break;
    if (command == &app)
      for (const CLI::App* sub : app.get_subcommands({}))
        if (sub->get_name() == arg) command = sub;
    if (arg.size() < 3 || arg.rfind("--", 0) != 0) continue;
    const std::string name = arg.substr(0, arg.find('='));
    std::vector<std::string> known = long_names(*command);
    if (command == &app) known.emplace_back("--version");
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    // A subcommand that plans (kvplan max) takes the main command's flags too.
    if (command != &app && command->get_fallthrough()) {
      const std::vector<std::string> main_names = long_names(app);
      if (std::find(main_names.begin(), main_names.end(), name) != main_names.end()) continue;
    }
    if (const auto declaring = engines_declaring(name); !declaring.empty() && (command == &app || command->get_fallthrough())) {
      std::string owners(declaring.front()->display);
      std::string choices = fmt::format("--runtime {}", declaring.front()->name);
      for (std::size_t other = 1; other < declaring.size(); ++other) {
        const bool last = other + 1 == declaring.size();
        owners += fmt::format("{}{}", last ? " and " : ", ", declaring[other]->display);
        choices += fmt::format("{}--runtime {}", last ? " or " : ", ", declaring[other]->name);
      }
      throw Error(fmt::format("{} is a {} flag: add {}", name, owners, choices));
    }
    // A flag of the main command given to a subcommand that does not take it (kvplan advise --gpu)
    // is named as such, with the subcommand's nearest (--gpus); otherwise the suggestion may come
    // from both.
    if (command != &app) {
      const std::vector<std::string> main_names = long_names(app);
      if (std::find(main_names.begin(), main_names.end(), name) != main_names.end()) {
        const std::vector<std::string> own = closest_names(name, known, 1);
        throw Error(fmt::format("{}: not a flag of {} {}{} (see {} {} --help)", name, app.get_name(),
                                command->get_name(), own.empty() ? "" : fmt::format(" (did you mean {}?)", own.front()),
                                app.get_name(), command->get_name()));
      }
      known.insert(known.end(), main_names.begin(), main_names.end());
    }
    const std::vector<std::string> close = closest_names(name, known, 1);
    // The help to see: the app's own name ("kvplan", "kvplan check"), then the subcommand's.
    throw Error(fmt::format("{}: unknown flag{} (see {}{} --help)", one_line(name).substr(0, 80),
                            close.empty() ? "" : fmt::format(" (did you mean {}?)", close.front()), app.get_name(),
                            command == &app ? "" : " " + command->get_name()));
  }
}

void refuse_empty_values(const CLI::App& app) {
  std::vector<const CLI::App*> commands{&app};
  for (const CLI::App* sub : app.get_subcommands({})) commands.push_back(sub);
  for (const CLI::App* command : commands)
    for (const CLI::Option* option : command->get_options()) {
      if (option->count() == 0 || option->get_items_expected_min() == 0) continue;
      for (const std::string& value : option->results())
        if (value.empty())
          throw Error(fmt::format("{}: an empty value (give one, or leave the flag out)", option->get_name()));
    }
}

std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  while (!text.empty() && text.back() == ' ') text.pop_back();
  // Whatever a message quotes (a value, a key, a path) reaches the terminal escaped and bounded.
  return printable(shorten_words(text), 1000);
}

bool mentions(const ModelSpec& model, std::string_view word) {
  const std::string needle = ascii_lower(word);
  const auto has = [&](std::string_view text) { return ascii_lower(text).find(needle) != std::string::npos; };
  return has(model.id) || has(model.name) || std::any_of(model.aliases.begin(), model.aliases.end(), has);
}

void write_output(std::ostream& out, std::string_view text) {
  errno = 0;
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.flush();
  if (out) return;
  const int code = errno;
  if (code == EPIPE) throw OutputError("output pipe closed", true);
  throw OutputError(fmt::format("could not write the output: {}", code ? std::strerror(code) : "the stream failed"),
                    false);
}

}  // namespace kvplan
