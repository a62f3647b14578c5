#pragma once
/// The header of a GGUF file (llama.cpp's model format): metadata key/value pairs and tensor infos.
/// Tensor data is never read. Every length and count in the file is checked against the bytes left
/// before anything is allocated, so a truncated or hostile file is an Error naming the file and the
/// byte offset, and memory does not grow with the file: large arrays (a tokenizer's 150k tokens)
/// keep only their element type and count.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvplan {

/// GGUF value type tags, as numbered in the file (gguf.h `enum gguf_type`).
enum class GgufType : std::uint32_t {
  uint8 = 0,
  int8 = 1,
  uint16 = 2,
  int16 = 3,
  uint32 = 4,
  int32 = 5,
  float32 = 6,
  boolean = 7,
  string = 8,
  array = 9,
  uint64 = 10,
  int64 = 11,
  float64 = 12,
};

/// "uint32", "float32", "bool", "string", "array", ...
std::string_view gguf_type_name(GgufType type);

/// The default alignment of the tensor data section when `general.alignment` is absent.
inline constexpr std::uint64_t gguf_default_alignment = 32;

/// Arrays up to this many numeric or bool elements keep their values.
inline constexpr std::uint64_t gguf_max_kept_numeric_elements = 65536;
/// Arrays up to this many strings (and 64 KiB of them in all) or nested arrays keep their values.
inline constexpr std::uint64_t gguf_max_kept_string_elements = 1024;
/// A string value up to this many bytes is kept.
inline constexpr std::uint64_t gguf_max_kept_string_bytes = 1024 * 1024;

/// One metadata value. Scalars fill one of the value fields; arrays fill `element_type`, `count` and,
/// when `kept`, the element vector for their element type.
struct GgufValue {
  GgufType type = GgufType::uint8;
  std::uint64_t uint_value = 0;  ///< uint8/16/32/64, and bool as 0 or 1
  std::int64_t int_value = 0;    ///< int8/16/32/64
  double float_value = 0;        ///< float32 (exactly widened) and float64
  std::string string_value;      ///< string, when kept

  GgufType element_type = GgufType::uint8;  ///< array only
  std::uint64_t count = 0;                  ///< array: elements in the file; string: length in bytes
  bool kept = true;                         ///< false: a string or array too large to keep; type and count only

  std::vector<std::uint64_t> uints;  ///< elements of an unsigned-integer or bool array
  std::vector<std::int64_t> ints;    ///< elements of a signed-integer array
  std::vector<double> floats;        ///< elements of a float32/float64 array
  std::vector<std::string> strings;  ///< elements of a string array
  std::vector<GgufValue> arrays;     ///< elements of an array of arrays

  bool is_array() const { return type == GgufType::array; }
  /// uint8..int64 (not bool): the types `get_uint` accepts.
  bool is_integer() const;
};

struct GgufTensorInfo {
  std::string name;
  std::vector<std::uint64_t> dims;  ///< ggml order: dims[0] (ne0) is the row length; 1 to 4 dims
  std::uint32_t type = 0;           ///< ggml type id, see ggml_type.h
  std::uint64_t offset = 0;         ///< of the data, from the start of its file's data section
  std::uint64_t bytes = 0;          ///< exact data size (ggml_tensor_bytes), without padding
  std::uint32_t split = 0;          ///< index of the file holding the data, 0 unless split
};

struct GgufHeader {
  std::string path;           ///< the file read (the first part of a split model)
  std::uint32_t version = 0;  ///< 2 or 3
  std::uint64_t alignment = gguf_default_alignment;
  std::map<std::string, GgufValue, std::less<>> metadata;
  std::vector<GgufTensorInfo> tensors;  ///< in file order (part by part for a split model)
  std::uint64_t file_size = 0;          ///< bytes on disk, summed over all parts
  std::uint64_t data_offset = 0;        ///< where the first file's tensor data section starts
  std::vector<std::string> parts;       ///< every file read, in order

  /// The value under `key`, or nullptr.
  const GgufValue* find(std::string_view key) const;
  /// The tensor named `name`, or nullptr.
  const GgufTensorInfo* find_tensor(std::string_view name) const;

  // The getters return nullopt when the key is absent and throw Error (naming the file and the key)
  // when it is present with another type, a negative value, or an array not kept.

  /// Any integer type (uint8..int64); negative values throw.
  std::optional<std::uint64_t> get_uint(std::string_view key) const;
  /// float32 or float64, or any integer type converted.
  std::optional<double> get_float(std::string_view key) const;
  std::optional<bool> get_bool(std::string_view key) const;
  std::optional<std::string> get_string(std::string_view key) const;
  /// An array of any integer type, or of bool as 0/1 (per-layer head counts, window patterns).
  std::optional<std::vector<std::uint64_t>> get_uint_array(std::string_view key) const;
  /// An array of bool, or of integers read as "non-zero".
  std::optional<std::vector<bool>> get_bool_array(std::string_view key) const;

  /// Exact sum of every tensor's bytes (ggml_tensor_bytes), without alignment padding.
  std::uint64_t tensor_data_bytes() const;
};

/// Reads the header of one GGUF file. Throws Error (exit code invalid_input) with a one-line message
/// "path: <problem> at byte N while reading <item>" for anything malformed, big-endian, or not
/// version 2/3, and when a tensor's data would lie past the end of the file.
GgufHeader read_gguf_header(const std::string& path);

/// Reads a whole model: a single file as read_gguf_header, or, for a split model named
/// "name-00001-of-00003.gguf" (any part may be given), every part: metadata from part 1, tensors
/// from all parts (each tagged with its `split`), file sizes summed. Throws naming a missing part,
/// a part whose split.no/split.count disagree, or a tensor present in two parts.
GgufHeader read_gguf_model(const std::string& path);

}  // namespace kvplan
