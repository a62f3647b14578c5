#pragma once
/// Element types of the KV cache and of the weights, with exact storage costs.
///
/// Every type is described as "block_bytes per block_elements": fp16 is 2 bytes per 1 element,
/// int4 1 byte per 2 elements, llama.cpp's q8_0 34 bytes per 32 elements (a 2-byte scale plus 32
/// int8 values). Sizes are then exact integers, never "bits / 8".

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "kvplan/export.h"

namespace kvplan {

struct Dtype {
  std::string_view name;            ///< canonical spelling, as printed and in JSON
  std::uint32_t block_elements = 1;
  std::uint32_t block_bytes = 2;
  std::string_view description;     ///< one phrase for `--help` and the README
};

/// Bytes that `elements` values of `type` occupy. Throws when `elements` is not a whole number of
/// blocks (an engine cannot store a partial block) or the product overflows.
KVPLAN_API std::uint64_t dtype_bytes(const Dtype& type, std::uint64_t elements);

/// All cache types kvplan prices: fp32 fp16 bf16 fp8 fp8_e5m2 int8 int4 and llama.cpp's block types.
KVPLAN_API std::span<const Dtype> kv_dtypes();
/// Types the weights may be stored in: fp32 fp16 bf16 fp8 int8 int4 mxfp4.
KVPLAN_API std::span<const Dtype> weight_dtypes();

/// Resolves a cache type by canonical name or engine spelling ("f16", "fp8_e4m3", "Q8_0").
/// "auto" (vLLM's spelling) means `model_dtype` when it is a float type, and bf16 when the weights
/// are stored quantized (fp8, int8, int4, mxfp4). Unknown names throw with "did you mean".
KVPLAN_API const Dtype& parse_kv_dtype(std::string_view text, const Dtype& model_dtype);
/// Resolves a weight type ("bf16", "float16", "fp8", ...). Unknown names throw with "did you mean".
KVPLAN_API const Dtype& parse_weight_dtype(std::string_view text);
/// Resolves a Hugging Face `torch_dtype` value ("bfloat16", "float16", "float32").
KVPLAN_API const Dtype& parse_torch_dtype(std::string_view text);

/// The default rows: fp16 fp8 int8 int4.
KVPLAN_API std::span<const std::string_view> default_kv_dtype_names();

}  // namespace kvplan
