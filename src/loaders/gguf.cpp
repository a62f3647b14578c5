#include "loaders/gguf.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <unordered_set>

#include <fmt/format.h>

#include "kvplan/error.h"
#include "model/ggml_type.h"
#include "model/text.h"
#include "kvplan/units.h"

namespace kvplan {

namespace {

/// std::bit_cast, which Emscripten 3.1.6's libc++ (the web page's build) does not have.
template <typename To, typename From>
To bits_as(From from) {
  static_assert(sizeof(To) == sizeof(From));
  To to;
  std::memcpy(&to, &from, sizeof to);
  return to;
}

// Layout (llama.cpp ggml/src/gguf.cpp and docs/gguf.md): "GGUF", u32 version, u64 tensor count,
// u64 kv count, the key/value pairs, the tensor infos, padding to the alignment, tensor data.
// Every integer is little-endian; strings are a u64 length and that many bytes, no terminator.

constexpr std::uint32_t kMaxDims = 4;          // GGML_MAX_DIMS
constexpr std::uint64_t kMaxTensorName = 63;   // GGML_MAX_NAME is 64 including the terminator
constexpr std::uint64_t kMaxKeyBytes = 65535;  // real keys are short; longer is hostile
constexpr std::uint32_t kMaxArrayDepth = 8;    // bounds recursion on nested arrays
constexpr std::uint64_t kMaxKeptStringArrayBytes = 64 * 1024;
constexpr std::uint64_t kKeptBudgetBytes = 64 * 1024 * 1024;  // all kept keys and values of one file together
// Work is bounded by what is read, not by what a header declares: a sparse file can declare an
// array of 2^37 empty strings that "fits" in its 1 TiB and then take 40 minutes to walk. Real
// headers are tens of MiB (a 256K-token vocabulary), have under a hundred keys and under 100,000
// tensors; past these limits a file is refused (exit 2) naming the limit (docs/hardening.md).
constexpr std::uint64_t kMaxHeaderBytes = 512 * 1024 * 1024;  // metadata and tensor infos
constexpr std::uint64_t kMaxArrayElements = std::uint64_t{1} << 24;
constexpr std::uint64_t kMaxMetadataKeys = 65536;
constexpr std::uint64_t kMaxTensors = std::uint64_t{1} << 20;

// Smallest encodings, used to reject counts the remaining bytes cannot possibly hold.
constexpr std::uint64_t kMinKvBytes = 8 + 1 + 4 + 1;          // key length, 1-byte key, type, 1-byte value
constexpr std::uint64_t kMinTensorInfoBytes = 8 + 4 + 4 + 8;  // name length, n_dims, type, offset
constexpr std::uint64_t kMinStringBytes = 8;
constexpr std::uint64_t kMinNestedArrayBytes = 4 + 8;  // element type, count

/// A key or name from the file in a one-line message: escaped, at most 80 bytes.
std::string printable_name(std::string_view text) { return printable(text, 80); }

std::uint64_t pad_to(std::uint64_t offset, std::uint64_t alignment) {
  return checked_mul(checked_add(offset, alignment - 1, "padded offset") / alignment, alignment, "padded offset");
}

/// Numeric element size of a GGUF type; 0 for string and array.
std::uint64_t scalar_size(GgufType type) {
  switch (type) {
    case GgufType::uint8:
    case GgufType::int8:
    case GgufType::boolean: return 1;
    case GgufType::uint16:
    case GgufType::int16: return 2;
    case GgufType::uint32:
    case GgufType::int32:
    case GgufType::float32: return 4;
    case GgufType::uint64:
    case GgufType::int64:
    case GgufType::float64: return 8;
    case GgufType::string:
    case GgufType::array: return 0;
  }
  return 0;
}

bool known_type(std::uint32_t tag) { return tag <= static_cast<std::uint32_t>(GgufType::float64); }

bool is_unsigned(GgufType t) {
  return t == GgufType::uint8 || t == GgufType::uint16 || t == GgufType::uint32 || t == GgufType::uint64;
}
bool is_signed(GgufType t) {
  return t == GgufType::int8 || t == GgufType::int16 || t == GgufType::int32 || t == GgufType::int64;
}
bool is_float(GgufType t) { return t == GgufType::float32 || t == GgufType::float64; }

/// Buffered, bounds-checked reading of one file. Knows the file size up front so every length can
/// be checked against the bytes left before anything is allocated, and names the file, the byte
/// offset and the item being read in every error.
class FileReader {
 public:
  explicit FileReader(const std::string& path) : path_(path) {
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(status)) throw Error(fmt::format("{}: cannot open: no such file", path));
    if (!std::filesystem::is_regular_file(status)) throw Error(fmt::format("{}: not a regular file", path));
    file_.reset(std::fopen(path.c_str(), "rb"));
    if (!file_) throw Error(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
    size_ = std::filesystem::file_size(path, ec);
    if (ec) throw Error(fmt::format("{}: cannot read the file size: {}", path, ec.message()));
  }

  std::uint64_t offset() const { return pos_; }

  /// Refuses a header that runs past kMaxHeaderBytes (called in every loop over declared counts).
  void check_header_limit() const {
    if (pos_ > kMaxHeaderBytes)
      fail(fmt::format("the header is larger than {} MiB, the most kvplan reads", kMaxHeaderBytes >> 20), pos_);
  }
  std::uint64_t size() const { return size_; }
  std::uint64_t remaining() const { return size_ - pos_; }
  const std::string& path() const { return path_; }

  /// What is being read, for error messages: "the header", "tensor info 7", ...
  void set_context(std::string context) { context_ = std::move(context); }

  [[noreturn]] void fail(std::string_view problem, std::uint64_t at) const {
    throw Error(fmt::format("{}: {} at byte {} while reading {}", path_, problem, at, context_));
  }
  [[noreturn]] void fail_truncated() const { fail("truncated", size_); }

  void read(void* out, std::size_t n) {
    if (n > remaining()) fail_truncated();
    auto* dst = static_cast<unsigned char*>(out);
    while (n > 0) {
      if (begin_ == end_) refill();
      const std::size_t take = std::min(n, end_ - begin_);
      std::memcpy(dst, buffer_.data() + begin_, take);
      begin_ += take;
      pos_ += take;
      dst += take;
      n -= take;
    }
  }

  void skip(std::uint64_t n) {
    if (n > remaining()) fail_truncated();
    if (n <= end_ - begin_) {
      begin_ += static_cast<std::size_t>(n);
      pos_ += n;
      return;
    }
    pos_ += n;
    begin_ = end_ = 0;
    if (fseeko(file_.get(), static_cast<off_t>(pos_), SEEK_SET) != 0) fail("cannot seek", pos_);
  }

  template <typename T>
  T read_le() {
    static_assert(std::is_unsigned_v<T>);
    std::array<unsigned char, sizeof(T)> bytes{};
    read(bytes.data(), bytes.size());
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) value |= std::uint64_t{bytes[i]} << (8 * i);
    return static_cast<T>(value);
  }

 private:
  void refill() {
    // Invariant: when the buffer is empty the stream stands at pos_.
    const std::size_t got = std::fread(buffer_.data(), 1, buffer_.size(), file_.get());
    if (got == 0) fail_truncated();  // the file shrank after its size was taken
    begin_ = 0;
    end_ = got;
  }

  struct Closer {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };

  std::string path_;
  std::unique_ptr<std::FILE, Closer> file_;
  std::uint64_t size_ = 0;
  std::uint64_t pos_ = 0;
  std::vector<unsigned char> buffer_ = std::vector<unsigned char>(64 * 1024);
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  std::string context_ = "the header";
};

/// Parses values, keeping them while the per-file budget of kept bytes lasts.
class ValueReader {
 public:
  explicit ValueReader(FileReader& in) : in_(in) {}

  /// Takes `bytes` from what one file may keep in memory; false when that is spent.
  bool take_budget(std::uint64_t bytes) {
    if (bytes > budget_) return false;
    budget_ -= bytes;
    return true;
  }

  GgufValue read_value(GgufType type) {
    GgufValue value;
    value.type = type;
    switch (type) {
      case GgufType::uint8: value.uint_value = in_.read_le<std::uint8_t>(); break;
      case GgufType::uint16: value.uint_value = in_.read_le<std::uint16_t>(); break;
      case GgufType::uint32: value.uint_value = in_.read_le<std::uint32_t>(); break;
      case GgufType::uint64: value.uint_value = in_.read_le<std::uint64_t>(); break;
      case GgufType::int8: value.int_value = static_cast<std::int8_t>(in_.read_le<std::uint8_t>()); break;
      case GgufType::int16: value.int_value = static_cast<std::int16_t>(in_.read_le<std::uint16_t>()); break;
      case GgufType::int32: value.int_value = static_cast<std::int32_t>(in_.read_le<std::uint32_t>()); break;
      case GgufType::int64: value.int_value = static_cast<std::int64_t>(in_.read_le<std::uint64_t>()); break;
      // llama.cpp reads a bool as an int8 and takes any non-zero value as true.
      case GgufType::boolean: value.uint_value = in_.read_le<std::uint8_t>() != 0 ? 1 : 0; break;
      case GgufType::float32: value.float_value = bits_as<float>(in_.read_le<std::uint32_t>()); break;
      case GgufType::float64: value.float_value = bits_as<double>(in_.read_le<std::uint64_t>()); break;
      case GgufType::string: read_string_value(value); break;
      case GgufType::array: read_array_body(value, 1, true); break;
    }
    return value;
  }

  /// A u64 length and that many bytes, checked against the bytes left; at most `max_bytes`.
  std::string read_string(std::uint64_t max_bytes, std::string_view what) {
    const std::uint64_t at = in_.offset();
    const std::uint64_t length = in_.read_le<std::uint64_t>();
    check_length(length, at, what);
    if (length > max_bytes)
      in_.fail(fmt::format("{} of {} bytes is longer than {} bytes", what, length, max_bytes), at);
    std::string text(static_cast<std::size_t>(length), '\0');
    in_.read(text.data(), text.size());
    return text;
  }

  GgufType read_type_tag(std::string_view what) {
    const std::uint64_t at = in_.offset();
    const std::uint32_t tag = in_.read_le<std::uint32_t>();
    if (!known_type(tag)) in_.fail(fmt::format("unknown GGUF {} type {}", what, tag), at);
    return static_cast<GgufType>(tag);
  }

 private:
  void check_length(std::uint64_t length, std::uint64_t at, std::string_view what) {
    if (length > in_.remaining())
      in_.fail(fmt::format("{} length {} exceeds the {} bytes left in the file", what, length, in_.remaining()), at);
  }


  void read_string_value(GgufValue& value) {
    const std::uint64_t at = in_.offset();
    value.count = in_.read_le<std::uint64_t>();
    check_length(value.count, at, "string");
    value.kept = value.count <= gguf_max_kept_string_bytes && take_budget(value.count);
    if (!value.kept) {
      in_.skip(value.count);
      return;
    }
    value.string_value.resize(static_cast<std::size_t>(value.count));
    in_.read(value.string_value.data(), value.string_value.size());
  }

  /// Element type, count and elements. `keep` false parses (a nested array must be parsed to be
  /// skipped) without storing anything.
  void read_array_body(GgufValue& value, std::uint32_t depth, bool keep) {
    value.type = GgufType::array;
    if (depth > kMaxArrayDepth)
      in_.fail(fmt::format("arrays nested deeper than {} levels", kMaxArrayDepth), in_.offset());
    value.element_type = read_type_tag("array element");
    const std::uint64_t count_at = in_.offset();
    value.count = in_.read_le<std::uint64_t>();

    const std::uint64_t element_size = scalar_size(value.element_type);
    const std::uint64_t min_size = element_size != 0                        ? element_size
                                   : value.element_type == GgufType::string ? kMinStringBytes
                                                                            : kMinNestedArrayBytes;
    if (value.count > in_.remaining() / min_size)
      in_.fail(fmt::format("array of {} {} elements needs at least {} bytes each, but {} bytes are left", value.count,
                           gguf_type_name(value.element_type), min_size, in_.remaining()),
               count_at);
    if (value.count > kMaxArrayElements)
      in_.fail(fmt::format("array of {} elements is longer than kvplan reads (at most {})", value.count,
                           kMaxArrayElements),
               count_at);

    switch (value.element_type) {
      case GgufType::string: read_string_elements(value, keep); break;
      case GgufType::array: read_nested_elements(value, depth, keep); break;
      default: read_numeric_elements(value, element_size, keep); break;
    }
  }

  void read_numeric_elements(GgufValue& value, std::uint64_t element_size, bool keep) {
    // count x element_size fits: the count was checked against the bytes left.
    const std::uint64_t bytes = value.count * element_size;
    value.kept = keep && value.count <= gguf_max_kept_numeric_elements && take_budget(bytes);
    if (!value.kept) {
      in_.skip(bytes);
      return;
    }
    const auto n = static_cast<std::size_t>(value.count);
    const GgufType t = value.element_type;
    if (is_unsigned(t) || t == GgufType::boolean) value.uints.reserve(n);
    if (is_signed(t)) value.ints.reserve(n);
    if (is_float(t)) value.floats.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      GgufValue element = read_value(t);
      if (is_unsigned(t) || t == GgufType::boolean) value.uints.push_back(element.uint_value);
      if (is_signed(t)) value.ints.push_back(element.int_value);
      if (is_float(t)) value.floats.push_back(element.float_value);
    }
  }

  void read_string_elements(GgufValue& value, bool keep) {
    // Token lists are the large arrays of a GGUF file; they are skipped without a copy.
    value.kept = keep && value.count <= gguf_max_kept_string_elements;
    std::uint64_t kept_bytes = 0;
    if (value.kept) value.strings.reserve(static_cast<std::size_t>(value.count));
    for (std::uint64_t i = 0; i < value.count; ++i) {
      if ((i & 0xFFFF) == 0) in_.check_header_limit();
      const std::uint64_t at = in_.offset();
      const std::uint64_t length = in_.read_le<std::uint64_t>();
      check_length(length, at, "string");
      kept_bytes += length;  // cannot overflow: each length is at most the file size
      if (value.kept && (kept_bytes > kMaxKeptStringArrayBytes || !take_budget(length))) {
        value.kept = false;
        value.strings = {};
      }
      if (!value.kept) {
        in_.skip(length);
        continue;
      }
      std::string& text = value.strings.emplace_back(static_cast<std::size_t>(length), '\0');
      in_.read(text.data(), text.size());
    }
  }

  void read_nested_elements(GgufValue& value, std::uint32_t depth, bool keep) {
    value.kept = keep && value.count <= gguf_max_kept_string_elements && take_budget(value.count * sizeof(GgufValue));
    if (value.kept) value.arrays.reserve(static_cast<std::size_t>(value.count));
    for (std::uint64_t i = 0; i < value.count; ++i) {
      if ((i & 0xFFFF) == 0) in_.check_header_limit();
      GgufValue element;
      read_array_body(element, depth + 1, value.kept);
      if (value.kept) value.arrays.push_back(std::move(element));
    }
  }

  FileReader& in_;
  std::uint64_t budget_ = kKeptBudgetBytes;
};

void read_preamble(FileReader& in, GgufHeader& header, std::uint64_t& n_tensors, std::uint64_t& n_kv) {
  in.set_context("the header");
  std::array<char, 4> magic{};
  in.read(magic.data(), magic.size());
  const std::string_view magic_text(magic.data(), magic.size());
  if (magic_text == "FUGG") in.fail("big-endian GGUF files are not supported (magic \"FUGG\")", 0);
  if (magic_text != "GGUF")
    in.fail(fmt::format("not a GGUF file: magic \"{}\", expected \"GGUF\"", printable_name(magic_text)), 0);

  header.version = in.read_le<std::uint32_t>();
  // A big-endian file's small version number reads as 0xVV000000 here (llama.cpp's test too).
  if (header.version != 0 && (header.version & 0xFFFFu) == 0)
    in.fail(fmt::format("big-endian GGUF files are not supported (version field reads {:#010x})", header.version), 4);
  if (header.version != 2 && header.version != 3)
    in.fail(fmt::format("GGUF version {} is not supported (only versions 2 and 3)", header.version), 4);

  n_tensors = in.read_le<std::uint64_t>();
  n_kv = in.read_le<std::uint64_t>();
  const std::uint64_t left = in.remaining();
  if (n_kv > left / kMinKvBytes)
    in.fail(fmt::format("metadata count {} cannot fit in the {} bytes left in the file", n_kv, left), 16);
  if (n_tensors > (left - n_kv * kMinKvBytes) / kMinTensorInfoBytes)
    in.fail(fmt::format("tensor count {} cannot fit in the {} bytes left in the file", n_tensors, left), 8);
}

void read_metadata(FileReader& in, ValueReader& values, GgufHeader& header, std::uint64_t n_kv) {
  if (n_kv > kMaxMetadataKeys)
    in.fail(fmt::format("{} metadata keys are more than kvplan reads (at most {})", n_kv, kMaxMetadataKeys), 16);
  for (std::uint64_t i = 0; i < n_kv; ++i) {
    in.check_header_limit();
    in.set_context(fmt::format("metadata key {}", i));
    const std::uint64_t key_at = in.offset();
    std::string key = values.read_string(kMaxKeyBytes, "key");
    if (!values.take_budget(key.size()))
      in.fail(fmt::format("the keys and values kept pass {} MiB", kKeptBudgetBytes >> 20), key_at);
    if (key.empty()) in.fail("empty metadata key", key_at);
    if (header.metadata.contains(key)) in.fail(fmt::format("duplicate metadata key '{}'", printable_name(key)), key_at);

    in.set_context(fmt::format("metadata value '{}'", printable_name(key)));
    const std::uint64_t value_at = in.offset();
    GgufValue value = values.read_value(values.read_type_tag("value"));

    if (key == "general.alignment") {
      // llama.cpp requires exactly a uint32 power of two.
      if (value.type != GgufType::uint32)
        in.fail(fmt::format("general.alignment must be a uint32, not {}", gguf_type_name(value.type)), value_at);
      if (value.uint_value == 0 || (value.uint_value & (value.uint_value - 1)) != 0)
        in.fail(fmt::format("general.alignment {} is not a power of two", value.uint_value), value_at);
      header.alignment = value.uint_value;
    }
    header.metadata.emplace(std::move(key), std::move(value));
  }
}

/// One tensor info; `offset_at` receives where its data offset field lies, for later errors.
GgufTensorInfo read_tensor_info(FileReader& in, ValueReader& values, std::uint64_t index,
                                std::unordered_set<std::string>& names, std::uint64_t& offset_at) {
  in.set_context(fmt::format("tensor info {}", index));
  GgufTensorInfo info;
  const std::uint64_t name_at = in.offset();
  info.name = values.read_string(kMaxTensorName, "tensor name");
  if (!names.insert(info.name).second)
    in.fail(fmt::format("duplicate tensor name '{}'", printable_name(info.name)), name_at);
  in.set_context(fmt::format("tensor info {} ('{}')", index, printable_name(info.name)));

  const std::uint64_t dims_at = in.offset();
  const std::uint32_t n_dims = in.read_le<std::uint32_t>();
  if (n_dims > kMaxDims) in.fail(fmt::format("{} dimensions (ggml allows at most {})", n_dims, kMaxDims), dims_at);
  std::uint64_t elements = 1;
  for (std::uint32_t d = 0; d < n_dims; ++d) {
    const std::uint64_t dim_at = in.offset();
    const std::uint64_t dim = in.read_le<std::uint64_t>();
    // ggml keeps dimensions and the element count as int64.
    if (dim > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      in.fail(fmt::format("dimension {} is negative ({})", d, static_cast<std::int64_t>(dim)), dim_at);
    if (dim != 0 && elements > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) / dim)
      in.fail(fmt::format("dimensions overflow: element count past 2^63 at dimension {}", d), dim_at);
    elements *= dim;
    info.dims.push_back(dim);
  }

  const std::uint64_t type_at = in.offset();
  info.type = in.read_le<std::uint32_t>();
  if (find_ggml_type(info.type) == nullptr) in.fail(fmt::format("unknown ggml type id {}", info.type), type_at);
  try {
    info.bytes = ggml_tensor_bytes(info.type, info.dims);
  } catch (const Error& e) {
    in.fail(e.what(), dims_at);
  }

  offset_at = in.offset();
  info.offset = in.read_le<std::uint64_t>();
  return info;
}

/// The data section: where it starts, that every tensor sits where llama.cpp expects it (packed in
/// order, each padded to the alignment) and that its data lies inside the file.
void check_data_layout(FileReader& in, GgufHeader& header, const std::vector<std::uint64_t>& offset_fields) {
  const std::uint64_t header_end = in.offset();
  header.data_offset = header.tensors.empty() ? header_end : pad_to(header_end, header.alignment);
  in.set_context("the padding before the tensor data");
  if (header.data_offset > in.size()) in.fail_truncated();

  std::uint64_t expected = 0;
  for (std::size_t i = 0; i < header.tensors.size(); ++i) {
    const GgufTensorInfo& t = header.tensors[i];
    in.set_context(fmt::format("tensor info {} ('{}')", i, printable_name(t.name)));
    if (t.offset != expected)
      in.fail(fmt::format("data offset {} is not the expected {} (tensors are packed in order, each padded "
                          "to {} bytes)",
                          t.offset, expected, header.alignment),
              offset_fields[i]);
    // A hostile file can claim sizes near 2^64, so the end is computed with an overflow check.
    std::uint64_t end = 0;
    const bool overflow =
        __builtin_add_overflow(header.data_offset, t.offset, &end) || __builtin_add_overflow(end, t.bytes, &end);
    if (overflow || end > in.size()) {
      in.set_context(overflow ? fmt::format("the data of tensor '{}', which ends past 2^64", printable_name(t.name))
                              : fmt::format("the data of tensor '{}', which ends at byte {}", printable_name(t.name), end));
      in.fail_truncated();
    }
    // Within the file now, so the padded end cannot overflow.
    expected = pad_to(t.offset + t.bytes, header.alignment);
  }
  // llama.cpp and gguf-py pad after the last tensor too, and gguf_init_from_file reads the padded
  // section whole; a file that stops inside that padding was cut short.
  const std::uint64_t section_end = header.data_offset + expected;
  if (section_end > in.size()) {
    in.set_context(fmt::format("the padding after the last tensor, which ends at byte {}", section_end));
    in.fail_truncated();
  }
}

bool is_integer_type(GgufType t) { return is_unsigned(t) || is_signed(t); }

}  // namespace

std::string_view gguf_type_name(GgufType type) {
  switch (type) {
    case GgufType::uint8: return "uint8";
    case GgufType::int8: return "int8";
    case GgufType::uint16: return "uint16";
    case GgufType::int16: return "int16";
    case GgufType::uint32: return "uint32";
    case GgufType::int32: return "int32";
    case GgufType::float32: return "float32";
    case GgufType::boolean: return "bool";
    case GgufType::string: return "string";
    case GgufType::array: return "array";
    case GgufType::uint64: return "uint64";
    case GgufType::int64: return "int64";
    case GgufType::float64: return "float64";
  }
  return "unknown";
}

bool GgufValue::is_integer() const { return is_integer_type(type); }

GgufHeader read_gguf_header(const std::string& path) {
  FileReader in(path);
  GgufHeader header;
  header.path = path;
  header.parts = {path};
  header.file_size = in.size();

  std::uint64_t n_tensors = 0;
  std::uint64_t n_kv = 0;
  read_preamble(in, header, n_tensors, n_kv);

  ValueReader values(in);
  read_metadata(in, values, header, n_kv);

  std::unordered_set<std::string> names;
  std::vector<std::uint64_t> offset_fields;
  header.tensors.reserve(static_cast<std::size_t>(n_tensors));  // bounded by the file size above
  offset_fields.reserve(static_cast<std::size_t>(n_tensors));
  if (n_tensors > kMaxTensors)
    in.fail(fmt::format("{} tensors are more than kvplan reads (at most {})", n_tensors, kMaxTensors), 8);
  for (std::uint64_t i = 0; i < n_tensors; ++i) {
    in.check_header_limit();
    std::uint64_t offset_at = 0;
    header.tensors.push_back(read_tensor_info(in, values, i, names, offset_at));
    offset_fields.push_back(offset_at);
  }
  check_data_layout(in, header, offset_fields);
  return header;
}

// ---- GgufHeader helpers ----

namespace {

[[noreturn]] void wrong_type(const GgufHeader& h, std::string_view key, const GgufValue& v, std::string_view want) {
  std::string found(gguf_type_name(v.type));
  if (v.is_array()) found = fmt::format("array of {}", gguf_type_name(v.element_type));
  throw Error(fmt::format("{}: metadata '{}' is {}, expected {}", h.path, key, found, want));
}

void require_kept(const GgufHeader& h, std::string_view key, const GgufValue& v) {
  if (!v.kept)
    throw Error(
        fmt::format("{}: metadata '{}' ({} elements or bytes) is too large to keep in memory", h.path, key, v.count));
}

}  // namespace

const GgufValue* GgufHeader::find(std::string_view key) const {
  const auto it = metadata.find(key);
  return it == metadata.end() ? nullptr : &it->second;
}

const GgufTensorInfo* GgufHeader::find_tensor(std::string_view name) const {
  for (const GgufTensorInfo& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

std::optional<std::uint64_t> GgufHeader::get_uint(std::string_view key) const {
  const GgufValue* v = find(key);
  if (v == nullptr) return std::nullopt;
  if (is_unsigned(v->type)) return v->uint_value;
  if (!is_signed(v->type)) wrong_type(*this, key, *v, "an integer");
  if (v->int_value < 0) throw Error(fmt::format("{}: metadata '{}' is negative ({})", path, key, v->int_value));
  return static_cast<std::uint64_t>(v->int_value);
}

std::optional<double> GgufHeader::get_float(std::string_view key) const {
  const GgufValue* v = find(key);
  if (v == nullptr) return std::nullopt;
  if (is_float(v->type)) return v->float_value;
  if (is_unsigned(v->type)) return static_cast<double>(v->uint_value);
  if (is_signed(v->type)) return static_cast<double>(v->int_value);
  wrong_type(*this, key, *v, "a number");
}

std::optional<bool> GgufHeader::get_bool(std::string_view key) const {
  const GgufValue* v = find(key);
  if (v == nullptr) return std::nullopt;
  if (v->type != GgufType::boolean) wrong_type(*this, key, *v, "a bool");
  return v->uint_value != 0;
}

std::optional<std::string> GgufHeader::get_string(std::string_view key) const {
  const GgufValue* v = find(key);
  if (v == nullptr) return std::nullopt;
  if (v->type != GgufType::string) wrong_type(*this, key, *v, "a string");
  require_kept(*this, key, *v);
  return v->string_value;
}

std::optional<std::vector<std::uint64_t>> GgufHeader::get_uint_array(std::string_view key) const {
  const GgufValue* v = find(key);
  if (v == nullptr) return std::nullopt;
  const GgufType t = v->element_type;
  if (!v->is_array() || !(is_integer_type(t) || t == GgufType::boolean))
    wrong_type(*this, key, *v, "an array of integers");
  require_kept(*this, key, *v);
  if (!is_signed(t)) return v->uints;
  std::vector<std::uint64_t> out;
  out.reserve(v->ints.size());
  for (std::size_t i = 0; i < v->ints.size(); ++i) {
    if (v->ints[i] < 0)
      throw Error(fmt::format("{}: metadata '{}' element {} is negative ({})", path, key, i, v->ints[i]));
    out.push_back(static_cast<std::uint64_t>(v->ints[i]));
  }
  return out;
}

std::optional<std::vector<bool>> GgufHeader::get_bool_array(std::string_view key) const {
  const GgufValue* v = find(key);
  if (v == nullptr) return std::nullopt;
  const GgufType t = v->element_type;
  if (!v->is_array() || !(is_integer_type(t) || t == GgufType::boolean))
    wrong_type(*this, key, *v, "an array of bools");
  require_kept(*this, key, *v);
  std::vector<bool> out;
  for (std::uint64_t x : v->uints) out.push_back(x != 0);
  for (std::int64_t x : v->ints) out.push_back(x != 0);
  return out;
}

std::uint64_t GgufHeader::tensor_data_bytes() const {
  std::uint64_t total = 0;
  for (const GgufTensorInfo& t : tensors) total = checked_add(total, t.bytes, "total tensor bytes");
  return total;
}

// ---- split models ----

namespace {

struct SplitName {
  std::string prefix;
  std::uint32_t count = 0;
};

/// "dir/name-00002-of-00003.gguf" -> {"dir/name", 3}; llama.cpp names parts "%s-%05d-of-%05d.gguf".
/// The digits ending at `end` (exclusive) in `text`, at least five of them (gguf-split writes
/// %05d); their start, or npos.
std::size_t digits_before(std::string_view text, std::size_t end) {
  std::size_t start = end;
  while (start > 0 && std::isdigit(static_cast<unsigned char>(text[start - 1]))) --start;
  return end - start >= 5 ? start : std::string_view::npos;
}

/// "prefix-NNNNN-of-MMMMM.gguf", read from the end by hand: no regex over a path of any length
/// (std::regex recursed once per character and overflowed the stack on a 26,000-character one).
std::optional<SplitName> parse_split_name(const std::string& path) {
  const std::string_view text = path;
  constexpr std::string_view suffix = ".gguf";
  if (text.size() < suffix.size() || text.substr(text.size() - suffix.size()) != suffix) return std::nullopt;
  const std::size_t count_end = text.size() - suffix.size();
  const std::size_t count_start = digits_before(text, count_end);
  constexpr std::string_view of = "-of-";
  if (count_start == std::string_view::npos || count_start < of.size() ||
      text.substr(count_start - of.size(), of.size()) != of)
    return std::nullopt;
  const std::size_t no_end = count_start - of.size();
  const std::size_t no_start = digits_before(text, no_end);
  if (no_start == std::string_view::npos || no_start == 0 || text[no_start - 1] != '-') return std::nullopt;
  const std::string_view count_text = text.substr(count_start, count_end - count_start);
  const std::string_view no_text = text.substr(no_start, no_end - no_start);
  if (count_text.size() > 9 || no_text.size() > 9) return std::nullopt;
  std::uint32_t count = 0;
  std::uint32_t no = 0;
  std::from_chars(count_text.data(), count_text.data() + count_text.size(), count);
  std::from_chars(no_text.data(), no_text.data() + no_text.size(), no);
  if (count == 0 || no == 0 || no > count) return std::nullopt;
  return SplitName{std::string(text.substr(0, no_start - 1)), count};
}

std::string split_part_path(const SplitName& name, std::uint32_t no) {
  return fmt::format("{}-{:05d}-of-{:05d}.gguf", name.prefix, no, name.count);
}

void check_split_field(const GgufHeader& part, std::string_view key, std::uint64_t expected) {
  const std::optional<std::uint64_t> value = part.get_uint(key);
  if (value && *value != expected)
    throw Error(fmt::format("{}: {} is {}, but the file name says {}", part.path, key, *value, expected));
}

}  // namespace

GgufHeader read_gguf_model(const std::string& path) {
  const std::optional<SplitName> split = parse_split_name(path);
  if (!split) {
    GgufHeader header = read_gguf_header(path);
    const std::optional<std::uint64_t> count = header.get_uint("split.count");
    if (count && *count > 1)
      throw Error(
          fmt::format("{}: split.count is {}, but the name does not follow name-00001-of-{:05d}.gguf, "
                      "so the other parts cannot be found",
                      path, *count, *count));
    return header;
  }

  GgufHeader model;
  std::unordered_set<std::string> names;
  for (std::uint32_t no = 1; no <= split->count; ++no) {
    const std::string part_path = split_part_path(*split, no);
    std::error_code ec;
    if (!std::filesystem::exists(part_path, ec))
      throw Error(fmt::format("{}: missing part {} of {} of the split model {}", part_path, no, split->count, path));
    GgufHeader part = read_gguf_header(part_path);
    // llama.cpp's gguf-split numbers parts from 0 in split.no.
    check_split_field(part, "split.no", no - 1);
    check_split_field(part, "split.count", split->count);
    for (GgufTensorInfo& t : part.tensors) {
      if (!names.insert(t.name).second)
        throw Error(fmt::format("{}: tensor '{}' also appears in an earlier part", part_path, printable_name(t.name)));
      t.split = no - 1;
    }
    if (no == 1) {
      model = std::move(part);
      continue;
    }
    model.tensors.insert(model.tensors.end(), std::make_move_iterator(part.tensors.begin()),
                         std::make_move_iterator(part.tensors.end()));
    model.file_size = checked_add(model.file_size, part.file_size, "model file size");
    model.parts.push_back(part_path);
  }
  const std::optional<std::uint64_t> total = model.get_uint("split.tensors.count");
  if (total && *total != model.tensors.size())
    throw Error(fmt::format("{}: split.tensors.count is {}, but the {} parts hold {} tensors", model.path, *total,
                            split->count, model.tensors.size()));
  return model;
}

}  // namespace kvplan
