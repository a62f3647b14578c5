// The vLLM profile as an engine: vLLM's flags, and each row priced by its rules (rules.h), per GPU.
// kvplan's --ctx, --kv-dtype and --util are vLLM's --max-model-len, --kv-cache-dtype and
// --gpu-memory-utilization.

#include "engines/vllm/engine.h"

#include <array>
#include <charconv>
#include <limits>

#include <fmt/format.h>

#include "engines/core/release.h"
#include "engines/core/serving.h"
#include "engines/vllm/rules.h"
#include "engines/vllm/section.h"
#include "model/checked.h"
#include "kvplan/error.h"
#include "kvplan/units.h"

namespace kvplan {

namespace {

constexpr std::array<OptionSpec, 16> kOptions = {{
    {"tensor-parallel-size", "N", "GPUs one model is split across; figures are per GPU [default: 1]", "-tp"},
    {"decode-context-parallel-size", "N",
     "Of the tp ranks, how many split each request's tokens (decode context parallelism; MLA, or GQA when tp exceeds "
     "the KV heads) [default: 1]",
     "-dcp"},
    {"pipeline-parallel-size", "N", "Pipeline stages, each a share of the layers on its own tp GPUs [default: 1]", "-pp"},
    {"pp-layer-partition", "LIST",
     "Decoder layers per pipeline stage (10,22), as VLLM_PP_LAYER_PARTITION [default: even, the remainder before the last]",
     "", "", "VLLM_PP_LAYER_PARTITION"},
    {"dtype", "DTYPE", "Model dtype: auto half float16 bfloat16 float float32 [default: auto: float32 checkpoints downcast]"},
    {"block-size", "N", "Tokens per KV block [default: 16; MLA: what the backend forces]"},
    {"max-num-seqs", "N", "Sequences a step may hold [default: 1024 on >= 70 GiB cards but A100, else 256]"},
    {"max-num-batched-tokens", "N", "Tokens a step may hold [default: 8192 on >= 70 GiB cards but A100, else 2048]"},
    {"kv-cache-memory", "SIZE", "KV cache memory per GPU, skipping vLLM's profiling (37GiB, 40GB)"},
    {"vllm-version", "VERSION", "Whose rules: 0.10, 0.11 to 0.20, 0.21 or later [default: latest]"},
    {"enable-prefix-caching", "", "Prefix caching (Mamba-style layers then keep 2 blocks)"},
    {"disable-hybrid-kv-cache-manager", "", "Every layer keeps every token (no sliding-window savings)"},
    {"enforce-eager", "", "No CUDA graphs: from 0.21 their estimate is no longer taken from the KV budget"},
    {"speculative-config", "JSON",
     "Speculative decoding, as vLLM takes it: '{\"method\": \"mtp\", \"num_speculative_tokens\": 1}' (the checkpoint's MTP "
     "layers join the cache; ngram, suffix: no draft)"},
    {"allow-long-max-model-len", "", "Let --max-model-len exceed the trained context, as VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 does",
     "", "", "VLLM_ALLOW_LONG_MAX_MODEL_LEN"},
    {"use-flashinfer-sampler", "0|1",
     "1: the log says \"Using FlashInfer for top-p & top-k sampling.\" (its warm-up is smaller than the sort's), as "
     "VLLM_USE_FLASHINFER_SAMPLER [default: the release's: 1 from 0.21; before 0.17 the sort]",
     "", "", "VLLM_USE_FLASHINFER_SAMPLER"},
}};

struct VllmDetail final : EngineDetail {
  VllmResult result;
};

/// "10,22": layers per stage, each a whole number (0 allowed, as vLLM's int() takes it).
std::vector<std::uint32_t> parse_layer_partition(std::string_view text, std::string_view flag) {
  std::vector<std::uint32_t> out;
  while (true) {
    const std::size_t comma = text.find(',');
    const std::string_view part = text.substr(0, comma);
    std::uint32_t value = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size() || out.size() >= kMaxLayers)
      throw Error(fmt::format("{} {}: layers per stage, comma-separated (10,22)", flag, text));
    out.push_back(value);
    if (comma == std::string_view::npos) return out;
    text.remove_prefix(comma + 1);
  }
}

/// VLLM_USE_FLASHINFER_SAMPLER as vLLM reads it, bool(int(value)): 0 is off, any other integer on.
bool parse_flashinfer_sampler(std::string_view text, std::string_view flag) {
  long long value = 0;
  const std::string_view digits = !text.empty() && (text.front() == '-' || text.front() == '+') ? text.substr(1) : text;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size())
    throw Error(fmt::format("{} {}: 0 or 1, as vLLM reads VLLM_USE_FLASHINFER_SAMPLER", flag, text));
  return value != 0;
}

bool truthy(std::string_view value) { return value.empty() || value == "1" || value == "true" || value == "True"; }

/// The minor release --vllm-version names (vllm_minor_version); "latest", above every release, when
/// none is given.
unsigned requested_minor(const PlanRequest& request) {
  const EngineOption* version = find_option(request, "vllm-version");
  return version ? vllm_minor_version(version->value, version->shown_as) : std::numeric_limits<unsigned>::max();
}

/// The settings shared by every row, from vLLM's flags.
VllmSettings base_settings(const PlanRequest& request) {
  VllmSettings s;
  const auto text = [&](std::string_view name) -> const EngineOption* { return find_option(request, name); };
  if (const EngineOption* o = text("tensor-parallel-size")) s.tensor_parallel = parse_positive_u32(o->value, o->shown_as);
  if (const EngineOption* o = text("block-size")) s.block_size = parse_positive_u32(o->value, o->shown_as);
  if (const EngineOption* o = text("max-num-seqs")) s.max_num_seqs = parse_positive_u32(o->value, o->shown_as);
  if (const EngineOption* o = text("max-num-batched-tokens"))
    s.max_num_batched_tokens = parse_positive_integer(o->value, o->shown_as);
  if (const EngineOption* o = text("kv-cache-memory")) s.kv_cache_memory_bytes = parse_memory_size(o->value, o->shown_as);
  if (const EngineOption* o = text("pipeline-parallel-size")) s.pipeline_parallel = parse_positive_u32(o->value, o->shown_as);
  if (const EngineOption* o = text("decode-context-parallel-size"))
    s.decode_context_parallel = parse_positive_u32(o->value, o->shown_as);
  if (const EngineOption* o = text("pp-layer-partition")) s.layer_partition = parse_layer_partition(o->value, o->shown_as);
  if (const EngineOption* o = text("dtype")) s.dtype = parse_vllm_dtype(o->value, o->shown_as);
  const EngineOption* version = text("vllm-version");
  s.version = parse_vllm_version(version ? std::string_view(version->value) : "latest",
                                 version ? std::string_view(version->shown_as) : "vllm-version");
  // The minor release decides the rules the version buckets do not tell apart ("latest" is above
  // every release). 0.14 and 0.15 (PR #29431 to PR #33698) checked the whole model against each
  // stage's memory; from 0.14 the startup check counts a hybrid's padding layers.
  const unsigned minor = requested_minor(request);
  const EngineOption* flashinfer = text("use-flashinfer-sampler");
  s.sampler = vllm_sampler(minor, flashinfer ? std::optional<bool>(parse_flashinfer_sampler(flashinfer->value, flashinfer->shown_as))
                                             : std::nullopt);
  s.pp_whole_model_check = minor == kVllmAutoFitMinor || minor == kVllmAutoFitMinor + 1;
  s.check_counts_padding = minor >= kVllmAutoFitMinor;
  s.dsa_auto_is_fp8 = minor == 11;
  s.prefix_caching = text("enable-prefix-caching") != nullptr;
  s.hybrid_kv_cache_manager = text("disable-hybrid-kv-cache-manager") == nullptr;
  s.enforce_eager = text("enforce-eager") != nullptr;
  s.utilization_millionths = request.utilization_millionths.value_or(900'000);
  return s;
}

class VllmProfile final : public Profile {
 public:
  VllmProfile(const ModelSpec& model, const std::vector<GpuSpec>& gpus, const PlanRequest& request)
      : model_(model), gpu_(gpus.front()), base_(base_settings(request)) {
    const SettingNames& names = request.names;
    // Several GPUs: tp x pp of them, tensor parallelism across all of a stage's unless -tp says
    // otherwise (resolve_deployment). Every rank of a stage is alike, so its smallest card bounds it.
    const EngineOption* tp = find_option(request, "tensor-parallel-size");
    const EngineOption* pp = find_option(request, "pipeline-parallel-size");
    if (std::uint64_t{base_.tensor_parallel} * base_.pipeline_parallel > 4096)
      throw Error("-tp x -pp: more than 4096 GPUs");
    if (!tp && (gpus.size() > 1 || pp)) {
      const RankLayout layout =
          resolve_deployment(gpus, std::nullopt, "-tp", base_.pipeline_parallel, pp ? pp->shown_as : "-pp", "vLLM");
      base_.tensor_parallel = layout.tp;
    } else if (tp && gpus.size() > 1) {
      resolve_deployment(gpus, base_.tensor_parallel, tp->shown_as, base_.pipeline_parallel, pp ? pp->shown_as : "-pp", "vLLM");
    }
    for (std::uint32_t stage = 0; stage < base_.pipeline_parallel && (gpus.size() > 1 || stage == 0); ++stage) {
      const std::size_t first = gpus.size() > 1 ? std::size_t{stage} * base_.tensor_parallel : 0;
      const std::vector<GpuSpec> ranks(gpus.begin() + static_cast<std::ptrdiff_t>(first),
                                       gpus.begin() + static_cast<std::ptrdiff_t>(first + (gpus.size() > 1 ? base_.tensor_parallel : 1)));
      stage_cards_.push_back(smallest_card(ranks));
    }
    gpu_ = smallest_card(stage_cards_);
    gpu_count_ = std::max<std::uint32_t>(base_.tensor_parallel * base_.pipeline_parallel, static_cast<std::uint32_t>(gpus.size()));
    if (request.weight_dtype)
      throw Error(fmt::format("{} does not apply to the vLLM profile: vLLM runs the checkpoint's own weights (give the "
                              "quantized checkpoint you serve)",
                              names.weight_dtype));
    if (request.overhead_bytes)
      throw Error(fmt::format("{} does not apply to the vLLM profile: it estimates vLLM's own activation, non-torch and "
                              "CUDA-graph memory (or give --kv-cache-memory)",
                              names.overhead));
    // vLLM builds every MTP layer the checkpoint declares once speculative decoding uses them:
    // --speculative-config says so in vLLM's words.
    if (!request.mtp_layers.empty())
      throw Error(fmt::format("{} does not apply to the vLLM profile: give --speculative-config '{{\"method\": \"mtp\", "
                              "\"num_speculative_tokens\": 1}}' (vLLM's draft builds all of the checkpoint's MTP layers)",
                              names.mtp_layers));
    if (const EngineOption* o = find_option(request, "speculative-config"))
      base_.speculative =
          parse_vllm_speculative_config(o->value, o->shown_as, model, base_.tensor_parallel, request.draft_model);
    // vLLM creates an mxfp4 checkpoint's experts padded to its MoE backend's tiles (mxfp4_experts.h),
    // derived where kvplan knows the backend's layout.
    const EngineOption* version = find_option(request, "vllm-version");
    const unsigned minor = requested_minor(request);
    const std::string model_name = model.id.empty() ? model.name : model.id;
    // Each rank picks its own MoE backend: every card must be one whose layout is derived.
    std::string why;
    if (vllm_unmodelled(model, gpus, base_.tensor_parallel, &why) == VllmUnmodelled::mxfp4_layout)
      throw Error(fmt::format("the vLLM profile does not model how vLLM lays out {}'s mxfp4 experts as it loads them "
                              "here ({}): give {} with vLLM's 'Model loading took' figure",
                              model_name, why, names.weights),
                  ExitCode::unsupported_architecture);
    if (request.contexts_are_totals) throw Error("a total context for all sequences is llama.cpp's -c, not vLLM's");
    if (request.context_auto_fit) {
      if (minor < kVllmAutoFitMinor)
        throw Error(fmt::format("{} auto needs vLLM 0.{} or later (max_model_len -1 arrived in PR #29431); {} {} predates it",
                                names.ctx, kVllmAutoFitMinor, version->shown_as, version->value));
      auto_fit_ = true;
    }
    if (const EngineOption* o = find_option(request, "allow-long-max-model-len")) allow_long_ = truthy(o->value);
    batch_ = request.batch;

    // One row's result gives the budget every row shares, and refuses a model vLLM cannot run.
    VllmSettings probe = base_;
    probe.max_model_len = model.max_context ? model.max_context : 1;
    const VllmResult first = plan_vllm(model, stage_cards_, probe);
    const VllmBudget& b = first.budget;
    base_.rotary = first.rotary;  // the same tables for every row: sized once
    settings_.batch = request.batch;
    settings_.utilization_millionths = base_.utilization_millionths;
    // The draft's MTP layers are cached: the header and the JSON settings say how many.
    settings_.mtp_layers = first.speculative && first.speculative->method == "mtp" ? first.draft_layers : 0;
    settings_.overhead_bytes =
        (Checked(b.activation, "vLLM memory") + b.non_torch + (b.cuda_graphs_subtracted ? b.cuda_graphs : 0)).value();
    if (b.from_kv_cache_memory) {
      settings_.budget_rule = fmt::format(
          "{} per GPU ({}); --kv-cache-memory gives the cache {} whatever the rows need, so fits when weights + that "
          "pool + vLLM's own memory <= the card and the requests' blocks fit in the pool",
          format_gib(static_cast<std::int64_t>(b.total)), b.total_is_cuda_visible ? "CUDA-visible" : "driver-reported",
          format_gib(b.available));
    } else {
      settings_.budget_rule = fmt::format(
          "{} per GPU = {} {} x gpu_memory_utilization {}; fits when vLLM starts and the requests' blocks fit in what "
          "weights and its own (ESTIMATED) memory leave",
          format_gib(static_cast<std::int64_t>(b.requested)), format_gib(static_cast<std::int64_t>(b.total)),
          b.total_is_cuda_visible ? "CUDA-visible" : "driver-reported",
          fmt::format("{:.2f}", static_cast<double>(base_.utilization_millionths) / 1e6));
    }
    settings_.overhead_rule = b.cuda_graphs_subtracted ? "ESTIMATED: vLLM's activation peak, non-torch and CUDA-graph memory"
                                                       : "ESTIMATED: vLLM's activation peak and non-torch memory";
  }

  std::optional<CacheRefusal> cache_refusal(const CacheDtypes& cache) const override {
    // What price() throws for a dtype vLLM has no cache of, when nothing throws before it: the
    // constructor's plan passed every check that does not depend on the row, and only a model
    // without a trained context can still stop first (at --max-model-len 0). Thrown and caught, it
    // was a seventh of kvplan fit's work under vLLM (4 of its 7 cache candidates for each model).
    if (!cache.k || cache.k != cache.v || !model_.max_context) return std::nullopt;
    if (std::optional<std::string> error = vllm_cache_dtype_error(*cache.k)) return CacheRefusal{std::move(*error), false};
    return std::nullopt;
  }

  Row price(const RowQuery& query) const override {
    if (query.cache.k != query.cache.v)
      throw Error("vLLM stores K and V at one dtype (--kv-cache-dtype): give one dtype per row");
    VllmSettings settings = base_;
    settings.max_model_len = query.ctx;
    settings.auto_fit_max_model_len = auto_fit_;  // then query.ctx is the derived maximum it stops at
    settings.kv_dtype = query.cache.k;
    auto detail = std::make_shared<VllmDetail>();
    VllmResult& r = detail->result;
    r = plan_vllm(model_, stage_cards_, settings);
    const VllmBudget& b = r.budget;

    Row row;
    row.ctx = r.max_model_len;
    row.batch = query.batch;
    // The cache's "auto" is the model dtype --dtype resolved to (bfloat16 for a float32 checkpoint).
    const Dtype& dtype = query.cache.k ? *query.cache.k : parse_kv_dtype(r.kv_dtype, *model_.weight_dtype);
    row.cache = {&dtype, &dtype};
    const std::string_view own = model_.weight_dtype->name;
    row.weight_dtype = own == "fp32" || own == "fp16" || own == "bf16" ? r.model_dtype
                                                                       : model_.weight_dtype;
    row.kv_bytes_per_token = r.kv_bytes_per_token;
    // The requests take whole blocks of the shared pool: blocks x (a page of every layer a block spans).
    const std::uint64_t block_bytes = checked_mul(r.page_bytes, r.layers_per_block, "KV block");
    for (const VllmGroup& g : r.groups) {
      const std::uint64_t bytes = checked_mul(checked_mul(g.blocks_per_request, block_bytes, "KV cache"), query.batch, "KV cache");
      if (g.kind == LayerKind::linear) row.state_bytes = checked_add(row.state_bytes, bytes, "KV cache");
      row.kv_bytes = checked_add(row.kv_bytes, bytes, "KV cache");
      row.breakdown.push_back({g.kind, g.window, g.layers,
                               g.kind == LayerKind::linear ? 0 : checked_mul(g.blocks_per_request, g.block_size, "KV cache"),
                               bytes});
    }
    row.weights_bytes = b.weights;
    // A float checkpoint cast to another float dtype says so; a quantized one is loaded as it is.
    const bool cast = r.model_dtype != nullptr && row.weight_dtype == r.model_dtype && r.model_dtype->name != own;
    const std::string loaded = cast ? "the checkpoint as " + r.dtype : "the checkpoint";
    row.weights_rule = r.pipeline_parallel > 1
                           ? fmt::format("ESTIMATE: stage {}'s share of {} (its {} layers{}{}){}", r.decisive_stage, loaded,
                                         r.stages[r.decisive_stage].layers,
                                         r.stages[r.decisive_stage].embedding ? ", the embeddings" : "",
                                         r.stages[r.decisive_stage].lm_head ? ", the output head" : "",
                                         r.tensor_parallel > 1 ? fmt::format(" / {} (tensor parallel, per GPU)", r.tensor_parallel) : "")
                       : r.tensor_parallel == 1 ? loaded + ", loaded whole"
                                                : fmt::format("{} / {} (tensor parallel, per GPU)", loaded, r.tensor_parallel);
    if (b.mxfp4_padding)
      row.weights_rule += fmt::format(", {}mxfp4 experts padded for the MoE backend +{}", b.mxfp4_estimate ? "ESTIMATED: " : "",
                                      format_gib(static_cast<std::int64_t>(b.mxfp4_padding)));
    if (b.draft_weights)
      row.weights_rule += fmt::format(", the {} +{}", r.speculative->method == "eagle3"  ? "EAGLE-3 draft"
                                      : r.speculative->method == "eagle" ? "EAGLE draft"
                                      : r.speculative->method == "mtp"   ? "MTP layers (an upper bound)"
                                                                          : "draft model",
                                      format_gib(static_cast<std::int64_t>(b.draft_weights)));
    // vLLM's cos/sin tables, on every GPU: its "Model loading took" counts them with the weights.
    if (b.rotary_tables)
      row.weights_rule += fmt::format(", {}rotary tables {}", r.rotary->rule.rfind("ESTIMATE", 0) == 0 ? "ESTIMATED " : "",
                                      vllm_rotary_size(b.rotary_tables));
    row.overhead_bytes = settings_.overhead_bytes;
    if (b.from_kv_cache_memory) {
      row.kv_pool_bytes = static_cast<std::uint64_t>(b.available);
      row.capacity_bytes = b.total;
    } else {
      row.capacity_bytes = b.requested;
    }
    row.engine.available_kv_bytes = b.available > 0 ? static_cast<std::uint64_t>(b.available) : 0;
    row.engine.kv_cache_tokens = r.gpu_kv_cache_tokens;
    row.engine.max_concurrency = r.max_concurrency();
    row.engine.starts = r.starts;
    add_findings(row, r);
    if (query.batch > r.max_num_seqs)
      r.rules.push_back(fmt::format("--batch {} is more than max_num_seqs {}: vLLM runs at most {} sequences at once",
                                    query.batch, r.max_num_seqs, r.max_num_seqs));
    row.tp = r.tensor_parallel;
    row.pp = r.pipeline_parallel;
    for (std::uint32_t rank = 0; rank < gpu_count_ && gpu_count_ > 1; ++rank) {
      const VllmStage& st = r.stages[rank / r.tensor_parallel];
      const GpuSpec& card = stage_cards_[stage_cards_.size() == 1 ? 0 : st.stage];
      GpuShare share;
      share.rank = rank;
      share.stage = st.stage;
      share.gpu = card.id;
      share.weights_bytes = st.weights;
      // The stage's layers of the requests' blocks (every stage holds the same number of blocks).
      const std::uint64_t stage_kv =
          r.pipeline_parallel == 1 ? row.kv_bytes
                                   : checked_mul(checked_mul(r.blocks_per_request, st.block_bytes, "KV cache"), query.batch, "KV cache");
      const std::uint64_t stage_pool = r.pipeline_parallel == 1 ? row.kv_pool_bytes.value_or(0)
                                                                : b.from_kv_cache_memory ? static_cast<std::uint64_t>(b.available) : 0;
      share.kv_bytes = std::max(stage_kv, stage_pool);
      share.other_bytes = row.overhead_bytes;
      share.capacity_bytes = b.from_kv_cache_memory ? card.cuda_total_bytes.value_or(card.memory_bytes) : st.requested;
      row.per_gpu.push_back(share);
    }
    // Before 0.17 kvplan cannot tell whether FlashInfer's sampler ran: the sort it prices is the
    // larger warm-up, 23 B a row and vocabulary entry more (sampler.h).
    if (!query.cache.k && model_.checkpoint_kv_dtype && dtype.name != model_.checkpoint_kv_dtype->name)
      row.assumptions.push_back(fmt::format("the checkpoint declares an {} KV cache (kv_cache_quant_algo): recent vLLM "
                                            "(its resolve_kv_cache_dtype_string, about 0.14 on) takes it for "
                                            "--kv-cache-dtype auto, earlier ones keep the model dtype, as this row "
                                            "prices: give --kv-dtype {} for the former",
                                            model_.checkpoint_kv_dtype->name, model_.checkpoint_kv_dtype->name));
    if (b.sampler == VllmSampler::pytorch_sort && !b.from_kv_cache_memory)
      row.assumptions.push_back("vLLM's sampler warms up with a full sort of the logits (39 B a row and vocabulary "
                                "entry), as it filters top-k and top-p before 0.17 unless FlashInfer's sampler runs; "
                                "where the log says \"Using FlashInfer for top-p & top-k sampling.\", "
                                "VLLM_USE_FLASHINFER_SAMPLER=1 prices its 16 B");
    if (gpu_count_ > 1)
      row.assumptions.push_back(r.pipeline_parallel > 1
                                    ? "ranks of a stage alike: the stage's weights / tp and the KV heads split (replicated "
                                      "when tp exceeds them); each stage its own layers, every stage the fewest blocks "
                                      "any stage has"
                                    : r.decode_context_parallel > 1
                                    ? fmt::format("every tensor-parallel rank alike: the checkpoint / tp and the KV heads "
                                                  "split (replicated when tp exceeds them), each rank keeping 1/{} of every "
                                                  "request's tokens (-dcp {})",
                                                  r.decode_context_parallel, r.decode_context_parallel)
                                    : "every tensor-parallel rank alike: the checkpoint / tp and the KV heads split "
                                      "(replicated when tp exceeds them), the MLA latent whole on every rank");
    row.detail = std::move(detail);
    return row;
  }

  PlanSettings settings() const override { return settings_; }

  // vLLM sizes its cache from gpu_memory_utilization x the card's total, whatever the rows need
  // (unless --kv-cache-memory gives the pool), and checks at start-up that this much is free.
  std::uint64_t footprint(const Row& row) const override { return row.kv_pool_bytes ? row.total_bytes : row.capacity_bytes; }
  bool ranks_alike() const override { return true; }
  /// The batch is the row's alone (the request's is only the settings' figure).
  bool depends_on_batch() const override { return false; }

  std::string budget_semantics() const override {
    return "takes gpu_memory_utilization x the card's TOTAL memory whatever the rows need, and refuses to start when "
           "less is free";
  }
  bool refuses_when_short() const override { return true; }

  std::vector<std::uint64_t> default_contexts() const override {
    if (model_.max_context == 0)
      throw Error("--max-model-len (--ctx) is required: the model does not state its trained context");
    return {model_.max_context};
  }

  std::vector<CacheDtypes> default_caches() const override { return {CacheDtypes{}}; }
  bool picks_context() const override { return true; }

  void write_section(const Plan& plan, EngineSection& section) const override {
    std::vector<const VllmResult*> results;
    for (const Row& row : plan.rows) results.push_back(&static_cast<const VllmDetail&>(*row.detail).result);
    write_vllm_section(results, section);
  }

 private:
  /// What would stop vLLM, or the row, in words a CI log can show.
  void add_findings(Row& row, const VllmResult& r) const {
    if (model_.max_context && r.max_model_len > model_.max_context) {
      if (allow_long_) {
        row.findings.push_back({"beyond_trained_context",
                                fmt::format("max_model_len {} is beyond the trained context of {} tokens "
                                            "(VLLM_ALLOW_LONG_MAX_MODEL_LEN=1: vLLM warns and starts)",
                                            format_thousands(r.max_model_len), format_thousands(model_.max_context)),
                                false});
      } else {
        row.findings.push_back({"beyond_trained_context",
                                fmt::format("max_model_len {} is beyond the trained context of {} tokens",
                                            format_thousands(r.max_model_len), format_thousands(model_.max_context)),
                                true});
        row.findings.push_back({"engine_refuses_start",
                                fmt::format("vLLM refuses a max_model_len of {} above the model's {} unless "
                                            "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1",
                                            format_thousands(r.max_model_len), format_thousands(model_.max_context)),
                                true});
      }
    }
    if (r.auto_fit == VllmAutoFit::model_max || r.auto_fit == VllmAutoFit::memory)
      row.findings.push_back(
          {"max_model_len_auto",
           r.auto_fit == VllmAutoFit::model_max
               ? fmt::format("max_model_len auto: {} tokens, the model's whole length (bound: the model's maximum; the "
                             "memory holds more)",
                             format_thousands(r.max_model_len))
               : fmt::format("max_model_len auto: {} tokens, the longest one request's cache fits (bound: memory; the "
                             "model's maximum is {})",
                             format_thousands(r.max_model_len), format_thousands(r.auto_fit_cap)),
           false});
    if (!r.starts)
      row.findings.push_back(
          {"engine_refuses_start",
           r.auto_fit == VllmAutoFit::nothing_fits
               ? std::string("vLLM would not start: \"Cannot auto-fit max_model_len: not enough GPU memory available to "
                             "serve even a single token\"")
           : r.budget.available <= 0
               ? std::string("vLLM would not start: no memory is left for the cache blocks")
               : fmt::format("vLLM would not start: one request of {} tokens needs {}; the largest that fits is {} tokens",
                             format_thousands(r.max_model_len), format_gib(static_cast<std::int64_t>(r.request_bytes)),
                             format_thousands(r.estimated_max_model_len.value_or(0))),
           true});
    if (row.batch > r.max_num_seqs)
      row.findings.push_back({"exceeds_max_num_seqs",
                              fmt::format("{} sequences are more than max_num_seqs {}: vLLM runs at most {} at once", row.batch,
                                          r.max_num_seqs, r.max_num_seqs),
                              true});
    if (!r.budget.from_kv_cache_memory)
      row.findings.push_back({"estimate",
                              "vLLM's available KV memory is an estimate (its activation, non-torch and CUDA-graph memory "
                              "are measured at startup); --kv-cache-memory makes it exact",
                              false});
  }

  const ModelSpec& model_;
  GpuSpec gpu_;
  std::vector<GpuSpec> stage_cards_;  ///< the card bounding each stage's ranks (one: every stage's)
  VllmSettings base_;
  PlanSettings settings_;
  std::uint64_t batch_ = 1;
  std::uint32_t gpu_count_ = 1;
  bool allow_long_ = false;
  bool auto_fit_ = false;  ///< max_model_len -1: each row's length is the longest that fits
};

std::shared_ptr<const Profile> make_vllm(const ModelSpec& model, const std::vector<GpuSpec>& gpus,
                                         const PlanRequest& request) {
  refuse_llamacpp_only_layouts(model, request, "vLLM");
  return std::make_shared<VllmProfile>(model, gpus, request);
}

/// --speculative-config's draft checkpoint (eagle3, draft_model), which the front end loads.
std::optional<std::string> vllm_draft_named(const PlanRequest& request) {
  const EngineOption* option = find_option(request, "speculative-config");
  return option ? vllm_speculative_draft_name(option->value) : std::nullopt;
}

}  // namespace

const EngineEntry& vllm_engine() {
  static const EngineEntry entry{"vllm", "vLLM", "", "what vLLM's V1 engine allocates, per GPU",
                                 "vLLM profile (with --runtime vllm; vLLM's spellings accepted)", kOptions, &make_vllm,
                                 &vllm_draft_named, "vllm-version", &parses_release<vllm_minor_version>};
  return entry;
}

}  // namespace kvplan
