#pragma once
// Weight bytes of an NVIDIA ModelOpt checkpoint (NVFP4, FP8) from its scheme and the modules it
// leaves unquantized. ModelOpt writes the scheme to hf_quant_config.json and, since 0.29 or so,
// to config.json's quantization_config too; both are read as the latter. Internal to the
// config.json loader.

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "kvplan/dtype.h"
#include "loaders/hf_quantization.h"
#include "loaders/param_count.h"

namespace kvplan {

/// Whether a quantization_config is ModelOpt's: quant_method "modelopt", or no quant_method and
/// producer.name "modelopt" (Qwen/Qwen3-32B-FP8-Static-PerTensor writes it so).
bool is_modelopt_quantization(const nlohmann::json& config);

/// hf_quant_config.json's document as the quantization_config config.json would hold: its
/// "quantization" object with quant_method "modelopt" and exclude_modules as "ignore". An Error
/// naming `origin` when the document has no "quantization" object.
nlohmann::json modelopt_config_from_hf_quant_config(const nlohmann::json& document, const std::string& origin);

/// The weights a ModelOpt quantization_config describes. Exact (but for the known shortfalls of
/// docs/limits.md) when everything it leaves unquantized is a part kvplan counts apart: the head,
/// embeddings, routers, norms, vision towers, MTP, whole layers and, where the family counts them
/// (LayerCount::modules), whole attention blocks and shared experts. When it also names other
/// modules inside a layer (one projection), only the routed experts are priced quantized, an
/// upper bound; when those names may reach the routed experts, or the scheme is not NVFP4, FP8 or
/// MIXED_PRECISION, every parameter is priced at `model_dtype`, an upper bound too. The rule says
/// which.
QuantizedWeights modelopt_weights(const nlohmann::json& config, const ParamCount& count, const Dtype& model_dtype,
                                  const std::string& origin);

/// The KV-cache quantization a ModelOpt scheme declares: kv_cache_quant_algo "FP8" or "NVFP4",
/// or kv_cache_scheme "FP8" or {"num_bits": 8, "type": "float"}; null when none (or another).
const Dtype* modelopt_kv_dtype(const nlohmann::json& config);

}  // namespace kvplan
