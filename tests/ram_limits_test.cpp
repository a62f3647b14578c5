// System RAM in the searches (kvplan max, kvplan sweep with --ram), the JSON's system_ram, and
// --ram auto on a Mac (sysctl hw.memsize on the PATH, unified memory counted once). Figures by
// hand in the comments.

#include <fstream>
#include <string>
#include <vector>

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli/ram_flags.h"
#include "kvplan/error.h"
#include "kvplan/plan.h"
#include "kvplan/search.h"
#include "kvplan/units.h"
#include "support/run_binary.h"
#include "support/seven_layer_model.h"
#include "support/temp_dir.h"

using kvplan::GiB;
using kvplan::MiB;

namespace {

/// find_limits under llama.cpp on one 8 GiB card (the default 2 GiB overhead), at ctx 4,096.
kvplan::Limits ram_limits_on_8gib(const std::string& ram) {
  kvplan::LimitsRequest request;
  request.plan.runtime = "llama.cpp";
  request.plan.contexts = {4096};
  if (!ram.empty()) request.plan.engine_options.push_back({"ram", ram, "--ram"});
  request.search_gpus = false;
  request.batch_limit = 1024;
  kvplan::GpuSpec gpu;
  gpu.id = gpu.name = "8GiB";
  gpu.memory_bytes = 8 * GiB;
  gpu.memory_basis = "given";
  return kvplan::find_limits(kvplan::testing::seven_layer_model(), {gpu}, request);
}

}  // namespace

TEST_CASE("ram limits: without --ram nothing fits the 8 GiB card", "[ram]") {
  // Every layer on the GPU: 8 GiB + 7 x 16 MiB + 2 GiB > 8 GiB, at any context or batch.
  const kvplan::Limits limits = ram_limits_on_8gib("");
  REQUIRE(limits.caches.size() == 1);
  CHECK_FALSE(limits.caches.front().max_ctx);
  CHECK_FALSE(limits.caches.front().max_batch);
}

TEST_CASE("ram limits: the largest context and batch with 4 GiB of RAM, -ngl chosen at each", "[ram]") {
  // -ngl k keeps k GiB of weights and k - 1 layers of cache on the GPU, 8 - k GiB and 8 - k layers
  // of cache in RAM (4 KiB per token per layer).
  // Context at batch 1 (uncapped): k = 5 holds 5 GiB + 4 x ctx x 4 KiB + 2 GiB <= 8 GiB up to
  //   ctx = 65,536 (4 x 65,536 x 4 KiB = 1 GiB), with 3 GiB + 3 x 256 MiB = 3.75 GiB <= 4 GiB in RAM.
  //   65,537 pads to 65,792 cells: k = 5 no longer fits the GPU, and k = 4 keeps
  //   4 GiB + 4 x 257 MiB > 4 GiB in RAM. The trained 4,096 caps the context search.
  // Batch at ctx 4,096 (16 MiB per sequence per layer): k = 5 holds 5 GiB + 4 x 16b MiB + 2 GiB
  //   <= 8 GiB up to b = 16 (RAM 3 GiB + 3 x 256 MiB); at b = 17 k = 4 keeps 4 GiB + 4 x 272 MiB
  //   > 4 GiB in RAM.
  const kvplan::Limits limits = ram_limits_on_8gib("4GiB");
  const kvplan::CacheLimits& found = limits.caches.front();
  REQUIRE(found.max_ctx);
  CHECK(*found.max_ctx == 4096);
  REQUIRE(found.uncapped_max_ctx);
  CHECK(*found.uncapped_max_ctx == 65536);
  REQUIRE(found.max_batch);
  CHECK(*found.max_batch == 16);
  REQUIRE(found.max_batch_row);
  REQUIRE(found.max_batch_row->host);
  CHECK(found.max_batch_row->host->host_bytes == 3 * GiB + 768 * MiB);
  CHECK(found.max_batch_row->weights_bytes == 5 * GiB);
}

TEST_CASE("ram limits: kvplan max and sweep take --ram, and the JSON carries system_ram", "[ram][cli]") {
  using kvplan::testing::run_kvplan;
  const auto max = run_kvplan("max --model llama3.1-70b --gpu 4090 --runtime llama.cpp --ctx 8k --ram 128GiB --format json");
  INFO(max.err);
  REQUIRE(max.exit_code == 0);
  const auto max_without = run_kvplan("max --model llama3.1-70b --gpu 4090 --runtime llama.cpp --ctx 8k --format json");
  REQUIRE(max_without.exit_code == 0);
  CHECK(max.out != max_without.out);
  CHECK_THAT(max.out, Catch::Contains("\"system_ram\": {"));
  const auto sweep = run_kvplan("sweep --models llama3.1-70b --gpus 4090 --runtime llama.cpp --ctx 8k --ram 128GiB");
  INFO(sweep.err);
  REQUIRE(sweep.exit_code == 0);
  CHECK_THAT(sweep.out, Catch::Contains("\"system_ram\":{\"host_bytes\":"));
  // The plain command: 13 of 81 layers on the GPU keep 112.45 GiB in RAM (docs/engines/llamacpp.md).
  const auto plan = run_kvplan("--model llama3.1-70b --gpu 4090 --runtime llama.cpp --ctx 8k --ram 128GiB --format json");
  REQUIRE(plan.exit_code == 0);
  const nlohmann::json row = nlohmann::json::parse(plan.out)["rows"][0];
  CHECK(row["system_ram"]["ram_bytes"] == 128 * GiB);
  CHECK(row["system_ram"]["fits"] == true);
  CHECK(row["system_ram"]["host_bytes"].get<double>() / GiB == Approx(112.45).margin(0.005));
  const auto none = run_kvplan("--model llama3.1-8b --gpu 4090 --runtime llama.cpp --ctx 8k --format json");
  CHECK(nlohmann::json::parse(none.out)["rows"][0]["system_ram"].is_null());
}

TEST_CASE("ram limits: --ram auto on a Mac is hw.memsize less the GPU's working set", "[ram]") {
  // sysctl -n hw.memsize of an M3 Max with 128 GiB (tests/fixtures/gpu_auto/sysctl-m3-max-128gb.txt,
  // its first line): 137,438,953,472 B. macOS grants the GPU 3/4 of it from 64 GiB: 96 GiB, which
  // --gpu m3-max-128gb and --gpu auto plan against; the RAM beside it is 128 - 96 = 32 GiB.
  CHECK(kvplan::parse_hw_memsize("137438953472\n") == 137'438'953'472ULL);
  CHECK_THROWS_WITH(kvplan::parse_hw_memsize("sysctl: unknown oid 'hw.memsize'"), Catch::Contains("give --ram SIZE"));
  const kvplan::MacRam mac = kvplan::mac_ram_beside_gpu(137'438'953'472ULL);
  CHECK(mac.bytes == 32 * GiB);
  // Below 64 GiB macOS grants 2/3: a 24 GiB Mac keeps 24 - 16 = 8 GiB beside the GPU.
  CHECK(kvplan::mac_ram_beside_gpu(24 * GiB).bytes == 8 * GiB);

  kvplan::testing::TempDir dir("kvplan_ram_auto");
  const std::string script = dir.file("sysctl");
  // The capture's first line, read by the shell itself (the PATH holds only the stand-in).
  std::ofstream(script) << "#!/bin/sh\nread -r line < '"
                        << kvplan::testing::source_path("tests/fixtures/gpu_auto/sysctl-m3-max-128gb.txt")
                        << "'\necho \"$line\"\n";
  chmod(script.c_str(), 0755);
  kvplan::Environment env;
  env.variables["PATH"] = dir.file("");
  std::vector<kvplan::EngineOption> options{{"ram", "auto", "--ram"}};
  kvplan::resolve_ram_auto(options, env, dir.file("no-meminfo"));  // no /proc/meminfo: a Mac
  CHECK(options.front().value == "34359738368B");

  // Linux's own sysctl knows no hw.memsize and exits 255: not a Mac, the way forward named.
  std::ofstream(script) << "#!/bin/sh\necho 'sysctl: cannot stat /proc/sys/hw/memsize' >&2\nexit 255\n";
  std::vector<kvplan::EngineOption> linux_options{{"ram", "auto", "--ram"}};
  CHECK_THROWS_WITH(kvplan::resolve_ram_auto(linux_options, env, dir.file("no-meminfo")), Catch::Contains("give --ram SIZE"));
}
