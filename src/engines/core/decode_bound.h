#pragma once
// The decode-speed roofline of a row (Row::decode_bound), set by the core for every row.

#include <optional>

#include "engines/core/profile.h"
#include "kvplan/gpu.h"
#include "kvplan/model_spec.h"
#include "kvplan/plan.h"

namespace kvplan {

/// bytes read per decode step / the card's bandwidth (+ those read from system RAM / its
/// bandwidth when `host` says the engine keeps layers there); nullopt when the card's bandwidth
/// is unknown.
std::optional<DecodeBound> decode_bound(const Row& row, const ModelSpec& model, const GpuSpec& gpu,
                                        const std::optional<HostMemory>& host = std::nullopt);

/// decode_bound() into `bound` (every field set, its sentence's buffer reused); false, and `bound`
/// unspecified, where decode_bound() gives nullopt.
bool decode_bound_into(DecodeBound& bound, const Row& row, const ModelSpec& model, const GpuSpec& gpu,
                       const std::optional<HostMemory>& host = std::nullopt);

}  // namespace kvplan
