#include "loaders/known_unsized.h"
#include "model/text.h"

#include <array>

namespace kvplan {

namespace {

struct UnsizedFamily {
  std::string_view prefix;  ///< the repository name's start, lower case, without the organisation
  std::string_view hint;
};

// The config.json of each is refused (exit 3) on a field whose engine layout kvplan has not read for
// every engine; llama.cpp's layout was read and cross-checked (docs/engines/llamacpp.md).
constexpr std::array<UnsizedFamily, 2> kFamilies = {{
    {"deepseek-v4", "DeepSeek-V4 is not in the catalog: kvplan sizes its compressed caches (compress_ratios) from "
                    "its GGUF file under the llama.cpp profile only (--model FILE.gguf --runtime llama.cpp); its "
                    "config.json, and the other engines, are exit 3"},
    {"minimax-m3", "MiniMax-M3 is not in the catalog: kvplan sizes its sparse index caches (sparse_attention_config) "
                   "from its GGUF file under the llama.cpp profile only (--model FILE.gguf --runtime llama.cpp); its "
                   "config.json is exit 3"},
}};

}  // namespace

std::optional<std::string> unsized_model_hint(std::string_view name) {
  if (const std::size_t slash = name.rfind('/'); slash != std::string_view::npos) name.remove_prefix(slash + 1);
  const std::string lower = ascii_lower(name);
  for (const UnsizedFamily& family : kFamilies)
    if (lower.rfind(family.prefix, 0) == 0) return std::string(family.hint);
  return std::nullopt;
}

}  // namespace kvplan
