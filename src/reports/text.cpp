#include "reports/text.h"

#include <algorithm>

#include <fmt/format.h>

#include "kvplan/units.h"

namespace kvplan {

namespace {

std::string verdict(bool fits) { return fits ? "✅ fits" : "❌ no fit"; }

/// "36 linear layers x (conv 24,576 bf16 + recurrent 524,288 bf16 values) = 37.69 MiB per sequence,
/// whatever the context": the fixed state, with each tensor's own dtype.
std::string describe_state(const ModelSpec& model) {
  const LayerSpec* with_state = nullptr;
  std::uint32_t layers = 0;
  std::uint64_t bytes = 0;
  for (const LayerSpec& layer : model.layers) {
    if (layer.state.empty()) continue;
    with_state = with_state ? with_state : &layer;
    ++layers;
    for (const StateTensor& tensor : layer.state)
      bytes += (tensor.elements + tensor.dtype->block_elements - 1) / tensor.dtype->block_elements * tensor.dtype->block_bytes;
  }
  if (!with_state) return "";
  std::string tensors;
  for (const StateTensor& tensor : with_state->state) {
    if (!tensors.empty()) tensors += " + ";
    tensors += fmt::format("{} {} {}", tensor.name, format_thousands(tensor.elements), tensor.dtype->name);
  }
  return fmt::format("{} layer{} x ({} values) = {} per sequence, whatever the context", layers, layers == 1 ? "" : "s",
                     tensors, format_bytes_compact(bytes));
}

/// "21 of 78 layers keep one 128-value key per token at the cache dtype ...": the DSA indexer
/// cache and how vLLM stores it instead (fp8 values and an fp32 scale per 128 values).
std::string describe_indexer(const ModelSpec& model) {
  std::uint32_t layers = 0;
  std::uint32_t width = 0;
  for (const LayerSpec& layer : model.layers)
    if (layer.index_head_dim) {
      ++layers;
      width = layer.index_head_dim;
    }
  if (layers == 0) return "";
  const std::uint32_t vllm = width + (width + 127) / 128 * 4;
  return fmt::format("DSA lightning indexer on {} of {} layers: one {}-value key per token at the K cache dtype "
                     "(generic, as llama.cpp); vLLM stores fp8 values + an fp32 scale instead, {} B per token per layer",
                     layers, model.layer_count(), width, vllm);
}

/// "20 of 35 layers read the cache of earlier layers (num_kv_shared_layers) and keep none".
std::string describe_shared(const ModelSpec& model) {
  const auto shared = std::count_if(model.layers.begin(), model.layers.end(),
                                    [](const LayerSpec& layer) { return layer.kind == LayerKind::shared; });
  if (shared == 0) return "";
  return fmt::format("{} of {} layers read the cache of an earlier layer of their type and keep none", shared,
                     model.layer_count());
}

std::string utilization_percent(std::uint32_t millionths) {
  if (millionths % 10'000 == 0) return fmt::format("{}%", millionths / 10'000);
  return fmt::format("{}%", static_cast<double>(millionths) / 10'000.0);
}

}  // namespace

std::size_t display_width(const std::string& text) {
  std::size_t width = 0;
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    std::size_t length = 1;
    char32_t code = byte;
    if (byte >= 0xF0) length = 4, code = byte & 0x07;
    else if (byte >= 0xE0) length = 3, code = byte & 0x0F;
    else if (byte >= 0xC0) length = 2, code = byte & 0x1F;
    for (std::size_t j = 1; j < length && i + j < text.size(); ++j)
      code = (code << 6) | (static_cast<unsigned char>(text[i + j]) & 0x3F);
    // The two verdict emoji are drawn two columns wide; the block characters of the bar one.
    width += (code == U'\u2705' || code == U'\u274C' || code >= 0x1F000) ? 2 : 1;
    i += length;
  }
  return width;
}

std::string memory_bar(const Row& row, std::size_t width) {
  const std::uint64_t budget = row.capacity_bytes == 0 ? 1 : row.capacity_bytes;
  const auto cells_for = [&](std::uint64_t bytes) {
    return static_cast<std::size_t>((static_cast<u128>(bytes) * width + budget / 2) / budget);
  };
  const std::size_t weights = cells_for(row.weights_bytes);
  const std::size_t through_kv = cells_for(row.weights_bytes + row.kv_bytes);
  const std::size_t through_overhead = cells_for(row.total_bytes);
  std::string bar = "[";
  for (std::size_t cell = 0; cell < width; ++cell) {
    if (cell < weights) bar += "█";
    else if (cell < through_kv) bar += "▓";
    else if (cell < through_overhead) bar += "▒";
    else bar += "·";
  }
  bar += row.total_bytes > row.capacity_bytes ? "]▶" : "] ";
  return bar;
}

TextTable rows_table(const Report& report) {
  TextTable table;
  table.headers = {"ctx", "KV dtype", "KV/token", "KV", "weights", "overhead", "total", "budget", "headroom",
                   "verdict", "weights█ KV▓ overhead▒"};
  table.right_aligned = {true, false, true, true, true, true, true, true, true, false, false};
  for (const Row& row : report.plan.rows) {
    table.rows.push_back({
        format_thousands(row.settings.ctx),
        row.settings.cache.label(),
        format_bytes_compact(row.kv_bytes_per_token),
        format_gib_number(static_cast<std::int64_t>(row.kv_bytes)),
        format_gib_number(static_cast<std::int64_t>(row.weights_bytes)),
        format_gib_number(static_cast<std::int64_t>(row.settings.overhead_bytes)),
        format_gib_number(static_cast<std::int64_t>(row.total_bytes)),
        format_gib_number(static_cast<std::int64_t>(row.capacity_bytes)),
        format_gib_number(row.headroom_bytes),
        verdict(row.fits),
        memory_bar(row, 20),
    });
    table.row_fits.push_back(row.fits);
  }
  return table;
}

std::string describe_params(const ModelSpec& model) {
  const std::string approx = weights_are_estimate(model) ? "~" : "";
  std::string text = approx + format_param_count(model.params);
  if (model.active_params) text += fmt::format(" ({}{} active)", approx, format_param_count(model.active_params));
  return text;
}

std::vector<std::string> header_lines(const Report& report) {
  const ModelSpec& model = *report.model;
  const PlanRequest& request = report.request;
  std::vector<std::string> lines;
  lines.push_back(fmt::format("Model   {} ({}): {} layers [{}], {} params", model.name, model.id, model.layer_count(),
                              describe_layers(model), describe_params(model)));
  if (const std::string state = describe_state(model); !state.empty()) lines.push_back("State   " + state);
  if (const std::string indexer = describe_indexer(model); !indexer.empty()) lines.push_back("Indexer " + indexer);
  if (const std::string shared = describe_shared(model); !shared.empty()) lines.push_back("Shared  " + shared);
  if (request.mtp_layers) {
    const LayerSpec* like = mtp_cache_layer(model);
    lines.push_back(fmt::format("MTP     {} of {} next-token prediction layer{} counted as cached, each a copy of its last {} layer "
                                "(--mtp-layers, for speculative decoding)",
                                request.mtp_layers, model.mtp_layers, model.mtp_layers == 1 ? "" : "s",
                                like ? to_string(like->kind) : "?"));
  } else if (model.mtp_layers) {
    lines.push_back(fmt::format("MTP     {} next-token prediction layer{} not cached (engines skip {} unless speculative decoding "
                                "uses {}; --mtp-layers counts {})",
                                model.mtp_layers, model.mtp_layers == 1 ? "" : "s", model.mtp_layers == 1 ? "it" : "them",
                                model.mtp_layers == 1 ? "it" : "them", model.mtp_layers == 1 ? "it" : "them"));
  }
  lines.push_back(fmt::format("GPU     {}: {} ({} bytes, {})", report.gpu.name, format_gib(static_cast<std::int64_t>(report.gpu.memory_bytes)),
                              format_thousands(report.gpu.memory_bytes), report.gpu.memory_basis));
  const std::uint64_t budget = scale_by_millionths(report.gpu.memory_bytes, request.utilization_millionths);
  lines.push_back(report.budget_rule.empty()
                      ? fmt::format("Budget  {} = memory x utilization {}; fits when weights + KV + overhead <= budget",
                                    format_gib(static_cast<std::int64_t>(budget)),
                                    utilization_percent(request.utilization_millionths))
                      : "Budget  " + report.budget_rule);
  if (!report.plan.rows.empty()) {
    const Row& first = report.plan.rows.front();
    lines.push_back(fmt::format("Weights {}: {}; overhead {} ({}); batch {} sequence{}",
                                format_gib(static_cast<std::int64_t>(first.weights_bytes)), first.weights_rule,
                                format_gib(static_cast<std::int64_t>(first.settings.overhead_bytes)), report.overhead_rule,
                                request.batch,
                                request.batch == 1 ? "" : "s"));
  }
  lines.push_back("Sizes in GiB (1 GiB = 2^30 bytes); KV/token is K+V of one token across all layers.");
  return lines;
}

std::vector<std::string> ways_out_lines(const Report& report) {
  std::vector<std::string> lines;
  const ModelSpec& model = *report.model;
  for (const std::uint64_t ctx : report.request.contexts)
    if (model.max_context && ctx > model.max_context)
      lines.push_back(fmt::format("Note: ctx {} is beyond the model's trained context of {} tokens.",
                                  format_thousands(ctx), format_thousands(model.max_context)));
  std::string limits = fmt::format("Largest ctx that fits (batch {}):", report.request.batch);
  for (const ContextLimit& limit : report.plan.context_limits)
    limits += fmt::format(" {} {}{};", limit.cache.label(), limit.reached_search_limit ? "at least " : "",
                          limit.max_ctx ? format_thousands(*limit.max_ctx) : std::string("none"));
  limits.pop_back();
  lines.push_back(limits);
  if (report.plan.ways_out.empty()) return lines;
  lines.push_back("Rows that do not fit:");
  for (const WayOut& way : report.plan.ways_out) {
    const Row& row = report.plan.rows[way.row_index];
    std::string line = fmt::format("  ctx {} with {}: needs {} of {} ({} over)", format_thousands(row.settings.ctx),
                                   row.settings.cache.label(), format_gib(static_cast<std::int64_t>(row.total_bytes)),
                                   format_gib(static_cast<std::int64_t>(row.capacity_bytes)), format_gib(-row.headroom_bytes));
    if (way.with_fp8_weights) {
      const Row& fp8 = *way.with_fp8_weights;
      line += fmt::format("; with fp8 weights {} ({})", fp8.fits ? "it fits" : "still no fit",
                          format_gib(static_cast<std::int64_t>(fp8.total_bytes)));
      if (!report.gpu.fp8 && report.gpu.memory_basis != "given") line += fmt::format(", though {} has no FP8 tensor cores", report.gpu.name);
    }
    lines.push_back(line);
  }
  return lines;
}

}  // namespace kvplan
