// The browser build's stand-in for src/loaders/deployments/yaml_loader.cpp: yaml-cpp is not built
// for Emscripten, so a YAML deployment file is refused in one line (JSON ones still read; their
// line lookup is src/loaders/deployments/tree_document.cpp).

#include "loaders/deployments/yaml_loader.h"

#include "kvplan/error.h"

namespace kvplan {

std::vector<TreeDocument> read_yaml_documents(std::string_view, std::string_view file) {
  throw Error(std::string(file) + ": YAML files are not read in the web page (use the kvplan binary)");
}

}  // namespace kvplan
