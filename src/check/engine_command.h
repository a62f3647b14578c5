#pragma once
// An engine's own command line (`vllm serve ...`, `python -m sglang.launch_server ...`,
// `llama-server ...`, `trtllm-serve ...`, `ollama run ...` with its environment) read into the
// settings `kvplan` takes. Each engine's flags are looked up in its OptionSpecs (the registry), so
// a flag is known in one place; what this file adds per engine is which of kvplan's own settings
// the engine spells its way (vLLM's --max-model-len is --ctx) and an explicit list of flags that
// do not change memory (--host, --port, ...). Any other flag fails closed: exit 3, naming it.

#include <cstdint>
#include <string>

#include "engines/core/request_texts.h"
#include "loaders/deployments/deployment.h"

namespace kvplan {

struct CommandSettings {
  std::string runtime;  ///< the registry's name: vllm, sglang, llama.cpp, trtllm, ollama
  std::string program;  ///< as messages name it: "vllm serve", "llama-server"
  std::string model;    ///< the positional model, --model, --model-path, -m; empty when not given
  PlanTexts texts;      ///< runtime, contexts, cache dtypes, utilization and the engine's options
  /// The GPUs the engine runs on, from its own flags: tensor x pipeline parallel (1 by default for
  /// vLLM, SGLang and TensorRT-LLM); 0 for engines that use every GPU they see (llama.cpp, Ollama).
  std::uint64_t parallel = 0;
};

/// Reads `command`. Throws Error with exit 3 for a program kvplan does not know, a flag it does not
/// understand, or a value the shell would fill in at run time ($VAR); exit 2 for a malformed line.
CommandSettings read_engine_command(const EngineCommand& command);

}  // namespace kvplan
