#pragma once
/// Writes GGUF files for tests: complete, valid files that llama.cpp loads (metadata, tensor infos,
/// alignment padding and the whole data section), plus the low-level pieces hostile-input tests
/// need to write files that lie (raw values, tensor infos with any offset, wrong counts).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "loaders/gguf.h"

namespace kvplan::testing {

/// Little-endian GGUF encodings appended to `bytes`, for raw values and hand-made files.
struct ByteWriter {
  std::vector<std::uint8_t> bytes;

  void u8(std::uint8_t v);
  void u16(std::uint16_t v);
  void u32(std::uint32_t v);
  void u64(std::uint64_t v);
  void i8(std::int8_t v) { u8(static_cast<std::uint8_t>(v)); }
  void i16(std::int16_t v) { u16(static_cast<std::uint16_t>(v)); }
  void i32(std::int32_t v) { u32(static_cast<std::uint32_t>(v)); }
  void i64(std::int64_t v) { u64(static_cast<std::uint64_t>(v)); }
  void f32(float v);
  void f64(double v);
  void type(GgufType t) { u32(static_cast<std::uint32_t>(t)); }
  /// A GGUF string: u64 length, then the bytes.
  void str(std::string_view s);
  void raw(std::string_view s);
  void raw(std::span<const std::uint8_t> s);
  /// Zero bytes up to the next multiple of `alignment`.
  void pad_to(std::uint64_t alignment);
  std::uint64_t size() const { return bytes.size(); }
};

class GgufWriter {
 public:
  explicit GgufWriter(std::uint32_t version = 3);

  void add_uint8(std::string key, std::uint8_t v);
  void add_int8(std::string key, std::int8_t v);
  void add_uint16(std::string key, std::uint16_t v);
  void add_int16(std::string key, std::int16_t v);
  /// `general.alignment` set here also sets the alignment the file is laid out with.
  void add_uint32(std::string key, std::uint32_t v);
  void add_int32(std::string key, std::int32_t v);
  void add_uint64(std::string key, std::uint64_t v);
  void add_int64(std::string key, std::int64_t v);
  void add_float32(std::string key, float v);
  void add_float64(std::string key, double v);
  void add_bool(std::string key, bool v);
  void add_string(std::string key, std::string v);

  void add_array_uint8(std::string key, std::vector<std::uint8_t> v);
  void add_array_int8(std::string key, std::vector<std::int8_t> v);
  void add_array_uint16(std::string key, std::vector<std::uint16_t> v);
  void add_array_int16(std::string key, std::vector<std::int16_t> v);
  void add_array_uint32(std::string key, std::vector<std::uint32_t> v);
  void add_array_int32(std::string key, std::vector<std::int32_t> v);
  void add_array_uint64(std::string key, std::vector<std::uint64_t> v);
  void add_array_int64(std::string key, std::vector<std::int64_t> v);
  void add_array_float32(std::string key, std::vector<float> v);
  void add_array_float64(std::string key, std::vector<double> v);
  void add_array_bool(std::string key, std::vector<bool> v);
  void add_array_string(std::string key, std::vector<std::string> v);

  /// A value of `type` given as the bytes that follow its type tag (an array: element type, count,
  /// elements). For nested arrays, and for hostile files whose lengths lie.
  void add_raw_value(std::string key, GgufType type, std::vector<std::uint8_t> encoded);

  /// dims in ggml order (ne0 first). Data is written as small deterministic non-zero values for
  /// F32/F16/BF16 (F64 and the integer types too) and valid zero-scale blocks otherwise. Throws
  /// Error for an unknown type, other than 1 to 4 dims, or a row that is not a whole number of blocks.
  void add_tensor(std::string name, std::uint32_t ggml_type, std::vector<std::uint64_t> dims);

  /// A tensor info written exactly as given, with no data of its own: for hostile files (5 dims,
  /// overflowing dims, unknown types, wrong offsets).
  void add_tensor_info(std::string name, std::uint32_t ggml_type, std::vector<std::uint64_t> dims,
                       std::uint64_t offset);

  /// Overrides the counts written in the header (the real lists are still written).
  void set_tensor_count(std::uint64_t count) { tensor_count_ = count; }
  void set_kv_count(std::uint64_t count) { kv_count_ = count; }

  /// The alignment the file is laid out with: general.alignment, or 32.
  std::uint64_t alignment() const { return alignment_; }

  std::vector<std::uint8_t> bytes() const;
  void write(const std::string& path) const;

 private:
  struct Kv {
    std::string key;
    GgufType type;
    std::vector<std::uint8_t> encoded;
  };
  struct Tensor {
    std::string name;
    std::uint32_t type;
    std::vector<std::uint64_t> dims;
    std::uint64_t offset;
    std::uint64_t bytes;  // data written for it
    bool has_data;        // false for add_tensor_info
  };

  void add(std::string key, GgufType type, ByteWriter encoded);
  /// The header and then each chunk of data, in file order, handed to `sink`.
  template <typename Sink>
  void emit(Sink&& sink) const;

  std::uint32_t version_;
  std::uint64_t alignment_ = gguf_default_alignment;
  std::vector<Kv> kvs_;
  std::vector<Tensor> tensors_;
  std::optional<std::uint64_t> tensor_count_;
  std::optional<std::uint64_t> kv_count_;
};

/// Writes `bytes` to `path`, replacing it.
void write_file(const std::string& path, std::span<const std::uint8_t> bytes);

}  // namespace kvplan::testing
