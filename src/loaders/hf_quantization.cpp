#include "loaders/hf_quantization.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kvplan/error.h"
#include "kvplan/units.h"
#include "loaders/modelopt_quantization.h"
#include "model/checked.h"

namespace kvplan {

std::uint64_t weight_bytes_at(std::uint64_t params, const Dtype& dtype) {
  return checked_mul(ceil_div(params, dtype.block_elements), dtype.block_bytes, "weight size");
}

std::string billions(std::uint64_t params) { return fmt::format("{:.2f}B", static_cast<double>(params) / 1e9); }

namespace {

/// What a quantized checkpoint keeps at the model's dtype: the embeddings, the head and the MoE
/// routers. Norms are not in it (about 2 x hidden a layer, under 1 MB for DeepSeek-V3): they are
/// priced as quantized, a known shortfall docs/limits.md states.
std::uint64_t kept_unquantized(const ParamCount& count) {
  return (Checked(count.embedding, "weight size") + count.lm_head + count.router).value();
}

/// "1.96B embedding/head/router params bf16": what kept_unquantized kept, in words.
std::string kept_in_words(const ParamCount& count, const Dtype& model_dtype) {
  return fmt::format("{} embedding/head{} params {}", billions(kept_unquantized(count)), count.router ? "/router" : "",
                     model_dtype.name);
}

/// Integer group quantization (AWQ, GPTQ, compressed-tensors int): each group of `group` weights
/// keeps `bits`-bit values, an fp16 scale and a `bits`-bit zero point.
QuantizedWeights grouped_integer(const ParamCount& count, std::uint64_t bits, std::uint64_t group,
                                 const Dtype& model_dtype, const std::string& method) {
  const std::uint64_t kept = kept_unquantized(count);
  const std::uint64_t quantized = count.total - std::min(count.total, kept);
  const std::uint64_t groups = ceil_div(quantized, group);
  const std::uint64_t bytes = (Checked(ceil_div(checked_mul(quantized, bits, "weight size"), 8), "weight size") +
                               checked_mul(groups, 2, "weight size") + ceil_div(checked_mul(groups, bits, "weight size"), 8) +
                               weight_bytes_at(kept, model_dtype))
                                  .value();
  const Dtype& dtype = parse_weight_dtype(bits <= 4 ? "int4" : "int8");
  return {&dtype, bytes,
          fmt::format("computed ({}): {} params at {} bits + an fp16 scale and zero per {}; {}", method, billions(quantized),
                      bits, group, kept_in_words(count, model_dtype))};
}

/// FP8 with block scales (DeepSeek-V3: 128x128 blocks, one fp32 scale each).
QuantizedWeights block_fp8(const ParamCount& count, std::uint64_t block_elements, const Dtype& model_dtype) {
  const std::uint64_t kept = kept_unquantized(count);
  const std::uint64_t quantized = count.total - std::min(count.total, kept);
  const std::uint64_t bytes =
      (Checked(quantized, "weight size") + checked_mul(ceil_div(quantized, block_elements), 4, "weight size") + weight_bytes_at(kept, model_dtype))
          .value();
  return {&parse_weight_dtype("fp8"), bytes,
          fmt::format("computed (fp8): {} params x 1 B + an fp32 scale per {} values; {}", billions(quantized),
                      block_elements, kept_in_words(count, model_dtype))};
}

/// Routed experts in MXFP4 (17 B per 32 values: 16 B of 4-bit values and an E8M0 scale),
/// everything else at the model's dtype: gpt-oss, and Kimi K3's compressed-tensors checkpoint.
QuantizedWeights experts_mxfp4(const ParamCount& count, const Dtype& model_dtype, const std::string& method) {
  const Dtype& mxfp4 = parse_weight_dtype("mxfp4");
  const std::uint64_t rest = count.total - std::min(count.total, count.expert);
  const std::uint64_t bytes = weight_bytes_at(count.expert, mxfp4) + weight_bytes_at(rest, model_dtype);
  return {&mxfp4, bytes,
          fmt::format("computed ({}): {} expert params x 17/32 B + {} other params {}", method, billions(count.expert),
                      billions(rest), model_dtype.name)};
}

/// The string under `key`, or `fallback` when absent; any other type is an Error naming `field`.
std::string string_field(const nlohmann::json& object, const char* key, const char* fallback, const std::string& origin,
                         const char* field) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  if (!it->is_string()) throw Error(fmt::format("{}: field '{}': expected a string", origin, field));
  return it->get<std::string>();
}

/// A positive whole number; `group_size` -1 (GPTQ's per-channel) reads as "one group".
std::uint64_t required(const nlohmann::json& object, const char* key, const std::string& origin) {
  const auto it = object.find(key);
  if (it != object.end() && it->is_number_integer()) {
    const std::int64_t value = it->get<std::int64_t>();
    if (value > 0) return static_cast<std::uint64_t>(value);
    if (value == -1 && std::string_view(key) == "group_size") return std::uint64_t{1} << 62;
  }
  throw Error(fmt::format("{}: field 'quantization_config.{}': expected a positive whole number", origin, key));
}

QuantizedWeights compressed_tensors(const nlohmann::json& config, const ParamCount& count, const Dtype& model_dtype,
                                    const std::string& origin) {
  const auto groups = config.find("config_groups");
  if (groups == config.end() || !groups->is_object() || groups->empty())
    throw unsupported_architecture(origin + ": quantization_config.config_groups", "missing");
  const nlohmann::json& first = groups->begin().value();
  const auto weights = first.find("weights");
  if (weights == first.end() || !weights->is_object())
    throw unsupported_architecture(origin + ": quantization_config.config_groups.weights", "missing");
  const std::uint64_t bits = required(*weights, "num_bits", origin);
  const std::string type =
      string_field(*weights, "type", "int", origin, "quantization_config.config_groups.weights.type");
  if (type == "float" && bits == 8) return block_fp8(count, 1ull << 62, model_dtype);  // per-channel scales: negligible
  // MXFP4 packed by compressed-tensors (Kimi K3): 4-bit floats with one scale per 32. Its ignore
  // list keeps attention, shared experts, dense MLPs and the head unquantized, so only the routed
  // experts are priced at 17/32 B.
  const std::string format = string_field(config, "format", "", origin, "quantization_config.format");
  const auto group = weights->find("group_size");
  if (type == "float" && bits == 4 && format == "mxfp4-pack-quantized" && group != weights->end() && *group == 32)
    return experts_mxfp4(count, model_dtype, "mxfp4, compressed-tensors");
  if (type == "int" && (bits == 4 || bits == 8)) {
    const std::uint64_t group_size = (group != weights->end() && group->is_number_unsigned()) ? group->get<std::uint64_t>() : 0;
    return grouped_integer(count, bits, group_size ? group_size : (1ull << 62), model_dtype, "compressed-tensors");
  }
  throw unsupported_architecture(origin + ": quantization_config.config_groups.weights",
                                 fmt::format("{} {}-bit", type, bits));
}

}  // namespace

QuantizedWeights weights_from_quantization(const nlohmann::json* config, const ParamCount& count,
                                           const Dtype& model_dtype, const std::string& origin) {
  if (config == nullptr)
    return {&model_dtype, weight_bytes_at(count.total, model_dtype),
            fmt::format("computed: {} params x {} B ({})", billions(count.total),
                        static_cast<double>(model_dtype.block_bytes) / model_dtype.block_elements, model_dtype.name)};
  if (!config->is_object()) throw Error(fmt::format("{}: field 'quantization_config': expected an object", origin));
  const std::string method = string_field(*config, "quant_method", "", origin, "quantization_config.quant_method");
  if (method == "fp8") {
    std::uint64_t block = 128 * 128;
    // Two positive whole numbers; anything else (false, -1, 1e30, 0) is refused, not converted.
    const auto side = [&](const nlohmann::json& value) {
      if (!value.is_number_unsigned() || value.get<std::uint64_t>() == 0)
        throw Error(fmt::format("{}: field 'quantization_config.weight_block_size': expected two positive whole numbers",
                                origin));
      return value.get<std::uint64_t>();
    };
    if (const auto size = config->find("weight_block_size"); size != config->end() && size->is_array() && size->size() == 2)
      block = checked_mul(side((*size)[0]), side((*size)[1]), "quantization_config.weight_block_size");
    return block_fp8(count, block, model_dtype);
  }
  if (method == "mxfp4") return experts_mxfp4(count, model_dtype, "mxfp4");  // gpt-oss
  if (method == "awq" || method == "gptq")
    return grouped_integer(count, required(*config, "bits", origin), required(*config, "group_size", origin),
                           model_dtype, method);
  if (method == "compressed-tensors") return compressed_tensors(*config, count, model_dtype, origin);
  if (is_modelopt_quantization(*config)) return modelopt_weights(*config, count, model_dtype, origin);
  throw unsupported_architecture(origin + ": quantization_config.quant_method", method.empty() ? "(missing)" : method);
}

}  // namespace kvplan
