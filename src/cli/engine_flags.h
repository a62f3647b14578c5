#pragma once
// The engines on kvplan's command line: --runtime, and the engines' own flag spellings, so that a
// llama-server or `vllm serve` line can be pasted nearly as typed.

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kvplan {

/// Which engine's rules price the plan.
enum class Runtime {
  generic,   ///< the engine-neutral cost
  llamacpp,  ///< what llama.cpp allocates (src/llamacpp_cli.h)
  vllm,      ///< what vLLM allocates (src/vllm_cli.h)
};

/// --runtime: "generic", "llama.cpp" (also "llamacpp", "llama-cpp") or "vllm". Error otherwise.
Runtime parse_runtime(std::string_view text);

/// An engine's flags given without its --runtime would change nothing: the first one given is an
/// Error, "--parallel is a llama.cpp flag: add --runtime llama.cpp". `given` pairs "was it given"
/// with the flag's name.
void refuse_engine_flags(std::span<const std::pair<bool, std::string_view>> given, std::string_view engine,
                         std::string_view runtime);

/// CLI11 takes no multi-letter short flags, so engines' spellings are rewritten to long names
/// before parsing: llama.cpp's -ctk -ctv -np -ub -fa -ngl -kvu and vLLM's -tp. With `--runtime
/// llama.cpp` on the line, -c and -b take llama.cpp's meaning too (-c = --ctx-size, the total
/// context of all sequences; -b = --batch-size, the logical batch); without it they stay kvplan's
/// --ctx and --batch. Arguments after "--" are left alone. args[0] is the program name.
std::vector<std::string> rewrite_engine_flags(const std::vector<std::string>& args);

}  // namespace kvplan
