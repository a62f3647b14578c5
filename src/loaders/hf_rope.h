#pragma once
// The rotary embedding a Hugging Face config states: its scaling type and factor, the rotated
// width, and whether the sliding layers have a rope of their own. Engines that precompute a cos/sin
// table per distinct rope (vLLM) size it from this; the loader only records what the config says.

#include <optional>
#include <vector>

#include "kvplan/model_spec.h"
#include "loaders/config_fields.h"

namespace kvplan {

/// The config's rope, or nullopt when it states none (no rope_theta, rope_scaling, rope_parameters,
/// partial_rotary_factor or rotary_dim) or no layer has attention heads to rotate. `layers` are the
/// spec's decoder layers (the rotated width is the first attention layer's head width).
std::optional<RotarySpec> read_hf_rope(ConfigFields& fields, const std::vector<LayerSpec>& layers);

}  // namespace kvplan
