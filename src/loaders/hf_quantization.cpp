#include "loaders/hf_quantization.h"

#include <algorithm>
#include <optional>

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

namespace {

/// Of `count`, the parameters kept in fp32 whatever the model's dtype.
std::uint64_t fp32_params(const ParamCount& count) {
  Checked sum(0, "weight size");
  for (const LayerCount& layer : count.layers) sum += layer.fp32;
  return sum.value();
}

/// "<lead> 14,848 routers' score biases in fp32" (lead ", of them" or " but"), or "" for none.
std::string fp32_in_words(const ParamCount& count, const char* lead) {
  const std::uint64_t fp32 = fp32_params(count);
  return fp32 ? fmt::format("{} {} routers' score biases in fp32", lead, format_thousands(fp32)) : "";
}

}  // namespace

std::uint64_t kept_bytes(const ParamCount& count, std::uint64_t quantized, const Dtype& model_dtype) {
  const std::uint64_t fp32 = fp32_params(count);
  const std::uint64_t at_model_dtype = weight_bytes_at(rest_of(count, quantized), model_dtype);
  const std::uint64_t as_model_dtype = weight_bytes_at(fp32, model_dtype);
  const std::uint64_t wide = checked_mul(fp32, 4, "weight size");
  // The fp32 vectors are part of the rest: priced wider where the model's dtype is narrower.
  return wide > as_model_dtype ? checked_add(at_model_dtype, wide - as_model_dtype, "weight size") : at_model_dtype;
}

std::string billions(std::uint64_t params) { return fmt::format("{:.2f}B", static_cast<double>(params) / 1e9); }

QuantizedWeights weights_upper_bound(const ParamCount& count, const Dtype& model_dtype, const std::string& why) {
  return {&model_dtype, kept_bytes(count, 0, model_dtype),
          fmt::format("an upper bound: {} params x {} B ({}){}, because {} (--weights SIZE, the checkpoint's size, "
                      "makes it exact)",
                      billions(count.total), static_cast<double>(model_dtype.block_bytes) / model_dtype.block_elements,
                      model_dtype.name, fp32_in_words(count, " but"), why)};
}

namespace {

/// One side of a scale block that spans the whole matrix: a block {1, kWhole} is one scale per
/// output row (GPTQ's group_size -1, compressed-tensors' "channel"), {kWhole, kWhole} one per
/// matrix ("tensor").
constexpr std::uint64_t kWhole = std::uint64_t{1} << 62;

/// The values one scale covers: `rows` output rows by `cols` input columns.
struct ScaleBlock {
  std::uint64_t rows = 1;
  std::uint64_t cols = 1;
  bool spans_rows() const { return cols == kWhole; }
};

/// The part of `count` a checkpoint quantizes, and the weight matrices it spans. Each layer's
/// weights are, less its router and its vectors (norms, biases) where the family counts them
/// apart, and less what `excluded` keeps; nothing beside the layers is (embeddings, head, final
/// norm, position tables). A count without layers (an MTP block priced alone) quantizes all but
/// its embedding, head and routers.
QuantizedShare quantized_part(const ParamCount& count, const ExcludedModules& excluded = {}) {
  if (count.layers.empty()) {
    const std::uint64_t kept = (Checked(count.embedding, "weight size") + count.lm_head + count.router).value();
    return {rest_of(count, kept), 0, {}, 0};
  }
  return quantized_share(count, excluded);
}

/// The scales `share` stores at one per `block`: over the matrices whose shapes kvplan knows, each
/// side rounded up (a 576-row matrix has five 128-row blocks); over the rest of its values, one per
/// block's worth, or none for scales spanning whole rows (too few to count: one a row at most,
/// against its thousands of values).
std::uint64_t scales_of(const QuantizedShare& share, ScaleBlock block) {
  Checked scales(0, "weight size");
  for (const MatrixShape& shape : share.shapes)
    scales += (Checked(ceil_div(shape.rows, block.rows), "weight size") * ceil_div(shape.cols, block.cols) * shape.copies).value();
  if (!block.spans_rows())
    scales += ceil_div(share.params - share.shaped, checked_mul(block.rows, block.cols, "weight size"));
  return scales.value();
}

/// "per 128x128 block" / "per 128" / "per output row", and where shapes are not all known, the
/// words saying the per-row scales of the rest go uncounted.
std::string per_words(const QuantizedShare& share, ScaleBlock block) {
  std::string words;
  if (block.rows == kWhole)
    words = "per matrix";
  else if (block.spans_rows())
    words = "per output row";
  else if (block.rows == 1)
    words = fmt::format("per {}", block.cols);
  else
    words = fmt::format("per {}x{} block", block.rows, block.cols);
  if (block.spans_rows() && share.shaped < share.params)
    words += fmt::format(" (uncounted for the {} params whose matrices kvplan does not know one by one)",
                         billions(share.params - share.shaped));
  return words;
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
  return fmt::format("{} other params {} (embeddings, head{}, norms{}{}){}", billions(rest_of(count, quantized)),
                     model_dtype.name, count.router ? ", routers" : "", indexers ? ", the indexers' weights_proj" : "",
                     listed ? ", what its ignore list names" : "", fp32_in_words(count, ", of them"));
}

/// Integer group quantization (AWQ, GPTQ, compressed-tensors int): each group of `group` inputs
/// of a row keeps `bits`-bit values, a 16-bit scale and, unless symmetric, a `bits`-bit zero
/// point; GPTQ also stores each input column's group (g_idx, 4 B), and a packed
/// compressed-tensors matrix its shape (two int64).
struct IntegerScheme {
  std::uint64_t bits = 4;
  std::uint64_t group = 128;  ///< kWhole: one scale per output row
  bool zero_points = true;
  bool group_index = false;
  std::uint64_t bytes_per_matrix = 0;
  std::string method;
};

QuantizedWeights grouped_integer(const ParamCount& count, const IntegerScheme& scheme, const Dtype& model_dtype,
                                 const ExcludedModules& excluded = {}) {
  const QuantizedShare share = quantized_part(count, excluded);
  const std::uint64_t quantized = share.params;
  const ScaleBlock block{1, scheme.group};
  const std::uint64_t groups = scales_of(share, block);
  Checked bytes(ceil_div(checked_mul(quantized, scheme.bits, "weight size"), 8), "weight size");
  bytes += checked_mul(groups, 2, "weight size");
  if (scheme.zero_points) bytes += ceil_div(checked_mul(groups, scheme.bits, "weight size"), 8);
  bytes += checked_mul(share.matrices, scheme.bytes_per_matrix, "weight size");
  std::string extras;
  if (scheme.group_index) {
    Checked columns(0, "weight size");
    for (const MatrixShape& shape : share.shapes) columns += (Checked(shape.cols, "weight size") * shape.copies).value();
    bytes += checked_mul(columns.value(), 4, "weight size");
    extras += share.shaped < quantized ? fmt::format(" + a 4-byte g_idx per input column (uncounted for the {} params whose "
                                                     "matrices kvplan does not know one by one)",
                                                     billions(quantized - share.shaped))
                                       : " + a 4-byte g_idx per input column";
  }
  bytes += kept_bytes(count, quantized, model_dtype);
  const Dtype& dtype = parse_weight_dtype(scheme.bits <= 4 ? "int4" : "int8");
  if (scheme.bytes_per_matrix && share.matrices)
    extras += fmt::format(" + {} B of shape for each of {}{} weight matrices", scheme.bytes_per_matrix,
                          share.shaped < quantized ? "at most " : "", format_thousands(share.matrices));
  return {&dtype, bytes.value(),
          fmt::format("computed ({}): {} params at {} bits + a 16-bit scale{} {}{}; {}", scheme.method,
                      billions(quantized), scheme.bits, scheme.zero_points ? " and zero" : "", per_words(share, block), extras,
                      kept_in_words(count, quantized, model_dtype, keeps_layer_modules(excluded)))};
}

/// FP8 with a scale per block (DeepSeek-V3: 128x128 blocks, one fp32 scale each), per output row
/// or per matrix; the scales priced in fp32, as engines hold them (Qwen's releases store bf16).
QuantizedWeights block_fp8(const ParamCount& count, ScaleBlock block, const Dtype& model_dtype,
                           const ExcludedModules& excluded = {}) {
  const QuantizedShare share = quantized_part(count, excluded);
  const std::uint64_t quantized = share.params;
  const std::uint64_t bytes = (Checked(quantized, "weight size") + checked_mul(scales_of(share, block), 4, "weight size") +
                               kept_bytes(count, quantized, model_dtype))
                                  .value();
  return {&parse_weight_dtype("fp8"), bytes,
          fmt::format("computed (fp8): {} params x 1 B + an fp32 scale {}; {}", billions(quantized), per_words(share, block),
                      kept_in_words(count, quantized, model_dtype, keeps_layer_modules(excluded)))};
}

/// Routed experts in MXFP4 (17 B per 32 values: 16 B of 4-bit values and an E8M0 scale),
/// everything else at the model's dtype: gpt-oss, and Kimi K3's compressed-tensors checkpoint.
QuantizedWeights experts_mxfp4(const ParamCount& count, const Dtype& model_dtype, const std::string& method) {
  const Dtype& mxfp4 = parse_weight_dtype("mxfp4");
  const std::uint64_t rest = rest_of(count, count.expert);
  const std::uint64_t bytes = checked_add(weight_bytes_at(count.expert, mxfp4), kept_bytes(count, count.expert, model_dtype),
                                         "weight size");
  return {&mxfp4, bytes,
          fmt::format("computed ({}): {} expert params x 17/32 B + {} other params {}", method, billions(count.expert),
                      billions(rest), model_dtype.name)};
}

/// Every parameter at the model dtype when `excluded` (the checkpoint's `list`) keeps what kvplan
/// cannot place in its counts; nullopt when it can price what the list keeps.
std::optional<QuantizedWeights> unplaced(const ExcludedModules& excluded, const ParamCount& count, const Dtype& model_dtype,
                                         const char* list) {
  if (!excluded.unknown.empty())
    return weights_upper_bound(count, model_dtype,
                               fmt::format("its {} keeps '{}' unquantized, which kvplan cannot place in its counts", list,
                                           printable(excluded.unknown, 80)));
  if (!excluded.inside.empty())
    return weights_upper_bound(count, model_dtype,
                               fmt::format("its {} keeps '{}' unquantized, a module kvplan does not count apart", list,
                                           printable(excluded.inside, 80)));
  return std::nullopt;
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
    if (value == -1 && std::string_view(key) == "group_size") return kWhole;
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
  if (auto bound = unplaced(excluded, count, model_dtype, "ignore list")) return *bound;
  if (float8) {
    // Scales per 128x128 block, per matrix ("tensor"), else per output row ("channel").
    const std::string strategy =
        string_field(*weights, "strategy", "", origin, "quantization_config.config_groups.weights.strategy");
    const auto block = weights->find("block_structure");
    if (strategy == "block" && block != weights->end() && block->is_array() && block->size() == 2 &&
        (*block)[0].is_number_unsigned() && (*block)[1].is_number_unsigned() && (*block)[0] != 0 && (*block)[1] != 0) {
      const ScaleBlock sides{(*block)[0].get<std::uint64_t>(), (*block)[1].get<std::uint64_t>()};
      checked_mul(sides.rows, sides.cols, "quantization_config.config_groups.weights.block_structure");  // a hostile pair is refused
      return block_fp8(count, sides, model_dtype, excluded);
    }
    return block_fp8(count, strategy == "tensor" ? ScaleBlock{kWhole, kWhole} : ScaleBlock{1, kWhole}, model_dtype, excluded);
  }
  IntegerScheme scheme;
  scheme.bits = bits;
  scheme.group = (group != weights->end() && group->is_number_unsigned() && *group != 0) ? group->get<std::uint64_t>()
                                                                                       : kWhole;
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
    return {&model_dtype, kept_bytes(count, 0, model_dtype),
            fmt::format("computed: {} params x {} B ({}){}", billions(count.total),
                        static_cast<double>(model_dtype.block_bytes) / model_dtype.block_elements, model_dtype.name,
                        fp32_in_words(count, ", of them"))};
  if (!config->is_object()) throw Error(fmt::format("{}: field 'quantization_config': expected an object", origin));
  const std::string method = string_field(*config, "quant_method", "", origin, "quantization_config.quant_method");
  if (method == "fp8") {
    ScaleBlock block{128, 128};
    // Two positive whole numbers; anything else (false, -1, 1e30, 0) is refused, not converted.
    const auto side = [&](const nlohmann::json& value) {
      if (!value.is_number_unsigned() || value.get<std::uint64_t>() == 0)
        throw Error(fmt::format("{}: field 'quantization_config.weight_block_size': expected two positive whole numbers",
                                origin));
      return value.get<std::uint64_t>();
    };
    if (const auto size = config->find("weight_block_size"); size != config->end() && size->is_array() && size->size() == 2) {
      block = {side((*size)[0]), side((*size)[1])};
      checked_mul(block.rows, block.cols, "quantization_config.weight_block_size");  // a hostile pair is refused
    }
    const ExcludedModules excluded = read_excluded_modules(*config, count, origin, ModuleSyntax::transformers);
    if (auto bound = unplaced(excluded, count, model_dtype, "modules_to_not_convert")) return *bound;
    return block_fp8(count, block, model_dtype, excluded);
  }
  if (method == "mxfp4") return experts_mxfp4(count, model_dtype, "mxfp4");  // gpt-oss
  if (method == "awq" || method == "gptq") {
    IntegerScheme scheme;
    scheme.bits = required(*config, "bits", origin);
    scheme.group = required(*config, "group_size", origin);
    scheme.method = method;
    scheme.group_index = method == "gptq";
    const ExcludedModules excluded = read_excluded_modules(*config, count, origin, ModuleSyntax::transformers);
    if (auto bound = unplaced(excluded, count, model_dtype, "modules_to_not_convert")) return *bound;
    return grouped_integer(count, scheme, model_dtype, excluded);
  }
  if (method == "compressed-tensors") return compressed_tensors(*config, count, model_dtype, origin);
  if (is_modelopt_quantization(*config)) return modelopt_weights(*config, count, model_dtype, origin);
  throw unsupported_architecture(origin + ": quantization_config.quant_method", method.empty() ? "(missing)" : method);
}

}  // namespace kvplan
