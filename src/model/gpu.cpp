#include "kvplan/gpu.h"

#include <cctype>

namespace kvplan {

std::string normalized_gpu_name(std::string_view name) {
  std::string out;
  for (const char c : name) {
    if (c == ' ' || c == '-' || c == '_') continue;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

const GpuSpec* GpuCatalog::find(std::string_view name) const {
  const std::string wanted = normalized_gpu_name(name);
  for (const GpuSpec& gpu : gpus) {
    if (normalized_gpu_name(gpu.id) == wanted || normalized_gpu_name(gpu.name) == wanted) return &gpu;
    for (const std::string& alias : gpu.aliases)
      if (normalized_gpu_name(alias) == wanted) return &gpu;
  }
  return nullptr;
}

std::vector<std::string> GpuCatalog::names() const {
  std::vector<std::string> out;
  for (const GpuSpec& gpu : gpus) {
    out.push_back(gpu.id);
    out.insert(out.end(), gpu.aliases.begin(), gpu.aliases.end());
  }
  return out;
}

}  // namespace kvplan
