#pragma once
/// The Hugging Face hub cache on this machine (what `huggingface-cli download` and transformers
/// leave behind): `<hub>/models--org--name/snapshots/<revision>/`, read offline. Internal to the
/// model loader; the hub folder is the caller's (the CLI reads HF_HUB_CACHE / HF_HOME, the library
/// reads no environment).

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace kvplan {

struct HfCacheSnapshot {
  std::filesystem::path folder;  ///< snapshots/<revision>/, holding config.json
  std::string revision;          ///< the snapshot's folder name (a commit hash)
  std::string chosen_by;         ///< "refs/main", "the only snapshot" or "the newest of N snapshots"
};

/// True for "org/name" as the hub spells repository ids: two parts of letters, digits, '-', '_'
/// and '.', neither "." nor "..".
bool looks_like_hf_repo_id(std::string_view text);

/// The snapshot of `repo_id` in the hub cache `hub` that holds a config.json: the revision
/// refs/main names, else the only snapshot, else the newest; nullopt when the cache has none.
std::optional<HfCacheSnapshot> find_hf_cache_snapshot(std::string_view repo_id, const std::filesystem::path& hub);

}  // namespace kvplan
