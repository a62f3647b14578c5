#include "model/suggest.h"

#include <algorithm>
#include <cctype>
#include <numeric>

namespace kvplan {

namespace {

char fold(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

std::string folded(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), fold);
  return out;
}

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // One row of the classic dynamic programme is enough: row[j] holds the distance between the
  // prefix of `a` seen so far and the first j characters of `b`.
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const std::size_t substitution = diagonal + (fold(a[i - 1]) == fold(b[j - 1]) ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitution});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::vector<std::string> closest_names(std::string_view typed, const std::vector<std::string>& candidates,
                                       std::size_t limit) {
  const std::string needle = folded(typed);
  // A typo changes a few characters: about a third of the name, at least 2, but only 1 in a name
  // of four characters or fewer ("all" is not a typo of "l4").
  const std::size_t max_distance = needle.size() <= 4 ? 1 : std::max<std::size_t>(2, needle.size() / 3);
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (const std::string& candidate : candidates) {
    // The distance is at least the difference in length: a candidate that much shorter or longer
    // is no typo, and its quadratic distance is not computed (a 100 KB value against the catalog).
    const std::size_t gap = needle.size() > candidate.size() ? needle.size() - candidate.size() : candidate.size() - needle.size();
    std::size_t distance = gap > max_distance ? gap : edit_distance(needle, candidate);
    const std::string haystack = folded(candidate);
    if (needle.size() >= 3 && haystack.find(needle) != std::string::npos)
      distance = std::min<std::size_t>(distance, 1);  // "llama3" should find "llama3.1-8b"
    if (needle.size() == 2 && haystack.rfind(needle, 0) == 0) distance = std::min<std::size_t>(distance, 1);  // "q8": q8_0
    if (distance <= max_distance) scored.emplace_back(distance, candidate);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> names;
  for (const auto& [distance, name] : scored) {
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    names.push_back(name);
    if (names.size() == limit) break;
  }
  return names;
}

std::string did_you_mean(std::string_view typed, const std::vector<std::string>& candidates) {
  const std::vector<std::string> names = closest_names(typed, candidates);
  if (names.empty()) return "";
  std::string text = " (did you mean: ";
  for (std::size_t i = 0; i < names.size(); ++i) text += (i ? ", " : "") + names[i];
  return text + "?)";
}

}  // namespace kvplan
