#pragma once
// A program's output split into its lines, for tests that compare output line by line.

#include <string>
#include <vector>

namespace kvplan::testing {

/// The lines of `text` without their '\n'; a last line without one counts, a final '\n' adds none.
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, end - start));
    start = end == std::string::npos ? text.size() : end + 1;
  }
  return lines;
}

}  // namespace kvplan::testing
