#pragma once
/// "Did you mean" for unknown names: the catalog names closest to what was typed.

#include <string>
#include <string_view>
#include <vector>

namespace kvplan {

/// Levenshtein distance between two strings, compared case-insensitively.
std::size_t edit_distance(std::string_view a, std::string_view b);

/// Up to `limit` candidates closest to `typed`, closest first; only candidates near enough to be a
/// plausible typo (or containing what was typed) are returned.
std::vector<std::string> closest_names(std::string_view typed, const std::vector<std::string>& candidates,
                                       std::size_t limit = 3);

/// " (did you mean: a, b?)", or "" when nothing is close.
std::string did_you_mean(std::string_view typed, const std::vector<std::string>& candidates);

}  // namespace kvplan
