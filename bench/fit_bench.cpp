// kvplan fit over the whole catalog: the process time of fit_models (every catalog model x weight
// format x KV dtype, each a make_plan row and kvplan max's context and batch searches) on an
// RTX 4090 under several engines, beside one model's plain plan (the headline command's core).
// The target is the whole catalog in under 20 ms of process time. A figure, never a test.
//
// Usage: kvplan_fit_bench [repetitions, default 20]

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

#include "kvplan/catalog.h"
#include "kvplan/fit.h"

namespace {

/// CPU time of this process, in milliseconds.
double process_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  const int repetitions = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
  double start = process_ms();
  const kvplan::ModelCatalog& catalog = kvplan::builtin_models();
  const std::vector<kvplan::GpuSpec> gpus{*kvplan::builtin_gpus().find("rtx4090")};
  std::printf("catalog: %zu models parsed in %.2f ms\n", catalog.models.size(), process_ms() - start);

  for (const char* runtime : {"generic", "llama.cpp", "ollama", "vllm", "sglang", "trtllm"}) {
    kvplan::FitRequest request;
    request.base.runtime = runtime;
    request.base.contexts = {32768};
    double best = 1e300;
    std::size_t rows = 0, fitting = 0;
    for (int i = 0; i < repetitions; ++i) {
      start = process_ms();
      const kvplan::FitResult result = kvplan::fit_models(catalog.models, gpus, request);
      best = std::min(best, process_ms() - start);
      rows = result.rows.size();
      fitting = result.fitting.size();
    }
    std::printf("fit (%s, rtx4090, ctx 32k): %zu rows (%zu fit) in %.2f ms of process time (best of %d; target < 20 ms)\n",
                runtime, rows, fitting, best, repetitions);
  }

  const kvplan::ModelSpec& model = *catalog.find("llama3.1-8b");
  kvplan::PlanRequest plain;
  plain.contexts = {131072};
  double best = 1e300;
  for (int i = 0; i < repetitions; ++i) {
    start = process_ms();
    const kvplan::Plan plan = kvplan::make_plan(model, gpus, plain);
    best = std::min(best, process_ms() - start);
    if (plan.rows.empty()) return 1;
  }
  std::printf("single model (llama3.1-8b, rtx4090, ctx 128k, 4 KV dtypes): %.3f ms of process time\n", best);
  return 0;
}
