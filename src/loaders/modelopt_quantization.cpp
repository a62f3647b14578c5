#include "loaders/modelopt_quantization.h"

#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kvplan/error.h"
#include "kvplan/units.h"
#include "loaders/excluded_modules.h"
#include "model/checked.h"
#include "model/text.h"

namespace kvplan {

namespace {

std::string string_or_empty(const nlohmann::json& config, const char* key) {
  const auto it = config.find(key);
  return it != config.end() && it->is_string() ? it->get<std::string>() : "";
}

/// Bytes of a checkpoint whose `quantized` values are at `dtype` over `matrices` weight matrices
/// (two fp32 scalars each: weight_scale_2 or weight_scale, and input_scale), the rest of `count`
/// at `model_dtype`.
std::uint64_t checkpoint_bytes(const ParamCount& count, std::uint64_t quantized, std::uint64_t matrices, const Dtype& dtype,
                               const Dtype& model_dtype) {
  return (Checked(weight_bytes_at(quantized, dtype), "weight size") + checked_mul(matrices, 8, "weight size") +
          kept_bytes(count, quantized, model_dtype))
      .value();
}

/// How a MIXED_PRECISION list quantizes one layer's routed experts.
struct ExpertEntries {
  bool block = false;   ///< the whole block named NVFP4 ("layers.3.mlp.experts")
  bool other = false;   ///< some entry names another format
  std::set<std::pair<std::uint64_t, std::string>> matrices;  ///< (expert, matrix) named NVFP4
  std::set<std::string> names;  ///< the matrices' names (w1, w2, w3 or gate_proj, ...)
};

/// Whether `entry` ({"quant_algo": "NVFP4", "group_size": 16}) is the NVFP4 kvplan prices.
bool is_nvfp4(const nlohmann::json& entry) {
  if (!entry.is_object()) return false;
  const std::string algo = string_or_empty(entry, "quant_algo");
  const auto group = entry.find("group_size");
  return (algo == "NVFP4" || algo == "W4A16_NVFP4") && group != entry.end() && group->is_number_unsigned() &&
         group->get<std::uint64_t>() == 16;
}

/// Reads one quantized_layers key into `layers` when it names routed experts.
void read_expert_entry(std::string_view key, const nlohmann::json& entry, std::vector<ExpertEntries>& layers) {
  const auto parsed = layer_module(module_in_model(key));
  if (!parsed || parsed->first >= layers.size()) return;
  ExpertEntries& layer = layers[parsed->first];
  for (const std::string_view block : expert_blocks()) {
    std::string_view rest = parsed->second;
    if (!rest.starts_with(".") || !rest.substr(1).starts_with(block)) continue;
    rest.remove_prefix(1 + block.size());
    if (rest.empty()) {
      (is_nvfp4(entry) ? layer.block : layer.other) = true;
      return;
    }
    // ".<expert>.<matrix>", an expert's matrix in NVFP4; anything else keeps the layer's experts
    // at the model dtype.
    const auto expert = rest.starts_with(".") ? leading_number(rest.substr(1)) : std::nullopt;
    const std::string_view matrix = expert ? expert->second : std::string_view{};
    if (!expert || !matrix.starts_with(".") || matrix.find('.', 1) != std::string_view::npos || !is_nvfp4(entry)) {
      layer.other = true;
      return;
    }
    layer.matrices.emplace(expert->first, std::string(matrix.substr(1)));
    layer.names.emplace(matrix.substr(1));
    return;
  }
}

/// ModelOpt's MIXED_PRECISION: a format per module in quantized_layers. kvplan prices the routed
/// experts its list names NVFP4 (every matrix of every expert of a layer, or the layer's block),
/// and everything else at the model dtype: an upper bound, since the list quantizes some of the
/// rest too (attention in FP8, shared experts, the head).
QuantizedWeights mixed_precision(const nlohmann::json& config, const ParamCount& count, const Dtype& model_dtype) {
  const auto listed = config.find("quantized_layers");
  if (listed == config.end() || !listed->is_object())
    return weights_upper_bound(count, model_dtype, "its MIXED_PRECISION scheme lists no quantized_layers");
  std::vector<ExpertEntries> layers(count.layers.size());
  for (const auto& [key, entry] : listed->items()) read_expert_entry(key, entry, layers);
  Checked quantized(0, "quantized parameters");
  Checked matrices(0, "weight matrices");
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const LayerCount& layer = count.layers[i];
    const ExpertEntries& entries = layers[i];
    const bool every_matrix = entries.names.size() == layer.matrices_per_expert &&
                              entries.matrices.size() == layer.experts * layer.matrices_per_expert &&
                              (entries.matrices.empty() || entries.matrices.rbegin()->first < layer.experts);
    if (layer.experts == 0 || entries.other || !(entries.block || every_matrix)) continue;
    quantized += layer.expert;
    matrices += (Checked(layer.experts, "weight matrices") * layer.matrices_per_expert).value();
  }
  if (quantized.value() == 0)
    return weights_upper_bound(count, model_dtype, "its MIXED_PRECISION list names no routed experts in NVFP4");
  const std::uint64_t kept = rest_of(count, quantized.value());
  const Dtype& nvfp4 = parse_weight_dtype("nvfp4");
  return {&nvfp4, checkpoint_bytes(count, quantized.value(), matrices.value(), nvfp4, model_dtype),
          fmt::format("computed (MIXED_PRECISION, NVIDIA ModelOpt): {} routed-expert params x 9/16 B (NVFP4, an fp8 "
                      "scale per 16) + 8 B of scales for each of {} expert matrices; {} other params {}, an upper bound: "
                      "quantized_layers also puts some of them (attention, shared experts, the head) in FP8 or NVFP4 "
                      "(--weights SIZE makes it exact)",
                      billions(quantized.value()), format_thousands(matrices.value()), billions(kept), model_dtype.name)};
}

}  // namespace

bool is_modelopt_quantization(const nlohmann::json& config) {
  if (!config.is_object()) return false;
  const std::string method = string_or_empty(config, "quant_method");
  if (method == "modelopt") return true;
  const auto producer = config.find("producer");
  return method.empty() && producer != config.end() && producer->is_object() &&
         string_or_empty(*producer, "name") == "modelopt";
}

nlohmann::json modelopt_config_from_hf_quant_config(const nlohmann::json& document, const std::string& origin) {
  const auto section = document.is_object() ? document.find("quantization") : document.end();
  if (!document.is_object() || section == document.end() || !section->is_object())
    throw Error(fmt::format("{}: field 'quantization': expected an object (NVIDIA ModelOpt's scheme)", origin));
  nlohmann::json config = *section;
  config["quant_method"] = "modelopt";
  config[kModeloptSchemeFile] = origin;  // a bad list is then named where the user can find it
  return config;
}

QuantizedWeights modelopt_weights(const nlohmann::json& config, const ParamCount& count, const Dtype& model_dtype,
                                  const std::string& origin) {
  const std::string algo = string_or_empty(config, "quant_algo");
  const bool nvfp4 = algo == "NVFP4";
  if (algo == "MIXED_PRECISION") return mixed_precision(config, count, model_dtype);
  if (!nvfp4 && algo != "FP8")
    return weights_upper_bound(count, model_dtype,
                       fmt::format("kvplan prices ModelOpt's NVFP4, FP8 and MIXED_PRECISION, not '{}'", printable(algo.empty() ? "(no quant_algo)" : algo, 60)));
  if (nvfp4) {
    const auto group = config.find("group_size");
    if (group != config.end() && !group->is_null() && !(group->is_number_unsigned() && group->get<std::uint64_t>() == 16))
      return weights_upper_bound(count, model_dtype, "its NVFP4 group_size is not 16");
  }
  const ExcludedModules excluded = read_excluded_modules(config, count, origin, ModuleSyntax::fnmatch);
  // Every export seen keeps the head and says so; a list without it is a trimmed copy, whose
  // missing names could be whole layers.
  if (!excluded.head && count.lm_head)
    return weights_upper_bound(count, model_dtype, "its list of unquantized modules does not name the output head (lm_head), "
                                           "which ModelOpt keeps: a trimmed copy of the list?");
  if (!excluded.unknown.empty())
    return weights_upper_bound(count, model_dtype,
                       fmt::format("ModelOpt leaves '{}' unquantized, which kvplan cannot place in its counts",
                                   printable(excluded.unknown, 80)));
  const std::string& inside = excluded.inside;
  if (!inside.empty() && count.expert == 0)
    return weights_upper_bound(count, model_dtype,
                       fmt::format("ModelOpt leaves '{}' unquantized, and kvplan does not count a dense layer's "
                                   "modules apart",
                                   printable(inside, 80)));

  // What is quantized, and how many weight matrices it spans.
  const QuantizedShare share = quantized_share(count, excluded);
  const Dtype& dtype = parse_weight_dtype(nvfp4 ? "nvfp4" : "fp8");
  // A quantized KV cache stores k_scale and v_scale (fp32) on each attention layer: at most one a layer.
  const std::uint64_t kv_layers = modelopt_kv_dtype(config) ? count.layers.size() : 0;
  const std::uint64_t bytes =
      checked_add(checkpoint_bytes(count, share.params, share.matrices, dtype, model_dtype), kv_layers * 8, "weight size");
  const std::string what = inside.empty() ? "params" : "routed-expert params";
  std::string rule = fmt::format(
      "computed ({}, NVIDIA ModelOpt): {} {} x {} + {}8 B of scales for each of {} weight matrices{}; {} other params {}",
      algo, billions(share.params), what, nvfp4 ? "9/16 B (an fp8 scale per 16)" : "1 B",
      share.shaped < share.params ? "at most " : "", format_thousands(share.matrices),
      kv_layers ? fmt::format(" and of the KV cache for each of {} layers", kv_layers) : "",
      billions(rest_of(count, share.params)), model_dtype.name);
  if (!inside.empty())
    rule += fmt::format(", an upper bound: ModelOpt also leaves '{}' and others like it unquantized, which kvplan does "
                        "not count apart (--weights SIZE makes it exact)",
                        printable(inside, 80));
  return {&dtype, bytes, rule};
}

const Dtype* modelopt_kv_dtype(const nlohmann::json& config) {
  const std::string algo = string_or_empty(config, "kv_cache_quant_algo");
  if (algo == "FP8") return &parse_kv_dtype("fp8", parse_weight_dtype("bf16"));
  if (algo == "NVFP4") return &parse_kv_dtype("nvfp4", parse_weight_dtype("bf16"));
  const auto scheme = config.find("kv_cache_scheme");
  if (scheme == config.end()) return nullptr;
  const bool fp8 = (scheme->is_string() && scheme->get<std::string>() == "FP8") ||
                   (scheme->is_object() && scheme->value("num_bits", nlohmann::json()) == 8 &&
                    scheme->value("type", nlohmann::json()) == "float");
  return fp8 ? &parse_kv_dtype("fp8", parse_weight_dtype("bf16")) : nullptr;
}

}  // namespace kvplan
