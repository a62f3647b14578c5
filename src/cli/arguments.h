#pragma once
// The command line's handling of arguments before and after CLI11: engines' own short spellings,
// unknown flags with the closest known one, and output that must be written or fail loudly.

#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "kvplan/error.h"
#include "kvplan/model_spec.h"

namespace CLI {
class App;
}

namespace kvplan {

struct EngineEntry;

/// CLI11 takes no multi-letter short flags, so engines' spellings (llama.cpp's -ctk -ctv -np -ub
/// -fa -ngl -kvu, vLLM's -tp: OptionSpec::spellings) are rewritten to long names before parsing.
/// An engine's runtime_spellings (llama.cpp's -c and -b) take its meaning only with its --runtime on
/// the line; otherwise they stay kvplan's --ctx and --batch. Arguments after "--" are left alone.
/// An argument that is the value of the flag before it (`--gpu -tp`) is left alone: `takes_value`
/// says which flags take one.
std::vector<std::string> rewrite_engine_spellings(const std::vector<std::string>& args,
                                                  const std::function<bool(const std::string&)>& takes_value = {});

/// Throws for the first --flag (in the order typed) that neither the command nor its subcommand
/// has, naming the closest: "--kv-dtpye: unknown flag (did you mean --kv-dtype?)".
void refuse_unknown_flags(const CLI::App& app, const std::vector<std::string>& args);

/// The engine "--runtime X" (or "--runtime=X") names before "--"; nullptr when none does. With
/// `generic_if_none`, the generic engine then (what a plan without --runtime uses).
const EngineEntry* runtime_on_line(const std::vector<std::string>& args, bool generic_if_none = false);

/// True when the line asks for --help (or -h) before "--".
bool asks_for_help(const std::vector<std::string>& args);

/// Throws for a flag given an empty value (`--format ''`, `-ctk ''`): it meant the default
/// silently before; now it is exit 2 naming the flag.
void refuse_empty_values(const CLI::App& app);

/// "-tp --tp" -> {"-tp", "--tp"}.
std::vector<std::string> split_words(std::string_view text);

/// Messages can span lines; the contract is one line on stderr.
std::string one_line(std::string text);

/// True when the model's id, name or an alias holds `word`, ignoring case.
bool mentions(const ModelSpec& model, std::string_view word);

/// Output that could not be written: a full disk, a closed stdout. A closed pipe is quiet.
class OutputError : public Error {
 public:
  OutputError(const std::string& message, bool quiet) : Error(message, ExitCode::write_failed), quiet_(quiet) {}
  bool quiet() const { return quiet_; }

 private:
  bool quiet_;
};

/// Writes and flushes `text`; throws OutputError when the stream fails.
void write_output(std::ostream& out, std::string_view text);

}  // namespace kvplan
