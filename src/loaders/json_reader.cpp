#include "loaders/json_reader.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "kvplan/error.h"

namespace kvplan {

namespace {

constexpr int kMaxDepth = 256;
constexpr std::uintmax_t kMaxFileBytes = 64 * 1024 * 1024;

/// 1-based line and column of byte offset `position` (nlohmann counts the byte after the error).
std::pair<std::size_t, std::size_t> line_and_column(std::string_view text, std::size_t position) {
  std::size_t line = 1;
  std::size_t column = 1;
  const std::size_t end = std::min(position == 0 ? 0 : position - 1, text.size());
  for (std::size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

/// nlohmann's message starts with "[json.exception.parse_error.101] parse error at line 1, column
/// 5: "; keep only the reason, since kvplan prints the position its own way.
std::string reason_of(const nlohmann::json::parse_error& error) {
  std::string text = error.what();
  const std::size_t colon = text.find(": ");
  if (colon != std::string::npos) text = text.substr(colon + 2);
  const std::string prefix = "syntax error while parsing value - ";
  if (text.rfind(prefix, 0) == 0) text = text.substr(prefix.size());
  return text;
}

// Python's json module writes a float that is not finite as a bare NaN, Infinity or -Infinity
// (Nemotron-H's "time_step_limit": [0.0, Infinity]), which JSON has no word for. Such a token is
// read as a string no real config holds, the token behind a NUL: a field that wants a number then
// refuses it by name, and the fields kvplan never reads (most of them) load as they are.
constexpr std::string_view kNonFiniteMark = "\\u0000";
constexpr std::string_view kNonFiniteTokens[] = {"-Infinity", "Infinity", "NaN"};

/// Where the rewritten text's bytes came from: after each replaced token, how many bytes longer
/// the text has grown, so that an error's position can be given in the file as written.
struct Rewrite {
  std::size_t end_in_new;  ///< one past the replacement in the rewritten text
  std::size_t start_in_old;
  std::size_t growth;  ///< bytes added by this and every earlier replacement
};

bool is_word_byte(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }

/// `text` with each bare NaN / Infinity / -Infinity outside a string quoted as a marked string, or
/// nullopt when there is none (the common case: nothing is copied).
std::optional<std::string> quote_non_finite(std::string_view text, std::vector<Rewrite>& rewrites) {
  if (text.find("NaN") == std::string_view::npos && text.find("Infinity") == std::string_view::npos) return std::nullopt;
  std::string out;
  bool in_string = false;
  std::size_t copied = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
      continue;
    }
    if (i > 0 && is_word_byte(text[i - 1])) continue;
    for (std::string_view token : kNonFiniteTokens) {
      if (text.compare(i, token.size(), token) != 0) continue;
      const std::size_t end = i + token.size();
      if (end < text.size() && is_word_byte(text[end])) continue;
      out.append(text.substr(copied, i - copied));
      out += fmt::format("\"{}{}\"", kNonFiniteMark, token);
      copied = end;
      rewrites.push_back({out.size(), i, out.size() - end});
      i = end - 1;
      break;
    }
  }
  if (rewrites.empty()) return std::nullopt;
  out.append(text.substr(copied));
  return out;
}

/// nlohmann's error position (1-based) in the rewritten text as a position in the file as written;
/// inside a replacement, the token it replaced.
std::size_t original_position(std::size_t position, const std::vector<Rewrite>& rewrites) {
  if (position == 0) return 0;
  const std::size_t at = position - 1;
  std::size_t growth = 0;
  for (const Rewrite& r : rewrites) {
    if (at < r.start_in_old + growth) return at - growth + 1;
    if (at < r.end_in_new) return r.start_in_old + 1;
    growth = r.growth;
  }
  return at - growth + 1;
}

}  // namespace

std::optional<std::string_view> python_non_finite(const nlohmann::json& value) {
  if (!value.is_string()) return std::nullopt;
  const std::string& text = value.get_ref<const std::string&>();
  if (text.empty() || text[0] != '\0') return std::nullopt;
  for (std::string_view token : kNonFiniteTokens)
    if (std::string_view(text).substr(1) == token) return token;
  return std::nullopt;
}

std::string json_type_name(const nlohmann::json& value) {
  if (const auto token = python_non_finite(value)) return fmt::format("{} (not a finite number)", *token);
  if (value.is_number_float()) return "a fractional number";
  if (value.is_number_integer() && !value.is_number_unsigned() && value.get<std::int64_t>() < 0) return "a negative number";
  return value.type_name();
}

nlohmann::json parse_json_document(std::string_view text, std::string_view origin) {
  // nlohmann stops at a NUL byte and accepts what came before it: "{...}\0garbage" would pass.
  if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos) {
    const auto [line, column] = line_and_column(text, nul + 1);
    throw Error(fmt::format("{}:{}:{}: invalid JSON: a NUL byte", origin, line, column));
  }
  bool too_deep = false;
  const auto limit_depth = [&](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
    if (depth > kMaxDepth) too_deep = true;
    return !too_deep;
  };
  std::vector<Rewrite> rewrites;
  const std::optional<std::string> rewritten = quote_non_finite(text, rewrites);
  const std::string_view parsed = rewritten ? std::string_view(*rewritten) : text;
  try {
    nlohmann::json document = nlohmann::json::parse(parsed.begin(), parsed.end(), limit_depth);
    if (too_deep) throw Error(fmt::format("{}: JSON nested deeper than {} levels", origin, kMaxDepth));
    return document;
  } catch (const nlohmann::json::parse_error& error) {
    const auto [line, column] = line_and_column(text, original_position(error.byte, rewrites));
    throw Error(fmt::format("{}:{}:{}: invalid JSON: {}", origin, line, column, reason_of(error)));
  } catch (const nlohmann::json::exception& error) {
    // e.g. a number past the range of a double ("1e400"): nlohmann gives no position for it.
    std::string reason = error.what();
    const std::size_t bracket = reason.find("] ");
    if (bracket != std::string::npos) reason = reason.substr(bracket + 2);
    throw Error(fmt::format("{}: invalid JSON: {}", origin, reason));
  }
}

std::string read_text_file(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) throw Error(fmt::format("{}: no such file", path));
  if (std::filesystem::is_directory(status)) throw Error(fmt::format("{}: is a directory, expected a file", path));
  // A FIFO blocks the read forever and a device never ends: only regular files are read.
  if (!std::filesystem::is_regular_file(status))
    throw Error(fmt::format("{}: is not a regular file (a pipe, socket or device), expected a file", path));
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxFileBytes) throw Error(fmt::format("{}: file is larger than 64 MiB", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot be read", path));
  // The size check above cannot see devices and pipes (/dev/zero has no size), so the read itself
  // stops past the limit instead of growing without end.
  std::string contents;
  std::vector<char> buffer(64 * 1024);
  while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0) {
    contents.append(buffer.data(), static_cast<std::size_t>(in.gcount()));
    if (contents.size() > kMaxFileBytes) throw Error(fmt::format("{}: file is larger than 64 MiB", path));
  }
  if (in.bad()) throw Error(fmt::format("{}: cannot be read", path));
  return contents;
}

namespace {

/// Parsed text gives unsigned numbers for non-negative integers; documents built in code may hold
/// the same values as signed ones. Both are whole numbers of at least 0.
bool is_whole_non_negative(const nlohmann::json& value) {
  return value.is_number_unsigned() || (value.is_number_integer() && value.get<std::int64_t>() >= 0);
}

}  // namespace

std::uint64_t json_to_uint(const nlohmann::json& value, const std::string& what) {
  if (!is_whole_non_negative(value))
    throw Error(fmt::format("{}: expected a whole number of at least 0, got {}", what, json_type_name(value)));
  return value.get<std::uint64_t>();
}

JsonObjectReader::JsonObjectReader(const nlohmann::json& object, std::string context)
    : object_(object), context_(std::move(context)) {
  if (!object_.is_object()) throw Error(fmt::format("{}: expected a JSON object, got {}", context_, json_type_name(object_)));
}

bool JsonObjectReader::has(const std::string& key) const {
  const auto it = object_.find(key);
  return it != object_.end() && !it->is_null();
}

const nlohmann::json* JsonObjectReader::find(const std::string& key) {
  read_.insert(key);
  const auto it = object_.find(key);
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

void JsonObjectReader::fail(const std::string& key, const std::string& message) const {
  throw Error(fmt::format("{}: field '{}': {}", context_, key, message));
}

std::optional<std::uint64_t> JsonObjectReader::optional_uint(const std::string& key) {
  const nlohmann::json* value = find(key);
  if (!value) return std::nullopt;
  if (!is_whole_non_negative(*value)) fail(key, fmt::format("expected a whole number of at least 0, got {}", json_type_name(*value)));
  return value->get<std::uint64_t>();
}

std::uint64_t JsonObjectReader::required_uint(const std::string& key) {
  const auto value = optional_uint(key);
  if (!value) fail(key, "is missing");
  return *value;
}

std::optional<std::string> JsonObjectReader::optional_string(const std::string& key) {
  const nlohmann::json* value = find(key);
  if (!value) return std::nullopt;
  if (!value->is_string() || python_non_finite(*value)) fail(key, fmt::format("expected a string, got {}", json_type_name(*value)));
  return value->get<std::string>();
}

std::string JsonObjectReader::required_string(const std::string& key) {
  auto value = optional_string(key);
  if (!value) fail(key, "is missing");
  return std::move(*value);
}

std::vector<std::string> JsonObjectReader::optional_string_list(const std::string& key) {
  const nlohmann::json* value = find(key);
  if (!value) return {};
  if (!value->is_array()) fail(key, fmt::format("expected an array of strings, got {}", json_type_name(*value)));
  std::vector<std::string> out;
  for (const nlohmann::json& item : *value) {
    if (!item.is_string() || python_non_finite(item)) fail(key, fmt::format("expected an array of strings, found {}", json_type_name(item)));
    out.push_back(item.get<std::string>());
  }
  return out;
}

std::optional<bool> JsonObjectReader::optional_bool(const std::string& key) {
  const nlohmann::json* value = find(key);
  if (!value) return std::nullopt;
  if (!value->is_boolean()) fail(key, fmt::format("expected true or false, got {}", json_type_name(*value)));
  return value->get<bool>();
}

std::optional<double> JsonObjectReader::optional_number(const std::string& key) {
  const nlohmann::json* value = find(key);
  if (!value) return std::nullopt;
  if (!value->is_number()) fail(key, fmt::format("expected a number, got {}", json_type_name(*value)));
  return value->get<double>();
}

void JsonObjectReader::reject_unknown_keys() const {
  for (const auto& [key, value] : object_.items())
    if (!read_.count(key)) throw Error(fmt::format("{}: unknown field '{}'", context_, key));
}

}  // namespace kvplan
