// The browser build's stand-in for src/loaders/deployments/yaml_loader.cpp: yaml-cpp is not built
// for Emscripten, so a YAML deployment file is refused in one line (JSON ones still read).

#include "loaders/deployments/yaml_loader.h"

#include "kvplan/error.h"

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

std::vector<TreeDocument> read_yaml_documents(std::string_view, std::string_view file) {
  throw Error(std::string(file) + ": YAML files are not read in the web page (use the kvplan binary)");
}

}  // namespace kvplan
