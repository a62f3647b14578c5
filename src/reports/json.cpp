#include <algorithm>

#include <fmt/format.h>

#include "kvplan/units.h"
#include "kvplan/version.h"
#include "model/text_append.h"
#include "reports/fields.h"
#include "reports/section.h"

namespace kvplan {

namespace {

double utilization(std::uint32_t millionths) { return static_cast<double>(millionths) / 1e6; }

nlohmann::ordered_json model_to_json(const ModelSpec& model, const CacheFacts& facts) {
  nlohmann::ordered_json out;
  out["id"] = model.id;
  out["name"] = model.name;
  out["params"] = model.params;
  if (model.active_params) out["active_params"] = model.active_params;
  out["layers"] = model.layer_count();
  out["attention_heads"] = model.attention_heads;
  // kv_heads and head_dim of the first attention layer; the layout says whether they vary.
  const auto attention = std::find_if(model.layers.begin(), model.layers.end(),
                                      [](const LayerSpec& layer) { return layer.kv_heads != 0; });
  out["kv_heads"] = attention == model.layers.end() ? nlohmann::ordered_json() : nlohmann::ordered_json(attention->kv_heads);
  out["head_dim"] = attention == model.layers.end() ? nlohmann::ordered_json() : nlohmann::ordered_json(attention->k_head_dim);
  out["weight_dtype"] = model.weight_dtype->name;
  out["max_context"] = model.max_context;
  if (model.vocab_size) out["vocab_size"] = model.vocab_size;
  out["layer_layout"] = describe_layers(model);
  if (!model.parts.empty()) {
    nlohmann::ordered_json parts = nlohmann::ordered_json::array();
    for (const ModelPart& part : model.parts)
      parts.push_back({{"name", part.name}, {"params", part.params}, {"bytes", part.bytes}});
    out["parts"] = parts;
  }
  if (model.mtp_layers) out["mtp_layers"] = model.mtp_layers;
  // The DSA indexer: its key width, the layers that keep one, and vLLM's own row size for it.
  if (facts.indexer_layers) {
    nlohmann::ordered_json indexer;
    indexer["head_dim"] = facts.indexer_head_dim;
    indexer["layers"] = facts.indexer_layers;
    indexer["vllm_bytes_per_token_per_layer"] = facts.vllm_indexer_bytes_per_token;
    if (facts.indexer_compress_ratio) indexer["compress_ratio"] = facts.indexer_compress_ratio;
    out["indexer"] = indexer;
  }
  return out;
}

}  // namespace

nlohmann::ordered_json gpu_to_json(const GpuSpec& gpu, std::size_t count) {
  nlohmann::ordered_json out;
  out["id"] = gpu.id;
  out["name"] = gpu.name;
  out["memory_bytes"] = gpu.memory_bytes;
  out["memory_basis"] = gpu.memory_basis;
  // Only a detected card's: the catalog's sources are in `kvplan gpus --format json`.
  if (gpu.memory_basis == "detected") out["memory_source"] = gpu.memory_source;
  out["count"] = count;
  return out;
}

void append_breakdown(std::string& out, const Row& row) {
  // Appended piece by piece, without a format string: a CSV sweep writes this for every row.
  bool first = true;
  for (const KvBreakdownItem& item : row.breakdown) {
    if (!first) out += " + ";
    first = false;
    append_decimal(out, item.layers);
    out += ' ';
    if (item.compress_ratio) {
      // A compressed cache (DeepSeek-V4 under llama.cpp): one entry per compress_ratio tokens.
      out += "compressed(1/";
      append_decimal(out, item.compress_ratio);
      out += ") x ";
      append_thousands(out, item.tokens_held);
      out += " entries";
    } else {
      out += to_string(item.kind);
      if (item.window) {
        out += '(';
        append_decimal(out, item.window);
        out += ')';
      }
      if (item.mtp) out += " (MTP)";
      if (item.kind != LayerKind::linear && item.kind != LayerKind::none && item.kind != LayerKind::shared) {
        out += " x ";
        append_thousands(out, item.tokens_held);
        out += item.kind == LayerKind::cross ? " image tokens" : " tokens";
      }
    }
    if (item.indexer_layers) {
      out += " (indexer on ";
      append_decimal(out, item.indexer_layers);
      out += ')';
    }
  }
}

std::string describe_breakdown(const Row& row) {
  std::string text;
  append_breakdown(text, row);
  return text;
}

nlohmann::ordered_json json_or_null(const std::optional<std::uint64_t>& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json();
}

nlohmann::ordered_json json_or_null(const std::optional<double>& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json();
}

nlohmann::ordered_json row_to_json(const Row& row) {
  nlohmann::ordered_json out;
  out["ctx"] = row.ctx;
  out["batch"] = row.batch;
  out["kv_dtype"] = row.cache.label();
  out["k_dtype"] = row.cache.k->name;
  out["v_dtype"] = row.cache.v->name;
  out["weight_dtype"] = row.weight_dtype->name;
  out["kv_bytes_per_token"] = row.kv_bytes_per_token;
  out["kv_bytes"] = row.kv_bytes;
  out["state_bytes"] = row.state_bytes;
  out["weights_bytes"] = row.weights_bytes;
  out["weights_rule"] = row.weights_rule;
  out["overhead_bytes"] = row.overhead_bytes;
  out["total_bytes"] = row.total_bytes;
  out["capacity_bytes"] = row.capacity_bytes;
  out["headroom_bytes"] = row.headroom_bytes;
  out["fits"] = row.fits;
  out["verdict"] = to_string(row.verdict);
  out["kv_pool_bytes"] = json_or_null(row.kv_pool_bytes);
  out["available_kv_bytes"] = json_or_null(row.engine.available_kv_bytes);
  out["kv_cache_tokens"] = json_or_null(row.engine.kv_cache_tokens);
  out["max_concurrency"] = json_or_null(row.engine.max_concurrency);
  out["starts"] = row.engine.starts;
  out["tp"] = row.tp;
  out["pp"] = row.pp;
  nlohmann::ordered_json shares = nlohmann::ordered_json::array();
  for (const GpuShare& share : row.per_gpu)
    shares.push_back({{"rank", share.rank},
                      {"stage", share.stage},
                      {"gpu", share.gpu},
                      {"weights_bytes", share.weights_bytes},
                      {"kv_bytes", share.kv_bytes},
                      {"other_bytes", share.other_bytes},
                      {"total_bytes", share.total_bytes},
                      {"capacity_bytes", share.capacity_bytes},
                      {"headroom_bytes", share.headroom_bytes},
                      {"fits", share.fits}});
  out["per_gpu"] = shares;
  out["assumptions"] = row.assumptions;
  nlohmann::ordered_json warnings = nlohmann::ordered_json::array();
  for (const Finding& finding : row.findings)
    warnings.push_back({{"code", finding.code}, {"text", finding.text}, {"blocking", finding.blocking}});
  out["warnings"] = warnings;
  nlohmann::ordered_json breakdown = nlohmann::ordered_json::array();
  for (const KvBreakdownItem& item : row.breakdown) {
    nlohmann::ordered_json entry;
    entry["kind"] = item.compress_ratio ? "compressed" : to_string(item.kind);
    if (item.window) entry["window"] = item.window;
    if (item.compress_ratio) entry["compress_ratio"] = item.compress_ratio;
    entry["layers"] = item.layers;
    entry["tokens_held"] = item.tokens_held;
    entry["bytes"] = item.bytes;
    if (item.indexer_layers) {
      entry["indexer_layers"] = item.indexer_layers;
      entry["indexer_bytes"] = item.indexer_bytes;
    }
    if (item.mtp) entry["mtp"] = true;
    breakdown.push_back(entry);
  }
  out["kv_breakdown"] = breakdown;
  if (row.decode_bound) {
    const DecodeBound& bound = *row.decode_bound;
    out["decode_bound"] = {{"tokens_per_s_per_sequence", bound.tokens_per_s_per_sequence},
                           {"tokens_per_s_batch", bound.tokens_per_s_batch},
                           {"weights_bytes_read", bound.weights_bytes_read},
                           {"kv_bytes_read", bound.kv_bytes_read},
                           {"bandwidth_gbps", bound.bandwidth_gbps},
                           {"rule", bound.rule}};
  } else {
    out["decode_bound"] = nullptr;
  }
  if (row.host)
    out["system_ram"] = {{"host_bytes", row.host->host_bytes},
                         {"ram_bytes", row.host->ram_bytes},
                         {"read_bytes", row.host->read_bytes},
                         {"fits", row.host->host_bytes <= row.host->ram_bytes}};
  else
    out["system_ram"] = nullptr;
  return out;
}

nlohmann::ordered_json report_to_json(const Report& report) {
  const Plan& plan = report.plan;
  nlohmann::ordered_json out;
  out["schema_version"] = kJsonSchemaVersion;
  out["kvplan_version"] = kVersion;
  out["model"] = model_to_json(*report.model, plan.facts);
  out["gpu"] = gpu_to_json(report.gpu(), report.gpus.size());
  if (report.gpus.size() > 1) {
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    for (const GpuSpec& gpu : report.gpus) all.push_back(gpu_to_json(gpu, 1));
    out["gpus"] = all;
  }
  nlohmann::ordered_json settings;
  settings["overhead_bytes"] = plan.settings.overhead_bytes;
  settings["utilization"] = utilization(plan.settings.utilization_millionths);
  settings["batch"] = plan.settings.batch;
  settings["runtime"] = plan.runtime;
  settings["mtp_layers"] = plan.settings.mtp_layers;
  settings["notes"] = plan.settings.notes;
  out["settings"] = settings;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const Row& row : plan.rows) rows.push_back(row_to_json(row));
  out["rows"] = rows;
  nlohmann::ordered_json limits = nlohmann::ordered_json::array();
  for (const ContextLimit& limit : plan.context_limits)
    limits.push_back({{"kv_dtype", limit.cache.label()},
                      {"max_ctx", json_or_null(limit.max_ctx)},
                      {"search_limit_reached", limit.reached_search_limit}});
  out["max_ctx_by_kv_dtype"] = limits;
  nlohmann::ordered_json ways = nlohmann::ordered_json::array();
  for (const WayOut& way : plan.ways_out) {
    nlohmann::ordered_json entry;
    entry["row"] = way.row_index;
    if (way.with_fp8_weights)
      entry["fp8_weights"] = {{"weights_bytes", way.with_fp8_weights->weights_bytes},
                              {"total_bytes", way.with_fp8_weights->total_bytes},
                              {"fits", way.with_fp8_weights->fits}};
    ways.push_back(entry);
  }
  out["ways_out"] = ways;
  nlohmann::ordered_json notes = nlohmann::ordered_json::array();
  for (const QualityNote& note : plan.quality_notes)
    notes.push_back({{"code", note.code}, {"text", note.text}, {"rows", note.rows}});
  out["notes"] = notes;
  // The engine's own figures, under a key of its own.
  if (const std::optional<EngineSection> section = engine_section(plan)) {
    nlohmann::ordered_json engine_rows = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < section->rows.size(); ++i) {
      nlohmann::ordered_json row;
      row["row"] = i;
      for (const auto& [key, value] : section->rows[i].items()) row[key] = value;
      engine_rows.push_back(row);
    }
    out[section->json_key] = {{"engine", section->engine}, {"rows", engine_rows}};
  }
  return out;
}

std::string format_json(const Report& report) { return report_to_json(report).dump(2) + "\n"; }

}  // namespace kvplan
