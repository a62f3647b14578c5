#include "cli/headline_fast_path.h"

#include <algorithm>
#include <string_view>

#include "cli/exit_for.h"
#include "engines/core/profile.h"

namespace kvplan {

namespace {

/// A flag that takes a value, as run_cli's CLI11 options spell it, and where it goes.
struct ValueFlag {
  std::string_view long_name;
  std::string_view short_name;
  std::string* single = nullptr;                ///< a one-value option
  std::vector<std::string>* list = nullptr;     ///< a list option (CLI11 keeps one item per use)
};

struct SwitchFlag {
  std::string_view long_name;
  std::string_view short_name;  ///< empty: none
  bool* value = nullptr;
};

/// run_cli's subcommands (and `check`, read before CLI11). run_cli treats such a word as the
/// subcommand wherever it stands, a flag's value included (`--model models`), so a line holding one
/// is left to it. tests/headline_fast_path_test.cpp checks this list against `kvplan --help`.
constexpr std::string_view kSubcommands[] = {"models", "gpus",   "spec", "max", "sweep",
                                             "explain", "advise", "plot", "fit", "check"};

}  // namespace

std::optional<PlanFlags> read_headline_flags(int argc, const char* const* argv) {
  // The generic engine has no flags of its own and reads no environment variable; should it gain
  // one, run_cli's EngineFlags must read the line.
  if (argc <= 1 || !engines().front().options.empty()) return std::nullopt;
  PlanFlags flags;
  PlanTexts& texts = flags.texts;
  const ValueFlag values[] = {
      {"--model", "-m", &flags.model, nullptr},  {"--gpu", "-g", &flags.gpu, nullptr},
      {"--ctx", "-c", nullptr, &texts.contexts}, {"--kv-dtype", "-k", nullptr, &texts.kv_dtypes},
      {"--batch", "-b", &texts.batch, nullptr},  {"--format", "-f", &flags.format, nullptr},
  };
  const SwitchFlag switches[] = {
      {"--check", "", &flags.check}, {"--quiet", "-q", &flags.quiet}, {"--wide", "", &flags.wide},
      {"--no-color", "", &flags.no_color},
  };
  std::vector<std::string_view> seen;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const std::size_t equals = arg.rfind("--", 0) == 0 ? arg.find('=') : std::string_view::npos;
    const std::string_view name = arg.substr(0, equals);
    const auto value_flag = std::find_if(std::begin(values), std::end(values), [&](const ValueFlag& flag) {
      return name == flag.long_name || (equals == std::string_view::npos && name == flag.short_name);
    });
    const auto switch_flag = std::find_if(std::begin(switches), std::end(switches), [&](const SwitchFlag& flag) {
      return equals == std::string_view::npos && (name == flag.long_name || (!flag.short_name.empty() && name == flag.short_name));
    });
    std::string_view key;
    if (value_flag != std::end(values)) {
      std::string_view value;
      if (equals != std::string_view::npos) {
        value = arg.substr(equals + 1);
      } else {
        if (i + 1 >= argc) return std::nullopt;
        value = argv[++i];
      }
      // An empty value or one that looks like a flag: CLI11 and refuse_empty_values say what is wrong.
      if (value.empty() || value.front() == '-') return std::nullopt;
      if (std::find(std::begin(kSubcommands), std::end(kSubcommands), value) != std::end(kSubcommands)) return std::nullopt;
      if (value_flag->single) *value_flag->single = std::string(value);
      else value_flag->list->emplace_back(value);
      key = value_flag->long_name;
    } else if (switch_flag != std::end(switches)) {
      *switch_flag->value = true;
      key = switch_flag->long_name;
    } else {
      return std::nullopt;  // any other flag, a subcommand, a stray word, "--", --help, --version
    }
    // Given twice: CLI11's own rules (a list grows, a single value is refused).
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) return std::nullopt;
    seen.push_back(key);
  }
  if (flags.gpu == "auto") return std::nullopt;  // this machine's cards: use_machine_gpus in run_cli
  return flags;
}

std::optional<int> run_headline_fast_path(int argc, const char* const* argv, std::ostream& out, std::ostream& err,
                                          const Terminal& terminal) {
  const std::optional<PlanFlags> flags = read_headline_flags(argc, argv);
  if (!flags) return std::nullopt;
  try {
    return run_plan(*flags, table_style(*flags, terminal), out);
  } catch (...) {
    return exit_for_run_error(std::current_exception(), err);
  }
}

}  // namespace kvplan
