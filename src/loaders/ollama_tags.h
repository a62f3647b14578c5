#pragma once
/// Ollama library tags of catalog models ("llama3.1:8b", "qwen3:32b-q4_K_M", "gemma3:12b"): the
/// catalog model's shapes, with the weights of the GGUF blob Ollama serves for the tag, tensor by
/// tensor, from ggml's block sizes and llama.cpp's quantizer mix (llama_tensor_get_type).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvplan/catalog.h"
#include "kvplan/model_spec.h"

namespace kvplan {

/// The quantizations a tag may name: its default (Q4_K_M) and the explicit suffixes.
enum class OllamaQuant { q4_k_m, q4_k_s, q8_0, f16 };

/// True when `text` has the shape of an Ollama tag (name:tag, no path separators, no .gguf/.json).
bool looks_like_ollama_tag(std::string_view text);

/// The ModelSpec of an Ollama tag: the catalog model it names, its layers as the tag's GGUF lays
/// them out, and a ModelFile whose tensors are the blob's (exact sizes, in file order). Throws an
/// Error naming the known tags for an unknown one.
ModelSpec load_ollama_tag(std::string_view tag, const ModelCatalog& catalog);

/// Every tag kvplan can size ("llama3.1:8b", ...), for messages and docs.
std::vector<std::string> ollama_tag_names();

/// The tags kvplan sizes for one catalog model, one per quantization it serves ({"qwen3:8b-q4_K_M",
/// "q4_k_m"}, ..., {"qwen3:8b-fp16", "f16"}; gpt-oss only its own blob, "mxfp4"); none for a model
/// without a tag.
struct OllamaVariant {
  std::string tag;
  std::string quant;  ///< lower case, as --weight-dtype spells the GGUF type
};
std::vector<OllamaVariant> ollama_variants(std::string_view catalog_id);

}  // namespace kvplan
