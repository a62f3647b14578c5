#pragma once
// The row writers' text sorted 16 bytes at a time (SSE2, part of every x86-64): which bytes JSON
// must escape or check as UTF-8, and which a CSV cell must quote or show through printable().
// Nearly all of a sweep's text needs none of that, so it is copied in blocks and looked at once.

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace kvplan::row_text {

/// Text of `size` bytes, below 16, copied from `from` over the 16 bytes of 'a' at `to` (plain in
/// JSON and CSV alike), without a call: two overlapping copies of fixed size cover 8 to 15
/// bytes, two more 4 to 7, then a byte at a time. The short cells of a line (dtype names, codes)
/// took a libc memcpy each.
inline void short_block(const char* from, std::size_t size, char* to) {
  std::memset(to, 'a', 16);
  if (size >= 8) {
    std::memcpy(to, from, 8);
    std::memcpy(to + size - 8, from + size - 8, 8);
  } else if (size >= 4) {
    std::memcpy(to, from, 4);
    std::memcpy(to + size - 4, from + size - 4, 4);
  } else {
    for (std::size_t i = 0; i < size; ++i) to[i] = from[i];
  }
}

#if defined(__SSE2__)

inline __m128i load_block(const char* at) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(at)); }

/// A bit per byte of `bytes` that is a control character or, as a signed byte below 0x20, one of
/// 0x80 and above; or 0x7F. JSON and CSV both send these to their slow paths.
inline __m128i not_printable_ascii(__m128i bytes) {
  return _mm_or_si128(_mm_cmplt_epi8(bytes, _mm_set1_epi8(0x20)), _mm_cmpeq_epi8(bytes, _mm_set1_epi8(0x7F)));
}

/// Copies 16 bytes from `from` to `to`; true when one of them needs care in JSON: below 0x20,
/// 0x7F and above, '"' or '\\' (the bytes JSON escapes or nlohmann's serializer checks as UTF-8).
inline bool copy_json_block(const char* from, char* to) {
  const __m128i bytes = load_block(from);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(to), bytes);
  const __m128i flags =
      _mm_or_si128(not_printable_ascii(bytes), _mm_or_si128(_mm_cmpeq_epi8(bytes, _mm_set1_epi8('"')),
                                                            _mm_cmpeq_epi8(bytes, _mm_set1_epi8('\\'))));
  return _mm_movemask_epi8(flags) != 0;
}

/// A CSV cell's 16 bytes at `at`: bit i of `slow` is set when byte i is not printable ASCII or is
/// a '"' (printable() shows the one, quoting doubles the other), of `comma` when it is a comma
/// (the cell is then quoted).
struct CsvBlock {
  unsigned slow = 0;
  unsigned comma = 0;
};

inline CsvBlock csv_block(__m128i bytes) {
  const __m128i slow = _mm_or_si128(not_printable_ascii(bytes), _mm_cmpeq_epi8(bytes, _mm_set1_epi8('"')));
  return {static_cast<unsigned>(_mm_movemask_epi8(slow)),
          static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, _mm_set1_epi8(','))))};
}

#endif

}  // namespace kvplan::row_text
