#pragma once
// The one reader of a Hugging Face config.json's fields, shared by the layer layout, the cache
// reader and the parameter counter. Internal to kvplan's loaders.

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvplan {

namespace arch {
struct Family;
}

/// The fields of a config.json as kvplan reads them: the language model's own block
/// (`text_config` in multimodal wrappers) first, then the top level. A family's other spellings of
/// a standard field (n_layer for num_hidden_layers) are read as that field, and its config class's
/// defaults stand in for fields official files leave out, each use noted. Every key read is
/// remembered, so that afterwards a cache-relevant key nobody read can be refused.
class ConfigFields {
 public:
  ConfigFields(const nlohmann::json& config, std::string origin);

  const std::string& origin() const { return origin_; }
  const nlohmann::json& root() const { return root_; }
  const nlohmann::json& text() const { return *text_; }
  bool nested() const { return text_ != &root_; }

  /// The family whose spellings and defaults apply, and the model_type it was found by.
  void set_family(const arch::Family* family, std::string model_type);
  const arch::Family* family() const { return family_; }
  const std::string& model_type() const { return model_type_; }

  /// Present and not null, under the key or one of its spellings (does not mark it read).
  bool has(const std::string& key) const;
  /// The value of `key` (or a spelling of it), marked read; nullptr when absent or null.
  const nlohmann::json* find(const std::string& key);

  std::optional<std::uint64_t> uint(const std::string& key);
  /// Absent: the family's config default when it has one (noted), else "is missing".
  std::uint64_t required_uint(const std::string& key);
  /// required_uint, and at least 1.
  std::uint64_t positive(const std::string& key);
  std::uint64_t uint_or(const std::string& key, std::uint64_t fallback) { return uint(key).value_or(fallback); }
  /// uint_or, and at least 1 (a count or a step the modelling code divides by or loops over).
  std::uint64_t positive_or(const std::string& key, std::uint64_t fallback);
  /// The first of several spellings of one field that the config uses.
  std::optional<std::uint64_t> uint_of(std::initializer_list<const char*> keys);
  std::uint64_t required_uint_of(std::initializer_list<const char*> keys);
  std::optional<std::string> string(const std::string& key);
  std::string required_string(const std::string& key);
  std::optional<bool> boolean(const std::string& key);
  bool flag(const std::string& key, bool fallback) { return boolean(key).value_or(fallback); }
  std::optional<double> number(const std::string& key);
  /// A list of strings; absent or null is empty.
  std::vector<std::string> string_list(const std::string& key);
  /// A list of layer indices (mlp_only_layers, moe_layers); absent or null is empty.
  std::set<std::uint64_t> index_list(const std::string& key);
  /// One whole number per layer (moe_layer_freq, a per-layer intermediate_size).
  std::vector<std::uint64_t> per_layer(const std::string& key, std::uint64_t layers);

  /// The family's config-class default for `field`, nullopt when it states none.
  std::optional<std::uint64_t> default_of(const std::string& field) const;

  /// Marks keys whose values do not change the cache, so the unknown-field check passes them.
  void ignore(std::initializer_list<const char*> keys);

  /// An assumption made, in words ("head_dim absent: the config class default 256 used").
  void note(const std::string& text);
  /// The notes, "; "-separated.
  std::string notes() const;

  /// "origin: field 'key': message"
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;
  /// "origin: field 'key'", for json_to_uint.
  std::string where(const std::string& key) const;

  /// Refuses (exit 3) the first key of the language-model block that looks as if it shapes the
  /// cache (its name speaks of windows, chunks, state, sharing, layer kinds...) and that no reader used.
  void reject_unread_cache_fields() const;

 private:
  const nlohmann::json* lookup(const std::string& key) const;
  std::vector<std::string> spellings_of(const std::string& key) const;

  const nlohmann::json& root_;
  const nlohmann::json* text_ = nullptr;
  std::string origin_;
  const arch::Family* family_ = nullptr;
  std::string model_type_;
  std::set<std::string> used_;
  std::vector<std::string> notes_;
};

}  // namespace kvplan
