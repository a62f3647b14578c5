// format_csv's cells without its tree: numbers as nlohmann::json dumps them (the row JSON
// writer's own functions), text through the same printable() and quoting.

#include "reports/row_csv_writer.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "model/text.h"
#include "reports/fields.h"
#include "reports/row_json_writer.h"

namespace kvplan {

namespace {

constexpr std::string_view kHeader =
    "model,gpu,runtime,ctx,batch,kv_dtype,k_dtype,v_dtype,weight_dtype,kv_bytes_per_token,kv_bytes,state_bytes,"
    "weights_bytes,weights_rule,overhead_bytes,total_bytes,capacity_bytes,headroom_bytes,fits,verdict,kv_pool_bytes,"
    "available_kv_bytes,kv_cache_tokens,max_concurrency,starts,tp,pp,assumptions,warnings,kv_breakdown,"
    "decode_tokens_per_s_per_sequence,decode_tokens_per_s_batch\n";

/// ",digits" appended at once.
void number(std::string& out, std::uint64_t value) {
  std::array<char, 24> cell;
  cell[0] = ',';
  const auto size = static_cast<std::size_t>(write_json_uint(cell.data() + 1, value) - cell.data());
  out.append(cell.data(), size);
}

void text(std::string& out, std::string_view value) {
  out += ',';
  append_csv_text(out, value);
}

template <typename T>
void optional_cell(std::string& out, const std::optional<T>& value) {
  out += ',';
  if (!value) return;
  if constexpr (std::is_same_v<T, double>) append_json_double(out, *value);
  else append_json_uint(out, *value);
}

}  // namespace

void append_csv_header(std::string& out) { out += kHeader; }

void append_csv_text(std::string& out, std::string_view value) {
  // Printable ASCII within the limit is its own printable() text: quoted (or not) as it is, without
  // a copy. Anything else goes through printable(). One pass says which.
  bool printable_ascii = value.size() <= 4096;
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
  const std::string shown = printable(value, 4096);
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

void append_row_csv_cells(std::string& out, const Row& row) {
  std::string scratch;
  append_row_csv_cells(out, row, scratch);
}

void append_row_csv_cells(std::string& out, const Row& row, std::string& scratch) {
  number(out, row.ctx);
  number(out, row.batch);
  if (row.cache.k && row.cache.k == row.cache.v) text(out, row.cache.k->name);  // label() without a copy
  else text(out, row.cache.label());
  text(out, row.cache.k->name);
  text(out, row.cache.v->name);
  text(out, row.weight_dtype->name);
  number(out, row.kv_bytes_per_token);
  number(out, row.kv_bytes);
  number(out, row.state_bytes);
  number(out, row.weights_bytes);
  text(out, row.weights_rule);
  number(out, row.overhead_bytes);
  number(out, row.total_bytes);
  number(out, row.capacity_bytes);
  out += ',';
  append_json_int(out, row.headroom_bytes);
  out += row.fits ? ",true" : ",false";
  text(out, to_string(row.verdict));
  optional_cell(out, row.kv_pool_bytes);
  optional_cell(out, row.engine.available_kv_bytes);
  optional_cell(out, row.engine.kv_cache_tokens);
  optional_cell(out, row.engine.max_concurrency);
  out += row.engine.starts ? ",true" : ",false";
  number(out, row.tp);
  number(out, row.pp);
  scratch.clear();
  for (const std::string& assumption : row.assumptions) {
    if (!scratch.empty()) scratch += "; ";
    scratch += assumption;
  }
  text(out, scratch);
  scratch.clear();
  for (const Finding& finding : row.findings) {
    if (!scratch.empty()) scratch += ';';
    scratch += finding.code;
  }
  text(out, scratch);
  scratch.clear();
  append_breakdown(scratch, row);
  text(out, scratch);
  // The roofline bound as two plain cells, empty when the card's bandwidth is unknown.
  out += ',';
  if (row.decode_bound) {
    const DecodeBound& bound = *row.decode_bound;
    const std::size_t start = out.size();
    append_json_double(out, bound.tokens_per_s_per_sequence);
    const std::size_t size = out.size() - start;
    out += ',';
    // A batch of one decodes as fast as its sequence: the same double, its text copied.
    if (bound.tokens_per_s_batch == bound.tokens_per_s_per_sequence &&
        std::signbit(bound.tokens_per_s_batch) == std::signbit(bound.tokens_per_s_per_sequence))
      out.append(out, start, size);
    else
      append_json_double(out, bound.tokens_per_s_batch);
  } else {
    out += ',';
  }
  out += '\n';
}

}  // namespace kvplan
