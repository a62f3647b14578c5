#include "loaders/param_count.h"

#include <nlohmann/json.hpp>

#include "kvplan/error.h"
#include "loaders/architecture.h"
#include "loaders/config_fields.h"

// The counting itself lives with each family (src/loaders/arch/<family>.cpp): the shapes of every
// tensor its modelling code in Hugging Face transformers creates, from the layout read once
// (arch::read_layout) and the fields in its config.

namespace kvplan {

ParamCount count_params(const nlohmann::json& config) {
  ConfigFields fields(config, "config.json");
  const std::string model_type = arch::language_model_type(fields);
  const arch::Family* family = arch::find_family(model_type);
  if (!family || !family->count) throw unsupported_architecture("model_type", model_type);
  fields.set_family(family, model_type);
  const arch::Layout layout = arch::read_layout(fields);
  return family->count(fields, layout);
}

std::optional<std::uint64_t> config_field_default(std::string_view model_type, std::string_view field) {
  const arch::Family* family = arch::find_family(model_type);
  if (!family) return std::nullopt;
  for (const arch::FieldDefault& entry : family->defaults)
    if ((entry.model_type.empty() || entry.model_type == model_type) && entry.field == field && !entry.nested_only) return entry.value;
  return std::nullopt;
}

}  // namespace kvplan
