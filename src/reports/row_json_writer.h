#pragma once
// A row's JSON written straight into a string: the same fields, in the same order and byte for
// byte, as row_to_json(row).dump(), without building a JSON tree. kvplan sweep writes a million
// rows a second with it; the tree took about 90 us a row (tests/row_json_writer_test.cpp
// compares the two).

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "kvplan/plan.h"

namespace kvplan {

/// Numbers as nlohmann::json::dump() writes them: decimal integers; a double by nlohmann's own
/// shortest round-trip digits ("5.0", "1e+21"), null when it is NaN or infinite.
void append_json_uint(std::string& out, std::uint64_t value);
/// append_json_uint's digits written at `at`, which must have room for 20 bytes (all of which it
/// may overwrite); returns the end.
char* write_json_uint(char* at, std::uint64_t value);
void append_json_int(std::string& out, std::int64_t value);
void append_json_double(std::string& out, double value);
/// append_json_double's text written at `at`, which must have room for 64 bytes; returns the end.
char* write_json_double(char* at, double value);

/// Appends `text` as a JSON string, quotes included, escaped as nlohmann::json::dump() escapes it
/// (and, like it, throws nlohmann's type_error for text that is not UTF-8).
void append_json_string(std::string& out, std::string_view text);

/// The decimal text of the whole numbers written last, by value: a sweep's lines repeat most of
/// their numbers (the weights, the capacity, each row's total in its GPU's share), and copying
/// their text is cheaper than writing the digits again. Any value may be asked for; a miss writes
/// the digits and keeps them.
class JsonNumberMemo {
 public:
  /// Writes `value`'s digits at `at` (room for 20), returns the end. Inline: a line asks for
  /// thirty numbers, nearly all of them found.
  char* write(char* at, std::uint64_t value) {
    if (value < 10) {  // a batch, tp, pp, rank, stage, 0 bytes: one digit, no lookup
      *at = static_cast<char>('0' + value);
      return at + 1;
    }
    Entry& entry = entries_[static_cast<std::size_t>((value * 0x9E3779B97F4A7C15ull) >> 58)];  // 64 slots
    if (entry.size == 0 || entry.value != value) [[unlikely]]
      keep(entry, value);
    std::memcpy(at, entry.digits.data(), entry.digits.size());  // fixed size: inlined; `at` has room
    return at + entry.size;
  }

 private:
  struct Entry {
    std::uint64_t value = 0;
    std::uint8_t size = 0;  ///< 0: empty
    std::array<char, 20> digits{};
  };
  /// Writes `value`'s digits into `entry`.
  static void keep(Entry& entry, std::uint64_t value);
  std::array<Entry, 64> entries_{};
};

/// Text written through a cursor: a buffer that grows without writing its new bytes first
/// (std::string's resize zero-fills them, which cost a sweep's writer a twentieth of its time).
class TextBuffer {
 public:
  std::string_view view() const { return {data_.get(), size_}; }
  std::size_t size() const { return size_; }
  void clear() { size_ = 0; }
  void append(std::string_view text);
  /// Room for `bytes` more after the text: returns where the text ends, the room after it.
  char* room(std::size_t bytes) {
    if (capacity_ - size_ < bytes) grow(bytes);
    return data_.get() + size_;
  }
  /// The text now ends at `end` (within the room asked for).
  void end_at(const char* end) { size_ = static_cast<std::size_t>(end - data_.get()); }

 private:
  void grow(std::size_t bytes);
  std::unique_ptr<char[]> data_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

/// Appends row_to_json(row)'s members without the braces: `"ctx":4096,...,"decode_bound":null`.
void append_row_json_members(std::string& out, const Row& row);
/// The same, with a memo kept from row to row.
void append_row_json_members(std::string& out, const Row& row, JsonNumberMemo& memo);
void append_row_json_members(TextBuffer& out, const Row& row, JsonNumberMemo& memo);

/// Appends row_to_json(row).dump().
void append_row_json(std::string& out, const Row& row);

}  // namespace kvplan
