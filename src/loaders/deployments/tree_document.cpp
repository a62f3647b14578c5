// TreeDocument's line lookup, apart from the YAML reader: JSON documents use it too, and the
// browser build, which has no yaml-cpp, links it without yaml_loader.cpp.

#include "loaders/deployments/yaml_loader.h"

namespace kvplan {

std::uint64_t TreeDocument::line_of(const std::string& pointer) const {
  std::string p = pointer;
  while (true) {
    if (const auto it = lines.find(p); it != lines.end()) return it->second;
    if (p.empty()) return 0;
    const std::size_t slash = p.rfind('/');
    p = slash == std::string::npos ? std::string() : p.substr(0, slash);
  }
}

}  // namespace kvplan
