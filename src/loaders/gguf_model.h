#pragma once
/// GGUF → ModelSpec: the per-layer spec llama.cpp itself derives from a GGUF file's
/// `general.architecture` and `<arch>.*` keys, including the layouts llama.cpp hard-codes per
/// architecture (gemma2 alternates sliding and global layers, gemma3 keeps every 6th layer global,
/// qwen3next makes every 4th layer full attention, ...), with weights as the exact sum of the
/// tensors. Only the header is read (bounded memory, see gguf.h).
///
/// Errors: a missing key, a key of the wrong type or a per-layer array of the wrong length is an
/// Error naming the key (exit code 2); an architecture, or a key that changes the cache, that kvplan
/// does not know how llama.cpp reads is an unsupported-architecture Error (exit code 3).

#include <string>
#include <string_view>
#include <vector>

#include "loaders/gguf.h"
#include "kvplan/model_spec.h"

namespace kvplan {

/// A GGUF file's model: its spec, whose `file` holds the tensors' placement and how the keys were read.
struct GgufModel {
  ModelSpec spec;
};

/// The `general.architecture` values kvplan reads, in the order of llama.cpp's source files.
std::vector<std::string_view> gguf_supported_architectures();

/// True for a path ending in ".gguf" (any case).
bool is_gguf_path(std::string_view path);

/// Builds the spec from a header already read. Pure: no I/O.
GgufModel gguf_model_from_header(const GgufHeader& header);

/// Reads a GGUF file (or every part of a split model, see read_gguf_model) and builds its spec.
GgufModel load_gguf_model(const std::string& path);

/// load_gguf_model(path).spec: what `--model file.gguf` loads.
ModelSpec load_gguf_model_spec(const std::string& path);

}  // namespace kvplan
