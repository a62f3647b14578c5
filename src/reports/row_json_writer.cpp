// The JSON of a row as text, field by field in row_to_json's order (reports/json.cpp). Numbers are
// written the way nlohmann::json writes them (integers in decimal; doubles by its own shortest
// round-trip conversion, the very function its serializer calls), and strings that need anything
// but copying go through nlohmann's own escaping, so the two cannot drift apart.

#include "reports/row_json_writer.h"

#include <array>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace kvplan {

namespace {

void append_bool(std::string& out, bool value) { out += value ? "true" : "false"; }

template <typename T>
void append_optional(std::string& out, const std::optional<T>& value) {
  if (!value) out += "null";
  else if constexpr (std::is_same_v<T, double>) append_json_double(out, *value);
  else append_json_uint(out, *value);
}

/// `"key":` (keys are kvplan's own names: plain ASCII, nothing to escape).
void key(std::string& out, std::string_view name) {
  out += '"';
  out += name;
  out += "\":";
}

}  // namespace

void append_json_uint(std::string& out, std::uint64_t value) {
  const fmt::format_int text(value);
  out.append(text.data(), text.size());
}

void append_json_int(std::string& out, std::int64_t value) {
  const fmt::format_int text(value);
  out.append(text.data(), text.size());
}

void append_json_double(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  std::array<char, 64> buffer{};
  const char* end = nlohmann::detail::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  out.append(buffer.data(), static_cast<std::size_t>(end - buffer.data()));
}

void append_json_string(std::string& out, std::string_view text) {
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte > 0x7E || c == '"' || c == '\\') {
      // Escapes, or UTF-8 to check: nlohmann's serializer decides, as it does for the tree.
      out += nlohmann::json(std::string(text)).dump();
      return;
    }
  }
  out += '"';
  out += text;
  out += '"';
}

void append_row_json_members(std::string& out, const Row& row) {
  key(out, "ctx");
  append_json_uint(out, row.ctx);
  out += ',';
  key(out, "batch");
  append_json_uint(out, row.batch);
  out += ',';
  key(out, "kv_dtype");
  append_json_string(out, row.cache.label());
  out += ',';
  key(out, "k_dtype");
  append_json_string(out, row.cache.k->name);
  out += ',';
  key(out, "v_dtype");
  append_json_string(out, row.cache.v->name);
  out += ',';
  key(out, "weight_dtype");
  append_json_string(out, row.weight_dtype->name);
  out += ',';
  key(out, "kv_bytes_per_token");
  append_json_uint(out, row.kv_bytes_per_token);
  out += ',';
  key(out, "kv_bytes");
  append_json_uint(out, row.kv_bytes);
  out += ',';
  key(out, "state_bytes");
  append_json_uint(out, row.state_bytes);
  out += ',';
  key(out, "weights_bytes");
  append_json_uint(out, row.weights_bytes);
  out += ',';
  key(out, "weights_rule");
  append_json_string(out, row.weights_rule);
  out += ',';
  key(out, "overhead_bytes");
  append_json_uint(out, row.overhead_bytes);
  out += ',';
  key(out, "total_bytes");
  append_json_uint(out, row.total_bytes);
  out += ',';
  key(out, "capacity_bytes");
  append_json_uint(out, row.capacity_bytes);
  out += ',';
  key(out, "headroom_bytes");
  append_json_int(out, row.headroom_bytes);
  out += ',';
  key(out, "fits");
  append_bool(out, row.fits);
  out += ',';
  key(out, "verdict");
  append_json_string(out, to_string(row.verdict));
  out += ',';
  key(out, "kv_pool_bytes");
  append_optional(out, row.kv_pool_bytes);
  out += ',';
  key(out, "available_kv_bytes");
  append_optional(out, row.engine.available_kv_bytes);
  out += ',';
  key(out, "kv_cache_tokens");
  append_optional(out, row.engine.kv_cache_tokens);
  out += ',';
  key(out, "max_concurrency");
  append_optional(out, row.engine.max_concurrency);
  out += ',';
  key(out, "starts");
  append_bool(out, row.engine.starts);
  out += ',';
  key(out, "tp");
  append_json_uint(out, row.tp);
  out += ',';
  key(out, "pp");
  append_json_uint(out, row.pp);
  out += ',';

  key(out, "per_gpu");
  out += '[';
  for (std::size_t i = 0; i < row.per_gpu.size(); ++i) {
    const GpuShare& share = row.per_gpu[i];
    if (i) out += ',';
    out += "{\"rank\":";
    append_json_uint(out, share.rank);
    out += ",\"stage\":";
    append_json_uint(out, share.stage);
    out += ",\"gpu\":";
    append_json_string(out, share.gpu);
    out += ",\"weights_bytes\":";
    append_json_uint(out, share.weights_bytes);
    out += ",\"kv_bytes\":";
    append_json_uint(out, share.kv_bytes);
    out += ",\"other_bytes\":";
    append_json_uint(out, share.other_bytes);
    out += ",\"total_bytes\":";
    append_json_uint(out, share.total_bytes);
    out += ",\"capacity_bytes\":";
    append_json_uint(out, share.capacity_bytes);
    out += ",\"headroom_bytes\":";
    append_json_int(out, share.headroom_bytes);
    out += ",\"fits\":";
    append_bool(out, share.fits);
    out += '}';
  }
  out += "],";

  key(out, "assumptions");
  out += '[';
  for (std::size_t i = 0; i < row.assumptions.size(); ++i) {
    if (i) out += ',';
    append_json_string(out, row.assumptions[i]);
  }
  out += "],";

  key(out, "warnings");
  out += '[';
  for (std::size_t i = 0; i < row.findings.size(); ++i) {
    const Finding& finding = row.findings[i];
    if (i) out += ',';
    out += "{\"code\":";
    append_json_string(out, finding.code);
    out += ",\"text\":";
    append_json_string(out, finding.text);
    out += ",\"blocking\":";
    append_bool(out, finding.blocking);
    out += '}';
  }
  out += "],";

  key(out, "kv_breakdown");
  out += '[';
  for (std::size_t i = 0; i < row.breakdown.size(); ++i) {
    const KvBreakdownItem& item = row.breakdown[i];
    if (i) out += ',';
    out += "{\"kind\":";
    append_json_string(out, to_string(item.kind));
    if (item.window) {
      out += ",\"window\":";
      append_json_uint(out, item.window);
    }
    out += ",\"layers\":";
    append_json_uint(out, item.layers);
    out += ",\"tokens_held\":";
    append_json_uint(out, item.tokens_held);
    out += ",\"bytes\":";
    append_json_uint(out, item.bytes);
    if (item.indexer_layers) {
      out += ",\"indexer_layers\":";
      append_json_uint(out, item.indexer_layers);
      out += ",\"indexer_bytes\":";
      append_json_uint(out, item.indexer_bytes);
    }
    if (item.mtp) out += ",\"mtp\":true";
    out += '}';
  }
  out += "],";

  key(out, "decode_bound");
  if (!row.decode_bound) {
    out += "null";
    return;
  }
  const DecodeBound& bound = *row.decode_bound;
  out += "{\"tokens_per_s_per_sequence\":";
  append_json_double(out, bound.tokens_per_s_per_sequence);
  out += ",\"tokens_per_s_batch\":";
  append_json_double(out, bound.tokens_per_s_batch);
  out += ",\"weights_bytes_read\":";
  append_json_uint(out, bound.weights_bytes_read);
  out += ",\"kv_bytes_read\":";
  append_json_uint(out, bound.kv_bytes_read);
  out += ",\"bandwidth_gbps\":";
  append_json_double(out, bound.bandwidth_gbps);
  out += ",\"rule\":";
  append_json_string(out, bound.rule);
  out += '}';
}

void append_row_json(std::string& out, const Row& row) {
  out += '{';
  append_row_json_members(out, row);
  out += '}';
}

}  // namespace kvplan
