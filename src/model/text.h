#pragma once
// Text from outside (a model's name, a GGUF architecture string, a flag's value) printed safely:
// a terminal must never receive its escape sequences, and a message never a 100 KB echo.

#include <cstddef>
#include <string>
#include <string_view>

namespace kvplan {

/// `text` with every control character (C0, DEL and C1, U+0080..U+009F) written as \xNN, and cut
/// to `max_bytes` with "..." when longer. Other UTF-8 is kept as it is.
std::string printable(std::string_view text, std::size_t max_bytes = 200);

/// `text` with every word (a run without spaces: a quoted value, a path) longer than `max_word`
/// bytes cut to its first 100 and last 40 bytes around "...", so that a message quoting a 100 KB
/// value still says what is wrong with it. Cuts fall between UTF-8 characters.
std::string shorten_words(std::string_view text, std::size_t max_word = 160);

/// `text` without the ASCII white space (space, tab, CR, LF, VT, FF) at either end. Bytes of
/// UTF-8 characters are never white space, so a multi-byte character is never split.
std::string_view trim(std::string_view text);

/// `text` with ASCII letters in lower case (names compared whatever their case: "Q4_K_M", "-GGUF").
std::string ascii_lower(std::string_view text);

/// Whether all of `text` matches `pattern`, where `*` matches any run of characters (dots too)
/// and `?` any one character, as Python's fnmatch reads the module lists ModelOpt writes; every
/// other character matches itself. At most len(pattern) x len(text) steps.
bool wildcard_match(std::string_view pattern, std::string_view text);

}  // namespace kvplan
