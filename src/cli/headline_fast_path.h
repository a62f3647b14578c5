#pragma once
// The headline command (`kvplan --model llama3.1-8b --ctx 128k --gpu 4090`) without CLI11:
// setting up CLI11's ~30 options and subcommands was most of the command's own start-up
// (issue #10: at most 1.3x of /bin/true). A strict subset of the plain command's flags is read by
// hand; anything else, or any doubt, is left to the full command line (run_cli), so help, errors
// about the line itself, subcommands and engine flags stay exactly as they are. What is read
// runs through the same run_plan as run_cli's, so the output cannot differ.

#include <optional>
#include <ostream>

#include "cli/cli.h"
#include "cli/plan_command.h"

namespace kvplan {

/// The plain command's flags from a line that uses only --model/-m, --gpu/-g, --ctx/-c,
/// --kv-dtype/-k, --batch/-b, --format/-f (each once, as `--flag value` or `--flag=value`, the
/// value neither empty nor starting with '-'; short flags only as `-m value`) and the switches
/// --check, --quiet/-q, --wide, --no-color, each once. nullopt for anything else (no flag at all,
/// --gpu auto, a subcommand's name anywhere, a word in place of a flag, any other flag): run_cli
/// reads that line.
std::optional<PlanFlags> read_headline_flags(int argc, const char* const* argv);

/// Runs a line read_headline_flags takes, as run_cli would run it: the report on `out`, an error
/// as one line on `err`, the exit code. nullopt, having written nothing, for any other line.
std::optional<int> run_headline_fast_path(int argc, const char* const* argv, std::ostream& out, std::ostream& err,
                                          const Terminal& terminal);

}  // namespace kvplan
