#include "loaders/hf_cache.h"

#include <algorithm>
#include <fstream>
#include <vector>

#include <fmt/format.h>

namespace kvplan {

namespace {

bool valid_part(std::string_view part) {
  if (part.empty() || part == "." || part == ".." || part.size() > 96) return false;
  return std::all_of(part.begin(), part.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
  });
}

/// A snapshot folder with a config.json in it (a regular file, or a symlink to one in blobs/).
bool has_config(const std::filesystem::path& snapshot) {
  std::error_code ec;
  return std::filesystem::is_regular_file(snapshot / "config.json", ec);  // follows the symlink
}

/// The commit refs/main names: its first line, when it is a plain folder name.
std::string read_ref(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec) || std::filesystem::file_size(file, ec) > 256) return "";
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\n')) line.pop_back();
  return valid_part(line) ? line : "";
}

}  // namespace

bool looks_like_hf_repo_id(std::string_view text) {
  const std::size_t slash = text.find('/');
  if (slash == std::string_view::npos || text.find('/', slash + 1) != std::string_view::npos) return false;
  return valid_part(text.substr(0, slash)) && valid_part(text.substr(slash + 1));
}

std::optional<HfCacheSnapshot> find_hf_cache_snapshot(std::string_view repo_id, const std::filesystem::path& hub) {
  namespace fs = std::filesystem;
  if (hub.empty() || !looks_like_hf_repo_id(repo_id)) return std::nullopt;
  const std::size_t slash = repo_id.find('/');
  // The hub's folder name: "models--" + the id with "/" as "--".
  const fs::path repo = hub / fmt::format("models--{}--{}", repo_id.substr(0, slash), repo_id.substr(slash + 1));
  const fs::path snapshots = repo / "snapshots";
  std::error_code ec;
  if (!fs::is_directory(snapshots, ec)) return std::nullopt;
  if (const std::string main = read_ref(repo / "refs" / "main"); !main.empty() && has_config(snapshots / main))
    return HfCacheSnapshot{snapshots / main, main, "refs/main"};
  // No usable refs/main: the snapshots that hold a config.json, newest first.
  std::vector<std::pair<fs::file_time_type, fs::path>> found;
  for (fs::directory_iterator it(snapshots, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_directory(ec) || !valid_part(it->path().filename().string()) || !has_config(it->path())) continue;
    found.emplace_back(fs::last_write_time(it->path(), ec), it->path());
    if (found.size() > 1000) break;  // a hub folder is not this large; do not walk a hostile one
  }
  if (found.empty()) return std::nullopt;
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second.filename() < b.second.filename();
  });
  const std::string chosen = found.size() == 1 ? "the only snapshot" : fmt::format("the newest of {} snapshots", found.size());
  return HfCacheSnapshot{found.front().second, found.front().second.filename().string(), chosen};
}

}  // namespace kvplan
