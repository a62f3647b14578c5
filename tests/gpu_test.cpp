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

TEST_CASE("the consumer cards people run models on, at what nvidia-smi and rocm-smi report") {
  const GpuCatalog& catalog = builtin_gpus();
  // nvidia-smi's memory.total in MiB (gpus.json names each log): Ada prints 4 MiB under the
  // nominal size, Blackwell 41 to 81 under, Ampere and Turing (current drivers) the nominal size.
  const struct {
    const char* typed;
    const char* id;
    std::uint64_t mib;
  } cards[] = {{"4060", "rtx4060", 8188},           {"RTX 4060 Ti 16GB", "rtx4060ti-16g", 16380},
               {"4070", "rtx4070", 12282},           {"4070 super", "rtx4070super", 12282},
               {"4070 ti", "rtx4070ti", 12282},      {"4090 d", "rtx4090d", 24564},
               {"5080", "rtx5080", 16303},           {"5070 ti", "rtx5070ti", 16303},
               {"5070", "rtx5070", 12227},           {"5060 ti 16gb", "rtx5060ti-16g", 16311},
               {"3080 ti", "rtx3080ti", 12288},      {"3070", "rtx3070", 8192},
               {"3060 ti", "rtx3060ti", 8192},       {"2080 ti", "rtx2080ti", 11264}};
  for (const auto& card : cards) {
    INFO(card.typed);
    const GpuSpec gpu = resolve_gpu(card.typed, catalog);
    CHECK(gpu.id == card.id);
    CHECK(gpu.memory_bytes == card.mib * MiB);
    CHECK(gpu.resolution_note.empty());
  }
  // rocm-smi's "VRAM Total Memory (B): 25753026560" = 24,560 MiB, 16 MiB under 24 GiB.
  CHECK(resolve_gpu("7900 xtx", catalog).memory_bytes == 25'753'026'560ull);
  CHECK(resolve_gpu("4060", catalog).fp8);
  CHECK_FALSE(resolve_gpu("3080 ti", catalog).fp8);
}

TEST_CASE("a name that two memory sizes of one card share plans for the smaller, another card's name does not", "[verdict]") {
  const GpuCatalog& catalog = builtin_gpus();
  // The RTX 4060 Ti and the 3080 come in two sizes under one name (nvidia-smi prints the same
  // name for both): the bare name is the smaller card, with a note.
  const GpuSpec ti = resolve_gpu("4060 ti", catalog);
  CHECK(ti.id == "rtx4060ti");
  CHECK(ti.memory_bytes == 8188 * MiB);
  CHECK_THAT(ti.resolution_note, Catch::Contains("rtx4060ti-16g (16.00 GiB)"));
  CHECK(resolve_gpu("3080", catalog).id == "rtx3080");
  CHECK_THAT(resolve_gpu("3080", catalog).resolution_note, Catch::Contains("rtx3080-12g") && !Catch::Contains("rtx3080ti"));
  // "4070" is the RTX 4070, not also the 4070 Ti SUPER (16 GB) its name starts; "5070" likewise.
  CHECK(resolve_gpu("4070", catalog).resolution_note.empty());
  CHECK(resolve_gpu("5070", catalog).resolution_note.empty());
  // The A100 still means both of its sizes.
  CHECK(resolve_gpu("a100", catalog).id == "a100-40g");
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
