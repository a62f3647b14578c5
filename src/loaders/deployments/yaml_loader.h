#pragma once
// YAML (one document or several, as `helm template` and `kustomize build` print them) read into
// the same JSON tree a .json file gives, with the line of every node, so the deployment readers
// handle both formats with one code path and still point at file:line.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvplan {

/// One document of a file: its tree, and the 1-based line of each node by JSON pointer
/// ("/spec/template/spec/containers/0"). JSON files have no lines.
struct TreeDocument {
  nlohmann::json value;
  std::map<std::string, std::uint64_t> lines;

  /// The line of `pointer`, or of its nearest ancestor that has one; 0 when none.
  std::uint64_t line_of(const std::string& pointer) const;
};

/// Every document of a YAML stream. Plain scalars stay strings, but for null (~, null, empty) and
/// true/false; quoted scalars are strings. Anchors and aliases are resolved by yaml-cpp. Throws
/// Error "FILE:LINE: ..." for a syntax error.
std::vector<TreeDocument> read_yaml_documents(std::string_view text, std::string_view file);

}  // namespace kvplan
