#include "loaders/safetensors_names.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kvplan/error.h"
#include "loaders/json_reader.h"

namespace kvplan {

namespace {

namespace fs = std::filesystem;

// safetensors headers are a few hundred bytes a tensor; a larger one is not a header.
constexpr std::uint64_t kMaxHeaderBytes = std::uint64_t{100} << 20;

/// The keys of a JSON object, but the file's own "__metadata__".
void add_tensor_keys(const nlohmann::json& object, std::vector<std::string>& names) {
  for (const auto& [key, value] : object.items())
    if (key != "__metadata__") names.push_back(key);
}

/// One file's header: an 8-byte little-endian length, then that many bytes of JSON.
void read_header_names(const fs::path& file, std::vector<std::string>& names) {
  const std::string origin = file.string();
  std::ifstream in(file, std::ios::binary);
  std::array<unsigned char, 8> prefix{};
  if (!in.read(reinterpret_cast<char*>(prefix.data()), prefix.size()))
    throw Error(fmt::format("{}: not a safetensors file (shorter than its 8-byte header length)", origin));
  std::uint64_t length = 0;
  for (std::size_t i = 0; i < prefix.size(); ++i) length |= std::uint64_t{prefix[i]} << (8 * i);
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(file, ec);
  if (ec || length > kMaxHeaderBytes || length > size - prefix.size())
    throw Error(fmt::format("{}: not a safetensors file (a header of {} bytes)", origin, length));
  std::string header(static_cast<std::size_t>(length), '\0');
  if (!in.read(header.data(), static_cast<std::streamsize>(header.size())))
    throw Error(fmt::format("{}: the safetensors header could not be read", origin));
  const nlohmann::json parsed = parse_json_document(header, origin);
  if (!parsed.is_object()) throw Error(fmt::format("{}: the safetensors header is not a JSON object", origin));
  add_tensor_keys(parsed, names);
}

}  // namespace

std::optional<std::vector<std::string>> safetensors_tensor_names(const fs::path& folder) {
  std::error_code ec;
  std::vector<std::string> names;
  const fs::path index = folder / "model.safetensors.index.json";
  if (fs::exists(index, ec)) {
    const std::string origin = index.string();
    const nlohmann::json parsed = parse_json_document(read_text_file(origin), origin);
    const auto map = parsed.is_object() ? parsed.find("weight_map") : parsed.end();
    if (map == parsed.end() || !map->is_object())
      throw Error(fmt::format("{}: no weight_map object", origin));
    // A trimmed index (an empty weight_map) names no tensors: it tells nothing.
    if (map->empty()) return std::nullopt;
    add_tensor_keys(*map, names);
    return names;
  }
  std::vector<fs::path> files;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".safetensors") files.push_back(it->path());
  if (files.empty()) return std::nullopt;
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) read_header_names(file, names);
  return names;
}

}  // namespace kvplan
