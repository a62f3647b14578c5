#pragma once
// The tensor names a safetensors checkpoint holds, read from its index or its files' headers (no
// tensor data is read): what tells a draft head that shares the target's embeddings from one that
// ships its own.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kvplan {

/// The tensor names of the checkpoint in `folder`: model.safetensors.index.json's weight_map when
/// there is one, else every *.safetensors file's header. nullopt when the folder holds neither. A
/// header that is not one (a length past the file or over 100 MiB, not a JSON object) is an Error
/// naming the file.
std::optional<std::vector<std::string>> safetensors_tensor_names(const std::filesystem::path& folder);

}  // namespace kvplan
