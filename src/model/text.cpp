#include "model/text.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace kvplan {

namespace {

bool is_continuation(unsigned char c) { return c >= 0x80 && c <= 0xBF; }

/// Bytes of the well-formed UTF-8 sequence starting at `i`, or 0.
std::size_t sequence_length(std::string_view text, std::size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  const std::size_t n = lead >= 0xC2 && lead <= 0xDF ? 2 : lead >= 0xE0 && lead <= 0xEF ? 3 : lead >= 0xF0 && lead <= 0xF4 ? 4 : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if (!is_continuation(static_cast<unsigned char>(text[i + k]))) return 0;
  return n;
}

}  // namespace

std::string shorten_words(std::string_view text, std::size_t max_word) {
  constexpr std::size_t kHead = 100, kTail = 40;
  std::string out;
  out.reserve(std::min(text.size(), std::size_t{4096}));
  while (!text.empty()) {
    const std::size_t space = text.find(' ');
    const std::string_view word = text.substr(0, space);
    if (word.size() <= std::max(max_word, kHead + kTail + 3)) {
      out.append(word);
    } else {
      std::size_t head = kHead, tail = word.size() - kTail;
      while (head > 0 && is_continuation(static_cast<unsigned char>(word[head]))) --head;
      while (tail < word.size() && is_continuation(static_cast<unsigned char>(word[tail]))) ++tail;
      out.append(word.substr(0, head)).append("...").append(word.substr(tail));
    }
    if (space == std::string_view::npos) break;
    out += ' ';
    text.remove_prefix(space + 1);
  }
  return out;
}

std::string printable(std::string_view text, std::size_t max_bytes) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes) + 8);
  std::size_t i = 0;
  while (i < text.size()) {
    if (out.size() >= max_bytes) {
      out += "...";
      break;
    }
    // A run of plain printable ASCII (most of any line) is appended at once, up to the limit.
    std::size_t plain = i;
    while (plain < text.size() && plain - i < max_bytes - out.size() && text[plain] >= 0x20 && text[plain] < 0x7F) ++plain;
    if (plain > i) {
      out.append(text.substr(i, plain - i));
      i = plain;
      continue;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      // C0 controls and DEL: ESC starts a terminal's escape sequences.
      if (c < 0x20 || c == 0x7F) out += fmt::format("\\x{:02x}", c);
      else out += static_cast<char>(c);
      ++i;
      continue;
    }
    const std::size_t n = sequence_length(text, i);
    // C1 controls (U+0080..U+009F, 0xC2 0x80..0x9F) act as escapes on some terminals too.
    const bool c1 = n == 2 && c == 0xC2 && static_cast<unsigned char>(text[i + 1]) <= 0x9F;
    if (n == 0 || c1) {
      for (std::size_t k = 0; k < (n == 0 ? 1 : n); ++k)
        out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[i + k]));
      i += n == 0 ? 1 : n;
      continue;
    }
    out.append(text.substr(i, n));
    i += n;
  }
  return out;
}

std::string_view trim(std::string_view text) {
  constexpr std::string_view kWhiteSpace = " \t\r\n\v\f";
  const std::size_t begin = text.find_first_not_of(kWhiteSpace);
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(kWhiteSpace) - begin + 1);
}

std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool wildcard_match(std::string_view pattern, std::string_view text) {
  // Greedy, remembering the last star: on a mismatch the star takes one more character and the
  // match resumes after it. Each star is retried at most len(text) times.
  std::size_t p = 0, t = 0;
  std::size_t star = std::string_view::npos, star_text = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      star_text = t;
    } else if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++star_text;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace kvplan
