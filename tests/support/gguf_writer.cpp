#include "support/gguf_writer.h"

#include <algorithm>
#include <bit>
#include <fstream>

#include <fmt/format.h>

#include "kvplan/error.h"
#include "model/ggml_type.h"

namespace kvplan::testing {

namespace {

std::uint64_t pad(std::uint64_t offset, std::uint64_t alignment) {
  return (offset + alignment - 1) / alignment * alignment;
}

/// Element i of an F32/F16/BF16/F64 tensor is (1 + (i % 16) / 16) x 2^-10: small, non-zero, and
/// exact in every one of those formats, so each is written from its bits without rounding.
void put_element(std::uint32_t type, std::uint64_t i, ByteWriter& w) {
  const auto step = static_cast<std::uint32_t>(i % 16);
  const float value = (16.0f + static_cast<float>(step)) / 16384.0f;
  switch (type) {
    case 0: w.f32(value); break;                                             // f32
    case 1: w.u16(static_cast<std::uint16_t>(0x1400 | (step << 6))); break;  // f16: exponent 2^-10
    case 30: w.u16(static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(value) >> 16)); break;  // bf16
    case 28: w.f64(static_cast<double>(value)); break;                                             // f64
    case 24: w.u8(static_cast<std::uint8_t>(step + 1)); break;                                     // i8
    case 25: w.u16(static_cast<std::uint16_t>(step + 1)); break;                                   // i16
    case 26: w.u32(step + 1); break;                                                               // i32
    case 27: w.u64(step + 1); break;                                                               // i64
    default: break;
  }
}

}  // namespace

// ---- ByteWriter ----

void ByteWriter::u8(std::uint8_t v) { bytes.push_back(v); }
void ByteWriter::u16(std::uint16_t v) {
  for (int i = 0; i < 2; ++i) bytes.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void ByteWriter::u32(std::uint32_t v) {
  for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void ByteWriter::u64(std::uint64_t v) {
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void ByteWriter::f32(float v) { u32(std::bit_cast<std::uint32_t>(v)); }
void ByteWriter::f64(double v) { u64(std::bit_cast<std::uint64_t>(v)); }
void ByteWriter::str(std::string_view s) {
  u64(s.size());
  raw(s);
}
void ByteWriter::raw(std::string_view s) { bytes.insert(bytes.end(), s.begin(), s.end()); }
void ByteWriter::raw(std::span<const std::uint8_t> s) { bytes.insert(bytes.end(), s.begin(), s.end()); }
void ByteWriter::pad_to(std::uint64_t alignment) { bytes.resize(pad(bytes.size(), alignment), 0); }

// ---- GgufWriter: metadata ----

GgufWriter::GgufWriter(std::uint32_t version) : version_(version) {}

void GgufWriter::add(std::string key, GgufType type, ByteWriter encoded) {
  kvs_.push_back(Kv{std::move(key), type, std::move(encoded.bytes)});
}

void GgufWriter::add_uint8(std::string key, std::uint8_t v) {
  ByteWriter w;
  w.u8(v);
  add(std::move(key), GgufType::uint8, std::move(w));
}
void GgufWriter::add_int8(std::string key, std::int8_t v) {
  ByteWriter w;
  w.i8(v);
  add(std::move(key), GgufType::int8, std::move(w));
}
void GgufWriter::add_uint16(std::string key, std::uint16_t v) {
  ByteWriter w;
  w.u16(v);
  add(std::move(key), GgufType::uint16, std::move(w));
}
void GgufWriter::add_int16(std::string key, std::int16_t v) {
  ByteWriter w;
  w.i16(v);
  add(std::move(key), GgufType::int16, std::move(w));
}
void GgufWriter::add_uint32(std::string key, std::uint32_t v) {
  if (key == "general.alignment" && v != 0) alignment_ = v;
  ByteWriter w;
  w.u32(v);
  add(std::move(key), GgufType::uint32, std::move(w));
}
void GgufWriter::add_int32(std::string key, std::int32_t v) {
  ByteWriter w;
  w.i32(v);
  add(std::move(key), GgufType::int32, std::move(w));
}
void GgufWriter::add_uint64(std::string key, std::uint64_t v) {
  ByteWriter w;
  w.u64(v);
  add(std::move(key), GgufType::uint64, std::move(w));
}
void GgufWriter::add_int64(std::string key, std::int64_t v) {
  ByteWriter w;
  w.i64(v);
  add(std::move(key), GgufType::int64, std::move(w));
}
void GgufWriter::add_float32(std::string key, float v) {
  ByteWriter w;
  w.f32(v);
  add(std::move(key), GgufType::float32, std::move(w));
}
void GgufWriter::add_float64(std::string key, double v) {
  ByteWriter w;
  w.f64(v);
  add(std::move(key), GgufType::float64, std::move(w));
}
void GgufWriter::add_bool(std::string key, bool v) {
  ByteWriter w;
  w.u8(v ? 1 : 0);
  add(std::move(key), GgufType::boolean, std::move(w));
}
void GgufWriter::add_string(std::string key, std::string v) {
  ByteWriter w;
  w.str(v);
  add(std::move(key), GgufType::string, std::move(w));
}

namespace {

/// Element type, count, then each element written by `put`.
template <typename T, typename Put>
ByteWriter encode_array(GgufType element_type, const std::vector<T>& values, Put put) {
  ByteWriter w;
  w.type(element_type);
  w.u64(values.size());
  for (const T& v : values) put(w, v);
  return w;
}

}  // namespace

void GgufWriter::add_array_uint8(std::string key, std::vector<std::uint8_t> v) {
  add(std::move(key), GgufType::array, encode_array(GgufType::uint8, v, [](ByteWriter& w, auto x) { w.u8(x); }));
}
void GgufWriter::add_array_int8(std::string key, std::vector<std::int8_t> v) {
  add(std::move(key), GgufType::array, encode_array(GgufType::int8, v, [](ByteWriter& w, auto x) { w.i8(x); }));
}
void GgufWriter::add_array_uint16(std::string key, std::vector<std::uint16_t> v) {
  add(std::move(key), GgufType::array, encode_array(GgufType::uint16, v, [](ByteWriter& w, auto x) { w.u16(x); }));
}
void GgufWriter::add_array_int16(std::string key, std::vector<std::int16_t> v) {
  add(std::move(key), GgufType::array, encode_array(GgufType::int16, v, [](ByteWriter& w, auto x) { w.i16(x); }));
}
void GgufWriter::add_array_uint32(std::string key, std::vector<std::uint32_t> v) {
  add(std::move(key), GgufType::array, encode_array(GgufType::uint32, v, [](ByteWriter& w, auto x) { w.u32(x); }));
}
void GgufWriter::add_array_int32(std::string key, std::vector<std::int32_t> v) {
  add(std::move(key), GgufType::array, encode_array(GgufType::int32, v, [](ByteWriter& w, auto x) { w.i32(x); }));
}
void GgufWriter::add_array_uint64(std::string key, std::vector<std::uint64_t> v) {
  add(std::move(key), GgufType::array, encode_array(GgufType::uint64, v, [](ByteWriter& w, auto x) { w.u64(x); }));
}
void GgufWriter::add_array_int64(std::string key, std::vector<std::int64_t> v) {
  add(std::move(key), GgufType::array, encode_array(GgufType::int64, v, [](ByteWriter& w, auto x) { w.i64(x); }));
}
void GgufWriter::add_array_float32(std::string key, std::vector<float> v) {
  add(std::move(key), GgufType::array, encode_array(GgufType::float32, v, [](ByteWriter& w, auto x) { w.f32(x); }));
}
void GgufWriter::add_array_float64(std::string key, std::vector<double> v) {
  add(std::move(key), GgufType::array, encode_array(GgufType::float64, v, [](ByteWriter& w, auto x) { w.f64(x); }));
}
void GgufWriter::add_array_bool(std::string key, std::vector<bool> v) {
  add(std::move(key), GgufType::array,
      encode_array(GgufType::boolean, v, [](ByteWriter& w, bool x) { w.u8(x ? 1 : 0); }));
}
void GgufWriter::add_array_string(std::string key, std::vector<std::string> v) {
  add(std::move(key), GgufType::array,
      encode_array(GgufType::string, v, [](ByteWriter& w, const std::string& x) { w.str(x); }));
}

void GgufWriter::add_raw_value(std::string key, GgufType type, std::vector<std::uint8_t> encoded) {
  kvs_.push_back(Kv{std::move(key), type, std::move(encoded)});
}

// ---- GgufWriter: tensors ----

void GgufWriter::add_tensor(std::string name, std::uint32_t ggml_type, std::vector<std::uint64_t> dims) {
  if (dims.empty() || dims.size() > 4)
    throw Error(fmt::format("tensor '{}': {} dims, ggml takes 1 to 4", name, dims.size()));
  const std::uint64_t bytes = ggml_tensor_bytes(ggml_type, dims);
  // Data tensors are packed in order, each padded to the alignment, as llama.cpp requires. The
  // alignment is applied when the file is laid out, so offsets are recomputed in emit().
  tensors_.push_back(Tensor{std::move(name), ggml_type, std::move(dims), 0, bytes, true});
}

void GgufWriter::add_tensor_info(std::string name, std::uint32_t ggml_type, std::vector<std::uint64_t> dims,
                                 std::uint64_t offset) {
  tensors_.push_back(Tensor{std::move(name), ggml_type, std::move(dims), offset, 0, false});
}

// ---- GgufWriter: layout ----

template <typename Sink>
void GgufWriter::emit(Sink&& sink) const {
  // Offsets of data tensors depend on the alignment, which a later add_uint32 may have changed.
  std::vector<std::uint64_t> offsets;
  std::uint64_t next = 0;
  for (const Tensor& t : tensors_) {
    if (!t.has_data) {
      offsets.push_back(t.offset);
      continue;
    }
    offsets.push_back(next);
    next = pad(next + t.bytes, alignment_);
  }

  ByteWriter head;
  head.raw("GGUF");
  head.u32(version_);
  head.u64(tensor_count_.value_or(tensors_.size()));
  head.u64(kv_count_.value_or(kvs_.size()));
  for (const Kv& kv : kvs_) {
    head.str(kv.key);
    head.type(kv.type);
    head.raw(kv.encoded);
  }
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    const Tensor& t = tensors_[i];
    head.str(t.name);
    head.u32(static_cast<std::uint32_t>(t.dims.size()));
    for (std::uint64_t d : t.dims) head.u64(d);
    head.u32(t.type);
    head.u64(offsets[i]);
  }
  if (!tensors_.empty()) head.pad_to(alignment_);
  sink(head.bytes);

  // Data in bounded chunks, so a writer of a large tensor never holds it whole.
  constexpr std::size_t kChunk = 1 << 16;
  ByteWriter chunk;
  for (const Tensor& t : tensors_) {
    if (!t.has_data) continue;
    const GgmlType& type = ggml_type_by_id(t.type);
    if (type.block_elements == 1) {
      const std::uint64_t n = t.bytes / type.block_bytes;
      for (std::uint64_t i = 0; i < n; ++i) {
        put_element(t.type, i, chunk);
        if (chunk.size() >= kChunk) {
          sink(chunk.bytes);
          chunk.bytes.clear();
        }
      }
    } else {
      // All-zero blocks: every scale is +0, a valid block of zeros in every quantized format.
      for (std::uint64_t left = t.bytes; left > 0;) {
        const std::uint64_t take = std::min<std::uint64_t>(left, kChunk);
        chunk.bytes.assign(take, 0);
        sink(chunk.bytes);
        chunk.bytes.clear();
        left -= take;
      }
    }
    chunk.bytes.resize(chunk.bytes.size() + (pad(t.bytes, alignment_) - t.bytes), 0);
    sink(chunk.bytes);
    chunk.bytes.clear();
  }
}

std::vector<std::uint8_t> GgufWriter::bytes() const {
  std::vector<std::uint8_t> out;
  emit([&out](const std::vector<std::uint8_t>& part) { out.insert(out.end(), part.begin(), part.end()); });
  return out;
}

void GgufWriter::write(const std::string& path) const {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) throw Error(fmt::format("{}: cannot create", path));
  emit([&file](const std::vector<std::uint8_t>& part) {
    file.write(reinterpret_cast<const char*>(part.data()), static_cast<std::streamsize>(part.size()));
  });
  if (!file.flush()) throw Error(fmt::format("{}: write failed", path));
}

void write_file(const std::string& path, std::span<const std::uint8_t> bytes) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) throw Error(fmt::format("{}: cannot create", path));
  file.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!file.flush()) throw Error(fmt::format("{}: write failed", path));
}

}  // namespace kvplan::testing
