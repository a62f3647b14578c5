#pragma once
/// Models people ask for by name that the catalog leaves out because kvplan cannot size them from
/// their config.json, each with the input it does size them from.
#include <optional>
#include <string>
#include <string_view>

namespace kvplan {

/// For a name of such a model (a Hugging Face id, or its name without the organisation, any case),
/// the sentence saying what kvplan reads of it instead; nullopt for any other name.
std::optional<std::string> unsized_model_hint(std::string_view name);

}  // namespace kvplan
