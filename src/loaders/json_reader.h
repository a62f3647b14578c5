#pragma once
// Reading JSON documents with errors that say where: "file:3:14: ..." for syntax and
// "file: field 'layers': ..." for values. Internal to kvplan's loaders.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvplan {

/// Parses `text`; a syntax error becomes an Error "origin:line:column: message". Nesting deeper
/// than 256 levels is refused rather than risked. Python's NaN / Infinity are accepted (see
/// python_non_finite).
nlohmann::json parse_json_document(std::string_view text, std::string_view origin);

/// Python's bare NaN, Infinity or -Infinity where parse_json_document found one (it reads them
/// as marked strings, so that no number field takes them for a number); nullopt for any other value.
std::optional<std::string_view> python_non_finite(const nlohmann::json& value);

/// What `value` is, for a message: "a negative number", "string", "Infinity (not a finite number)".
std::string json_type_name(const nlohmann::json& value);

/// The contents of a file, or an Error naming it (missing, a directory, unreadable, over 64 MiB).
std::string read_text_file(const std::string& path);

/// Reads the fields of one JSON object by name, checking types and ranges, and remembers which
/// keys were read so that a misspelt key can be refused instead of silently ignored.
class JsonObjectReader {
 public:
  JsonObjectReader(const nlohmann::json& object, std::string context);

  bool has(const std::string& key) const;
  const nlohmann::json* find(const std::string& key);  ///< marks the key as read; nullptr if absent or null

  std::uint64_t required_uint(const std::string& key);
  std::optional<std::uint64_t> optional_uint(const std::string& key);
  std::string required_string(const std::string& key);
  std::optional<std::string> optional_string(const std::string& key);
  std::vector<std::string> optional_string_list(const std::string& key);
  std::optional<bool> optional_bool(const std::string& key);
  std::optional<double> optional_number(const std::string& key);

  /// An Error naming the first key that was never read.
  void reject_unknown_keys() const;
  /// "context: field 'key': message"
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;

  const std::string& context() const { return context_; }

 private:
  const nlohmann::json& object_;
  std::string context_;
  std::set<std::string> read_;
};

/// The value as an unsigned integer, refusing negatives, fractions, NaN and values past 2^64.
std::uint64_t json_to_uint(const nlohmann::json& value, const std::string& what);

}  // namespace kvplan
