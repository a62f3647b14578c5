#pragma once
// Weight bytes of a Hugging Face checkpoint from its quantization_config, when no safetensors
// index gives the exact size. Internal to the config.json loader.

#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "kvplan/dtype.h"
#include "loaders/param_count.h"

namespace kvplan {

struct QuantizedWeights {
  const Dtype* dtype = nullptr;  ///< the bulk's dtype, as the table prints it
  std::uint64_t bytes = 0;
  std::string rule;              ///< how the bytes were computed, in words
};

/// Bytes of `params` values at `dtype`, partial blocks rounded up.
std::uint64_t weight_bytes_at(std::uint64_t params, const Dtype& dtype);

/// `count.total` less `part` of it, never below zero: what a rule leaves at the other format.
std::uint64_t rest_of(const ParamCount& count, std::uint64_t part);

/// Bytes of what a rule keeps beside `quantized` (rest_of) at `model_dtype`, but the vectors
/// engines hold in fp32 (LayerCount::fp32: DeepSeek's e_score_correction_bias).
std::uint64_t kept_bytes(const ParamCount& count, std::uint64_t quantized, const Dtype& model_dtype);

/// A parameter count in billions, two decimals ("1.96B"), as the rules word it.
std::string billions(std::uint64_t params);

/// Every parameter at `model_dtype`, labelled as the upper bound it is and `why`.
QuantizedWeights weights_upper_bound(const ParamCount& count, const Dtype& model_dtype, const std::string& why);

/// `config` is quantization_config (nullptr: none, every parameter at `model_dtype`). An unknown
/// quant_method is an unsupported-architecture error: the weights cannot be sized without it.
QuantizedWeights weights_from_quantization(const nlohmann::json* config, const ParamCount& count,
                                           const Dtype& model_dtype, const std::string& origin);

}  // namespace kvplan
