#pragma once
// What the engines' explanations share: resolving the model and the card, and building a row
// from the engine's printed figures and kvplan's bytes. Internal to src/explain/.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

/// A memory component: the engine's figures (summed; their printed rounding summed too) beside
/// kvplan's bytes. `exact_rule`: kvplan's figure is exact, so it must fall in the printed band.
Reconciled memory_row(std::string component, std::string key, std::vector<const logs::LogFact*> facts,
                      std::optional<std::uint64_t> kvplan_bytes, bool exact_rule, std::string rule);

/// `bytes` in `unit` ("GiB", "MiB", "GB") with `decimals` places: "58.11 GiB".
std::string in_unit(std::uint64_t bytes, std::string_view unit, int decimals);
/// The bytes of one `unit`; 0 for a unit that is not a memory unit.
std::uint64_t unit_bytes(std::string_view unit);
/// Decimal places of a printed number ("58.11" -> 2).
int decimals_of(std::string_view printed);

}  // namespace kvplan::explain_parts
