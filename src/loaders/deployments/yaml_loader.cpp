#include "loaders/deployments/yaml_loader.h"

#include <string>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "kvplan/error.h"

namespace kvplan {

namespace {

constexpr int kMaxDepth = 64;
constexpr std::size_t kMaxNodes = 1'000'000;

/// A JSON pointer's reference token: "~" and "/" escaped (RFC 6901).
std::string pointer_token(const std::string& key) {
  std::string out;
  for (const char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out.push_back(c);
  }
  return out;
}

struct Converter {
  std::string_view file;
  TreeDocument* doc = nullptr;
  std::size_t nodes = 0;

  nlohmann::json convert(const YAML::Node& node, const std::string& pointer, int depth) {
    if (depth > kMaxDepth) throw Error(fmt::format("{}: YAML nested more than {} levels", file, kMaxDepth));
    if (++nodes > kMaxNodes) throw Error(fmt::format("{}: more than a million YAML nodes", file));
    const YAML::Mark mark = node.Mark();
    if (mark.line >= 0) doc->lines[pointer] = static_cast<std::uint64_t>(mark.line) + 1;
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        return nullptr;
      case YAML::NodeType::Scalar: {
        const std::string& text = node.Scalar();
        if (node.Tag() == "!") return text;  // quoted: always a string
        if (text == "true" || text == "True") return true;
        if (text == "false" || text == "False") return false;
        if (text == "~" || text == "null" || text == "Null") return nullptr;
        return text;
      }
      case YAML::NodeType::Sequence: {
        nlohmann::json array = nlohmann::json::array();
        std::size_t i = 0;
        for (const YAML::Node& item : node) array.push_back(convert(item, pointer + "/" + std::to_string(i++), depth + 1));
        return array;
      }
      case YAML::NodeType::Map: {
        nlohmann::json object = nlohmann::json::object();
        for (const auto& entry : node) {
          if (!entry.first.IsScalar())
            throw Error(fmt::format("{}:{}: a mapping key that is not a plain value", file, entry.first.Mark().line + 1));
          const std::string key = entry.first.Scalar();
          const std::string child = pointer + "/" + pointer_token(key);
          object[key] = convert(entry.second, child, depth + 1);
          // The key's line is where a reader looks for the setting.
          if (entry.first.Mark().line >= 0) doc->lines[child] = static_cast<std::uint64_t>(entry.first.Mark().line) + 1;
        }
        return object;
      }
    }
    return nullptr;
  }
};

}  // namespace

std::vector<TreeDocument> read_yaml_documents(std::string_view text, std::string_view file) {
  std::vector<YAML::Node> nodes;
  try {
    nodes = YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& error) {
    throw Error(fmt::format("{}:{}: {}", file, error.mark.line + 1, error.msg));
  }
  std::vector<TreeDocument> documents;
  Converter converter{file};
  for (const YAML::Node& node : nodes) {
    if (node.IsNull()) continue;  // an empty document between two "---"
    TreeDocument& doc = documents.emplace_back();
    converter.doc = &doc;
    doc.value = converter.convert(node, "", 0);
  }
  return documents;
}

}  // namespace kvplan
