// Micro-benchmark of the budget engine alone: how many (model, GPU, ctx, dtype) evaluations a
// second on one core. Prints Google Benchmark's table; never part of the test suite.

#include <benchmark/benchmark.h>

#include "kvplan/plan.h"
#include "kvplan/catalog.h"

namespace {

void BM_PlanRow(benchmark::State& state) {
  const kvplan::ModelCatalog& models = kvplan::builtin_models();
  const kvplan::GpuCatalog& gpus = kvplan::builtin_gpus();
  const auto dtypes = kvplan::kv_dtypes();
  std::size_t i = 0;
  for (auto _ : state) {
    const kvplan::ModelSpec& model = models.models[i % models.models.size()];
    const kvplan::Dtype& cache = dtypes[i % dtypes.size()];
    kvplan::RowSettings settings;
    settings.ctx = 4096u << (i % 6);
    settings.cache = {&cache, &cache};
    settings.gpu_memory_bytes = gpus.gpus[i % gpus.gpus.size()].memory_bytes;
    benchmark::DoNotOptimize(kvplan::plan_row(model, settings).total_bytes);
    ++i;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_PlanRow);

}  // namespace

BENCHMARK_MAIN();
