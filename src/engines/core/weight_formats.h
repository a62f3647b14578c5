#pragma once
/// Weight formats users ask for by name (`--weight-dtype q4_k_m`, `awq`, `nvfp4`): priced tensor by
/// tensor from the model's widths, each with its rule in words. The plain dtypes (fp16, fp8, int4,
/// ...) stay "params x bytes per value" (engines/core/weights.cpp).

#include <optional>
#include <span>
#include <string_view>

#include "kvplan/dtype.h"
#include "kvplan/model_spec.h"
#include "kvplan/plan.h"

namespace kvplan {

/// The named formats: llama.cpp's GGUF mixes (q4_k_m, q8_0, iq4_xs, ...), awq / gptq with their
/// group size (awq = awq-g128), nvfp4.
std::span<const Dtype> weight_formats();

/// A plain weight dtype (parse_weight_dtype) or a named format; unknown names throw with "did you mean".
const Dtype& parse_requested_weight_dtype(std::string_view text);

/// The weights of `model` stored in `format`, nullopt when `format` is a plain dtype. Throws an
/// unsupported-architecture Error when the model's widths are not known well enough to price it.
std::optional<WeightsEstimate> price_weight_format(const ModelSpec& model, const Dtype& format);

}  // namespace kvplan
