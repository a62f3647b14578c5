#pragma once
// What the engines' explanations share: resolving the model and the card, and building a row
// from the engine's printed figures and kvplan's bytes. Internal to src/explain/.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engines/core/request_texts.h"
#include "explain/explanation.h"
#include "kvplan/gpu.h"
#include "kvplan/model_spec.h"

namespace kvplan::explain_parts {

/// The model kvplan prices: --model when given, else the first of `candidates` (names the log
/// printed, with the line they came from) that the built-in catalog knows. nullopt (and a note)
/// when none does.
struct NameCandidate {
  std::string name;
  const logs::LogFact* fact = nullptr;
};
std::optional<ModelSpec> resolve_model(const ExplainInputs& inputs, const std::vector<NameCandidate>& candidates,
                                       Explanation& out);

/// The cards: --gpu when given, else the card the log names (catalog name), else one of the
/// log's printed memory figures (`size_fact`) as a card of that size. Empty (and a note) when none.
std::vector<GpuSpec> resolve_gpus(const ExplainInputs& inputs, const logs::EngineLog& log, const logs::LogFact* size_fact,
                                  Explanation& out);

/// The log's settings on their way to an engine profile's request, and the `kvplan` command that
/// asks the same: every setting is added to both at once, so the command shown is the plan made.
class LogRequest {
 public:
  /// Starts "kvplan --runtime RUNTIME --model M --gpu G" with what `out` resolved.
  LogRequest(const logs::EngineLog& log, std::string_view runtime, const Explanation& out);
  /// The log's setting as printed; "" when the log has none.
  std::string value(std::string_view setting) const;
  /// An engine option (the profile's long name) shown as `flag value`; nothing when `value` is "".
  void option(std::string_view name, const std::string& value, std::string_view flag);
  /// An engine switch without a value.
  void flag(std::string_view name, std::string_view flag);
  /// The request these texts make for `model`, with `extra` options not shown in the command
  /// (the log's own figures fed back, at one end of their printed rounding).
  PlanRequest request(const ModelSpec& model, const std::vector<EngineOption>& extra = {}) const;

  PlanTexts texts;
  std::string command;

 private:
  const logs::EngineLog& log_;
};

/// A count (tokens, x in hundredths) beside kvplan's range [low, high] for it: exact when the
/// printed value falls inside, differs (by the nearest end) when not; not_in_log without `fact`.
Reconciled count_row(std::string component, std::string key, const logs::LogFact* fact, std::optional<std::uint64_t> low,
                     std::optional<std::uint64_t> high, std::string unit, std::string rule);

/// A memory component: the engine's figures (summed; their printed rounding summed too) beside
/// kvplan's bytes. `exact_rule`: kvplan's figure is exact, so it must fall in the printed band.
Reconciled memory_row(std::string component, std::string key, std::vector<const logs::LogFact*> facts,
                      std::optional<std::uint64_t> kvplan_bytes, bool exact_rule, std::string rule);

/// Adds `row` to the comparison unless neither the log nor kvplan has a figure for it.
void add_row(Explanation& out, Reconciled row);

/// `bytes` in `unit` ("GiB", "MiB", "GB") with `decimals` places: "58.11 GiB".
std::string in_unit(std::uint64_t bytes, std::string_view unit, int decimals);
/// The bytes of one `unit`; 0 for a unit that is not a memory unit.
std::uint64_t unit_bytes(std::string_view unit);
/// Decimal places of a printed number ("58.11" -> 2).
int decimals_of(std::string_view printed);

}  // namespace kvplan::explain_parts
