#include "kvplan/catalog.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "loaders/embedded_files.h"
#include "loaders/model_facts.h"
#include "loaders/spec_json.h"

namespace kvplan {

namespace {

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

/// True when `name` stands in `text` as a whole JSON string, ignoring case. Jumps from quote to
/// quote (memchr), so scanning the whole catalog costs little more than reading it.
bool holds_string(std::string_view text, std::string_view name) {
  const char* at = text.data();
  const char* end = text.data() + text.size();
  while (at < end) {
    const void* quote = std::memchr(at, '"', static_cast<std::size_t>(end - at));
    if (!quote) return false;
    at = static_cast<const char*>(quote) + 1;
    if (static_cast<std::size_t>(end - at) > name.size() && at[name.size()] == '"' &&
        same_name(std::string_view(at, name.size()), name))
      return true;
  }
  return false;
}

/// The catalog file named after `name`, "models/<name>.json" ignoring case: where every model
/// looked up by its id lives, found without reading the other files.
const embedded::File* file_named(std::string_view name) {
  constexpr std::string_view prefix = "models/";
  constexpr std::string_view suffix = ".json";
  for (const embedded::File& file : embedded::model_files())
    if (file.name.size() == prefix.size() + name.size() + suffix.size() && file.name.starts_with(prefix) &&
        file.name.ends_with(suffix) && same_name(file.name.substr(prefix.size(), name.size()), name))
      return &file;
  return nullptr;
}

/// Whether `name` is the facts' id or one of their aliases (ModelCatalog::find's rule).
bool facts_named(const embedded::ModelFacts& facts, std::string_view name) {
  if (same_name(facts.id, name)) return true;
  for (std::string_view aliases = facts.aliases; !aliases.empty();)
    if (same_name(embedded::take_item(aliases), name)) return true;
  return false;
}

/// The model of `file` when `name` is its id or one of its aliases: from the file's facts when it
/// has them (no JSON parsed), else parsed.
std::optional<ModelSpec> model_in(const embedded::File& file, std::string_view name) {
  const std::span<const embedded::File> files = embedded::model_files();
  const embedded::ModelFacts& facts = embedded::model_facts()[static_cast<std::size_t>(&file - files.data())];
  if (facts.present) {
    if (!facts_named(facts, name)) return std::nullopt;
    if (std::optional<ModelSpec> model = model_from_facts(facts)) return model;
  }
  ModelCatalog one;
  one.models.push_back(parse_model_spec(file.text, file.name));
  if (one.find(name)) return std::move(one.models.front());
  return std::nullopt;
}

}  // namespace

const ModelSpec* ModelCatalog::find(std::string_view name) const {
  for (const ModelSpec& model : models) {
    if (same_name(model.id, name)) return &model;
    for (const std::string& alias : model.aliases)
      if (same_name(alias, name)) return &model;
  }
  return nullptr;
}

std::vector<std::string> ModelCatalog::names() const {
  std::vector<std::string> out;
  for (const ModelSpec& model : models) {
    out.push_back(model.id);
    out.insert(out.end(), model.aliases.begin(), model.aliases.end());
  }
  return out;
}

const ModelCatalog& builtin_models() {
  static const ModelCatalog catalog = [] {
    ModelCatalog out;
    // Each file's model from the facts the build read out of it where it has them (no JSON parsed:
    // the parse was 26 M instructions of `kvplan fit`'s 174 M), else parsed.
    const std::span<const embedded::File> files = embedded::model_files();
    const std::span<const embedded::ModelFacts> facts = embedded::model_facts();
    out.models.reserve(files.size());
    for (std::size_t i = 0; i < files.size(); ++i) {
      if (std::optional<ModelSpec> model = model_from_facts(facts[i])) out.models.push_back(std::move(*model));
      else out.models.push_back(parse_model_spec(files[i].text, files[i].name));
    }
    std::sort(out.models.begin(), out.models.end(),
              [](const ModelSpec& a, const ModelSpec& b) { return a.id < b.id; });
    return out;
  }();
  return catalog;
}

std::optional<ModelSpec> find_builtin_model(std::string_view name) {
  if (name.empty()) return std::nullopt;
  // No name stands in two entries (catalog_test), so the file named after the name is tried first:
  // an id is then found without scanning the catalog (200,000 instructions, a tenth of the
  // headline command). An alias, or an id whose file is named otherwise, is found by the scan.
  const embedded::File* named = file_named(name);
  if (named)
    if (std::optional<ModelSpec> model = model_in(*named, name)) return model;
  for (const embedded::File& file : embedded::model_files()) {
    // A file can only match when the name stands in it as a JSON string ("id" or an alias).
    if (&file == named || !holds_string(file.text, name)) continue;
    if (std::optional<ModelSpec> model = model_in(file, name)) return model;
  }
  return std::nullopt;
}

const GpuCatalog& builtin_gpus() {
  static const GpuCatalog catalog = parse_gpu_catalog(embedded::gpu_catalog(), "gpus/gpus.json");
  return catalog;
}

}  // namespace kvplan
