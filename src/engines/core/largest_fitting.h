#pragma once
// The guided search of engines/core/search.cpp (kvplan max, kvplan fit) for make_plan's largest
// context: a few probes where memory grows linearly with the context, where bisection takes 17
// for a 128K limit (a sixth of the headline command's start-up, issue #10).

#include <cstdint>
#include <functional>
#include <optional>

#include "engines/core/profile.h"

namespace kvplan {

/// The largest n in [1, limit] whose row fits (row_at(n), nullopt: it cannot be priced, so it does
/// not fit); nullopt when not even 1 fits. Probes the limit first, then between the last row that
/// fits and the last that does not, where their headroom says the boundary is. Memory never
/// shrinks as n grows (tests/property_test.cpp), so the answer is bisection's, exactly.
std::optional<std::uint64_t> largest_fitting(std::uint64_t limit,
                                             const std::function<std::optional<Row>(std::uint64_t)>& row_at);

}  // namespace kvplan
