#pragma once
/// `--model`: turns what the user typed into a ModelSpec, whichever form it takes.

#include <string_view>

#include "kvplan/catalog.h"
#include "kvplan/model_spec.h"

#include "kvplan/export.h"

namespace kvplan {

/// A catalog id or alias ("llama3.1-8b", "meta-llama/Llama-3.1-8B"), a path to a kvplan spec
/// file, a Hugging Face config.json, or a folder holding one. Unknown names throw with the
/// closest catalog names.
KVPLAN_API ModelSpec load_model(std::string_view text, const ModelCatalog& catalog);

/// The same against the built-in catalog, parsing only the catalog file the name is in.
KVPLAN_API ModelSpec load_model(std::string_view text);

/// The same, but a Hugging Face id ("org/name") that names no local path is first looked up in the
/// Hugging Face hub cache folder `hf_hub_cache` (the folder holding models--org--name/), offline:
/// the config.json and model.safetensors.index.json of the snapshot refs/main names (else the
/// only or newest snapshot). Not there: as load_model(text). Empty `hf_hub_cache`: not looked up.
/// The library reads no environment; the CLI passes HF_HUB_CACHE's folder.
KVPLAN_API ModelSpec load_model(std::string_view text, std::string_view hf_hub_cache);

}  // namespace kvplan
