#include "reports/text.h"

#include <algorithm>

#include <fmt/format.h>

#include "kvplan/units.h"
#include "model/wide_int.h"

namespace kvplan {

namespace {

/// "36 layers x (conv 24,576 bf16 + recurrent 524,288 bf16 values) = 37.69 MiB per sequence,
/// whatever the context": the fixed state, with each tensor's own dtype.
std::string describe_state(const CacheFacts& facts) {
  if (facts.state_layers == 0) return "";
  std::string tensors;
  for (const StateTensor& tensor : facts.state_tensors) {
    if (!tensors.empty()) tensors += " + ";
    tensors += fmt::format("{} {} {}", tensor.name, format_thousands(tensor.elements), tensor.dtype->name);
  }
  return fmt::format("{} layer{} x ({} values) = {} per sequence, whatever the context", facts.state_layers,
                     facts.state_layers == 1 ? "" : "s", tensors, format_bytes_compact(facts.state_bytes_per_sequence));
}

/// "21 of 78 layers keep one 128-value key per token at the cache dtype ...": a sparse-attention
/// indexer's cache (DSA's lightning indexer, MiniMax's and Qwen's) and how vLLM stores DSA's instead
/// (fp8 values and an fp32 scale per 128 values).
std::string describe_indexer(const CacheFacts& facts, std::uint32_t layers) {
  if (facts.indexer_layers == 0) return "";
  if (facts.indexer_compress_ratio != 0)
    return fmt::format("{} of {} layers keep the lightning indexer's key: {} values per {} tokens at the K cache dtype, "
                       "compressed as their CSA cache is (llama.cpp's deepseek4)",
                       facts.indexer_layers, layers, facts.indexer_head_dim, facts.indexer_compress_ratio);
  return fmt::format("{} of {} layers keep a sparse-attention indexer's key: {} values per token at the K cache dtype "
                     "(generic, as llama.cpp); vLLM stores DSA's as fp8 values + an fp32 scale, {} B per token per layer",
                     facts.indexer_layers, layers, facts.indexer_head_dim, facts.vllm_indexer_bytes_per_token);
}

/// "20 of 35 layers read the cache of earlier layers (num_kv_shared_layers) and keep none".
std::string describe_shared(const CacheFacts& facts, std::uint32_t layers) {
  if (facts.shared_layers == 0) return "";
  return fmt::format("{} of {} layers read the cache of an earlier layer of their type and keep none", facts.shared_layers,
                     layers);
}

/// The verdict cell: what CI reads, in words people read.
std::string verdict(const Row& row) {
  switch (row.verdict) {
    case Verdict::fits: return "✅ fits";
    case Verdict::does_not_fit: return "❌ no fit";
    case Verdict::engine_refuses: return "⛔ refused";
  }
  return "❌ no fit";
}

std::string gib_cell(std::uint64_t bytes) { return format_gib_number(static_cast<std::int64_t>(bytes)); }

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

TextTable rows_table(const Report& report, bool wide) {
  TextTable table;
  table.headers = {"ctx", "KV dtype", "KV/token", "KV", "weights", "overhead", "total", "budget", "headroom", "verdict"};
  table.right_aligned = {true, false, true, true, true, true, true, true, true, false};
  if (wide) {
    table.headers.emplace_back("weights█ KV▓ overhead▒");
    table.right_aligned.push_back(false);
  }
  for (const Row& row : report.plan.rows) {
    std::vector<std::string> cells = {
        format_thousands(row.ctx),
        row.cache.label(),
        format_bytes_compact(row.kv_bytes_per_token),
        gib_cell(std::max(row.kv_bytes, row.kv_pool_bytes.value_or(0))),
        gib_cell(row.weights_bytes),
        gib_cell(row.overhead_bytes),
        gib_cell(row.total_bytes),
        gib_cell(row.capacity_bytes),
        format_gib_number(row.headroom_bytes),
        verdict(row),
    };
    if (wide) cells.push_back(memory_bar(row, 20));
    table.rows.push_back(std::move(cells));
    table.row_fits.push_back(row.fits);
  }
  return table;
}

std::string describe_params(const ModelSpec& model) {
  if (model.params == 0) return model.params_source.starts_with("not priced") ? "unknown (not priced)" : "unknown (not counted)";
  const std::string approx = weights_are_estimate(model) ? "~" : "";
  std::string text = approx + format_param_count(model.params);
  if (model.active_params) text += fmt::format(" ({}{} active)", approx, format_param_count(model.active_params));
  for (const ModelPart& part : model.parts)
    text += part.params ? fmt::format(" + {} {}", format_param_count(part.params), part.name) : fmt::format(" + {} (not counted)", part.name);
  return text;
}

std::vector<std::string> header_lines(const Report& report) {
  const ModelSpec& model = *report.model;
  const Plan& plan = report.plan;
  const PlanSettings& settings = plan.settings;
  std::vector<std::string> lines;
  lines.push_back(fmt::format("Model   {} ({}): {} layers [{}], {} params", model.name, model.id, model.layer_count(),
                              describe_layers(model), describe_params(model)));
  if (const std::string state = describe_state(plan.facts); !state.empty()) lines.push_back("State   " + state);
  if (const std::string indexer = describe_indexer(plan.facts, model.layer_count()); !indexer.empty())
    lines.push_back("Indexer " + indexer);
  if (const std::string shared = describe_shared(plan.facts, model.layer_count()); !shared.empty())
    lines.push_back("Shared  " + shared);
  if (settings.mtp_layers) {
    lines.push_back(fmt::format("MTP     {} of {} next-token prediction layer{} counted as cached, each a copy of its last {} layer "
                                "(for speculative decoding)",
                                settings.mtp_layers, model.mtp_layers, model.mtp_layers == 1 ? "" : "s",
                                plan.facts.mtp_like ? to_string(plan.facts.mtp_like->kind) : "?"));
  } else if (model.mtp_layers) {
    const bool one = model.mtp_layers == 1;
    lines.push_back(fmt::format("MTP     {} next-token prediction layer{} not cached (engines skip {} unless speculative decoding "
                                "uses {}; --mtp-layers counts {})",
                                model.mtp_layers, one ? "" : "s", one ? "it" : "them", one ? "it" : "them",
                                one ? "it" : "them"));
  }
  for (std::size_t i = 0; i < report.gpus.size();) {
    // Alike cards once, with their count: "GPU     4 x NVIDIA H100 SXM: 79.65 GiB each (...)".
    const GpuSpec& gpu = report.gpus[i];
    std::size_t same = i + 1;
    while (same < report.gpus.size() && report.gpus[same].id == gpu.id) ++same;
    const std::size_t count = same - i;
    lines.push_back(fmt::format("GPU     {}{}: {}{} ({} bytes, {})", count > 1 ? fmt::format("{} x ", count) : "", gpu.name,
                                format_gib(static_cast<std::int64_t>(gpu.memory_bytes)), count > 1 ? " each" : "",
                                format_thousands(gpu.memory_bytes), gpu.memory_basis));
    i = same;
  }
  lines.push_back("Budget  " + settings.budget_rule);
  if (!plan.rows.empty()) {
    const Row& first = plan.rows.front();
    lines.push_back(fmt::format("Weights {}: {}; overhead {} ({}); batch {} sequence{}",
                                format_gib(static_cast<std::int64_t>(first.weights_bytes)), first.weights_rule,
                                format_gib(static_cast<std::int64_t>(first.overhead_bytes)), settings.overhead_rule,
                                first.batch, first.batch == 1 ? "" : "s"));
  }
  for (const std::string& note : settings.notes) lines.push_back("Note    " + note);
  std::vector<std::string> assumed;
  for (const Row& row : plan.rows)
    for (const std::string& assumption : row.assumptions)
      if (std::find(assumed.begin(), assumed.end(), assumption) == assumed.end()) assumed.push_back(assumption);
  for (const std::string& assumption : assumed) lines.push_back("Assumes " + assumption);
  lines.push_back(report.gpus.size() > 1
                      ? "Sizes in GiB (1 GiB = 2^30 bytes), per GPU (the fullest one); KV/token is K+V of one token."
                      : "Sizes in GiB (1 GiB = 2^30 bytes); KV/token is K+V of one token across all layers.");
  return lines;
}

std::vector<std::string> findings_lines(const Report& report) {
  // Each finding once, with the rows it applies to ("rows 2, 4"), in the order first seen.
  struct Seen {
    const Finding* finding;
    std::vector<std::size_t> rows;
  };
  std::vector<Seen> seen;
  const std::vector<Row>& rows = report.plan.rows;
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (const Finding& finding : rows[r].findings) {
      auto it = std::find_if(seen.begin(), seen.end(), [&](const Seen& s) {
        return s.finding->code == finding.code && s.finding->text == finding.text;
      });
      if (it == seen.end()) seen.push_back({&finding, {r}});
      else it->rows.push_back(r);
    }
  std::vector<std::string> lines;
  for (const Seen& s : seen) {
    std::string where;
    if (rows.size() > 1 && s.rows.size() < rows.size()) {
      for (const std::size_t r : s.rows) where += (where.empty() ? "" : ", ") + std::to_string(r + 1);
      where = fmt::format(" (row{} {})", s.rows.size() == 1 ? "" : "s", where);
    }
    lines.push_back(fmt::format("{} {}: {}{}", s.finding->blocking ? "Blocks " : "Warning", s.finding->code, s.finding->text,
                                where));
  }
  return lines;
}

std::vector<std::string> ways_out_lines(const Report& report) {
  std::vector<std::string> lines;
  const Plan& plan = report.plan;
  if (!plan.rows.empty() && !plan.context_limits.empty()) {  // none searched: --ctx auto rows already are
    std::string limits = fmt::format("Largest ctx that fits (batch {}):", plan.rows.front().batch);
    for (const ContextLimit& limit : plan.context_limits)
      limits += fmt::format(" {} {}{};", limit.cache.label(), limit.reached_search_limit ? "at least " : "",
                            limit.max_ctx ? format_thousands(*limit.max_ctx) : std::string("none"));
    limits.pop_back();
    lines.push_back(limits);
  }
  if (plan.ways_out.empty()) return lines;
  lines.push_back("Rows that do not fit:");
  for (const WayOut& way : plan.ways_out) {
    const Row& row = plan.rows[way.row_index];
    std::string line = fmt::format("  ctx {} with {}: ", format_thousands(row.ctx), row.cache.label());
    if (row.total_bytes > row.capacity_bytes)
      line += fmt::format("needs {} of {} ({} over)", format_gib(static_cast<std::int64_t>(row.total_bytes)),
                          format_gib(static_cast<std::int64_t>(row.capacity_bytes)), format_gib(-row.headroom_bytes));
    else
      line += fmt::format("needs {} of {}, but", format_gib(static_cast<std::int64_t>(row.total_bytes)),
                          format_gib(static_cast<std::int64_t>(row.capacity_bytes)));
    std::string blocked;
    for (const Finding& finding : row.findings)
      if (finding.blocking) blocked += (blocked.empty() ? "" : ", ") + finding.code;
    if (!blocked.empty()) line += (row.total_bytes > row.capacity_bytes ? "; blocked: " : " blocked: ") + blocked;
    if (way.with_fp8_weights) {
      const Row& fp8 = *way.with_fp8_weights;
      line += fmt::format("; with fp8 weights {} ({})", fp8.fits ? "it fits" : "still no fit",
                          format_gib(static_cast<std::int64_t>(fp8.total_bytes)));
      if (!report.gpu().fp8 && report.gpu().memory_basis != "given")
        line += fmt::format(", though {} has no FP8 tensor cores", report.gpu().name);
    }
    lines.push_back(line);
  }
  return lines;
}

}  // namespace kvplan
