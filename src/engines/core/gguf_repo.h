#pragma once
/// A Hugging Face repository of GGUF files named as llama-server's -hf takes it
/// ("unsloth/Qwen3-8B-GGUF", "bartowski/Qwen_Qwen3-8B-GGUF:Q5_K_M"): the catalog model it
/// quantizes, with its weights priced as llama.cpp's quantizer lays out the named type, Q4_K_M
/// when none is named (what -hf downloads by default).

#include <optional>
#include <string>
#include <string_view>

#include "kvplan/catalog.h"
#include "kvplan/model_spec.h"

namespace kvplan {

struct GgufRepoRef {
  std::string repo;        ///< "unsloth/Qwen3-8B-GGUF"
  std::string model_name;  ///< the repository's name without -GGUF: "Qwen3-8B"
  std::string quant;       ///< as written after ':', or "" when none is named
};

/// The parts of `text` when it has the shape org/Name-GGUF[:QUANT]; nullopt otherwise.
std::optional<GgufRepoRef> parse_gguf_repo(std::string_view text);

/// The catalog model `ref` quantizes, its weights those of the `quant` file (the ref's own
/// quantization when `quant` is empty, else Q4_K_M). Unknown models and quantizations kvplan cannot
/// lay out (Unsloth's dynamic UD-*, bartowski's *_L) are refused with the file as the way forward.
ModelSpec load_gguf_repo_model(const GgufRepoRef& ref, const ModelCatalog& catalog, std::string_view quant = "");

/// `text` as --model reads it, a GGUF repository included: the built-in catalog's model at the
/// repository's quantization (or `quant`) for org/Name-GGUF, else load_model (through the Hugging
/// Face cache `hf_hub_cache` when it is not empty).
ModelSpec load_model_or_gguf_repo(std::string_view text, std::string_view hf_hub_cache = "", std::string_view quant = "");

}  // namespace kvplan
