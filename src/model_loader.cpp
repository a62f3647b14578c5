#include "kvplan/model_loader.h"

#include <filesystem>

#include <fmt/format.h>

#include "json_reader.h"
#include "kvplan/error.h"
#include "kvplan/spec_json.h"
#include "kvplan/suggest.h"

namespace kvplan {

namespace {

bool looks_like_path(std::string_view text) {
  const auto ends_with = [&](std::string_view suffix) {
    return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
  };
  return text.rfind("./", 0) == 0 || text.rfind("../", 0) == 0 || text.rfind('/', 0) == 0 || ends_with(".json") ||
         ends_with(".gguf");
}

ModelSpec load_model_file(const std::string& path) {
  const std::string text = read_text_file(path);
  const nlohmann::json document = parse_json_document(text, path);
  if (!is_kvplan_spec(document))
    throw Error(fmt::format("{}: looks like a Hugging Face config.json, which this version cannot read yet", path));
  return model_spec_from_json(document, path);
}

}  // namespace

ModelSpec load_model(std::string_view text, const ModelCatalog& catalog) {
  if (text.empty()) throw Error("--model: empty model name");
  if (const ModelSpec* model = catalog.find(text)) return *model;
  const std::string path(text);
  std::error_code ec;
  if (std::filesystem::exists(path, ec) || looks_like_path(text)) return load_model_file(path);
  throw Error(fmt::format("--model: unknown model '{}'{}; or give a path to a model spec file", text,
                          did_you_mean(text, catalog.names())));
}

}  // namespace kvplan
