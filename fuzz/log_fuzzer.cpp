// `kvplan explain`'s input: any bytes as an engine log. The reader must never throw, keep every
// fact within the log's lines and the line limit, and what it recognised must explain and format
// (both outputs) failing only with a kvplan::Error.

#include "explain/explain_report.h"
#include "explain/explanation.h"
#include "fuzz_support.h"
#include "loaders/logs/engine_log.h"

using namespace kvplan;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  logs::EngineLog log = logs::read_engine_log(text);
  fuzz::require(log.settings.size() + log.figures.size() <= logs::kMaxFacts, "more facts than the limit");
  for (const auto* facts : {&log.settings, &log.figures}) {
    for (const logs::LogFact& fact : *facts) {
      fuzz::require(fact.line >= 1 && fact.line <= log.lines, "a fact outside the log's lines");
      fuzz::require(fact.text.size() <= logs::kMaxLineChars, "a fact's text longer than the line limit");
      fuzz::require(!fact.value.empty(), "a fact without a value");
      if (const auto band = logs::byte_band(fact)) fuzz::require(band->low <= band->mid && band->mid <= band->high, "band order");
    }
  }
  if (log.empty()) return 0;
  try {
    const Explanation explanation = explain_log(std::move(log), ExplainInputs{});
    (void)format_explanation_text(explanation);
    (void)format_explanation_json(explanation);
  } catch (const Error& error) {
    fuzz::require_message(error.what(), "explain_log");
  }
  return 0;
}
