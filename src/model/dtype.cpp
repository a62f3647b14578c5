#include "kvplan/dtype.h"

#include <algorithm>
#include <array>
#include <vector>

#include <fmt/format.h>

#include "kvplan/error.h"
#include "model/suggest.h"
#include "kvplan/units.h"
#include "model/text.h"

namespace kvplan {

namespace {

// Block layouts of llama.cpp's cache types are ggml's `type_traits` (ggml/src/ggml.c): q8_0 is a
// 2-byte fp16 scale + 32 int8 = 34 B; q4_0 scale + 16 B = 18 B; q4_1 scale, min + 16 B = 20 B;
// q5_0 scale + 4 B high bits + 16 B = 22 B; q5_1 = 24 B; iq4_nl scale + 16 B = 18 B.
constexpr std::array kKvDtypes = {
    Dtype{"fp32", 1, 4, "32-bit float (llama.cpp f32)"},
    Dtype{"fp16", 1, 2, "16-bit float (llama.cpp f16)"},
    Dtype{"bf16", 1, 2, "bfloat16"},
    Dtype{"fp8", 1, 1, "8-bit float E4M3 (vLLM fp8, fp8_e4m3)"},
    Dtype{"fp8_e5m2", 1, 1, "8-bit float E5M2"},
    Dtype{"int8", 1, 1, "8-bit integer"},
    Dtype{"int4", 2, 1, "4-bit integer, two per byte"},
    Dtype{"q8_0", 32, 34, "llama.cpp q8_0: 34 B per 32 values"},
    Dtype{"q4_0", 32, 18, "llama.cpp q4_0: 18 B per 32 values"},
    Dtype{"q4_1", 32, 20, "llama.cpp q4_1: 20 B per 32 values"},
    Dtype{"q5_0", 32, 22, "llama.cpp q5_0: 22 B per 32 values"},
    Dtype{"q5_1", 32, 24, "llama.cpp q5_1: 24 B per 32 values"},
    Dtype{"iq4_nl", 32, 18, "llama.cpp iq4_nl: 18 B per 32 values"},
    // NVFP4 (TensorRT-LLM's nvfp4 KV cache, SGLang's fp4_e2m1): 16 E2M1 values in 8 B share one
    // fp8 scale, 9 B per 16 values (resource_manager.py get_cache_bytes_per_token).
    Dtype{"nvfp4", 16, 9, "NVFP4: 4-bit floats with an fp8 scale per 16, 9 B per 16 values (Blackwell)"},
};

/// Weight formats that are never a cache type. MXFP4 (OCP microscaling, gpt-oss experts): 32
/// 4-bit values (16 B) share one 8-bit exponent, 17 B per 32 values.
constexpr std::array kWeightOnlyDtypes = {
    Dtype{"mxfp4", 32, 17, "MXFP4: 17 B per 32 values (gpt-oss experts)"},
};

constexpr std::array kWeightDtypeNames = {std::string_view{"fp32"}, std::string_view{"fp16"},
                                          std::string_view{"bf16"}, std::string_view{"fp8"},
                                          std::string_view{"int8"}, std::string_view{"int4"},
                                          std::string_view{"mxfp4"}, std::string_view{"nvfp4"}};

constexpr std::array kDefaultKvDtypeNames = {std::string_view{"fp16"}, std::string_view{"fp8"},
                                             std::string_view{"int8"}, std::string_view{"int4"}};

/// Other spellings users type, mapped to the canonical name.
struct Alias {
  std::string_view spelling;
  std::string_view canonical;
};
constexpr std::array kAliases = {
    Alias{"f32", "fp32"},        Alias{"float32", "fp32"},     Alias{"float", "fp32"},
    Alias{"f16", "fp16"},        Alias{"float16", "fp16"},     Alias{"half", "fp16"},
    Alias{"bfloat16", "bf16"},   Alias{"fp8_e4m3", "fp8"},     Alias{"e4m3", "fp8"},
    Alias{"float8_e4m3fn", "fp8"}, Alias{"e5m2", "fp8_e5m2"}, Alias{"float8_e5m2", "fp8_e5m2"},
    Alias{"i8", "int8"},         Alias{"i4", "int4"},         Alias{"fp4", "nvfp4"},
    Alias{"fp4_e2m1", "nvfp4"},
};

const Dtype* find_kv_dtype(std::string_view text) {
  std::string name = ascii_lower(text);
  for (const Alias& alias : kAliases)
    if (alias.spelling == name) name = std::string(alias.canonical);
  for (const Dtype& type : kKvDtypes)
    if (type.name == name) return &type;
  return nullptr;
}

const Dtype* find_any_dtype(std::string_view text) {
  if (const Dtype* type = find_kv_dtype(text)) return type;
  const std::string name = ascii_lower(text);
  for (const Dtype& type : kWeightOnlyDtypes)
    if (type.name == name) return &type;
  return nullptr;
}

std::vector<std::string> names_of(std::span<const std::string_view> names) {
  return {names.begin(), names.end()};
}

}  // namespace

std::uint64_t dtype_bytes(const Dtype& type, std::uint64_t elements) {
  if (elements % type.block_elements != 0)
    throw Error(fmt::format("{} stores values in blocks of {}; {} values is not a whole number of blocks",
                            type.name, type.block_elements, elements));
  return checked_mul(elements / type.block_elements, type.block_bytes, "cache size");
}

std::span<const Dtype> kv_dtypes() { return kKvDtypes; }

std::span<const Dtype> weight_dtypes() {
  static const std::vector<Dtype> types = [] {
    std::vector<Dtype> out;
    for (std::string_view name : kWeightDtypeNames) out.push_back(*find_any_dtype(name));
    return out;
  }();
  return types;
}

const Dtype& parse_kv_dtype(std::string_view text, const Dtype& model_dtype) {
  if (ascii_lower(text) == "auto") {
    // Engines cache at the model's compute dtype: a float checkpoint's own, and bf16 for weights
    // stored quantized (fp8, int8, int4, mxfp4), which are dequantized to compute.
    const std::string_view name = model_dtype.name;
    return name == "fp32" || name == "fp16" || name == "bf16" ? model_dtype : *find_kv_dtype("bf16");
  }
  if (const Dtype* type = find_kv_dtype(text)) return *type;
  std::vector<std::string> candidates{"auto"};
  for (const Dtype& type : kKvDtypes) candidates.emplace_back(type.name);
  throw Error(fmt::format("unknown KV cache dtype '{}'{}", text, did_you_mean(text, candidates)));
}

const Dtype& parse_weight_dtype(std::string_view text) {
  const Dtype* type = find_any_dtype(text);
  const bool allowed =
      type && std::find(kWeightDtypeNames.begin(), kWeightDtypeNames.end(), type->name) != kWeightDtypeNames.end();
  if (!allowed)
    throw Error(fmt::format("unknown weight dtype '{}'{}", text, did_you_mean(text, names_of(kWeightDtypeNames))));
  return *type;
}

const Dtype& parse_torch_dtype(std::string_view text) { return parse_weight_dtype(text); }

std::span<const std::string_view> default_kv_dtype_names() { return kDefaultKvDtypeNames; }

}  // namespace kvplan
