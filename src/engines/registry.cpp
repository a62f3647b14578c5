// Every engine kvplan knows. Adding an engine is its folder under src/engines/ and one line here.

#include <array>

#include <fmt/format.h>

#include "engines/core/profile.h"
#include "engines/generic/generic.h"
#include "engines/llamacpp/engine.h"
#include "engines/ollama/engine.h"
#include "engines/sglang/engine.h"
#include "engines/trtllm/engine.h"
#include "engines/vllm/engine.h"

namespace kvplan {

std::span<const EngineEntry> engines() {
  static const std::array<EngineEntry, 6> all = {
      generic_engine(),
      llamacpp_engine(),
      vllm_engine(),
      sglang_engine(),
      trtllm_engine(),
      ollama_engine(),
  };
  return all;
}

}  // namespace kvplan
