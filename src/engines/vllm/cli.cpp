#include "engines/vllm/cli.h"

#include <algorithm>
#include <array>
#include <ostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "kvplan/budget.h"
#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "kvplan/model_loader.h"
#include "kvplan/units.h"
#include "engines/vllm/rules.h"
#include "cli/engine_flags.h"
#include "engines/vllm/section.h"

namespace kvplan {

namespace {

constexpr std::string_view kGroup = "vLLM profile (with --runtime vllm; vLLM's spellings accepted)";

/// The settings shared by every row.
VllmSettings base_settings(const VllmFlags& f, const PlanTexts& texts) {
  VllmSettings s;
  if (!f.tensor_parallel.empty()) s.tensor_parallel = parse_positive_u32(f.tensor_parallel, "--tensor-parallel-size");
  if (!f.block_size.empty()) s.block_size = parse_positive_u32(f.block_size, "--block-size");
  if (!f.max_num_seqs.empty()) s.max_num_seqs = parse_positive_u32(f.max_num_seqs, "--max-num-seqs");
  if (!f.max_num_batched_tokens.empty())
    s.max_num_batched_tokens = parse_positive_integer(f.max_num_batched_tokens, "--max-num-batched-tokens");
  if (!f.kv_cache_memory.empty()) s.kv_cache_memory_bytes = parse_memory_size(f.kv_cache_memory, "--kv-cache-memory");
  s.version = parse_vllm_version(f.version.empty() ? "latest" : f.version, "--vllm-version");
  s.prefix_caching = f.prefix_caching;
  s.hybrid_kv_cache_manager = !f.no_hybrid_manager;
  s.utilization_millionths = parse_fraction_millionths(texts.utilization.empty() ? "0.9" : texts.utilization, "--util");
  return s;
}

/// Whether `batch` sequences of max_model_len tokens all run at once: vLLM starts, their blocks
/// fit, and the scheduler admits that many (max_num_seqs).
bool fits(const VllmResult& r, std::uint64_t batch) {
  return r.starts && batch <= r.max_num_seqs && u128{r.num_blocks} >= u128{batch} * r.blocks_per_request;
}

/// A generic row replaced by vLLM's figures, per GPU: the cache `batch` full requests need against
/// the budget, with vLLM's estimated activation, non-torch and CUDA-graph memory as the overhead.
Row vllm_row(const ModelSpec& model, const RowSettings& settings, const VllmResult& r) {
  Row row = plan_row(model, settings);
  const VllmBudget& b = r.budget;
  row.kv_bytes_per_token = r.kv_bytes_per_token;
  row.kv_bytes = checked_mul(r.request_bytes, settings.batch, "KV cache");
  row.state_bytes = 0;
  row.breakdown.clear();
  for (const VllmGroup& g : r.groups) {
    const std::uint64_t layers = r.uniform ? r.layers_per_block : g.layers;
    const std::uint64_t bytes = g.blocks_per_request * r.page_bytes * layers * settings.batch;
    if (g.kind == LayerKind::linear) row.state_bytes += bytes;
    row.breakdown.push_back({g.kind, g.window, g.layers, g.kind == LayerKind::linear ? 0 : g.blocks_per_request * g.block_size,
                             bytes});
  }
  if (b.from_kv_cache_memory) {
    row.weights_bytes = 0;
    row.weights_rule = "not counted: --kv-cache-memory gives the cache its memory directly";
    row.settings.overhead_bytes = 0;
    row.capacity_bytes = static_cast<std::uint64_t>(b.available);
  } else {
    row.weights_bytes = b.weights;
    row.weights_rule = r.tensor_parallel == 1 ? "the checkpoint, loaded whole"
                                              : fmt::format("the checkpoint / {} (tensor parallel, per GPU)", r.tensor_parallel);
    row.settings.overhead_bytes = b.activation + b.non_torch + (b.cuda_graphs_subtracted ? b.cuda_graphs : 0);
    row.capacity_bytes = b.requested;
  }
  row.total_bytes = checked_add(checked_add(row.weights_bytes, row.kv_bytes, "total"), row.settings.overhead_bytes, "total");
  row.fits = fits(r, settings.batch);
  row.headroom_bytes = static_cast<std::int64_t>(row.capacity_bytes) - static_cast<std::int64_t>(row.total_bytes);
  return row;
}

/// The largest --max-model-len at which `batch` requests fit, up to `limit`.
ContextLimit context_limit(const ModelSpec& model, const GpuSpec& gpu, VllmSettings settings, std::uint64_t batch,
                           CacheDtypes cache, std::uint64_t limit) {
  ContextLimit out;
  out.cache = cache;
  out.max_ctx = largest_holding(limit, [&](std::uint64_t len) {
    settings.max_model_len = len;
    return fits(plan_vllm(model, gpu, settings), batch);
  });
  out.reached_search_limit = out.max_ctx == limit;
  return out;
}

}  // namespace

void add_vllm_options(CLI::App& app, VllmFlags& flags) {
  const std::string group(kGroup);
  app.add_option("--tensor-parallel-size", flags.tensor_parallel, "-tp: GPUs one model is split across; figures are per GPU [default: 1]")
      ->type_name("N")
      ->group(group);
  app.add_option("--block-size", flags.block_size, "Tokens per KV block [default: 16; MLA: what the backend forces]")
      ->type_name("N")
      ->group(group);
  app.add_option("--max-num-seqs", flags.max_num_seqs, "Sequences a step may hold [default: 1024 on >= 70 GiB cards but A100, else 256]")
      ->type_name("N")
      ->group(group);
  app.add_option("--max-num-batched-tokens", flags.max_num_batched_tokens,
                 "Tokens a step may hold [default: 8192 on >= 70 GiB cards but A100, else 2048]")
      ->type_name("N")
      ->group(group);
  app.add_option("--kv-cache-memory", flags.kv_cache_memory, "KV cache memory per GPU, skipping vLLM's profiling (37GiB or bytes)")
      ->type_name("SIZE")
      ->group(group);
  app.add_option("--vllm-version", flags.version, "Whose rules: 0.10, 0.11 to 0.20, 0.21 or later [default: latest]")
      ->type_name("VERSION")
      ->group(group);
  app.add_flag("--enable-prefix-caching", flags.prefix_caching, "Prefix caching (Mamba-style layers then keep 2 blocks)")->group(group);
  app.add_flag("--disable-hybrid-kv-cache-manager", flags.no_hybrid_manager,
               "Every layer keeps every token (no sliding-window savings)")
      ->group(group);
}

void refuse_vllm_flags(const VllmFlags& flags) {
  const std::array<std::pair<bool, std::string_view>, 8> given = {{
      {!flags.tensor_parallel.empty(), "--tensor-parallel-size"},
      {!flags.block_size.empty(), "--block-size"},
      {!flags.max_num_seqs.empty(), "--max-num-seqs"},
      {!flags.max_num_batched_tokens.empty(), "--max-num-batched-tokens"},
      {!flags.kv_cache_memory.empty(), "--kv-cache-memory"},
      {!flags.version.empty(), "--vllm-version"},
      {flags.prefix_caching, "--enable-prefix-caching"},
      {flags.no_hybrid_manager, "--disable-hybrid-kv-cache-manager"},
  }};
  refuse_engine_flags(given, "vLLM", "vllm");
}

int run_vllm_plan(const PlanInputs& in, const VllmFlags& f, std::ostream& out) {
  if (in.model.empty()) throw Error("--model is required (a catalog name such as llama3.1-8b, a config.json or a spec file)");
  if (in.gpu.empty()) throw Error("--gpu is required (a catalog name such as h100, or a capacity such as 80GiB)");
  const PlanTexts& texts = in.texts;
  if (!texts.weight_dtype.empty())
    throw Error("--weight-dtype does not apply to --runtime vllm: vLLM runs the checkpoint's own weights (give the "
                "quantized checkpoint you serve)");
  if (!texts.overhead.empty())
    throw Error("--overhead does not apply to --runtime vllm: the profile estimates vLLM's own activation, non-torch and "
                "CUDA-graph memory (or give --kv-cache-memory)");
  if (!texts.mtp_layers.empty()) throw Error("--mtp-layers is not modelled by the vLLM profile yet");
  const OutputFormat format = parse_output_format(in.format.empty() ? "table" : in.format);

  const ModelSpec model = load_model(in.model);
  const GpuSpec gpu = resolve_gpu(in.gpu, builtin_gpus());
  const VllmSettings base = base_settings(f, texts);
  const std::uint64_t batch = texts.batch.empty() ? 1 : parse_positive_integer(texts.batch, "--batch");

  std::vector<std::uint64_t> contexts;
  for (const std::string& text : split_list(texts.contexts)) contexts.push_back(parse_token_count(text, "--ctx"));
  if (contexts.empty()) {
    if (model.max_context == 0) throw Error("--max-model-len (--ctx) is required: the model does not state its trained context");
    contexts.push_back(model.max_context);
  }
  std::vector<std::string> dtype_names = split_list(texts.kv_dtypes);
  if (dtype_names.empty()) dtype_names.emplace_back("auto");

  VllmReport report;
  report.base.model = &model;
  report.base.gpu = gpu;
  PlanRequest& request = report.base.request;
  request.contexts = contexts;
  request.batch = batch;
  request.utilization_millionths = base.utilization_millionths;
  request.gpu_memory_bytes = gpu.memory_bytes;
  std::vector<const Dtype*> chosen;  // nullptr: vLLM's auto
  for (const std::string& name : dtype_names) {
    const Dtype& type = parse_kv_dtype(name, *model.weight_dtype);
    chosen.push_back(name == "auto" ? nullptr : &type);
    request.caches.push_back({&type, &type});
  }

  for (const std::uint64_t ctx : contexts) {
    for (std::size_t d = 0; d < chosen.size(); ++d) {
      VllmSettings settings = base;
      settings.max_model_len = ctx;
      settings.kv_dtype = chosen[d];
      VllmResult result = plan_vllm(model, gpu, settings);
      if (batch > result.max_num_seqs)
        result.rules.push_back(fmt::format("--batch {} is more than max_num_seqs {}: vLLM runs at most {} sequences at once",
                                           batch, result.max_num_seqs, result.max_num_seqs));
      RowSettings row_settings;
      row_settings.ctx = ctx;
      row_settings.batch = batch;
      row_settings.cache = request.caches[d];
      row_settings.utilization_millionths = request.utilization_millionths;
      row_settings.gpu_memory_bytes = gpu.memory_bytes;
      report.base.plan.rows.push_back(vllm_row(model, row_settings, result));
      report.results.push_back(std::move(result));
    }
  }
  for (std::size_t i = 0; i < report.base.plan.rows.size(); ++i)
    if (!report.base.plan.rows[i].fits) report.base.plan.ways_out.push_back({i, std::nullopt});
  const VllmBudget& budget = report.results.front().budget;
  request.overhead_bytes = report.base.plan.rows.front().settings.overhead_bytes;
  if (budget.from_kv_cache_memory) {
    report.base.budget_rule = fmt::format("{} per GPU = --kv-cache-memory, all for the KV cache; fits when the requests' "
                                          "blocks fit in it",
                                          format_gib(budget.available));
    report.base.overhead_rule = "not counted: --kv-cache-memory";
  } else {
    report.base.budget_rule = fmt::format(
        "{} per GPU = {} {} x gpu_memory_utilization {}; fits when vLLM starts and the requests' blocks fit in what "
        "weights and its own (ESTIMATED) memory leave",
        format_gib(static_cast<std::int64_t>(budget.requested)), format_gib(static_cast<std::int64_t>(budget.total)),
        budget.total_is_cuda_visible ? "CUDA-visible" : "driver-reported", fmt::format("{:.2f}", request.utilization_millionths / 1e6));
    report.base.overhead_rule = budget.cuda_graphs_subtracted ? "ESTIMATED: vLLM's activation peak, non-torch and CUDA-graph memory"
                                                              : "ESTIMATED: vLLM's activation peak and non-torch memory";
  }

  const std::uint64_t limit = std::max(model.max_context, *std::max_element(contexts.begin(), contexts.end()));
  for (std::size_t d = 0; d < chosen.size(); ++d) {
    VllmSettings settings = base;
    settings.kv_dtype = chosen[d];
    report.base.plan.context_limits.push_back(context_limit(model, gpu, settings, batch, request.caches[d], limit));
  }

  out << format_vllm_report(report, format, in.color);
  return in.check && !report.base.plan.ways_out.empty() ? static_cast<int>(ExitCode::does_not_fit) : 0;
}

}  // namespace kvplan
