#include "loaders/config_fields.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "kvplan/error.h"
#include "loaders/architecture.h"
#include "loaders/json_reader.h"
#include "model/text.h"

namespace kvplan {

ConfigFields::ConfigFields(const nlohmann::json& config, std::string origin) : root_(config), origin_(std::move(origin)) {
  if (!root_.is_object()) throw Error(fmt::format("{}: expected a JSON object, got {}", origin_, json_type_name(root_)));
  // llm_config: OpenGVLab's remote-code InternVL (internvl_chat) names its language model so.
  for (const char* key : {"text_config", "llm_config"}) {
    const auto text = root_.find(key);
    if (text != root_.end() && text->is_object()) {
      text_ = &*text;
      break;
    }
  }
  if (!text_) text_ = &root_;
}

void ConfigFields::set_family(const arch::Family* family, std::string model_type) {
  family_ = family;
  model_type_ = std::move(model_type);
}

std::vector<std::string> ConfigFields::spellings_of(const std::string& key) const {
  std::vector<std::string> keys{key};
  if (family_)
    for (const arch::Spelling& spelling : family_->spellings)
      if (spelling.field == key) keys.emplace_back(spelling.other);
  return keys;
}

const nlohmann::json* ConfigFields::lookup(const std::string& key) const {
  for (const std::string& name : spellings_of(key))
    for (const nlohmann::json* object : {text_, &root_}) {
      const auto it = object->find(name);
      if (it != object->end() && !it->is_null()) return &*it;
    }
  return nullptr;
}

bool ConfigFields::has(const std::string& key) const { return lookup(key) != nullptr; }

const nlohmann::json* ConfigFields::find(const std::string& key) {
  for (const std::string& name : spellings_of(key)) used_.insert(name);
  return lookup(key);
}

std::string ConfigFields::where(const std::string& key) const { return fmt::format("{}: field '{}'", origin_, key); }

void ConfigFields::fail(const std::string& key, const std::string& message) const {
  throw Error(fmt::format("{}: field '{}': {}", origin_, key, message));
}

std::optional<std::uint64_t> ConfigFields::uint(const std::string& key) {
  const nlohmann::json* value = find(key);
  if (!value) return std::nullopt;
  return json_to_uint(*value, where(key));
}

std::optional<std::uint64_t> ConfigFields::default_of(const std::string& field) const {
  if (!family_) return std::nullopt;
  for (const arch::FieldDefault& entry : family_->defaults)
    if ((entry.model_type.empty() || entry.model_type == model_type_) && entry.field == field && (!entry.nested_only || nested()))
      return entry.value;
  return std::nullopt;
}

std::uint64_t ConfigFields::required_uint(const std::string& key) {
  if (const auto value = uint(key)) return *value;
  if (const auto fallback = default_of(key)) {
    note(fmt::format("{} absent: the {} config default {} used", key, model_type_, *fallback));
    return *fallback;
  }
  fail(key, "is missing");
}

std::uint64_t ConfigFields::positive(const std::string& key) {
  const std::uint64_t value = required_uint(key);
  if (value == 0) fail(key, "must be at least 1");
  return value;
}

std::uint64_t ConfigFields::positive_or(const std::string& key, std::uint64_t fallback) {
  const std::uint64_t value = uint_or(key, fallback);
  if (value == 0) fail(key, "must be at least 1");
  return value;
}

std::optional<std::uint64_t> ConfigFields::uint_of(std::initializer_list<const char*> keys) {
  for (const char* key : keys)
    if (const auto value = uint(key)) return value;
  return std::nullopt;
}

std::uint64_t ConfigFields::required_uint_of(std::initializer_list<const char*> keys) {
  if (const auto value = uint_of(keys)) return *value;
  fail(*keys.begin(), "is missing");
}

std::optional<std::string> ConfigFields::string(const std::string& key) {
  const nlohmann::json* value = find(key);
  if (!value) return std::nullopt;
  if (!value->is_string() || python_non_finite(*value)) fail(key, fmt::format("expected a string, got {}", json_type_name(*value)));
  return value->get<std::string>();
}

std::string ConfigFields::required_string(const std::string& key) {
  auto value = string(key);
  if (!value) fail(key, "is missing");
  return std::move(*value);
}

std::optional<bool> ConfigFields::boolean(const std::string& key) {
  const nlohmann::json* value = find(key);
  if (!value) return std::nullopt;
  if (!value->is_boolean()) fail(key, fmt::format("expected true or false, got {}", json_type_name(*value)));
  return value->get<bool>();
}

std::optional<double> ConfigFields::number(const std::string& key) {
  const nlohmann::json* value = find(key);
  if (!value) return std::nullopt;
  if (!value->is_number()) fail(key, fmt::format("expected a number, got {}", json_type_name(*value)));
  return value->get<double>();
}

std::vector<std::string> ConfigFields::string_list(const std::string& key) {
  const nlohmann::json* value = find(key);
  if (!value) return {};
  if (!value->is_array()) fail(key, fmt::format("expected an array of strings, got {}", json_type_name(*value)));
  std::vector<std::string> out;
  for (const nlohmann::json& item : *value) {
    if (!item.is_string() || python_non_finite(item)) fail(key, fmt::format("expected an array of strings, found {}", json_type_name(item)));
    out.push_back(item.get<std::string>());
  }
  return out;
}

std::set<std::uint64_t> ConfigFields::index_list(const std::string& key) {
  std::set<std::uint64_t> indices;
  const nlohmann::json* list = find(key);
  if (!list) return indices;
  if (!list->is_array()) fail(key, "expected a list of layer indices");
  for (const nlohmann::json& item : *list) indices.insert(json_to_uint(item, where(key)));
  return indices;
}

std::vector<std::uint64_t> ConfigFields::per_layer(const std::string& key, std::uint64_t layers) {
  const nlohmann::json* list = find(key);
  if (!list || !list->is_array() || list->size() != layers) fail(key, fmt::format("expected {} whole numbers", layers));
  std::vector<std::uint64_t> values;
  for (const nlohmann::json& item : *list) values.push_back(json_to_uint(item, where(key)));
  return values;
}

void ConfigFields::ignore(std::initializer_list<const char*> keys) {
  for (const char* key : keys) used_.insert(key);
}

void ConfigFields::note(const std::string& text) {
  if (std::find(notes_.begin(), notes_.end(), text) == notes_.end()) notes_.push_back(text);
}

std::string ConfigFields::notes() const {
  std::string out;
  for (const std::string& note : notes_) {
    if (!out.empty()) out += "; ";
    out += note;
  }
  return out;
}

void ConfigFields::reject_unread_cache_fields() const {
  // multi_query / query_group: KV heads (Falcon, GPT-BigCode, ChatGLM); cla: cross-layer KV sharing
  // (Hunyuan's use_cla); kv_channels: ChatGLM's head width; cross_attention: Llama 3.2 Vision.
  static constexpr std::array kCacheWords = {
      "window", "chunk",     "lora",   "mamba",     "ssm",    "linear_", "layer_type", "block_type",
      "pattern", "conv",     "shared_kv", "kv_shar", "hybrid", "attn_type", "attention_type", "full_attn",
      "full_attention", "swa", "nextn", "mtp",     "index",  "kv_heads", "key_value",  "head_dim",
      "attn_layer", "global_", "nope",   "rope_layers", "state_size", "n_groups", "compress",
      "sparse_attention", "k_eq_v", "kv_lora", "kda", "short_conv", "l_cache", "attention_group", "other_setting",
      "multi_query", "query_group", "use_cla", "cla_share", "kv_channels", "cross_attention"};
  for (const auto& [key, value] : text_->items()) {
    if (used_.count(key) || value.is_null() || (value.is_boolean() && !value.get<bool>())) continue;
    if (value.is_array() && value.empty()) continue;
    const std::string lower = ascii_lower(key);
    for (const char* word : kCacheWords)
      if (lower.find(word) != std::string::npos) {
        std::string shown = value.dump();
        if (shown.size() > 60) shown = shown.substr(0, 57) + "...";
        // The one such field kvplan sizes from another input: say which.
        if (key == "compress_ratios")
          shown += " (DeepSeek-V4's compressed caches: kvplan sizes them from a deepseek4 GGUF file under the "
                   "llama.cpp profile only)";
        throw unsupported_architecture(fmt::format("{}: {}", origin_, key), shown);
      }
  }
}

}  // namespace kvplan
