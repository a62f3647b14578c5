#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "kvplan/gpu.h"
#include "kvplan/units.h"
#include "support/run_binary.h"

using namespace kvplan;
using kvplan::testing::ProcessResult;
using kvplan::testing::run_kvplan;

TEST_CASE("GPU names resolve through ids, names and aliases") {
  const GpuCatalog& catalog = builtin_gpus();
  for (const char* name : {"4090", "rtx4090", "RTX 4090", "rtx-4090", "NVIDIA GeForce RTX 4090"})
    CHECK(resolve_gpu(name, catalog).id == "rtx4090");
  CHECK(resolve_gpu("h100", catalog).memory_bytes == 81559 * MiB);     // nvidia-smi 81,559 MiB
  CHECK(resolve_gpu("a100-80g", catalog).memory_bytes == 81920 * MiB);
  CHECK(resolve_gpu("3090", catalog).memory_bytes == 24576 * MiB);
  CHECK(resolve_gpu("5090", catalog).memory_bytes == 32607 * MiB);
  CHECK(resolve_gpu("h200", catalog).memory_bytes == 143771 * MiB);
  CHECK(resolve_gpu("l40s", catalog).fp8);
  CHECK_FALSE(resolve_gpu("3090", catalog).fp8);
}

TEST_CASE("a raw capacity is a card of that size") {
  const GpuSpec gpu = resolve_gpu("24GiB", builtin_gpus());
  CHECK(gpu.memory_bytes == 24 * GiB);
  CHECK(gpu.memory_basis == "given");
  CHECK(resolve_gpu("24GB", builtin_gpus()).memory_bytes == 24'000'000'000);
}

TEST_CASE("an unknown GPU suggests the closest names") {
  CHECK_THROWS_WITH(resolve_gpu("rtx4900", builtin_gpus()), Catch::Contains("did you mean: rtx4090"));
  CHECK_THROWS_WITH(resolve_gpu("0GB", builtin_gpus()), Catch::Contains("more than zero"));
}

TEST_CASE("CUDA-visible totals: only the GPUs whose vLLM logs print one") {
  const GpuCatalog& catalog = builtin_gpus();
  // vLLM 0.19.0 prints 79.19 GiB for the H100 SXM: 7919 x 2^30 / 100 = 85,029,615,042.56, rounded.
  const GpuSpec h100 = resolve_gpu("NVIDIA H100 80GB HBM3", catalog);
  REQUIRE(h100.cuda_total_bytes);
  CHECK(*h100.cuda_total_bytes == 85'029'615'043);
  // Below nvidia-smi's 81,559 MiB = 85,520,809,984 B by 491,194,941 B (~468 MiB the driver keeps).
  CHECK(h100.memory_bytes - *h100.cuda_total_bytes == 491'194'941);
  CHECK(h100.cuda_total_source.find("R003") != std::string::npos);
  // RTX 3090, vLLM 0.8.5: 23.56 GiB = 2356 x 2^30 / 100 = 25,297,357,373.44, rounded.
  const GpuSpec rtx3090 = resolve_gpu("3090", catalog);
  REQUIRE(rtx3090.cuda_total_bytes);
  CHECK(*rtx3090.cuda_total_bytes == 25'297'357'373);
  CHECK(rtx3090.cuda_total_source.find("R085") != std::string::npos);
  // A100 80GB SXM: CUDA's deviceQuery, 85,100,068,864 B (79.26 GiB), where the vLLM 0.10.1.1 log
  // pairs (utilization 0.25 and 0.5) put it at 79.24 to 79.28 GiB.
  const GpuSpec a100 = resolve_gpu("a100-80g", catalog);
  REQUIRE(a100.cuda_total_bytes);
  CHECK(*a100.cuda_total_bytes == 85'100'068'864);
  CHECK(a100.cuda_total_source.find("deviceQuery") != std::string::npos);
  CHECK(a100.cuda_total_source.find("R062") != std::string::npos);
  // No source gives one for these: the PCIe H100 and A100 are other cards.
  for (const char* name : {"h100-pcie", "a100-80g-pcie", "4090", "h200"}) {
    INFO(name);
    CHECK_FALSE(resolve_gpu(name, catalog).cuda_total_bytes);
    CHECK(resolve_gpu(name, catalog).cuda_total_source.empty());
  }
  // A raw capacity says nothing about CUDA.
  CHECK_FALSE(resolve_gpu("80GiB", catalog).cuda_total_bytes);
}

namespace {

/// The error parsing a one-GPU catalog with `extra` fields throws, or "(no error)".
std::string catalog_error(const std::string& extra) {
  const std::string text = R"({"gpus": [{"id": "x", "name": "X", "memory_bytes": 1000, "memory_basis": "driver-reported")" +
                           extra + "}]}";
  try {
    parse_gpu_catalog(text, "gpus.json");
  } catch (const Error& error) {
    return error.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("cuda_total_bytes is checked like the other fields") {
  const GpuCatalog ok = parse_gpu_catalog(
      R"({"gpus": [{"id": "x", "name": "X", "memory_bytes": 1000, "memory_basis": "driver-reported",
                    "cuda_total_bytes": 999, "cuda_total_source": "a log"}]})", "gpus.json");
  CHECK(ok.gpus[0].cuda_total_bytes == 999u);
  CHECK(ok.gpus[0].cuda_total_source == "a log");
  CHECK(catalog_error("") == "(no error)");
  CHECK(catalog_error(R"(, "cuda_total_bytes": 1000, "cuda_total_source": "equal is allowed")") == "(no error)");
  CHECK(catalog_error(R"(, "cuda_total_bytes": 999)") ==
        "gpus.json: gpus[0]: field 'cuda_total_source': is missing (say which log printed cuda_total_bytes)");
  CHECK(catalog_error(R"(, "cuda_total_source": "a log")") ==
        "gpus.json: gpus[0]: field 'cuda_total_bytes': is missing (cuda_total_source describes nothing)");
  CHECK(catalog_error(R"(, "cuda_total_bytes": 0, "cuda_total_source": "a log")") ==
        "gpus.json: gpus[0]: field 'cuda_total_bytes': must be more than zero");
  CHECK(catalog_error(R"(, "cuda_total_bytes": 1001, "cuda_total_source": "a log")") ==
        "gpus.json: gpus[0]: field 'cuda_total_bytes': (1001) is more than memory_bytes (1000): CUDA sees at most what "
        "the driver reports");
  CHECK(catalog_error(R"(, "cuda_total_bytes": -1, "cuda_total_source": "a log")") ==
        "gpus.json: gpus[0]: field 'cuda_total_bytes': expected a whole number of at least 0, got a negative number");
  CHECK(catalog_error(R"(, "cuda_total_bytes": "79.19GiB", "cuda_total_source": "a log")") ==
        "gpus.json: gpus[0]: field 'cuda_total_bytes': expected a whole number of at least 0, got string");
}

TEST_CASE("kvplan gpus --format json lists the CUDA totals where known") {
  const ProcessResult result = run_kvplan("gpus --format json");
  REQUIRE(result.exit_code == 0);
  const nlohmann::json document = nlohmann::json::parse(result.out);
  std::size_t with_total = 0;
  for (const nlohmann::json& gpu : document["gpus"]) {
    INFO(gpu["id"]);
    CHECK(gpu.contains("cuda_total_bytes") == gpu.contains("cuda_total_source"));
    if (gpu.contains("cuda_total_bytes")) ++with_total;
    if (gpu["id"] == "h100") CHECK(gpu["cuda_total_bytes"] == 85'029'615'043ull);
    if (gpu["id"] == "rtx3090") CHECK(gpu["cuda_total_bytes"] == 25'297'357'373ull);
    if (gpu["id"] == "a100-80g") CHECK(gpu["cuda_total_bytes"] == 85'100'068'864ull);
  }
  CHECK(with_total == 3);
}
