#include "loaders/logs/line_cleanup.h"

#include <cctype>

namespace kvplan::logs {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

void skip_spaces(std::string_view& text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
}

/// "(EngineCore pid=243) " -> "EngineCore"; nullopt when `text` does not start with such a tag.
std::optional<std::string_view> process_tag(std::string_view& text) {
  if (text.empty() || text.front() != '(') return std::nullopt;
  const std::size_t close = text.find(')');
  if (close == std::string_view::npos || close > 80) return std::nullopt;
  const std::string_view inside = text.substr(1, close - 1);
  const std::size_t pid = inside.find(" pid=");
  if (pid == std::string_view::npos || pid == 0) return std::nullopt;
  text.remove_prefix(close + 1);
  return inside.substr(0, pid);
}

/// "[rank1]: " -> "rank1".
std::optional<std::string_view> rank_tag(std::string_view& text) {
  if (text.size() < 7 || text.substr(0, 5) != "[rank") return std::nullopt;
  std::size_t i = 5;
  while (i < text.size() && is_digit(text[i])) ++i;
  if (i == 5 || i + 1 >= text.size() || text[i] != ']' || text[i + 1] != ':') return std::nullopt;
  const std::string_view name = text.substr(1, i - 1);
  text.remove_prefix(i + 2);
  return name;
}

/// Counts the run of characters from `pos` that satisfy `pred`.
template <typename Pred>
std::size_t run(std::string_view text, std::size_t pos, Pred pred) {
  std::size_t n = 0;
  while (pos + n < text.size() && pred(text[pos + n])) ++n;
  return n;
}

/// "2025-01-31T10:00:00.123456789Z " (docker logs -t) or "2025-01-31 10:00:00,123 " at the start.
bool iso_timestamp(std::string_view& text) {
  if (text.size() < 19 || run(text, 0, is_digit) != 4 || text[4] != '-' || text[7] != '-') return false;
  if (text[10] != 'T' && text[10] != ' ') return false;
  if (text[13] != ':' || text[16] != ':') return false;
  std::size_t end = 19;
  while (end < text.size() && text[end] != ' ' && text[end] != '\t' && text[end] != ']') ++end;
  text.remove_prefix(end);
  return true;
}

/// "Jan 31 10:00:00 host proc[123]: " (syslog, journalctl).
bool syslog_prefix(std::string_view& text) {
  if (text.size() < 16 || !is_alpha(text[0]) || !is_alpha(text[1]) || !is_alpha(text[2]) || text[3] != ' ') return false;
  std::size_t i = 4;
  while (i < text.size() && text[i] == ' ') ++i;
  const std::size_t day = run(text, i, is_digit);
  if (day == 0 || day > 2) return false;
  i += day;
  if (i + 9 > text.size() || text[i] != ' ' || text[i + 3] != ':' || text[i + 6] != ':') return false;
  const std::size_t colon = text.find(": ", i + 9);
  if (colon == std::string_view::npos || colon > i + 9 + 80) return false;
  text.remove_prefix(colon + 2);
  return true;
}

/// Python logging as vLLM formats it: "INFO 04-22 01:47:55 [v1/worker/gpu_worker.py:436] ", and
/// bare levels ("INFO:", "WARNING ").
bool level_prefix(std::string_view& text) {
  static constexpr std::string_view kLevels[] = {"DEBUG", "INFO", "WARNING", "WARN", "ERROR", "CRITICAL"};
  for (const std::string_view level : kLevels) {
    if (text.substr(0, level.size()) != level || text.size() == level.size()) continue;
    std::string_view rest = text.substr(level.size());
    if (rest.front() == ':') rest.remove_prefix(1);
    else if (rest.front() != ' ') continue;
    skip_spaces(rest);
    // "04-22 01:47:55 "
    if (rest.size() >= 15 && is_digit(rest[0]) && rest[2] == '-' && rest[5] == ' ' && rest[8] == ':') {
      rest.remove_prefix(14);
      skip_spaces(rest);
    }
    // "[file.py:123] "
    if (!rest.empty() && rest.front() == '[') {
      const std::size_t close = rest.find("] ");
      if (close != std::string_view::npos && close < 120 && rest.substr(0, close).find(".py:") != std::string_view::npos)
        rest.remove_prefix(close + 2);
    }
    text = rest;
    return true;
  }
  return false;
}

/// SGLang: "[2025-10-16 12:00:00 TP0] " -> "TP0"; a bare "[2025-10-16 12:00:00] " too.
std::optional<std::string_view> bracketed_timestamp(std::string_view& text, bool& matched) {
  matched = false;
  if (text.size() < 21 || text.front() != '[') return std::nullopt;
  std::string_view inner = text.substr(1);
  if (!iso_timestamp(inner)) return std::nullopt;
  skip_spaces(inner);
  const std::size_t close = inner.find(']');
  if (close == std::string_view::npos || close > 40) return std::nullopt;
  const std::string_view name = inner.substr(0, close);
  inner.remove_prefix(close + 1);
  text = inner;
  matched = true;
  if (name.empty()) return std::nullopt;
  return name;
}

}  // namespace

std::string strip_control(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const auto c = static_cast<unsigned char>(raw[i]);
    if (c == 0x1b) {
      // CSI: ESC '[' parameters... final byte in 0x40..0x7E; other escapes: ESC and one byte.
      if (i + 1 < raw.size() && raw[i + 1] == '[') {
        i += 2;
        while (i < raw.size() && !(static_cast<unsigned char>(raw[i]) >= 0x40 && static_cast<unsigned char>(raw[i]) <= 0x7e)) ++i;
      } else {
        ++i;
      }
      continue;
    }
    if ((c < 0x20 && c != '\t') || c == 0x7f) continue;
    out.push_back(raw[i]);
  }
  return out;
}

CleanLine split_prefix(std::string_view line) {
  CleanLine clean;
  std::string_view text = line;
  // Each pass removes one prefix; loggers stack them ("2025-... (EngineCore pid=1) INFO 04-22 ...").
  for (int pass = 0; pass < 8; ++pass) {
    skip_spaces(text);
    if (const auto name = process_tag(text)) {
      clean.source = *name;
      continue;
    }
    if (const auto name = rank_tag(text)) {
      if (clean.source.empty()) clean.source = *name;
      continue;
    }
    bool bracketed = false;
    if (const auto name = bracketed_timestamp(text, bracketed); bracketed) {
      if (name && clean.source.empty()) clean.source = *name;
      continue;
    }
    if (iso_timestamp(text) || syslog_prefix(text) || level_prefix(text)) continue;
    break;
  }
  skip_spaces(text);
  clean.body = text;
  return clean;
}

std::optional<std::string_view> after(std::string_view line, std::string_view anchor) {
  const std::size_t at = line.find(anchor);
  if (at == std::string_view::npos) return std::nullopt;
  return line.substr(at + anchor.size());
}

std::optional<std::string_view> leading_number(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t' || text.front() == '=' || text.front() == ':'))
    text.remove_prefix(1);
  std::size_t n = 0;
  bool digits = false;
  while (n < text.size() && (is_digit(text[n]) || text[n] == ',' || text[n] == '.')) {
    digits = digits || is_digit(text[n]);
    ++n;
  }
  // A trailing '.' or ',' ends a sentence, not the number.
  while (n > 0 && (text[n - 1] == '.' || text[n - 1] == ',')) --n;
  if (!digits || n == 0) return std::nullopt;
  return text.substr(0, n);
}

std::string_view unit_after(std::string_view text, std::string_view number) {
  const std::size_t at = text.find(number);
  if (at == std::string_view::npos) return {};
  std::string_view rest = text.substr(at + number.size());
  skip_spaces(rest);
  std::size_t n = 0;
  while (n < rest.size() && is_alpha(rest[n])) ++n;
  return rest.substr(0, n);
}

std::optional<std::string_view> keyed_value(std::string_view line, std::string_view key) {
  std::size_t from = 0;
  while (from < line.size()) {
    const std::size_t at = line.find(key, from);
    if (at == std::string_view::npos) return std::nullopt;
    from = at + 1;
    // The key starts the line or follows a separator, and is followed by '=' or ': '.
    if (at > 0) {
      const char before = line[at - 1];
      if (is_alpha(before) || is_digit(before) || before == '_' || before == '.') continue;
    }
    std::string_view rest = line.substr(at + key.size());
    if (rest.substr(0, 2) == "':") rest.remove_prefix(1);  // Python dicts: 'key': value
    if (rest.empty() || (rest.front() != '=' && rest.front() != ':')) continue;
    rest.remove_prefix(1);
    skip_spaces(rest);
    char quote = 0;
    if (!rest.empty() && (rest.front() == '\'' || rest.front() == '"')) {
      quote = rest.front();
      rest.remove_prefix(1);
    }
    std::size_t n = 0;
    if (quote) {
      while (n < rest.size() && rest[n] != quote) ++n;
      // No closing quote: the line was cut (a terminal's wrap, a truncated paste) inside the value.
      if (n == rest.size()) return std::nullopt;
    } else {
      while (n < rest.size() && rest[n] != ',' && rest[n] != ';' && rest[n] != ')' && rest[n] != '}' && rest[n] != ' ' &&
             rest[n] != '\t')
        ++n;
    }
    return rest.substr(0, n);
  }
  return std::nullopt;
}

}  // namespace kvplan::logs
