// Model-spec JSON (parse_model_spec, what `--model my-model.json` reads). A spec that parses must
// round-trip through to_spec_json unchanged, describe itself and plan without crashing; a bad one
// must be a kvplan::Error with a one-line message.

#include <nlohmann/json.hpp>

#include "fuzz_support.h"
#include "kvplan/plan.h"
#include "kvplan/error.h"
#include "kvplan/report.h"
#include "loaders/spec_json.h"

using namespace kvplan;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ModelSpec spec;
  try {
    spec = parse_model_spec(fuzz::as_text(data, size), "fuzz.json");
  } catch (const Error& error) {
    fuzz::require_message(error.what(), "parse_model_spec");
    return 0;
  }

  const nlohmann::json document = to_spec_json(spec);
  ModelSpec again;
  try {
    again = model_spec_from_json(document, "fuzz.json");
  } catch (const Error& error) {
    fuzz::finding(std::string("a parsed spec does not parse again from to_spec_json: ") + error.what());
  }
  fuzz::require(to_spec_json(again) == document, "to_spec_json does not round-trip: " + document.dump());
  fuzz::require(describe_layers(again) == describe_layers(spec), "describe_layers changed in the round trip");

  const Dtype& fp16 = parse_kv_dtype("fp16", *spec.weight_dtype);
  Report report;
  report.model = &spec;
  report.gpus.resize(1);
  report.gpus[0].id = "fuzz";
  report.gpus[0].name = "fuzz";
  report.gpus[0].memory_bytes = 80ull << 30;
  report.gpus[0].memory_basis = "given";
  PlanRequest request;
  request.contexts = {1, 4096, 131072};
  request.caches = {{&fp16, &fp16}};
  try {
    report.plan = make_plan(spec, report.gpus, request);
    const std::string json = format_json(report);
    const std::string table = format_table(report);
    fuzz::require(!json.empty() && !table.empty(), "empty output");
  } catch (const Error& error) {
    fuzz::require_message(error.what(), "make_plan");  // e.g. a size past 64 bits
  }
  return 0;
}
