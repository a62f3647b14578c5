#pragma once
// Tests of the generic profile ask for one row, or the largest context of one row's settings,
// without building a whole request.

#include <optional>

#include "kvplan/plan.h"

namespace kvplan::testing {

/// The largest context (at most `limit`) at which `settings` still fits, by plan_row.
inline std::optional<std::uint64_t> max_fitting_ctx(const ModelSpec& model, RowSettings settings, std::uint64_t limit) {
  return largest_holding(limit, [&](std::uint64_t ctx) {
    settings.ctx = ctx;
    try {
      return plan_row(model, settings).fits;
    } catch (const Error&) {
      return false;
    }
  });
}

/// A card of exactly `bytes`, as `--gpu 24GiB` gives.
inline GpuSpec card_of(std::uint64_t bytes) {
  GpuSpec gpu;
  gpu.id = "card";
  gpu.name = "card";
  gpu.memory_bytes = bytes;
  gpu.memory_basis = "given";
  return gpu;
}

}  // namespace kvplan::testing
