#include "engines/llamacpp/cli.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <ostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "kvplan/budget.h"
#include "kvplan/catalog.h"
#include "kvplan/dtype.h"
#include "kvplan/error.h"
#include "loaders/gguf_model.h"
#include "kvplan/gpu.h"
#include "engines/llamacpp/rules.h"
#include "kvplan/model_loader.h"
#include "kvplan/units.h"
#include "cli/engine_flags.h"
#include "engines/llamacpp/section.h"

namespace kvplan {

namespace {

constexpr std::string_view kGroup = "llama.cpp profile (with --runtime llama.cpp; llama.cpp's spellings accepted)";

std::uint64_t parse_count(std::string_view text, std::string_view flag) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size())
    throw Error(fmt::format("{}: '{}' is not a whole number", flag, text));
  return value;
}

/// The cache pairs of the rows: -ctk/-ctv (one pair) or --kv-dtype (K = V each), default f16.
std::vector<std::pair<const GgmlType*, const GgmlType*>> cache_pairs(const PlanInputs& in, const LlamaCppFlags& f) {
  const bool typed = !f.cache_type_k.empty() || !f.cache_type_v.empty();
  if (typed && !in.texts.kv_dtypes.empty())
    throw Error("give either -ctk/-ctv (llama.cpp's) or --kv-dtype (kvplan's list of K = V types), not both");
  if (typed) {
    const GgmlType* k = f.cache_type_k.empty() ? nullptr : &parse_llamacpp_cache_type(f.cache_type_k, "--cache-type-k");
    const GgmlType* v = f.cache_type_v.empty() ? nullptr : &parse_llamacpp_cache_type(f.cache_type_v, "--cache-type-v");
    return {{k, v}};
  }
  std::vector<std::pair<const GgmlType*, const GgmlType*>> pairs;
  for (const std::string& name : split_list(in.texts.kv_dtypes)) {
    const GgmlType* type = &parse_llamacpp_cache_type(name, "--kv-dtype");
    pairs.emplace_back(type, type);
  }
  if (pairs.empty()) pairs.emplace_back(nullptr, nullptr);
  return pairs;
}

/// The rows' breakdown, from llama.cpp's caches: what each cache puts on the GPU.
std::vector<KvBreakdownItem> breakdown_of(const LlamaCppResult& r, const ModelSpec& model) {
  LayerKind windowed = LayerKind::sliding;
  std::uint64_t window = 0;
  bool mla = false;
  for (const LayerSpec& layer : model.layers) {
    if (layer.kind == LayerKind::sliding || layer.kind == LayerKind::chunked) {
      windowed = layer.kind;
      window = layer.window;
    }
    mla = mla || layer.kind == LayerKind::mla;
  }
  std::vector<KvBreakdownItem> items;
  for (const LlamaCppKvCache& c : r.caches) {
    if (c.layers == 0) continue;
    const bool swa = c.role == "SWA KV";
    items.push_back({swa ? windowed : mla ? LayerKind::mla : LayerKind::full, swa ? window : 0, c.layers, c.cells, c.gpu_bytes});
  }
  if (r.recurrent) items.push_back({LayerKind::linear, 0, r.recurrent->layers, 0, r.recurrent->gpu_bytes});
  return items;
}

/// A generic row replaced by llama.cpp's figures: the row counts what sits on the GPU.
Row llamacpp_row(const ModelSpec& model, const RowSettings& settings, const LlamaCppResult& r) {
  Row row = plan_row(model, settings);
  row.kv_bytes = r.gpu_cache_bytes;
  row.state_bytes = r.recurrent ? r.recurrent->gpu_bytes : 0;
  row.kv_bytes_per_token = 0;
  for (const LlamaCppKvCache& c : r.caches)
    if (c.layers > 0) row.kv_bytes_per_token += (c.k_bytes + c.v_bytes) / (c.cells * c.streams);
  row.weights_bytes = r.model_gpu_bytes;
  row.weights_rule = fmt::format("llama.cpp model buffer on the GPU ({} of {} layers, {}); {:.2f} GiB in host memory",
                                 r.gpu_layers, r.n_layer_all + 1, r.model_host_exact ? "sum of GGUF tensor sizes" : "approximate",
                                 static_cast<double>(r.model_host_bytes) / GiB);
  row.breakdown = breakdown_of(r, model);
  row.total_bytes = checked_add(checked_add(row.weights_bytes, row.kv_bytes, "total memory"), settings.overhead_bytes,
                                "total memory");
  row.fits = row.total_bytes <= row.capacity_bytes;
  row.headroom_bytes = static_cast<std::int64_t>(row.capacity_bytes) - static_cast<std::int64_t>(row.total_bytes);
  return row;
}

struct Question {
  const ModelSpec* model = nullptr;
  const LlamaCppModelFacts* facts = nullptr;
  LlamaCppSettings settings;
  std::uint64_t overhead = 0;
  std::uint64_t capacity = 0;
};

bool fits_at(const Question& q, std::uint64_t n_ctx_seq) {
  LlamaCppSettings s = q.settings;
  s.n_ctx = q.settings.kv_unified ? n_ctx_seq : n_ctx_seq * q.settings.n_parallel;
  const LlamaCppResult r = plan_llamacpp(*q.model, s, *q.facts);
  return r.model_gpu_bytes + r.gpu_cache_bytes + q.overhead <= q.capacity;
}

/// The largest n_ctx_seq (a multiple of 256, as llama.cpp pads it) that fits, searched up to `limit`.
ContextLimit context_limit(const Question& q, CacheDtypes cache, std::uint64_t limit) {
  const std::uint64_t units = std::max<std::uint64_t>(limit / 256, 1);  // in units of 256 cells
  const std::optional<std::uint64_t> fitting =
      largest_holding(units, [&](std::uint64_t n) { return fits_at(q, n * 256); });
  ContextLimit out;
  out.cache = cache;
  if (fitting) out.max_ctx = *fitting * 256;
  out.reached_search_limit = fitting == units;
  return out;
}

}  // namespace

void add_llamacpp_options(CLI::App& app, LlamaCppFlags& flags) {
  const std::string group(kGroup);
  app.add_option("--ctx-size", flags.ctx_size,
                 "-c under --runtime llama.cpp: llama.cpp's n_ctx, the TOTAL for all sequences (split across -np "
                 "as llama-server does); 0 = the trained context [default: 0]")
      ->type_name("LIST")
      ->group(group);
  app.add_option("--parallel", flags.parallel, "-np: sequences (llama-server slots) [default: --batch, else 1]")
      ->type_name("N")
      ->group(group);
  app.add_option("--batch-size", flags.batch_size, "-b under --runtime llama.cpp: logical batch n_batch [default: 2048]")
      ->type_name("N")
      ->group(group);
  app.add_option("--ubatch-size", flags.ubatch_size, "-ub: physical batch n_ubatch [default: 512]")->type_name("N")->group(group);
  app.add_option("--cache-type-k", flags.cache_type_k, "-ctk: K cache type: f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 iq4_nl [default: f16]")
      ->type_name("TYPE")
      ->group(group);
  app.add_option("--cache-type-v", flags.cache_type_v, "-ctv: V cache type (quantized V needs flash attention) [default: f16]")
      ->type_name("TYPE")
      ->group(group);
  app.add_option("--flash-attn", flags.flash_attn, "-fa: on, off or auto [default: auto]")->type_name("MODE")->group(group);
  app.add_flag("--kv-unified", flags.kv_unified, "-kvu: one KV stream shared by all sequences")->group(group);
  app.add_flag("--swa-full", flags.swa_full, "Full-size SWA cache (sliding layers hold the whole context)")->group(group);
  app.add_option("--n-gpu-layers,--gpu-layers", flags.n_gpu_layers,
                 "-ngl: layers on the GPU, of n_layer + 1 (the output layer); a number, all or auto [default: all]")
      ->type_name("N")
      ->group(group);
}

void refuse_llamacpp_flags(const LlamaCppFlags& flags) {
  const std::array<std::pair<bool, std::string_view>, 10> given = {{
      {!flags.ctx_size.empty(), "--ctx-size"},
      {!flags.parallel.empty(), "--parallel"},
      {!flags.batch_size.empty(), "--batch-size"},
      {!flags.ubatch_size.empty(), "--ubatch-size"},
      {!flags.cache_type_k.empty(), "--cache-type-k"},
      {!flags.cache_type_v.empty(), "--cache-type-v"},
      {!flags.flash_attn.empty(), "--flash-attn"},
      {flags.kv_unified, "--kv-unified"},
      {flags.swa_full, "--swa-full"},
      {!flags.n_gpu_layers.empty(), "--n-gpu-layers"},
  }};
  refuse_engine_flags(given, "llama.cpp", "llama.cpp");
}

int run_llamacpp_plan(const PlanInputs& in, const LlamaCppFlags& f, std::ostream& out) {
  if (in.model.empty()) throw Error("--model is required (a GGUF file, a catalog name such as llama3.1-8b, or a spec file)");
  if (in.gpu.empty()) throw Error("--gpu is required (a catalog name such as 4090, or a capacity such as 24GiB)");
  const PlanTexts& texts = in.texts;
  if (!texts.weight_dtype.empty())
    throw Error("--weight-dtype does not apply to --runtime llama.cpp: llama.cpp runs the GGUF file's own tensors "
                "(give the GGUF of the quantization you want)");
  if (!texts.mtp_layers.empty())
    throw Error("--mtp-layers does not apply to --runtime llama.cpp: its cache follows the GGUF's own layer count");
  if (!f.ctx_size.empty() && !texts.contexts.empty())
    throw Error("give either --ctx-size/-c (llama.cpp's total for all sequences) or --ctx (kvplan's per sequence), not both");
  const OutputFormat format = parse_output_format(in.format.empty() ? "table" : in.format);

  // The model, with what llama.cpp reads beyond the spec when it is a GGUF file.
  GgufModel loaded;
  if (is_gguf_path(in.model)) loaded = load_gguf_model(in.model);
  else loaded.spec = load_model(in.model);
  const ModelSpec& model = loaded.spec;

  // Settings shared by every row.
  LlamaCppSettings base;
  std::vector<std::string> common_rules;
  const bool batch_given = !texts.batch.empty();
  const std::uint32_t batch = batch_given ? parse_positive_u32(texts.batch, "--batch") : 1;
  if (!f.parallel.empty()) {
    base.n_parallel = parse_positive_u32(f.parallel, "--parallel");
    if (batch_given && batch != base.n_parallel)
      throw Error(fmt::format("--parallel {} and --batch {} disagree: both count sequences", base.n_parallel, batch));
  } else {
    base.n_parallel = batch;
    if (!batch_given)
      common_rules.push_back("no -np: 1 sequence (llama-server without -np runs 4 slots sharing one unified cache; "
                             "price that with -np 4 --kv-unified)");
  }
  if (!f.batch_size.empty()) base.n_batch = parse_positive_u32(f.batch_size, "--batch-size");
  if (!f.ubatch_size.empty()) base.n_ubatch = parse_positive_u32(f.ubatch_size, "--ubatch-size");
  base.kv_unified = f.kv_unified;
  base.swa_full = f.swa_full;
  if (!f.flash_attn.empty()) base.flash_attn = parse_llamacpp_flash_attn(f.flash_attn);
  if (!f.n_gpu_layers.empty()) {
    if (f.n_gpu_layers == "all" || f.n_gpu_layers == "-1" || f.n_gpu_layers == "-2") {
      base.n_gpu_layers = -1;
    } else if (f.n_gpu_layers == "auto") {
      base.n_gpu_layers = -1;
      common_rules.push_back("-ngl auto: llama-server's --fit may keep layers in host memory to fit the free memory it "
                             "sees; kvplan prices all layers on the GPU");
    } else {
      base.n_gpu_layers = static_cast<std::int64_t>(parse_count(f.n_gpu_layers, "--n-gpu-layers"));
    }
  }

  // Totals of the rows: -c as given, or --ctx per sequence x sequences, or llama.cpp's default 0.
  std::vector<std::pair<std::uint64_t, std::string>> totals;
  if (!f.ctx_size.empty()) {
    for (const std::string& text : split_list(f.ctx_size)) {
      const std::uint64_t n = text == "0" ? 0 : parse_token_count(text, "--ctx-size");
      totals.emplace_back(n, fmt::format("-c {}: the total for all {} (llama-server splits it across -np)", n,
                                         base.n_parallel == 1 ? std::string("1 sequence")
                                                              : fmt::format("{} sequences", base.n_parallel)));
    }
  } else if (!texts.contexts.empty()) {
    for (const std::string& text : split_list(texts.contexts)) {
      const std::uint64_t per_seq = parse_token_count(text, "--ctx");
      const std::uint64_t n = checked_mul(per_seq, base.n_parallel, "--ctx x sequences");
      totals.emplace_back(n, fmt::format("--ctx {} per sequence x {} sequence{}: -c {}", per_seq, base.n_parallel,
                                         base.n_parallel == 1 ? "" : "s", n));
    }
  } else {
    totals.emplace_back(0, "no -c: llama.cpp's default -c 0, the trained context");
  }
  const auto pairs = cache_pairs(in, f);

  const GpuSpec gpu = resolve_gpu(in.gpu, builtin_gpus());
  LlamaCppReport report;
  report.base.model = &model;
  report.base.gpu = gpu;
  PlanRequest& request = report.base.request;
  request.batch = base.n_parallel;
  apply_budget_settings(texts, gpu, kFlagNames, request);
  const auto dtype_of = [&](const GgmlType* t) -> const Dtype& {
    return parse_kv_dtype(t ? t->name : std::string_view("f16"), *model.weight_dtype);
  };
  for (const auto& [k, v] : pairs) request.caches.push_back({&dtype_of(k), &dtype_of(v)});

  std::uint64_t largest_seq = 0;
  for (const auto& [total, why] : totals) {
    for (std::size_t p = 0; p < pairs.size(); ++p) {
      LlamaCppSettings settings = base;
      settings.n_ctx = total;
      settings.type_k = pairs[p].first;
      settings.type_v = pairs[p].second;
      LlamaCppResult result = plan_llamacpp(model, settings, loaded.llamacpp);
      std::vector<std::string> rules{why};
      rules.insert(rules.end(), common_rules.begin(), common_rules.end());
      result.rules.insert(result.rules.begin(), rules.begin(), rules.end());
      RowSettings row_settings;
      row_settings.ctx = result.n_ctx_seq;
      row_settings.batch = base.n_parallel;
      row_settings.cache = request.caches[p];
      row_settings.overhead_bytes = request.overhead_bytes;
      row_settings.utilization_millionths = request.utilization_millionths;
      row_settings.gpu_memory_bytes = request.gpu_memory_bytes;
      report.base.plan.rows.push_back(llamacpp_row(model, row_settings, result));
      if (std::find(request.contexts.begin(), request.contexts.end(), result.n_ctx_seq) == request.contexts.end())
        request.contexts.push_back(result.n_ctx_seq);
      largest_seq = std::max(largest_seq, result.n_ctx_seq);
      report.results.push_back(std::move(result));
    }
  }
  for (std::size_t i = 0; i < report.base.plan.rows.size(); ++i)
    if (!report.base.plan.rows[i].fits) report.base.plan.ways_out.push_back({i, std::nullopt});

  // The largest context per sequence that fits, searched like the generic engine does.
  const std::uint64_t seq_limit = std::numeric_limits<std::uint32_t>::max() / 2 / std::max<std::uint32_t>(base.n_parallel, 1);
  const std::uint64_t limit = std::min(std::max(model.max_context, largest_seq), seq_limit);
  for (std::size_t p = 0; p < pairs.size(); ++p) {
    Question q{&model, &loaded.llamacpp, base, request.overhead_bytes,
               scale_by_millionths(request.gpu_memory_bytes, request.utilization_millionths)};
    q.settings.type_k = pairs[p].first;
    q.settings.type_v = pairs[p].second;
    report.base.plan.context_limits.push_back(context_limit(q, request.caches[p], limit));
  }

  out << format_llamacpp_report(report, format, in.color);
  return in.check && !report.base.plan.ways_out.empty() ? static_cast<int>(ExitCode::does_not_fit) : 0;
}

}  // namespace kvplan
