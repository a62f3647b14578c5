#include <catch2/catch.hpp>

#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "kvplan/gpu.h"
#include "kvplan/units.h"

using namespace kvplan;

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
