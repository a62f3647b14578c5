// System RAM for llama.cpp's offload (--ram): -ngl chosen as llama.cpp's --fit would, the host
// bytes counted against the declared RAM, the speed bound of the split, and --ram auto's
// /proc/meminfo. Figures by hand in the comments.

#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "cli/ram_flags.h"
#include "engines/core/ram_bandwidth.h"
#include "kvplan/error.h"
#include "kvplan/plan.h"
#include "kvplan/units.h"
#include "support/run_binary.h"
#include "support/seven_layer_model.h"
#include "support/temp_dir.h"

using kvplan::GiB;
using kvplan::MiB;

namespace {

/// One 8 GiB card at 1,000 GB/s; the default overhead of 2 GiB; `ram` as the llama.cpp option
/// takes it ("" = none declared), at the default bandwidth (dual-channel DDR5-5600, 89.6 GB/s).
kvplan::Plan plan_on_8gib(const std::string& ram, std::vector<kvplan::EngineOption> options = {}) {
  kvplan::PlanRequest request;
  request.runtime = "llama.cpp";
  request.contexts = {4096};
  request.engine_options = std::move(options);
  if (!ram.empty()) request.engine_options.push_back({"ram", ram, "--ram"});
  kvplan::GpuSpec gpu;
  gpu.id = gpu.name = "8GiB";
  gpu.memory_bytes = 8 * GiB;
  gpu.memory_basis = "given";
  gpu.bandwidth_gbps = 1000;
  return kvplan::make_plan(kvplan::testing::seven_layer_model(), gpu, request);
}

bool has(const kvplan::Row& row, const std::string& code) {
  for (const kvplan::Finding& f : row.findings)
    if (f.code == code) return true;
  return false;
}

const kvplan::Finding* finding(const kvplan::Row& row, const std::string& code) {
  for (const kvplan::Finding& f : row.findings)
    if (f.code == code) return &f;
  return nullptr;
}

}  // namespace

TEST_CASE("ram offload (--ram): without it, a row too big for the GPU does not fit, exactly as before", "[ram]") {
  // All 8 layers: 8 GiB + 7 x 16 MiB + 2 GiB = 10 GiB + 112 MiB > 8 GiB.
  const kvplan::Row row = plan_on_8gib("").rows.front();
  CHECK(row.weights_bytes == 8 * GiB);
  CHECK(row.kv_bytes == 112 * MiB);
  CHECK(row.total_bytes == 10 * GiB + 112 * MiB);
  CHECK_FALSE(row.fits);
  CHECK_FALSE(has(row, "partly_on_cpu"));
  CHECK_FALSE(has(row, "over_ram"));
  REQUIRE(row.decode_bound);
  CHECK_THAT(row.decode_bound->rule, !Catch::Contains("system RAM"));
}

TEST_CASE("ram offload (--ram): a model that fits only with RAM keeps -ngl 5 and 3 GiB + 48 MiB in RAM", "[ram]") {
  // -ngl k puts the output layer and k - 1 repeating layers on the GPU:
  //   k = 6: 6 GiB + 5 x 16 MiB + 2 GiB = 8 GiB + 80 MiB > 8 GiB
  //   k = 5: 5 GiB + 4 x 16 MiB + 2 GiB = 7 GiB + 64 MiB <= 8 GiB: the most that fit.
  // In RAM: 8 - 5 = 3 GiB of weights + 3 layers x 16 MiB of cache (no vocabulary: no logits
  // buffer) = 3 GiB + 48 MiB <= 4 GiB declared.
  const kvplan::Plan plan = plan_on_8gib("4GiB");
  const kvplan::Row& row = plan.rows.front();
  CHECK(row.weights_bytes == 5 * GiB);
  CHECK(row.kv_bytes == 64 * MiB);
  CHECK(row.total_bytes == 7 * GiB + 64 * MiB);
  CHECK(row.fits);
  const kvplan::Finding* cpu = finding(row, "partly_on_cpu");
  REQUIRE(cpu);
  CHECK_FALSE(cpu->blocking);
  CHECK_THAT(cpu->text, Catch::Contains("-ngl 5 keeps 5 of 8 layers on the GPU"));
  CHECK_THAT(cpu->text, Catch::Contains("3.05 GiB there"));
  CHECK_THAT(cpu->text, Catch::Contains("llama_params_fit, PR #16653"));
  // The decode bound: (5 GiB + 64 MiB) / 1,000 GB/s + (3 GiB + 48 MiB) / 89.6 GB/s
  //   = 5,435,817,984 / 1e12 + 3,271,557,120 / 89.6e9 = 0.005436 + 0.036513 s = 0.041949 s: 23.84 tok/s.
  REQUIRE(row.decode_bound);
  CHECK(row.decode_bound->weights_bytes_read == 5 * GiB);
  CHECK(row.decode_bound->kv_bytes_read == 64 * MiB);
  CHECK(row.decode_bound->tokens_per_s_per_sequence == Approx(23.8386).epsilon(1e-5));
  CHECK_THAT(row.decode_bound->rule, Catch::Contains("+ 3.05 GiB read from system RAM / 89.6 GB/s (assumed dual-channel ddr5-5600"));
  CHECK_THAT(row.decode_bound->rule, Catch::Contains("an estimate"));
  // The largest context is searched the same way: the trained 4,096 fits with RAM.
  REQUIRE(plan.context_limits.front().max_ctx);
  CHECK(*plan.context_limits.front().max_ctx == 4096);
}

TEST_CASE("ram offload (--ram): a model that does not fit even with RAM does not fit", "[ram]") {
  // The same -ngl 5 split needs 3 GiB + 48 MiB in RAM; 3 GiB are declared.
  const kvplan::Row row = plan_on_8gib("3GiB").rows.front();
  CHECK(row.weights_bytes == 5 * GiB);
  CHECK_FALSE(row.fits);
  CHECK(row.verdict == kvplan::Verdict::does_not_fit);
  const kvplan::Finding* over = finding(row, "over_ram");
  REQUIRE(over);
  CHECK(over->blocking);
  CHECK(over->text == "the engine keeps 3.05 GiB in system RAM; 3.00 GiB was declared");
}

TEST_CASE("ram offload (--ram): -ngl given is kept (llama.cpp's --fit only changes settings left at their defaults)", "[ram]") {
  // -ngl 3: 3 GiB + 2 x 16 MiB on the GPU; in RAM 5 GiB + 5 x 16 MiB = 5 GiB + 80 MiB > 4 GiB.
  const kvplan::Row row = plan_on_8gib("4GiB", {{"n-gpu-layers", "3", "-ngl"}}).rows.front();
  CHECK(row.weights_bytes == 3 * GiB);
  REQUIRE(finding(row, "over_ram"));
  CHECK(finding(row, "over_ram")->text == "the engine keeps 5.08 GiB in system RAM; 4.00 GiB was declared");
  CHECK_FALSE(row.fits);
  // With 6 GiB it fits, partly on the CPU, and no fitting rule is claimed.
  const kvplan::Row roomy = plan_on_8gib("6GiB", {{"n-gpu-layers", "3", "-ngl"}}).rows.front();
  CHECK(roomy.fits);
  REQUIRE(finding(roomy, "partly_on_cpu"));
  CHECK_THAT(finding(roomy, "partly_on_cpu")->text, !Catch::Contains("--fit"));
}

TEST_CASE("ram auto (--ram auto): MemAvailable of a captured /proc/meminfo, in kB of 1,024 bytes", "[ram]") {
  // Captured on the build machine (Linux 2026-12-03), first lines.
  const std::string meminfo =
      "MemTotal:       24683664 kB\n"
      "MemFree:        15975244 kB\n"
      "MemAvailable:   21560540 kB\n"
      "Buffers:           10628 kB\n"
      "Cached:          5649324 kB\n";
  kvplan::testing::TempDir dir;
  const std::string path = dir.file("meminfo");
  std::ofstream(path) << meminfo;
  // 21,560,540 kB x 1,024 = 22,077,992,960 bytes (20.56 GiB).
  CHECK(kvplan::read_meminfo_available(path) == 22'077'992'960ULL);
  std::vector<kvplan::EngineOption> options{{"ram", "auto", "--ram"}, {"parallel", "auto", "-np"}};
  kvplan::resolve_ram_auto(options, {}, path);
  CHECK(options[0].value == "22077992960B");
  CHECK(options[1].value == "auto");  // only --ram's auto

  CHECK_THROWS_WITH(kvplan::parse_meminfo_available("MemTotal: 1 kB\n", "x"), Catch::Contains("no MemAvailable line"));
  CHECK_THROWS_WITH(kvplan::parse_meminfo_available("MemAvailable: many kB\n", "x"), Catch::Contains("not 'N kB'"));
  CHECK_THROWS_WITH(kvplan::read_meminfo_available(dir.file("absent")), Catch::Contains("give --ram SIZE"));
}

TEST_CASE("ram bandwidth (--ram-bandwidth): GB/s or a memory type", "[ram]") {
  CHECK(kvplan::parse_ram_bandwidth("", "--ram-bandwidth").gbps == 89.6);  // 5,600 MT/s x 8 B x 2 channels
  CHECK_THAT(kvplan::parse_ram_bandwidth("", "--ram-bandwidth").source, Catch::Contains("assumed dual-channel ddr5-5600"));
  CHECK(kvplan::parse_ram_bandwidth("DDR4-3200", "--ram-bandwidth").gbps == 51.2);  // 3,200 x 8 x 2
  CHECK(kvplan::parse_ram_bandwidth("ddr5-6400", "--ram-bandwidth").gbps == 102.4);  // 6,400 x 8 x 2
  CHECK(kvplan::parse_ram_bandwidth("120.5", "--ram-bandwidth").gbps == 120.5);
  CHECK_THROWS_WITH(kvplan::parse_ram_bandwidth("fast", "--ram-bandwidth"), Catch::Contains("is not GB/s"));
  CHECK_THROWS_WITH(kvplan::parse_ram_bandwidth("0", "--ram-bandwidth"), Catch::Contains("is not GB/s"));
  CHECK_THROWS_WITH(kvplan::parse_ram_bandwidth("nan", "--ram-bandwidth"), Catch::Contains("is not GB/s"));
}

TEST_CASE("kvplan --ram: the flags on the command line", "[ram][cli]") {
  using kvplan::testing::check_refused;
  using kvplan::testing::run_kvplan;
  check_refused(run_kvplan("--model llama3.1-8b --gpu 4090 --ram 64GiB"), "--runtime llama.cpp");
  check_refused(run_kvplan("--model llama3.1-8b --gpu 4090 --runtime llama.cpp --ram 64"), "--ram");
  check_refused(run_kvplan("--model llama3.1-8b --gpu 4090 --runtime llama.cpp --ram-bandwidth 90"), "declare the RAM too");
  check_refused(run_kvplan("--model llama3.1-8b --gpu 4090 --runtime llama.cpp --ram 8GiB --ram-bandwidth x"), "is not GB/s");
  check_refused(run_kvplan("max --model llama3.1-8b --gpu 4090 --runtime vllm --ram 64GiB"), "--ram");
  // llama3.1-8b (16 GB of bf16 weights) on an 8 GiB card: does not fit without RAM, fits with it.
  const auto without = run_kvplan("--model llama3.1-8b --gpu 8GiB --runtime llama.cpp --ctx 8k");
  CHECK(without.exit_code == 0);
  CHECK(without.out.find("partly on CPU") == std::string::npos);
  const auto with = run_kvplan("--model llama3.1-8b --gpu 8GiB --runtime llama.cpp --ctx 8k --ram 32GiB --speed --check");
  INFO(with.out << with.err);
  CHECK(with.exit_code == 0);
  CHECK(with.out.find("partly on CPU: -ngl ") != std::string::npos);
  CHECK(with.out.find("system RAM: 32.00 GiB declared") != std::string::npos);
}
