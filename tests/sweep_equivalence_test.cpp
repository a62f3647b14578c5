// A sweep is a plan without the row limit: every row sweep_rows hands over must be the row
// make_plan settles for the same question, verdict, figures and sentences alike. Checked over a
// grid of engines x models x deployments x contexts x cache dtypes x budgets, each row compared
// as its whole JSON text.

#include <catch2/catch.hpp>

#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "kvplan/plan.h"
#include "kvplan/sweep.h"
#include "reports/row_json_writer.h"

using namespace kvplan;

namespace {

std::string json_of(const Row& row) {
  std::string out;
  append_row_json(out, row);
  return out;
}

std::vector<GpuSpec> deployment(const char* id, std::size_t count) {
  return std::vector<GpuSpec>(count, *builtin_gpus().find(id));
}

}  // namespace

TEST_CASE("every swept row is make_plan's row", "[sweep][property]") {
  // Contexts below, at and past the trained context (Qwen3-8B: 40,960), odd and even.
  const std::vector<std::uint64_t> contexts{1, 4095, 4096, 40960, 40961, 131072, 1'000'003};
  std::size_t compared = 0;
  std::size_t differing = 0;
  for (const std::string& runtime : runtime_names())
    for (const char* model_id : {"qwen3-8b", "gemma3-12b", "qwen3-next-80b-a3b", "deepseek-v2-lite", "gpt-oss-20b",
                                 "llama3.1-70b"})
      for (const auto& gpus : {deployment("4090", 1), deployment("h100", 1), deployment("h100", 2),
                               deployment("a100-40g", 4), deployment("h100-1g.10gb", 1)})
        for (int budget = 0; budget < 3; ++budget) {
          const ModelSpec& model = *builtin_models().find(model_id);
          PlanRequest request;
          request.runtime = runtime;
          request.contexts = contexts;
          request.batch = budget == 2 ? 3 : 1;
          request.batch_given = budget == 2;
          if (budget == 1) request.used_bytes = 6 * GiB;  // co-tenants
          if (budget == 2) request.budget_bytes = 20 * GiB;
          Plan plan;
          try {
            plan = make_plan(model, gpus, request);
          } catch (const Error&) {
            // A question the engine refuses outright: the sweep refuses it too.
            CHECK_THROWS_AS(sweep_rows(model, gpus, request, [](Row&&) {}), Error);
            continue;
          }
          std::vector<Row> swept;
          const std::vector<SweptOut> left_out = sweep_rows(model, gpus, request, [&](Row&& row) { swept.push_back(std::move(row)); });
          // make_plan settled them all, so the sweep leaves none out.
          CHECK(left_out.empty());
          REQUIRE(swept.size() == plan.rows.size());
          for (std::size_t i = 0; i < swept.size(); ++i) {
            ++compared;
            if (json_of(swept[i]) != json_of(plan.rows[i])) {
              ++differing;
              INFO(runtime << " " << model_id << " on " << gpus.size() << "x" << gpus.front().id << " row " << i);
              CHECK(json_of(swept[i]) == json_of(plan.rows[i]));
            }
            CHECK(swept[i].verdict == plan.rows[i].verdict);
          }
        }
  CHECK(differing == 0);
  CHECK(compared > 2000);
}
