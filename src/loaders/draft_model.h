#pragma once
// A speculative-decoding draft checkpoint, read as --model is (a catalog name, a folder or
// config.json, a repository id in the Hugging Face cache) and, where its folder holds safetensors,
// which of the target's tensors it may share (its own embeddings and head or not).

#include <memory>
#include <string>
#include <string_view>

#include "kvplan/model_spec.h"

namespace kvplan {

/// The draft `name` names. A draft that is not on this machine (no such file, catalog entry or
/// cached repository) is an unsupported-architecture Error (exit 3) saying how to give it; a file
/// that is there but wrong is the loader's own Error.
std::shared_ptr<const DraftModel> load_draft_model(const std::string& name, std::string_view hf_hub_cache);

}  // namespace kvplan
