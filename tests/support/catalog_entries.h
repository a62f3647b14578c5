#pragma once
// Built-in catalog entries by id, for tests: a missing id fails the test instead of crashing it.

#include <catch2/catch.hpp>

#include <cstddef>
#include <vector>

#include "kvplan/catalog.h"

namespace kvplan::testing {

inline const ModelSpec& catalog_model(const char* id) {
  const ModelSpec* found = builtin_models().find(id);
  REQUIRE(found != nullptr);
  return *found;
}

inline const GpuSpec& catalog_gpu(const char* id) {
  const GpuSpec* found = builtin_gpus().find(id);
  REQUIRE(found != nullptr);
  return *found;
}

/// `count` of one catalog card: the GPUs of one deployment.
inline std::vector<GpuSpec> catalog_cards(const char* id, std::size_t count = 1) {
  return std::vector<GpuSpec>(count, catalog_gpu(id));
}

}  // namespace kvplan::testing
