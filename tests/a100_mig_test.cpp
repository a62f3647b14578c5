// A100 MIG instances in the GPU catalog: each with the memory nvidia-smi prints for the MIG device
// (its MIG devices table, in MiB) or, where only `nvidia-smi mig -lgip` was found, the lowest value
// that prints so; never the profile name's nominal GB. The figure moves with the driver, so each is
// the smallest seen (docs/planning.md, "MIG instances").

#include <catch2/catch.hpp>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "kvplan/catalog.h"
#include "kvplan/units.h"
#include "support/run_binary.h"

using namespace kvplan;
using kvplan::testing::run_kvplan;

TEST_CASE("A100 MIG instances carry the memory nvidia-smi prints for the device", "[mig]") {
  const GpuCatalog& catalog = builtin_gpus();
  // A100-PCIE-40GB, driver 510.47.03: "0MiB /  4864MiB" for 1g.5gb. 4,864 x 2^20 = 5,100,273,664.
  REQUIRE(catalog.find("a100-40gb-1g.5gb"));
  CHECK(catalog.find("a100-40gb-1g.5gb")->memory_bytes == 5'100'273'664u);
  CHECK(catalog.find("a100-40gb-1g.5gb")->memory_bytes == 4864 * MiB);
  // A100 80GB PCIe, driver 515.86.01: 9728MiB, 19968MiB and 40192MiB for 1g.10gb, 2g.20gb, 3g.40gb.
  // 9,728 x 2^20 = 10,200,547,328; 19,968 x 2^20 = 20,937,965,568; 40,192 x 2^20 = 42,144,366,592.
  REQUIRE(catalog.find("a100-80gb-1g.10gb"));
  REQUIRE(catalog.find("a100-80gb-2g.20gb"));
  REQUIRE(catalog.find("a100-80gb-3g.40gb"));
  CHECK(catalog.find("a100-80gb-1g.10gb")->memory_bytes == 10'200'547'328u);
  CHECK(catalog.find("a100-80gb-2g.20gb")->memory_bytes == 20'937'965'568u);
  CHECK(catalog.find("a100-80gb-3g.40gb")->memory_bytes == 42'144'366'592u);
  // Less than the name says in GB: 5 GB is 5,000,000,000 bytes but 4,864 MiB is 5,100,273,664, and
  // "40gb" is 40 x 10^9 while the instance has 42,144,366,592: the name is not the figure either way.
  CHECK(catalog.find("a100-80gb-3g.40gb")->memory_basis == "driver-reported");
  // Bandwidth: the instance's memory slices' share of the card's (1 of 8 of 1,555 GB/s; 4 of 8 of 2,039).
  CHECK(catalog.find("a100-40gb-1g.5gb")->bandwidth_gbps == 194.375);
  CHECK(catalog.find("a100-80gb-3g.40gb")->bandwidth_gbps == 1019.5);
  CHECK_FALSE(catalog.find("a100-80gb-1g.10gb")->fp8);  // Ampere: no fp8 tensor cores
}

TEST_CASE("A100 MIG instances answer to the spellings of their card", "[mig]") {
  const GpuCatalog& catalog = builtin_gpus();
  for (const char* name : {"a100-40gb-1g.5gb", "a100-40g-1g.5gb", "A100-40GB-MIG-1g.5gb", "a100 40gb mig 1g.5gb"}) {
    INFO(name);
    const GpuSpec* gpu = catalog.find(name);
    REQUIRE(gpu);
    CHECK(gpu->id == "a100-40gb-1g.5gb");
  }
  CHECK(catalog.find("a100-80g-2g.20gb")->id == "a100-80gb-2g.20gb");
}

TEST_CASE("every A100 MIG profile carries the smallest memory a driver printed for it", "[mig]") {
  const GpuCatalog& catalog = builtin_gpus();
  struct Expected {
    const char* id;
    std::uint64_t mib;
    double bandwidth_gbps;
  };
  // Device tables: 2g.10gb 9856MiB and 3g.20gb 19968MiB on an A100-PCIE-40GB under driver 550.54.14
  // (470.57.02 printed 9984 and 20096); 4g.40gb 40192MiB on an A100-SXM4-80GB under 550.54.14.
  // -lgip only, lowest value that prints so, whole MiB down: 19.50 GiB -> 19.495 x 1024 = 19962.88 ->
  // 19962; 39.25 -> 40186.88 -> 40186; 78.75 -> 80634.88 -> 80634. Bandwidth: the memory slices'
  // share, 2/8 or 4/8 or 8/8 of 1,555 GB/s (40 GB) or 2,039 GB/s (80 GB).
  for (const Expected& e : {Expected{"a100-40gb-2g.10gb", 9856, 388.75}, Expected{"a100-40gb-3g.20gb", 19968, 777.5},
                            Expected{"a100-40gb-4g.20gb", 19962, 777.5}, Expected{"a100-40gb-7g.40gb", 40186, 1555},
                            Expected{"a100-80gb-1g.20gb", 19962, 509.75}, Expected{"a100-80gb-4g.40gb", 40192, 1019.5},
                            Expected{"a100-80gb-7g.80gb", 80634, 2039}}) {
    INFO(e.id);
    const GpuSpec* gpu = catalog.find(e.id);
    REQUIRE(gpu);
    CHECK(gpu->memory_bytes == e.mib * MiB);
    CHECK(gpu->bandwidth_gbps == e.bandwidth_gbps);
    CHECK_FALSE(gpu->fp8);
  }
  // 10,334,765,056 = 9,856 x 2^20: the 2g.10gb instance holds more than "10gb" (10^10) says.
  CHECK(catalog.find("a100-40gb-2g.10gb")->memory_bytes == 10'334'765'056u);
  // The old drivers' 7g devices printed the whole card (40537MiB, 81251MiB): never taken.
  CHECK(catalog.find("a100-40gb-7g.40gb")->memory_bytes < 40537 * MiB);
  CHECK(catalog.find("a100-80gb-7g.80gb")->memory_bytes == 84'550'877'184u);
}

TEST_CASE("a MIG profile A100 does not have is not guessed", "[mig]") {
  // 1g.20gb exists on the 80 GB card only; 7g.80gb only on the 80 GB card.
  for (const char* name : {"a100-40gb-1g.20gb", "a100-40gb-7g.80gb", "a100-80gb-3g.20gb"}) {
    INFO(name);
    CHECK_FALSE(builtin_gpus().find(name));
  }
  const kvplan::testing::ProcessResult r = run_kvplan("--model qwen3-8b --gpu a100-40gb-1g.20gb --ctx 4k");
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Catch::StartsWith("kvplan: error: ") && Catch::Contains("unknown GPU 'a100-40gb-1g.20gb'"));
}

TEST_CASE("a card's name never means one of its MIG instances", "[mig]") {
  // "a100" still means the 40 GB or the 80 GB card (planned for the 40 GB one, the smaller), never
  // a100-40gb-1g.5gb, whose id starts with the same letters.
  const GpuSpec a100 = resolve_builtin_gpus("a100").front();
  CHECK(a100.id == "a100-40g");
  CHECK_THAT(a100.resolution_note, !Catch::Contains("1g.5gb") && !Catch::Contains("3g.40gb"));
  // The cards' own spellings are not ambiguous with their instances either.
  CHECK(resolve_builtin_gpus("a100-80gb").front().id == "a100-80g");
  CHECK(resolve_builtin_gpus("a100-80gb").front().resolution_note.empty());
  CHECK(resolve_builtin_gpus("a100-40gb").front().resolution_note.empty());
}

TEST_CASE("the binary plans for an A100 MIG instance named by --gpu", "[mig]") {
  const kvplan::testing::ProcessResult r =
      run_kvplan("--model qwen3-8b --gpu a100-80gb-3g.40gb --ctx 4k --kv-dtype fp16 --format json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  CHECK(doc["gpu"]["id"] == "a100-80gb-3g.40gb");
  CHECK(doc["gpu"]["memory_bytes"] == 42'144'366'592u);
  // Qwen3-8B bf16 at 4,096 tokens, fp16 cache: 16,381,470,720 weights + 603,979,776 cache (147,456 x
  // 4,096) + 2 GiB overhead = 19,132,934,144 <= 42,144,366,592 x 0.9: it fits.
  CHECK(doc["rows"][0]["fits"] == true);
}
