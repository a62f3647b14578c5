#pragma once
// What every engine's log reader needs before it looks for its sentences: a line without colour
// codes, without the prefixes loggers and process managers put in front (timestamps, levels,
// "(EngineCore pid=243)", "[rank1]:"), and small scanners for "anchor  = 12.5 MiB" shapes.

#include <optional>
#include <string>
#include <string_view>

namespace kvplan::logs {

/// `raw` without ANSI escape sequences (colours, cursor moves), carriage returns and other control
/// characters but tab.
std::string strip_control(std::string_view raw);

/// A line split into the process that printed it and the message.
struct CleanLine {
  std::string_view body;    ///< the message: prefixes removed
  std::string_view source;  ///< "Worker_TP1", "EngineCore_0", "rank1"; empty when none was printed
};

/// Removes, in any order and repeated: "(Name pid=N)" process tags, "[rankN]:" tags, ISO and
/// syslog timestamps (docker logs -t, journalctl), Python logging's "LEVEL MM-DD HH:MM:SS
/// [file.py:N]" and "[YYYY-MM-DD HH:MM:SS TPn]" (SGLang). `line` must outlive the result.
CleanLine split_prefix(std::string_view line);

/// The text after the first occurrence of `anchor`, or nullopt.
std::optional<std::string_view> after(std::string_view line, std::string_view anchor);

/// The first number of `text` after optional spaces, '=' and ':' ("  =  3072.00 MiB" -> "3072.00"),
/// with thousands commas; nullopt when `text` does not start so.
std::optional<std::string_view> leading_number(std::string_view text);

/// The word right after `number` in `text` (its unit: "GiB" in "3072.00 GiB"), spaces skipped,
/// cut at a character that is not a letter.
std::string_view unit_after(std::string_view text, std::string_view number);

/// The value of `key` in "key=value" / "key: value" / key='value' / key="value" lists: the text
/// after the key up to ',', ';', ')', '}', a closing quote or a space. nullopt when absent. The
/// key must start the text or follow a separator, so "max_seq_len" does not match "seq_len". A
/// quoted value without its closing quote (a cut line) is nullopt.
std::optional<std::string_view> keyed_value(std::string_view line, std::string_view key);

}  // namespace kvplan::logs
