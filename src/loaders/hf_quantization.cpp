#include "loaders/hf_quantization.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kvplan/error.h"
#include "kvplan/units.h"
#include "loaders/excluded_modules.h"
#include "loaders/modelopt_quantization.h"
#include "model/text.h"
#include "model/checked.h"

namespace kvplan {

std::uint64_t weight_bytes_at(std::uint64_t params, const Dtype& dtype) {
  return checked_mul(ceil_div(params, dtype.block_elements), dtype.block_bytes, "weight size");
}

std::uint64_t rest_of(const ParamCount& count, std::uint64_t part) { return count.total - std::min(count.total, part); }

std::string billions(std::uint64_t params) { return fmt::format("{:.2f}B", static_cast<double>(params) / 1e9); }

QuantizedWeights weights_upper_bound(const ParamCount& count, const Dtype& model_dtype, const std::string& why) {
  return {&model_dtype, weight_bytes_at(count.total, model_dtype),
          fmt::format("an upper bound: {} params x {} B ({}), because {} (--weights SIZE, the checkpoint's size, "
                      "makes it exact)",
                      billions(count.total), static_cast<double>(model_dtype.block_bytes) / model_dtype.block_elements,
                      model_dtype.name, why)};
}

namespace {

/// A group size or block that spans a whole matrix: one scale per output channel (GPTQ's -1,
/// compressed-tensors' "channel" strategy), too few to count against the values.
constexpr std::uint64_t kPerChannel = std::uint64_t{1} << 62;

/// "per 128" / "per 16384 values", or for kPerChannel the words saying those scales go uncounted.
std::string per_words(std::uint64_t elements, const char* unit) {
  if (elements == kPerChannel) return "per output channel or tensor (uncounted: one a row at most, against its thousands of values)";
  return fmt::format("per {}{}", elements, unit);
}

/// The part of `count` a checkpoint quantizes, and a bound on the weight matrices it spans. Each
/// layer's weights are, less its router and its vectors (norms, biases) where the family counts
/// them apart, and less what `excluded` keeps; nothing beside the layers is (embeddings, head,
/// final norm, position tables). A count without layers (an MTP block priced alone) quantizes all
/// but its embedding, head and routers.
QuantizedShare quantized_part(const ParamCount& count, const ExcludedModules& excluded = {}) {
  if (count.layers.empty()) {
    const std::uint64_t kept = (Checked(count.embedding, "weight size") + count.lm_head + count.router).value();
    return {rest_of(count, kept), 0};
  }
  return quantized_share(count, excluded);
}

/// Whether `excluded` keeps anything inside the layers.
bool keeps_layer_modules(const ExcludedModules& excluded) {
  for (const auto* layers : {&excluded.whole_layers, &excluded.attention, &excluded.shared, &excluded.dense_mlp})
    if (std::find(layers->begin(), layers->end(), true) != layers->end()) return true;
  return false;
}

/// "1.96B other params bf16 (embeddings, head, routers, norms)": what a rule kept, in words.
std::string kept_in_words(const ParamCount& count, std::uint64_t quantized, const Dtype& model_dtype,
                          bool listed = false) {
  const bool indexers = std::any_of(count.layers.begin(), count.layers.end(),
                                    [](const LayerCount& layer) { return layer.unquantized != 0; });
  return fmt::format("{} other params {} (embeddings, head{}, norms{}{})", billions(rest_of(count, quantized)),
                     model_dtype.name, count.router ? ", routers" : "", indexers ? ", the indexers' weights_proj" : "",
                     listed ? ", what its ignore list names" : "");
}

/// Integer group quantization (AWQ, GPTQ, compressed-tensors int): each group of `group` weights
/// keeps `bits`-bit values, a 16-bit scale and, unless symmetric, a `bits`-bit zero point; a
/// packed compressed-tensors matrix also stores its shape (two int64).
struct IntegerScheme {
  std::uint64_t bits = 4;
  std::uint64_t group = 128;
  bool zero_points = true;
  std::uint64_t bytes_per_matrix = 0;
  std::string method;
};

QuantizedWeights grouped_integer(const ParamCount& count, const IntegerScheme& scheme, const Dtype& model_dtype,
                                 const ExcludedModules& excluded = {}) {
  const QuantizedShare share = quantized_part(count, excluded);
  const std::uint64_t quantized = share.params;
  const std::uint64_t groups = ceil_div(quantized, scheme.group);
  Checked bytes(ceil_div(checked_mul(quantized, scheme.bits, "weight size"), 8), "weight size");
  bytes += checked_mul(groups, 2, "weight size");
  if (scheme.zero_points) bytes += ceil_div(checked_mul(groups, scheme.bits, "weight size"), 8);
  bytes += checked_mul(share.matrices, scheme.bytes_per_matrix, "weight size");
  bytes += weight_bytes_at(rest_of(count, quantized), model_dtype);
  const Dtype& dtype = parse_weight_dtype(scheme.bits <= 4 ? "int4" : "int8");
  std::string shapes;
  if (scheme.bytes_per_matrix && share.matrices)
    shapes = fmt::format(" + at most {} B of shape for each of {} weight matrices", scheme.bytes_per_matrix,
                         format_thousands(share.matrices));
  return {&dtype, bytes.value(),
          fmt::format("computed ({}): {} params at {} bits + a 16-bit scale{} {}{}; {}", scheme.method,
                      billions(quantized), scheme.bits, scheme.zero_points ? " and zero" : "", per_words(scheme.group, ""), shapes,
                      kept_in_words(count, quantized, model_dtype, keeps_layer_modules(excluded)))};
}

/// FP8 with block scales (DeepSeek-V3: 128x128 blocks, one fp32 scale each).
QuantizedWeights block_fp8(const ParamCount& count, std::uint64_t block_elements, const Dtype& model_dtype,
                           const ExcludedModules& excluded = {}) {
  const std::uint64_t quantized = quantized_part(count, excluded).params;
  const std::uint64_t bytes = (Checked(quantized, "weight size") + checked_mul(ceil_div(quantized, block_elements), 4, "weight size") +
                               weight_bytes_at(rest_of(count, quantized), model_dtype))
                                  .value();
  return {&parse_weight_dtype("fp8"), bytes,
          fmt::format("computed (fp8): {} params x 1 B + an fp32 scale {}; {}", billions(quantized),
                      per_words(block_elements, " values"), kept_in_words(count, quantized, model_dtype, keeps_layer_modules(excluded)))};
}

/// Routed experts in MXFP4 (17 B per 32 values: 16 B of 4-bit values and an E8M0 scale),
/// everything else at the model's dtype: gpt-oss, and Kimi K3's compressed-tensors checkpoint.
QuantizedWeights experts_mxfp4(const ParamCount& count, const Dtype& model_dtype, const std::string& method) {
  const Dtype& mxfp4 = parse_weight_dtype("mxfp4");
  const std::uint64_t rest = rest_of(count, count.expert);
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
    if (value == -1 && std::string_view(key) == "group_size") return kPerChannel;
  }
  throw Error(fmt::format("{}: field 'quantization_config.{}': expected a positive whole number", origin, key));
}

/// Whether a config group applies to every linear layer (targets ["Linear"]), as the schemes
/// kvplan prices do; groups aimed at some modules only leave the rest unquantized.
bool targets_every_linear_layer(const nlohmann::json& group) {
  const auto targets = group.find("targets");
  return targets != group.end() && targets->is_array() && targets->size() == 1 && (*targets)[0] == "Linear";
}

QuantizedWeights compressed_tensors(const nlohmann::json& config, const ParamCount& count, const Dtype& model_dtype,
                                    const std::string& origin) {
  const auto groups = config.find("config_groups");
  if (groups == config.end() || !groups->is_object() || groups->empty())
    throw unsupported_architecture(origin + ": quantization_config.config_groups", "missing");
  const nlohmann::json& first = groups->begin().value();
  const auto weights = first.is_object() ? first.find("weights") : first.end();
  if (!first.is_object() || weights == first.end() || !weights->is_object())
    throw unsupported_architecture(origin + ": quantization_config.config_groups.weights", "missing");
  const std::uint64_t bits = required(*weights, "num_bits", origin);
  const std::string type =
      string_field(*weights, "type", "int", origin, "quantization_config.config_groups.weights.type");
  // MXFP4 packed by compressed-tensors (Kimi K3): 4-bit floats with one scale per 32. Its ignore
  // list keeps attention, shared experts, dense MLPs and the head unquantized, so only the routed
  // experts are priced at 17/32 B.
  const std::string format = string_field(config, "format", "", origin, "quantization_config.format");
  const auto group = weights->find("group_size");
  if (type == "float" && bits == 4 && format == "mxfp4-pack-quantized" && group != weights->end() && *group == 32)
    return experts_mxfp4(count, model_dtype, "mxfp4, compressed-tensors");
  const bool float8 = type == "float" && bits == 8;
  const bool integer = type == "int" && (bits == 4 || bits == 8);
  if (!float8 && !integer)
    throw unsupported_architecture(origin + ": quantization_config.config_groups.weights",
                                   fmt::format("{} {}-bit", type, bits));
  if (groups->size() != 1 || !targets_every_linear_layer(first))
    return weights_upper_bound(count, model_dtype,
                               "its compressed-tensors config_groups quantize some modules only, which kvplan does not "
                               "price one by one");
  const ExcludedModules excluded = read_excluded_modules(config, count, origin, ModuleSyntax::compressed_tensors);
  if (!excluded.unknown.empty())
    return weights_upper_bound(count, model_dtype,
                               fmt::format("its ignore list keeps '{}' unquantized, which kvplan cannot place in its counts",
                                           printable(excluded.unknown, 80)));
  if (!excluded.inside.empty())
    return weights_upper_bound(count, model_dtype,
                               fmt::format("its ignore list keeps '{}' unquantized, a module kvplan does not count apart",
                                           printable(excluded.inside, 80)));
  if (float8) {
    // Scales per 128x128 block, or per output channel or tensor (one a row at most).
    const std::string strategy =
        string_field(*weights, "strategy", "", origin, "quantization_config.config_groups.weights.strategy");
    const auto block = weights->find("block_structure");
    if (strategy == "block" && block != weights->end() && block->is_array() && block->size() == 2 &&
        (*block)[0].is_number_unsigned() && (*block)[1].is_number_unsigned() && (*block)[0] != 0 && (*block)[1] != 0)
      return block_fp8(count, checked_mul((*block)[0].get<std::uint64_t>(), (*block)[1].get<std::uint64_t>(),
                                          "quantization_config.config_groups.weights.block_structure"),
                       model_dtype, excluded);
    return block_fp8(count, kPerChannel, model_dtype, excluded);
  }
  IntegerScheme scheme;
  scheme.bits = bits;
  scheme.group = (group != weights->end() && group->is_number_unsigned() && *group != 0) ? group->get<std::uint64_t>()
                                                                                       : kPerChannel;
  const auto symmetric = weights->find("symmetric");
  scheme.zero_points = !(symmetric != weights->end() && *symmetric == true);
  scheme.bytes_per_matrix = format == "pack-quantized" ? 16 : 0;  // weight_shape: two int64
  scheme.method = "compressed-tensors";
  return grouped_integer(count, scheme, model_dtype, excluded);
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
  if (method == "awq" || method == "gptq") {
    IntegerScheme scheme;
    scheme.bits = required(*config, "bits", origin);
    scheme.group = required(*config, "group_size", origin);
    scheme.method = method;
    return grouped_integer(count, scheme, model_dtype);
  }
  if (method == "compressed-tensors") return compressed_tensors(*config, count, model_dtype, origin);
  if (is_modelopt_quantization(*config)) return modelopt_weights(*config, count, model_dtype, origin);
  throw unsupported_architecture(origin + ": quantization_config.quant_method", method.empty() ? "(missing)" : method);
}

}  // namespace kvplan
