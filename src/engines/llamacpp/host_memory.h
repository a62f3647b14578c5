#pragma once
// What llama.cpp keeps in system RAM for one of its results: the llama.cpp profile's and the
// Ollama profile's (Ollama runs llama.cpp) count of a row's host memory, written once.

#include "engines/core/profile.h"
#include "engines/llamacpp/rules.h"

namespace kvplan {

/// The host model buffer (the memory-mapped span of the GGUF, token embeddings included), the cache
/// of the layers kept in RAM and the logits buffer; a decode step reads the host layers' weights
/// and their cache. ram_bytes and the bandwidth are left for against_declared (declared_ram.h).
HostMemory llamacpp_host_memory(const LlamaCppResult& r);

}  // namespace kvplan
