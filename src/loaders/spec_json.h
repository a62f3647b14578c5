#pragma once
/// kvplan's own model-spec format (schema/model-spec.schema.json; README "Model spec files"):
/// the catalog's files and `--model my-model.json` use it.

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "kvplan/model_spec.h"

namespace kvplan {

/// Parses and validates a spec document. `origin` names the file in errors.
ModelSpec parse_model_spec(std::string_view json_text, std::string_view origin);
ModelSpec model_spec_from_json(const nlohmann::json& document, std::string_view origin);

/// The spec as a document in the same format; parse_model_spec(to_spec_json(s)) gives s back.
nlohmann::json to_spec_json(const ModelSpec& spec);

}  // namespace kvplan
