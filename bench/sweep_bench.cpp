// Sweep throughput: 1,000,000 rows (Qwen3-8B on an H100 under the generic profile, 125,000
// contexts x 8 cache dtypes) settled by the core, then the same rows written as NDJSON lines into
// memory, then as CSV lines. Prints rows per second for each, by wall and by CPU time; the target is 1,000,000 rows in under a second on one
// core. A figure, never a test.
//
// Usage: kvplan_sweep_bench [rows, default 1000000] [runtime, default generic] [first context, default 1]
// (a first context past Qwen3-8B's trained 40,960 gives every row its warning: callgrind's few
// rows then count what the million's two thirds cost)

#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "kvplan/catalog.h"
#include "kvplan/sweep.h"
#include "reports/sweep_lines.h"

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// The process's CPU time: on a machine shared with other builds, the figure that says what one
/// core does (wall time counts the waits for a core too).
double cpu_seconds_since(std::clock_t start) { return static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC; }

}  // namespace

int main(int argc, char** argv) {
  const std::uint64_t rows = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1'000'000;
  const std::string runtime = argc > 2 ? argv[2] : "generic";
  const std::uint64_t first_ctx = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1;
  const kvplan::ModelSpec& model = *kvplan::builtin_models().find("qwen3-8b");
  const std::vector<kvplan::GpuSpec> gpus{*kvplan::builtin_gpus().find("h100")};
  kvplan::PlanRequest request;
  request.runtime = runtime;
  for (const char* name : {"fp16", "bf16", "fp8", "fp8_e5m2", "int8", "int4", "q8_0", "q4_0"}) {
    const kvplan::Dtype& type = kvplan::parse_kv_dtype(name, *model.weight_dtype);
    request.caches.push_back({&type, &type});
  }
  for (std::uint64_t ctx = first_ctx; request.contexts.size() * request.caches.size() < rows; ++ctx) request.contexts.push_back(ctx);

  std::uint64_t settled = 0;
  std::uint64_t fitting = 0;
  auto start = std::chrono::steady_clock::now();
  std::clock_t cpu_start = std::clock();
  kvplan::sweep_rows(model, gpus, request, [&](kvplan::Row&& row) {
    ++settled;
    fitting += row.fits ? 1 : 0;
  });
  const double settle_s = seconds_since(start);
  const double settle_cpu = cpu_seconds_since(cpu_start);
  std::printf("sweep (%s): %llu rows settled in %.3f s: %.0f rows/s; CPU %.3f s: %.0f rows/s (%llu fit)\n",
              runtime.c_str(), static_cast<unsigned long long>(settled), settle_s, static_cast<double>(settled) / settle_s,
              settle_cpu, static_cast<double>(settled) / settle_cpu, static_cast<unsigned long long>(fitting));

  // As kvplan sweep writes them: lines gathered into 64 KiB pieces (here counted, not written),
  // NDJSON and then CSV.
  for (const bool csv : {false, true}) {
    kvplan::SweepLines lines(csv);
    lines.start(model, gpus, runtime);
    kvplan::TextBuffer piece;
    std::size_t bytes = 0;
    std::uint64_t written = 0;
    start = std::chrono::steady_clock::now();
    cpu_start = std::clock();
    kvplan::sweep_rows(model, gpus, request, [&](kvplan::Row&& row) {
      lines.append(row, piece);
      ++written;
      if (piece.size() >= 1 << 16) {
        bytes += piece.size();
        piece.clear();
      }
    });
    bytes += piece.size();
    const double write_s = seconds_since(start);
    const double write_cpu = cpu_seconds_since(cpu_start);
    std::printf("sweep (%s) + %s: %llu rows, %.1f MB, in %.3f s: %.0f rows/s; CPU %.3f s: %.0f rows/s\n", runtime.c_str(),
                csv ? "CSV" : "NDJSON", static_cast<unsigned long long>(written), static_cast<double>(bytes) / 1e6, write_s,
                static_cast<double>(written) / write_s, write_cpu, static_cast<double>(written) / write_cpu);
  }
  return 0;
}
