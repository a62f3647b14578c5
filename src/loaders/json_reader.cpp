#include "loaders/json_reader.h"

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

std::string type_name(const nlohmann::json& value) {
  if (value.is_number_float()) return "a fractional number";
  if (value.is_number_integer() && !value.is_number_unsigned() && value.get<std::int64_t>() < 0) return "a negative number";
  return value.type_name();
}

}  // namespace

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
  try {
    nlohmann::json document = nlohmann::json::parse(text.begin(), text.end(), limit_depth);
    if (too_deep) throw Error(fmt::format("{}: JSON nested deeper than {} levels", origin, kMaxDepth));
    return document;
  } catch (const nlohmann::json::parse_error& error) {
    const auto [line, column] = line_and_column(text, error.byte);
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
    throw Error(fmt::format("{}: expected a whole number of at least 0, got {}", what, type_name(value)));
  return value.get<std::uint64_t>();
}

JsonObjectReader::JsonObjectReader(const nlohmann::json& object, std::string context)
    : object_(object), context_(std::move(context)) {
  if (!object_.is_object()) throw Error(fmt::format("{}: expected a JSON object, got {}", context_, type_name(object_)));
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
  if (!is_whole_non_negative(*value)) fail(key, fmt::format("expected a whole number of at least 0, got {}", type_name(*value)));
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
  if (!value->is_string()) fail(key, fmt::format("expected a string, got {}", type_name(*value)));
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
  if (!value->is_array()) fail(key, fmt::format("expected an array of strings, got {}", type_name(*value)));
  std::vector<std::string> out;
  for (const nlohmann::json& item : *value) {
    if (!item.is_string()) fail(key, fmt::format("expected an array of strings, found {}", type_name(item)));
    out.push_back(item.get<std::string>());
  }
  return out;
}

std::optional<bool> JsonObjectReader::optional_bool(const std::string& key) {
  const nlohmann::json* value = find(key);
  if (!value) return std::nullopt;
  if (!value->is_boolean()) fail(key, fmt::format("expected true or false, got {}", type_name(*value)));
  return value->get<bool>();
}

std::optional<double> JsonObjectReader::optional_number(const std::string& key) {
  const nlohmann::json* value = find(key);
  if (!value) return std::nullopt;
  if (!value->is_number()) fail(key, fmt::format("expected a number, got {}", type_name(*value)));
  return value->get<double>();
}

void JsonObjectReader::reject_unknown_keys() const {
  for (const auto& [key, value] : object_.items())
    if (!read_.count(key)) throw Error(fmt::format("{}: unknown field '{}'", context_, key));
}

}  // namespace kvplan
