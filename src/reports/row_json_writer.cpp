// The JSON of a row as text, field by field in row_to_json's order (reports/json.cpp). Numbers are
// written the way nlohmann::json writes them (integers in decimal; doubles by its own shortest
// round-trip conversion, the very function its serializer calls), and strings that need anything
// but copying go through nlohmann's own escaping, so the two cannot drift apart.

#include "reports/row_json_writer.h"

#include <array>
#include <cmath>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "reports/row_shortest_double.h"
#include "reports/row_text_blocks.h"

namespace kvplan {

namespace {

/// Appends a string literal, its length known at compile time (no strlen, one copy).
template <std::size_t N>
void literal(std::string& out, const char (&text)[N]) {
  out.append(text, N - 1);
}

/// True when a byte of the 8 in `word` is below 0x20, above 0x7E, '"' or '\\': the bytes JSON
/// escapes or nlohmann's serializer checks as UTF-8. Exact (the "has less/more/zero byte" tests
/// of Sean Anderson's bit hacks, each exact for these constants), 8 bytes at a time.
bool word_needs_care(std::uint64_t word) {
  constexpr std::uint64_t ones = 0x0101010101010101ull;
  constexpr std::uint64_t highs = 0x8080808080808080ull;
  // Each term sets a byte's high bit (not only there: borrows and carries spill upwards, but only
  // from a byte that has one) when a byte is below 0x20, above 0x7E, '"' or '\\'; or'ed
  // together, so that a word takes one test and no branch.
  const std::uint64_t quote = word ^ (ones * '"');
  const std::uint64_t backslash = word ^ (ones * '\\');
  const std::uint64_t flags = ((word - ones * 0x20) & ~word) | (word + ones * (127 - 0x7E)) | word |
                              ((quote - ones) & ~quote) | ((backslash - ones) & ~backslash);
  return (flags & highs) != 0;
}

#if defined(__SSE2__)
bool block_needs_care(const char* at) {
  std::array<char, 16> ignored;
  return row_text::copy_json_block(at, ignored.data());
}
#endif

bool needs_care(std::string_view text) {
  const std::size_t size = text.size();
#if defined(__SSE2__)
  if (size >= 16) {
    for (std::size_t i = 0; i + 16 <= size; i += 16)
      if (block_needs_care(text.data() + i)) return true;
    // The last 16 bytes, overlapping the blocks read.
    return size % 16 != 0 && block_needs_care(text.data() + size - 16);
  }
#endif
  std::uint64_t word = 0;
  if (size < 8) {
    // One word: the text over 8 bytes of 'a', which needs no care.
    word = 0x6161616161616161ull;
    if (size > 0) std::memcpy(&word, text.data(), size);
    return word_needs_care(word);
  }
  for (std::size_t i = 0; i + 8 <= size; i += 8) {
    std::memcpy(&word, text.data() + i, 8);
    if (word_needs_care(word)) return true;
  }
  if (size % 8 == 0) return false;
  std::memcpy(&word, text.data() + size - 8, 8);  // the last 8 bytes, overlapping the words read
  return word_needs_care(word);
}

/// "00" to "99", for two digits at a time.
constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/// Writes `value`'s decimal digits at `at` (room for 20, all of which it may overwrite), returns
/// the end. The digits are copied as 20 bytes, a copy of fixed size the compiler inlines.
char* write_digits(char* at, std::uint64_t value) {
  // The digits end at byte 20 of 40 (a uint64 has at most 20), so the 20 bytes from their first
  // stay within the buffer.
  std::array<char, 40> buffer;  // not zeroed: the bytes after the digits are copied, then written over
  char* const end = buffer.data() + 20;
  char* start = end;
  while (value >= 100) {
    const auto pair = static_cast<std::size_t>(value % 100) * 2;
    value /= 100;
    start -= 2;
    std::memcpy(start, kDigitPairs + pair, 2);
  }
  if (value >= 10) {
    start -= 2;
    std::memcpy(start, kDigitPairs + static_cast<std::size_t>(value) * 2, 2);
  } else {
    *--start = static_cast<char>('0' + value);
  }
  std::memcpy(at, start, 20);
  return at + (end - start);
}

/// Writes `value` at `at` (room for 21), returns the end: a '-' and the magnitude's digits, the
/// magnitude taken in unsigned arithmetic so that INT64_MIN has one too.
char* write_signed(char* at, std::int64_t value) {
  auto magnitude = static_cast<std::uint64_t>(value);
  if (value < 0) {
    *at++ = '-';
    magnitude = ~magnitude + 1;
  }
  return write_digits(at, magnitude);
}

/// Writes `value` at `at` (room for 64) as nlohmann::json::dump() writes a double, returns the end.
char* write_double(char* at, double value) {
  if (!std::isfinite(value)) {
    std::memcpy(at, "null", 4);
    return at + 4;
  }
  // A whole number from 1 to below 10^15 (a concurrency, a bandwidth): nlohmann writes its
  // shortest digits, which for a whole number of at most 15 digits are the number's own (any
  // shorter string differs by at least 1, far more than half an ulp), in positional notation
  // (10^15 is where it switches to an exponent), with ".0" after. tests/sweep_fast_paths_test.cpp
  // checks this against nlohmann on hundreds of thousands of values.
  if (value >= 1.0 && value < 1e15 && value == std::floor(value)) {
    at = write_digits(at, static_cast<std::uint64_t>(value));
    std::memcpy(at, ".0", 2);
    return at + 2;
  }
  return write_shortest_double(at, value);  // nlohmann's own digits, by its own algorithm
}

}  // namespace

void JsonNumberMemo::keep(Entry& entry, std::uint64_t value) {
  entry.value = value;
  entry.size = static_cast<std::uint8_t>(write_digits(entry.digits.data(), value) - entry.digits.data());
}

char* write_json_uint(char* at, std::uint64_t value) { return write_digits(at, value); }

char* write_json_double(char* at, double value) { return write_double(at, value); }

void append_json_uint(std::string& out, std::uint64_t value) {
  std::array<char, 24> digits{};
  out.append(digits.data(), static_cast<std::size_t>(write_digits(digits.data(), value) - digits.data()));
}

void append_json_int(std::string& out, std::int64_t value) {
  std::array<char, 24> digits{};
  out.append(digits.data(), static_cast<std::size_t>(write_signed(digits.data(), value) - digits.data()));
}

void append_json_double(std::string& out, double value) {
  std::array<char, 64> buffer{};
  const char* end = write_double(buffer.data(), value);
  out.append(buffer.data(), static_cast<std::size_t>(end - buffer.data()));
}

void append_json_string(std::string& out, std::string_view text) {
  if (needs_care(text)) {
    // Escapes, or UTF-8 to check: nlohmann's serializer decides, as it does for the tree.
    out += nlohmann::json(std::string(text)).dump();
    return;
  }
  out += '"';
  out.append(text.data(), text.size());
  out += '"';
}

namespace {

/// The row's text written through a cursor into `out`, grown ahead in large steps: one bounds check
/// a field instead of one a piece, and no string of its own for anything. Everything it writes
/// is what the append_json_* functions above write.
class Sink {
 public:
  Sink(TextBuffer& out, JsonNumberMemo& memo) : out_(out), memo_(memo) {
    cursor_ = out_.room(kStep);
    end_ = cursor_ + kStep;
  }
  ~Sink() { out_.end_at(cursor_); }
  Sink(const Sink&) = delete;
  Sink& operator=(const Sink&) = delete;

  template <std::size_t N>
  [[gnu::always_inline]] void literal(const char (&text)[N]) {
    room(N);
    std::memcpy(cursor_, text, N - 1);
    cursor_ += N - 1;
  }
  [[gnu::always_inline]] void ch(char c) {
    room(1);
    *cursor_++ = c;
  }
  [[gnu::always_inline]] void count(std::uint64_t value) {
    room(24);
    cursor_ = memo_.write(cursor_, value);
  }
  [[gnu::always_inline]] void signed_count(std::int64_t value) {
    // A '-' and the magnitude from the memo (a headroom repeats in its GPU's share), the
    // magnitude taken in unsigned arithmetic so that INT64_MIN has one too.
    room(24);
    auto magnitude = static_cast<std::uint64_t>(value);
    if (value < 0) {
      *cursor_++ = '-';
      magnitude = ~magnitude + 1;
    }
    cursor_ = memo_.write(cursor_, magnitude);
  }
  [[gnu::always_inline]] void boolean(bool value) {
    if (value) literal("true");
    else literal("false");
  }
  void real(double value) {
    room(64);
    // A batch of one decodes as fast as its sequence: the same double twice a row, written once.
    // Its text is copied as 32 bytes, a copy of fixed size (inlined): the room is 64.
    if (last_real_size_ != 0 && value == last_real_ && std::signbit(value) == std::signbit(last_real_)) {
      std::memcpy(cursor_, last_real_text_.data(), last_real_text_.size());
      cursor_ += last_real_size_;
      return;
    }
    char* end = write_double(cursor_, value);
    const auto size = static_cast<std::size_t>(end - cursor_);
    last_real_size_ = size <= last_real_text_.size() ? size : 0;
    if (last_real_size_) std::memcpy(last_real_text_.data(), cursor_, last_real_text_.size());
    last_real_ = value;
    cursor_ = end;
  }
  void text(std::string_view value) {
#if defined(__SSE2__)
    // Copied and checked in one pass, 16 bytes at a time, without stopping: nearly all text needs
    // no care. The room covers a block's overhang past the text (written over next).
    const std::size_t size = value.size();
    room(size + 2 + 16);
    char* const to = cursor_ + 1;
    bool care = false;
    if (size >= 16) {
      std::size_t i = 0;
      for (; i + 16 <= size; i += 16) care |= row_text::copy_json_block(value.data() + i, to + i);
      if (i < size) care |= row_text::copy_json_block(value.data() + size - 16, to + size - 16);  // overlapping
    } else {
      std::array<char, 16> block;  // the text over 16 bytes of 'a', which needs no care
      row_text::short_block(value.data(), size, block.data());
      care = row_text::copy_json_block(block.data(), to);
    }
    if (!care) {
      *cursor_ = '"';
      to[size] = '"';
      cursor_ = to + size + 1;
      return;
    }
#else
    const bool care = needs_care(value);
#endif
    if (care) {
      append(nlohmann::json(std::string(value)).dump());  // escapes and UTF-8: nlohmann's
      return;
    }
    room(value.size() + 2);
    *cursor_++ = '"';
    std::memcpy(cursor_, value.data(), value.size());
    cursor_ += value.size();
    *cursor_++ = '"';
  }
  template <typename T>
  void optional(const std::optional<T>& value) {
    if (!value) literal("null");
    else if constexpr (std::is_same_v<T, double>) real(*value);
    else count(*value);
  }

 private:
  static constexpr std::size_t kStep = 2048;  // a row is about 1.3 KB

  void append(std::string_view value) {
    room(value.size());
    std::memcpy(cursor_, value.data(), value.size());
    cursor_ += value.size();
  }
  /// Room for `bytes` after the cursor: a comparison inlined at every field, the growth not.
  [[gnu::always_inline]] void room(std::size_t bytes) {
    if (static_cast<std::size_t>(end_ - cursor_) < bytes) [[unlikely]]
      grow(bytes);
  }
  [[gnu::noinline]] void grow(std::size_t bytes) {
    out_.end_at(cursor_);
    cursor_ = out_.room(bytes + kStep);
    end_ = cursor_ + bytes + kStep;
  }

  TextBuffer& out_;
  JsonNumberMemo& memo_;
  char* cursor_ = nullptr;
  char* end_ = nullptr;
  double last_real_ = 0;
  std::size_t last_real_size_ = 0;  ///< 0: none yet
  std::array<char, 32> last_real_text_{};
};

void write_decode_bound(Sink& out, const Row& row);

void write_members(Sink& out, const Row& row) {
  // Keys and the commas between members as single literals: "ctx" first, then ,"batch": and so on.
  out.literal("\"ctx\":");
  out.count(row.ctx);
  out.literal(",\"batch\":");
  out.count(row.batch);
  out.literal(",\"kv_dtype\":");
  if (row.cache.k && row.cache.k == row.cache.v) out.text(row.cache.k->name);  // label() without a copy
  else out.text(row.cache.label());
  out.literal(",\"k_dtype\":");
  out.text(row.cache.k->name);
  out.literal(",\"v_dtype\":");
  out.text(row.cache.v->name);
  out.literal(",\"weight_dtype\":");
  out.text(row.weight_dtype->name);
  out.literal(",\"kv_bytes_per_token\":");
  out.count(row.kv_bytes_per_token);
  out.literal(",\"kv_bytes\":");
  out.count(row.kv_bytes);
  out.literal(",\"state_bytes\":");
  out.count(row.state_bytes);
  out.literal(",\"weights_bytes\":");
  out.count(row.weights_bytes);
  out.literal(",\"weights_rule\":");
  out.text(row.weights_rule);
  out.literal(",\"overhead_bytes\":");
  out.count(row.overhead_bytes);
  out.literal(",\"total_bytes\":");
  out.count(row.total_bytes);
  out.literal(",\"capacity_bytes\":");
  out.count(row.capacity_bytes);
  out.literal(",\"headroom_bytes\":");
  out.signed_count(row.headroom_bytes);
  out.literal(",\"fits\":");
  out.boolean(row.fits);
  switch (row.verdict) {  // to_string(row.verdict), quoted: plain words
    case Verdict::fits: out.literal(",\"verdict\":\"fits\""); break;
    case Verdict::does_not_fit: out.literal(",\"verdict\":\"does_not_fit\""); break;
    case Verdict::engine_refuses: out.literal(",\"verdict\":\"engine_refuses\""); break;
  }
  out.literal(",\"kv_pool_bytes\":");
  out.optional(row.kv_pool_bytes);
  out.literal(",\"available_kv_bytes\":");
  out.optional(row.engine.available_kv_bytes);
  out.literal(",\"kv_cache_tokens\":");
  out.optional(row.engine.kv_cache_tokens);
  out.literal(",\"max_concurrency\":");
  out.optional(row.engine.max_concurrency);
  out.literal(",\"starts\":");
  out.boolean(row.engine.starts);
  out.literal(",\"tp\":");
  out.count(row.tp);
  out.literal(",\"pp\":");
  out.count(row.pp);

  out.literal(",\"per_gpu\":[");
  for (std::size_t i = 0; i < row.per_gpu.size(); ++i) {
    const GpuShare& share = row.per_gpu[i];
    if (i) out.ch(',');
    out.literal("{\"rank\":");
    out.count(share.rank);
    out.literal(",\"stage\":");
    out.count(share.stage);
    out.literal(",\"gpu\":");
    out.text(share.gpu);
    out.literal(",\"weights_bytes\":");
    out.count(share.weights_bytes);
    out.literal(",\"kv_bytes\":");
    out.count(share.kv_bytes);
    out.literal(",\"other_bytes\":");
    out.count(share.other_bytes);
    out.literal(",\"total_bytes\":");
    out.count(share.total_bytes);
    out.literal(",\"capacity_bytes\":");
    out.count(share.capacity_bytes);
    out.literal(",\"headroom_bytes\":");
    out.signed_count(share.headroom_bytes);
    out.literal(",\"fits\":");
    out.boolean(share.fits);
    out.ch('}');
  }

  out.literal("],\"assumptions\":[");
  for (std::size_t i = 0; i < row.assumptions.size(); ++i) {
    if (i) out.ch(',');
    out.text(row.assumptions[i]);
  }

  out.literal("],\"warnings\":[");
  for (std::size_t i = 0; i < row.findings.size(); ++i) {
    const Finding& finding = row.findings[i];
    if (i) out.ch(',');
    out.literal("{\"code\":");
    out.text(finding.code);
    out.literal(",\"text\":");
    out.text(finding.text);
    out.literal(",\"blocking\":");
    out.boolean(finding.blocking);
    out.ch('}');
  }

  out.literal("],\"kv_breakdown\":[");
  for (std::size_t i = 0; i < row.breakdown.size(); ++i) {
    const KvBreakdownItem& item = row.breakdown[i];
    if (i) out.ch(',');
    out.literal("{\"kind\":");
    out.text(item.compress_ratio ? std::string_view("compressed") : to_string(item.kind));
    if (item.window) {
      out.literal(",\"window\":");
      out.count(item.window);
    }
    if (item.compress_ratio) {
      out.literal(",\"compress_ratio\":");
      out.count(item.compress_ratio);
    }
    out.literal(",\"layers\":");
    out.count(item.layers);
    out.literal(",\"tokens_held\":");
    out.count(item.tokens_held);
    out.literal(",\"bytes\":");
    out.count(item.bytes);
    if (item.indexer_layers) {
      out.literal(",\"indexer_layers\":");
      out.count(item.indexer_layers);
      out.literal(",\"indexer_bytes\":");
      out.count(item.indexer_bytes);
    }
    if (item.mtp) out.literal(",\"mtp\":true");
    out.ch('}');
  }

  out.literal("],\"decode_bound\":");
  write_decode_bound(out, row);
  out.literal(",\"system_ram\":");
  if (!row.host) {
    out.literal("null");
    return;
  }
  out.literal("{\"host_bytes\":");
  out.count(row.host->host_bytes);
  out.literal(",\"ram_bytes\":");
  out.count(row.host->ram_bytes);
  out.literal(",\"read_bytes\":");
  out.count(row.host->read_bytes);
  if (row.host->host_bytes <= row.host->ram_bytes) out.literal(",\"fits\":true}");
  else out.literal(",\"fits\":false}");
}

void write_decode_bound(Sink& out, const Row& row) {
  if (!row.decode_bound) {
    out.literal("null");
    return;
  }
  const DecodeBound& bound = *row.decode_bound;
  out.literal("{\"tokens_per_s_per_sequence\":");
  out.real(bound.tokens_per_s_per_sequence);
  out.literal(",\"tokens_per_s_batch\":");
  out.real(bound.tokens_per_s_batch);
  out.literal(",\"weights_bytes_read\":");
  out.count(bound.weights_bytes_read);
  out.literal(",\"kv_bytes_read\":");
  out.count(bound.kv_bytes_read);
  out.literal(",\"bandwidth_gbps\":");
  out.real(bound.bandwidth_gbps);
  out.literal(",\"rule\":");
  out.text(bound.rule);
  out.ch('}');
}

}  // namespace

void append_row_json_members(std::string& out, const Row& row) {
  JsonNumberMemo memo;
  append_row_json_members(out, row, memo);
}

void append_row_json_members(TextBuffer& out, const Row& row, JsonNumberMemo& memo) {
  Sink sink(out, memo);
  write_members(sink, row);
}

void append_row_json_members(std::string& out, const Row& row, JsonNumberMemo& memo) {
  TextBuffer text;
  append_row_json_members(text, row, memo);
  out += text.view();
}

void TextBuffer::append(std::string_view text) {
  char* at = room(text.size());
  if (!text.empty()) std::memcpy(at, text.data(), text.size());
  size_ += text.size();
}

void TextBuffer::grow(std::size_t bytes) {
  // Doubling: a sweep's buffer reaches its 64 KiB piece in a few steps, then stays.
  std::size_t capacity = capacity_ ? capacity_ : 4096;
  while (capacity - size_ < bytes) capacity *= 2;
  std::unique_ptr<char[]> data(new char[capacity]);
  if (size_) std::memcpy(data.get(), data_.get(), size_);
  data_ = std::move(data);
  capacity_ = capacity;
}

void append_row_json(std::string& out, const Row& row) {
  out += '{';
  append_row_json_members(out, row);
  out += '}';
}

}  // namespace kvplan
