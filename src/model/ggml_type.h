#pragma once
/// ggml tensor types by their numeric id, as stored in GGUF tensor infos, with exact storage costs.
///
/// Every type stores `block_elements` values in `block_bytes` bytes (q8_0: 32 values in 34 bytes, a
/// 2-byte scale plus 32 int8). The ids, names and sizes are llama.cpp's: `enum ggml_type` in
/// ggml/include/ggml.h, `type_traits` in ggml/src/ggml.c and the `block_*` structs in
/// ggml/src/ggml-common.h.

#include <cstdint>
#include <span>
#include <string_view>

namespace kvplan {

struct GgmlType {
  std::uint32_t id = 0;             ///< GGML_TYPE_* value, as written in a GGUF tensor info
  std::string_view name;            ///< llama.cpp's `type_name`: "f32", "q8_0", "q4_K", "mxfp4"
  std::uint32_t block_elements = 1; ///< values per block (ggml_blck_size)
  std::uint32_t block_bytes = 0;    ///< bytes per block (ggml_type_size)
};

/// Every type a GGUF file may carry, ordered by id. Ids llama.cpp removed (4, 5, 31-33, 36-38) are absent.
std::span<const GgmlType> ggml_types();

/// The type with this id, or nullptr for an unknown or removed id.
const GgmlType* find_ggml_type(std::uint32_t id);
/// The type with this id; throws Error for an unknown or removed id.
const GgmlType& ggml_type_by_id(std::uint32_t id);

/// The type named `name`, case-insensitively ("q8_0", "Q8_0", "f16", "Q4_K"), or nullptr.
const GgmlType* find_ggml_type_by_name(std::string_view name);
/// The type named `name`; throws Error with "did you mean" for an unknown name.
const GgmlType& ggml_type_by_name(std::string_view name);

/// Bytes of one row of `n_elements` values: n / block_elements x block_bytes, exact. Throws when the
/// id is unknown, `n_elements` is not a whole number of blocks, or the product overflows.
std::uint64_t ggml_row_bytes(std::uint32_t type, std::uint64_t n_elements);

/// Bytes of a tensor with `dims` in ggml order (ne0 first, the row length): the row bytes of ne0
/// times the product of the other dimensions. No dims means a scalar (one element), as in ggml.
/// Throws on an unknown id, a partial block in ne0, or 64-bit overflow.
std::uint64_t ggml_tensor_bytes(std::uint32_t type, std::span<const std::uint64_t> dims);

}  // namespace kvplan
