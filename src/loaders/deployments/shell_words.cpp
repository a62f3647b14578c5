#include "loaders/deployments/shell_words.h"

#include <fmt/format.h>

#include "kvplan/error.h"

namespace kvplan {

namespace {

constexpr std::size_t kMaxText = 1 << 20;
constexpr std::size_t kMaxWords = 10'000;

/// One pass over the text: words, and where a command ends. `commands` false: separators are
/// ordinary characters (split_shell_words keeps `;` in a word, as a program's argv would).
std::vector<std::vector<std::string>> split(std::string_view text, bool commands) {
  if (text.size() > kMaxText) throw Error("a command line longer than 1 MiB");
  std::vector<std::vector<std::string>> out(1);
  std::string word;
  bool in_word = false;  // a word has begun (even an empty one: '' is a word)
  bool skipping = false;  // after a pipe: the rest of this command is not its argv
  bool skip_one = false;  // after a redirection: its target is not an argument
  std::size_t words = 0;
  const auto end_word = [&] {
    if (!in_word) return;
    if (skip_one) {
      skip_one = false;
    } else if (!skipping) {
      if (++words > kMaxWords) throw Error("a command line of more than 10,000 words");
      out.back().push_back(std::move(word));
    }
    word.clear();
    in_word = false;
  };
  const auto end_command = [&] {
    end_word();
    skipping = false;
    skip_one = false;
    if (!out.back().empty()) out.emplace_back();
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\') {
      if (i + 1 < text.size() && text[i + 1] == '\n') {
        ++i;  // a continuation: the line goes on
        continue;
      }
      if (i + 1 < text.size() && text[i + 1] == '\r' && i + 2 < text.size() && text[i + 2] == '\n') {
        i += 2;
        continue;
      }
      in_word = true;
      if (i + 1 < text.size()) word.push_back(text[++i]);
      continue;
    }
    if (c == '\'') {
      const std::size_t close = text.find('\'', i + 1);
      if (close == std::string_view::npos) throw Error("an unterminated ' quote in the command line");
      word.append(text.substr(i + 1, close - i - 1));
      in_word = true;
      i = close;
      continue;
    }
    if (c == '"') {
      in_word = true;
      std::size_t j = i + 1;
      for (; j < text.size() && text[j] != '"'; ++j) {
        if (text[j] == '\\' && j + 1 < text.size()) {
          const char next = text[j + 1];
          if (next == '\n') {
            ++j;
            continue;
          }
          if (next == '"' || next == '\\' || next == '$' || next == '`') {
            word.push_back(next);
            ++j;
            continue;
          }
        }
        word.push_back(text[j]);
      }
      if (j >= text.size()) throw Error("an unterminated \" quote in the command line");
      i = j;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      end_word();
      continue;
    }
    if (c == '\n') {
      if (commands) end_command();
      else end_word();
      continue;
    }
    if (c == '#' && !in_word) {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
      continue;
    }
    if (commands && (c == ';' || c == '&' || c == '|')) {
      // `;`, `&&`, `||` and `&` end a command; one `|` pipes it into the next (its words end here).
      const bool doubled = i + 1 < text.size() && text[i + 1] == c;
      if (c == '|' && !doubled) {
        end_word();
        skipping = true;
        continue;
      }
      if (doubled) ++i;
      end_command();
      continue;
    }
    if (commands && (c == '>' || c == '<') &&
        (!in_word || word.find_first_not_of("0123456789") == std::string::npos)) {
      // A redirection (`> log`, `2>&1`): its file descriptor and target are not the program's argv.
      word.clear();
      in_word = false;
      skip_one = true;
      if (i + 1 < text.size() && (text[i + 1] == '&' || text[i + 1] == '>')) ++i;
      continue;
    }
    in_word = true;
    word.push_back(c);
  }
  end_word();
  if (out.back().empty()) out.pop_back();
  return out;
}

}  // namespace

std::vector<std::string> split_shell_words(std::string_view text) {
  std::vector<std::vector<std::string>> one = split(text, false);
  return one.empty() ? std::vector<std::string>{} : std::move(one.front());
}

std::vector<std::vector<std::string>> split_shell_commands(std::string_view text) { return split(text, true); }

}  // namespace kvplan
