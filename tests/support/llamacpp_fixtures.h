#pragma once
/// Tiny but real-shaped GGUF models, one per architecture, that the llama.cpp in node-llama-cpp
/// 3.21.1 loads (recipes: tests/llamacpp/ARCHS.md): every tensor F32, a gpt2 vocabulary of 8
/// tokens, n_embd 128. The unit tests read them with kvplan; tests/tools/make_gguf_fixtures writes
/// them to disk for the cross-check against the real engine (tests/llamacpp/crosscheck.mjs).

#include <string>
#include <string_view>
#include <vector>

#include "support/gguf_writer.h"

namespace kvplan::testing {

struct LlamaCppFixture {
  std::string name;         ///< file stem: "gemma3", "llama-swa-ignored", ...
  std::string description;  ///< what it exercises
};

/// Every fixture, in a stable order.
const std::vector<LlamaCppFixture>& llamacpp_fixtures();

/// The file of fixture `name`; throws for an unknown name.
GgufWriter make_llamacpp_fixture(std::string_view name);

}  // namespace kvplan::testing
