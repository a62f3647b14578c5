#pragma once
/// `kvplan explain`: an engine's startup log set beside kvplan's plan for the same settings,
/// component by component. The log is read by loaders/logs; the settings it recovered become a
/// PlanRequest for the engine's profile; make_plan prices it; each component then says whether
/// the engine's figure and kvplan's agree, by how much they differ, and which rule explains it.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "loaders/logs/engine_log.h"

namespace kvplan {

/// What the user adds to the log: a model kvplan can load and a card, when the log lacks them.
struct ExplainInputs {
  std::string model;  ///< --model: catalog id, alias, config.json, GGUF; empty: the log's own
  std::string gpu;    ///< --gpu: catalog name or size; empty: the log's own
  std::string source_name = "stdin";  ///< the file the log came from, for the report
};

enum class Agreement {
  exact,        ///< kvplan's figure is what the engine printed (within its printed rounding)
  estimate,     ///< kvplan estimates what the engine measures: the difference is the estimate's error
  differs,      ///< an exact rule disagrees with the engine: a setting kvplan did not see, or a bug
  engine_only,  ///< the engine printed it; kvplan has no separate figure for it
  not_in_log,   ///< kvplan has a figure; this log did not print the engine's
};
/// "exact", "estimate", "differs", "engine_only", "not_in_log"
std::string_view to_string(Agreement agreement);

/// One component of the comparison.
struct Reconciled {
  std::string component;            ///< "weights", "KV cache", "max concurrency", ...
  std::string key;                  ///< stable: "weights", "kv_cache", "max_concurrency"
  std::vector<logs::LogFact> from;  ///< the engine's lines behind its figure (several: a sum)
  std::string engine;               ///< as printed, or the sum in the engine's unit ("3090.00 MiB")
  std::string kvplan;               ///< kvplan's figure in the same unit; "" when it has none
  std::string difference;           ///< kvplan - engine in that unit ("+0.03 GiB"); "" when not compared
  /// Exact figures for JSON: bytes for memory, tokens or hundredths for the others.
  std::optional<std::uint64_t> engine_value, engine_low, engine_high, kvplan_value;
  std::string unit;                 ///< "bytes", "tokens", "x" (concurrency), "blocks"
  Agreement agreement = Agreement::engine_only;
  std::string rule;                 ///< which rule explains the figure or the difference
};

struct Explanation {
  logs::EngineLog log;
  std::string source_name;
  std::string runtime;           ///< kvplan's profile name: "vllm", "llama.cpp"; "" when none compares
  std::string model;             ///< what kvplan loaded ("llama3.1-8b", a path); "" when none
  std::string model_from;        ///< "--model", or the log line it was matched from
  std::string gpu;               ///< the card kvplan priced; "" when none
  std::string gpu_from;
  std::string command;           ///< the kvplan command that prices the same settings
  std::vector<Reconciled> rows;
  std::vector<std::string> notes;        ///< what was assumed or could not be compared, and why
  std::vector<std::string> not_found;    ///< lines the engine prints that this log did not have
};

/// Reads nothing: explains an already read log. Throws Error only for a --model or --gpu the user
/// gave that cannot be loaded; everything the log lacks becomes a note.
Explanation explain_log(logs::EngineLog log, const ExplainInputs& inputs);

}  // namespace kvplan
