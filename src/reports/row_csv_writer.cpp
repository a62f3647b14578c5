// format_csv's cells without its tree: numbers as nlohmann::json dumps them (the row JSON
// writer's own functions), text through the same printable() and quoting. A sweep's cells are
// written through a cursor straight into its output (CsvCells), text looked at 16 bytes at a time:
// nearly every cell is plain, and only a cell that is not goes the slow way, append_csv_text.

#include "reports/row_csv_writer.h"

#include <array>
#include <cmath>
#include <cstring>

#include "model/text.h"
#include "model/text_append.h"
#include "reports/row_json_writer.h"
#include "reports/row_text_blocks.h"

namespace kvplan {

namespace {

constexpr std::string_view kHeader =
    "model,gpu,runtime,ctx,batch,kv_dtype,k_dtype,v_dtype,weight_dtype,kv_bytes_per_token,kv_bytes,state_bytes,"
    "weights_bytes,weights_rule,overhead_bytes,total_bytes,capacity_bytes,headroom_bytes,fits,verdict,kv_pool_bytes,"
    "available_kv_bytes,kv_cache_tokens,max_concurrency,starts,tp,pp,assumptions,warnings,kv_breakdown,"
    "decode_tokens_per_s_per_sequence,decode_tokens_per_s_batch\n";

/// format_csv cuts a text cell at this many bytes (printable(text, 4096)).
constexpr std::size_t kMaxCell = 4096;

/// How the bytes of a cell's text decide its form.
enum class CellForm { plain, quoted, slow };

/// One line's cells after model, gpu and runtime, written through a cursor into `out`: one bounds
/// check a cell, and no string of its own for any cell but one that needs the slow way.
class CsvCells {
 public:
  CsvCells(TextBuffer& out, JsonNumberMemo& memo) : out_(out), memo_(memo) { grow(0); }
  ~CsvCells() { out_.end_at(cursor_); }
  CsvCells(const CsvCells&) = delete;
  CsvCells& operator=(const CsvCells&) = delete;

  void number(std::uint64_t value) {
    room(24);
    *cursor_++ = ',';
    cursor_ = memo_.write(cursor_, value);
  }
  void signed_number(std::int64_t value) {
    // A '-' and the magnitude from the memo, taken in unsigned arithmetic (INT64_MIN has one).
    room(24);
    *cursor_++ = ',';
    auto magnitude = static_cast<std::uint64_t>(value);
    if (value < 0) {
      *cursor_++ = '-';
      magnitude = ~magnitude + 1;
    }
    cursor_ = memo_.write(cursor_, magnitude);
  }
  void real(double value) {
    room(72);
    *cursor_++ = ',';
    last_cell_ = offset(cursor_);
    cursor_ = write_json_double(cursor_, value);
  }
  /// The last text or real cell's text again, in a cell of its own.
  void repeat_last_cell() {
    const std::size_t size = static_cast<std::size_t>(cursor_ - last_cell_start());
    room(size + 1);
    const char* from = last_cell_start();
    *cursor_ = ',';
    std::memmove(cursor_ + 1, from, size);
    last_cell_ = offset(cursor_ + 1);
    cursor_ += size + 1;
  }
  template <std::size_t N>
  void literal(const char (&text)[N]) {
    room(N);
    std::memcpy(cursor_, text, N - 1);
    cursor_ += N - 1;
  }
  void boolean(bool value) {
    if (value) literal(",true");
    else literal(",false");
  }
  void empty() { literal(","); }

  /// A text cell, as append_csv_text writes it.
  void text(std::string_view value) {
    const std::size_t size = value.size();
    if (size > kMaxCell) {
      empty();
      slow(value);
      return;
    }
    room(size + 3 + 16);  // the comma, the quotes, a block's overhang past the text (written over next)
    *cursor_++ = ',';
    last_cell_ = offset(cursor_);
#if defined(__SSE2__)
    // Copied and sorted in one pass: 16 bytes at a time, the last block overlapping the one
    // before; text under 16 bytes over a block of 'a', which needs nothing.
    row_text::CsvBlock flags;
    const auto take = [&](const char* from, char* to) {
      const __m128i bytes = row_text::load_block(from);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(to), bytes);
      const row_text::CsvBlock block = row_text::csv_block(bytes);
      flags.slow |= block.slow;
      flags.comma |= block.comma;
    };
    if (size >= 16) {
      std::size_t i = 0;
      for (; i + 16 <= size; i += 16) take(value.data() + i, cursor_ + i);
      if (i < size) take(value.data() + size - 16, cursor_ + size - 16);
    } else {
      std::array<char, 16> block;
      row_text::short_block(value.data(), size, block.data());
      take(block.data(), cursor_);
    }
    const CellForm form = flags.slow ? CellForm::slow : flags.comma ? CellForm::quoted : CellForm::plain;
#else
    if (size) std::memcpy(cursor_, value.data(), size);
    const CellForm form = form_of(value);
#endif
    cursor_ += size;
    finish(size, form);
  }

  /// A cell written piece by piece (the joined lists, the breakdown phrase): start_cell, then
  /// `at` and `advance` for the pieces, then end_cell, which decides its form from what it holds.
  void start_cell() {
    empty();
    last_cell_ = offset(cursor_);
  }
  /// Room for `bytes` more, and where they go.
  char* at(std::size_t bytes) {
    room(bytes);
    return cursor_;
  }
  void advance(char* end) { cursor_ = end; }
  bool cell_empty() const { return cursor_ == last_cell_start(); }
  void append(std::string_view piece) {
    char* to = at(piece.size());
    if (!piece.empty()) std::memcpy(to, piece.data(), piece.size());
    cursor_ = to + piece.size();
  }
  void end_cell() {
    const std::size_t size = static_cast<std::size_t>(cursor_ - last_cell_start());
    finish(size, size > kMaxCell ? CellForm::slow : form_of({last_cell_start(), size}));
  }

 private:
  static constexpr std::size_t kStep = 1024;  // a line is about 300 bytes

  /// Ends the cell whose `size` bytes of text were written from last_cell_start() to the cursor,
  /// in `form`.
  void finish(std::size_t size, CellForm form) {
    switch (form) {
      case CellForm::plain: return;
      case CellForm::quoted: {
        // Only commas (a '"' goes the slow way): the text moved one byte on, between quotes.
        room(2);
        char* const start = last_cell_start();
        std::memmove(start + 1, start, size);
        start[0] = '"';
        start[size + 1] = '"';
        cursor_ += 2;
        return;
      }
      case CellForm::slow: {
        const std::string text(last_cell_start(), size);  // before the slow way writes over it
        cursor_ = last_cell_start();
        slow(text);
        return;
      }
    }
  }

  /// append_csv_text's own way: printable(), quoting, the 4 KiB cut.
  void slow(std::string_view text) {
    std::string cell;
    append_csv_text(cell, text);
    append(cell);
  }

#if defined(__SSE2__)
  /// The form of text already in the buffer: 16 bytes at a time, bytes past its end masked off
  /// (the room asked for covers the overhang).
  CellForm form_of(std::string_view text) {
    const std::size_t start = offset(text.data());
    room(16);
    const char* bytes = base_ + start;
    row_text::CsvBlock flags;
    for (std::size_t i = 0; i < text.size(); i += 16) {
      row_text::CsvBlock block = row_text::csv_block(row_text::load_block(bytes + i));
      if (text.size() - i < 16) {
        const unsigned kept = (1u << (text.size() - i)) - 1;
        block.slow &= kept;
        block.comma &= kept;
      }
      flags.slow |= block.slow;
      flags.comma |= block.comma;
    }
    return flags.slow ? CellForm::slow : flags.comma ? CellForm::quoted : CellForm::plain;
  }
#else
  static CellForm form_of(std::string_view text) {
    bool comma = false;
    for (const char c : text) {
      if (c < 0x20 || c > 0x7E || c == '"') return CellForm::slow;
      comma = comma || c == ',';
    }
    return comma ? CellForm::quoted : CellForm::plain;
  }
#endif

  char* last_cell_start() const { return base_ + last_cell_; }
  std::size_t offset(const char* at) const { return static_cast<std::size_t>(at - base_); }

  void room(std::size_t bytes) {
    if (static_cast<std::size_t>(end_ - cursor_) < bytes) grow(bytes);
  }
  void grow(std::size_t bytes) {
    if (cursor_) out_.end_at(cursor_);
    cursor_ = out_.room(bytes + kStep);
    base_ = cursor_ - out_.size();
    end_ = cursor_ + bytes + kStep;
  }

  TextBuffer& out_;
  JsonNumberMemo& memo_;
  char* base_ = nullptr;  ///< where `out_`'s text begins: offsets survive its growth, pointers not
  char* cursor_ = nullptr;
  char* end_ = nullptr;
  std::size_t last_cell_ = 0;  ///< offset of the text of the last text cell started
};

/// describe_breakdown(row), written into the cell piece by piece.
void write_breakdown(CsvCells& out, const Row& row) {
  bool first = true;
  for (const KvBreakdownItem& item : row.breakdown) {
    // At most 3 + 10 + 1 + 7 + 22 + 6 + 3 + 26 + 13 + 13 + 10 + 1 = 115 bytes (a kind's name is 7
    // at most, a window 20 digits, tokens 20 digits and 6 commas); a compressed cache's at most
    // 3 + 10 + 1 + 13 + 10 + 4 + 26 + 8 + 13 + 10 + 1 = 99.
    char* at = out.at(160);
    if (!first) {
      std::memcpy(at, " + ", 3);
      at += 3;
    }
    first = false;
    at = write_json_uint(at, item.layers);
    *at++ = ' ';
    if (item.compress_ratio) {
      // A compressed cache (DeepSeek-V4 under llama.cpp): one entry per compress_ratio tokens.
      std::memcpy(at, "compressed(1/", 13);
      at = write_json_uint(at + 13, item.compress_ratio);
      std::memcpy(at, ") x ", 4);
      at = write_thousands(at + 4, item.tokens_held);
      std::memcpy(at, " entries", 8);
      at += 8;
    } else {
      const std::string_view kind = to_string(item.kind);
      std::memcpy(at, kind.data(), kind.size());
      at += kind.size();
      if (item.window) {
        *at++ = '(';
        at = write_json_uint(at, item.window);
        *at++ = ')';
      }
      if (item.mtp) {
        std::memcpy(at, " (MTP)", 6);
        at += 6;
      }
      if (item.kind != LayerKind::linear && item.kind != LayerKind::none && item.kind != LayerKind::shared) {
        std::memcpy(at, " x ", 3);
        at = write_thousands(at + 3, item.tokens_held);
        const std::string_view tokens = item.kind == LayerKind::cross ? " image tokens" : " tokens";
        std::memcpy(at, tokens.data(), tokens.size());
        at += tokens.size();
      }
    }
    if (item.indexer_layers) {
      std::memcpy(at, " (indexer on ", 13);
      at = write_json_uint(at + 13, item.indexer_layers);
      *at++ = ')';
    }
    out.advance(at);
  }
}

void write_cells(CsvCells& out, const Row& row) {
  out.number(row.ctx);
  out.number(row.batch);
  if (row.cache.k && row.cache.k == row.cache.v) out.text(row.cache.k->name);  // label() without a copy
  else out.text(row.cache.label());
  out.text(row.cache.k->name);
  out.text(row.cache.v->name);
  out.text(row.weight_dtype->name);
  out.number(row.kv_bytes_per_token);
  out.number(row.kv_bytes);
  out.number(row.state_bytes);
  out.number(row.weights_bytes);
  out.text(row.weights_rule);
  out.number(row.overhead_bytes);
  out.number(row.total_bytes);
  out.number(row.capacity_bytes);
  out.signed_number(row.headroom_bytes);
  out.boolean(row.fits);
  switch (row.verdict) {  // to_string(row.verdict): plain words
    case Verdict::fits: out.literal(",fits"); break;
    case Verdict::does_not_fit: out.literal(",does_not_fit"); break;
    case Verdict::engine_refuses: out.literal(",engine_refuses"); break;
  }
  if (row.kv_pool_bytes) out.number(*row.kv_pool_bytes);
  else out.empty();
  if (row.engine.available_kv_bytes) out.number(*row.engine.available_kv_bytes);
  else out.empty();
  if (row.engine.kv_cache_tokens) out.number(*row.engine.kv_cache_tokens);
  else out.empty();
  if (row.engine.max_concurrency) out.real(*row.engine.max_concurrency);
  else out.empty();
  out.boolean(row.engine.starts);
  out.number(row.tp);
  out.number(row.pp);
  // Joined as format_csv joins them: a separator only after text (an empty first item adds none).
  out.start_cell();
  for (const std::string& assumption : row.assumptions) {
    if (!out.cell_empty()) out.append("; ");
    out.append(assumption);
  }
  out.end_cell();
  out.start_cell();
  for (const Finding& finding : row.findings) {
    if (!out.cell_empty()) out.append(";");
    out.append(finding.code);
  }
  out.end_cell();
  out.start_cell();
  write_breakdown(out, row);
  out.end_cell();
  // The roofline bound as two plain cells, empty when the card's bandwidth is unknown.
  if (row.decode_bound) {
    const DecodeBound& bound = *row.decode_bound;
    out.real(bound.tokens_per_s_per_sequence);
    // A batch of one decodes as fast as its sequence: the same double, its text copied.
    if (bound.tokens_per_s_batch == bound.tokens_per_s_per_sequence &&
        std::signbit(bound.tokens_per_s_batch) == std::signbit(bound.tokens_per_s_per_sequence))
      out.repeat_last_cell();
    else
      out.real(bound.tokens_per_s_batch);
  } else {
    out.literal(",,");
  }
  out.literal("\n");
}

}  // namespace

void append_csv_header(std::string& out) { out += kHeader; }

void append_csv_text(std::string& out, std::string_view value) {
  // Printable ASCII within the limit is its own printable() text: quoted (or not) as it is, without
  // a copy. Anything else goes through printable(). One pass says which.
  bool printable_ascii = value.size() <= kMaxCell;
  bool quoted = false;
  for (std::size_t i = 0; i < value.size() && printable_ascii; ++i) {
    const char c = value[i];
    printable_ascii = c >= 0x20 && c <= 0x7E;
    quoted = quoted || c == ',' || c == '"';
  }
  if (printable_ascii) {
    if (!quoted) {
      out.append(value.data(), value.size());
      return;
    }
    out += '"';
    for (const char c : value) {
      if (c == '"') out += '"';
      out += c;
    }
    out += '"';
    return;
  }
  const std::string shown = printable(value, kMaxCell);
  if (shown.find_first_of(",\"\n\r") == std::string::npos) {
    out += shown;
    return;
  }
  out += '"';
  for (const char c : shown) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

void append_row_csv_cells(TextBuffer& out, const Row& row, JsonNumberMemo& memo) {
  CsvCells cells(out, memo);
  write_cells(cells, row);
}

void append_row_csv_cells(std::string& out, const Row& row) {
  TextBuffer text;
  JsonNumberMemo memo;
  append_row_csv_cells(text, row, memo);
  out += text.view();
}

}  // namespace kvplan
