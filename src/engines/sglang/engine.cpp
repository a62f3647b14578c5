// The SGLang profile as an engine: launch_server's flags, and each row priced by its rules
// (rules.h), per GPU. kvplan's --ctx and --kv-dtype are SGLang's --context-length and
// --kv-cache-dtype; --util does not apply (--mem-fraction-static is a fraction of another thing).

#include "engines/sglang/engine.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "engines/core/release.h"
#include "engines/core/serving.h"
#include "engines/sglang/rules.h"
#include "engines/sglang/section.h"
#include "engines/sglang/speculative.h"
#include "model/checked.h"
#include "kvplan/error.h"
#include "kvplan/units.h"

namespace kvplan {

namespace {

constexpr std::array<OptionSpec, 25> kOptions = {{
    {"mem-fraction-static", "FRACTION",
     "Share of the free memory before load for weights and the KV pools [default: SGLang's by GPU, TP x PP and version]"},
    {"context-length", "LIST", "Tokens a request may hold (the same as --ctx) [default: the trained context]"},
    {"tp-size", "N", "Tensor-parallel ranks; figures are per GPU [default: the GPU count]", "--tp"},
    {"tensor-parallel-size", "N", "GPUs one model is split across (SGLang: --tp-size)", "-tp"},
    {"pp-size", "N", "Pipeline stages, each a share of the layers [default: 1]"},
    {"page-size", "N", "Tokens per page [default: 1; flashmla 64, cutlass_mla 128, trtllm_mla 64, trtllm_mha 64, ascend 128]"},
    {"attention-backend", "NAME", "Attention backend (fa3, flashinfer, triton, flashmla, cutlass_mla, trtllm_mla, trtllm_mha, "
                                  "ascend, ...): some force a page size [default: SGLang's choice]"},
    {"max-total-tokens", "N", "Caps the token pool SGLang profiles"},
    {"max-running-requests", "N", "Requests at once [default: clamp(#tokens / context x 512, 2048, 4096)]"},
    {"chunked-prefill-size", "N", "Prefill chunk; also in the default --mem-fraction-static [default: by GPU]"},
    {"cuda-graph-max-bs", "N", "Largest CUDA-graph batch; in the 0.5.4+ default --mem-fraction-static [default: by GPU]"},
    {"disable-piecewise-cuda-graph", "", "No piecewise CUDA graphs: from 0.5.10 the default --mem-fraction-static then "
                                         "reserves nothing for them"},
    {"swa-full-tokens-ratio", "FRACTION", "Sliding-window pool / full pool tokens (hybrid SWA models) [default: 0.8]"},
    {"sglang-version", "VERSION", "Whose rules: 0.4.x, 0.5.x (0.5.4, 0.5.14, 0.5.16, ...) or latest [default: latest]"},
    {"sglang-free-before-load", "SIZE",
     "Free memory per GPU before the weights load, from SGLang's 'Load weight begin. avail mem' line [default: estimated]"},
    {"sglang-free-after-load", "SIZE",
     "Free memory per GPU after the weights load, from SGLang's 'Load weight end. avail mem' line [default: estimated]"},
    {"speculative-algorithm", "NAME",
     "Speculative decoding: EAGLE (an EAGLE head), EAGLE3 (an EAGLE-3 head) or STANDALONE (a smaller model) with "
     "--speculative-draft-model-path; NEXTN (or EAGLE without a path): DeepSeek-V3/R1's or GLM-4.5's own MTP layer; NGRAM is not "
     "modelled (exit 3)"},
    {"speculative-draft-model-path", "PATH",
     "The draft: a folder or config.json, a Hugging Face id in the cache on this machine, or a catalog name",
     "--speculative-draft-model"},
    {"speculative-num-steps", "N", "Draft steps a round [default: SGLang's auto choice, 5; 3 for DeepSeek's NEXTN]"},
    {"speculative-eagle-topk", "N", "Draft branches a step [default: SGLang's auto choice, 4]"},
    {"speculative-num-draft-tokens", "N", "Draft tokens verified a round; steps + 1 when topk is 1 [default: 8]"},
    {"speculative-token-map", "FILE", "EAGLE's hot-vocabulary head (FR-Spec): not modelled; named so that it is refused "
                                      "(exit 3)"},
    {"enable-dp-attention", "", "DP attention (DeepSeek's recipes): not modelled; named so that it is refused (exit 3)"},
    {"dp-size", "N", "Data-parallel replicas: above 1 not modelled (exit 3); plan one replica on its --tp-size GPUs", "--dp"},
    {"allow-overwrite-longer-context-len", "",
     "Let --context-length exceed the trained context, as SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 does", "", "",
     "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"},
}};

constexpr std::string_view kAttentionBackends[] = {"fa3",         "fa4",        "flashinfer", "triton",    "torch_native",
                                                    "flex_attention", "aiter",   "wave",       "flashmla",  "cutlass_mla",
                                                    "trtllm_mla", "trtllm_mha", "ascend",     "intel_amx", "dual_chunk_flash_attn"};

struct SglangDetail final : EngineDetail {
  SglangResult result;
};

bool truthy(std::string_view value) { return value.empty() || value == "1" || value == "true" || value == "True"; }

std::optional<std::uint32_t> u32_option(const PlanRequest& request, std::string_view name) {
  const EngineOption* o = find_option(request, name);
  if (!o) return std::nullopt;
  return parse_positive_u32(o->value, o->shown_as);
}

/// --tp-size, --tp and -tp name one setting: given twice, they must agree.
std::optional<std::uint32_t> tensor_parallel(const PlanRequest& request) {
  const std::optional<std::uint32_t> a = u32_option(request, "tp-size");
  const std::optional<std::uint32_t> b = u32_option(request, "tensor-parallel-size");
  if (a && b && *a != *b)
    throw Error(fmt::format("--tp-size {} and --tensor-parallel-size {} disagree: both are SGLang's tensor parallel", *a, *b));
  return a ? a : b;
}

/// The settings every row shares, from SGLang's flags.
SglangSettings base_settings(const PlanRequest& request) {
  SglangSettings s;
  const auto option = [&](std::string_view name) { return find_option(request, name); };
  if (const EngineOption* o = option("mem-fraction-static")) s.mem_fraction_static = parse_engine_fraction(o->value, o->shown_as);
  if (const EngineOption* o = option("page-size")) s.page_size = parse_positive_u32(o->value, o->shown_as);
  if (const EngineOption* o = option("attention-backend")) {
    if (std::find(std::begin(kAttentionBackends), std::end(kAttentionBackends), o->value) == std::end(kAttentionBackends)) {
      std::string known;
      for (const std::string_view name : kAttentionBackends) known += (known.empty() ? "" : ", ") + std::string(name);
      throw Error(fmt::format("{}: '{}' is not an attention backend kvplan knows ({})", o->shown_as, o->value, known));
    }
    s.attention_backend = o->value;
  }
  if (const EngineOption* o = option("max-total-tokens")) s.max_total_tokens = parse_positive_integer(o->value, o->shown_as);
  if (const EngineOption* o = option("max-running-requests"))
    s.max_running_requests = parse_positive_integer(o->value, o->shown_as);
  if (const EngineOption* o = option("chunked-prefill-size"))
    s.chunked_prefill_size = parse_positive_integer(o->value, o->shown_as);
  if (const EngineOption* o = option("cuda-graph-max-bs")) s.cuda_graph_max_bs = parse_positive_integer(o->value, o->shown_as);
  if (const EngineOption* o = option("disable-piecewise-cuda-graph")) s.piecewise_cuda_graph = !truthy(o->value);
  if (const EngineOption* o = option("swa-full-tokens-ratio"))
    s.swa_full_tokens_ratio = parse_engine_fraction(o->value, o->shown_as);
  const EngineOption* version = option("sglang-version");
  s.version = parse_sglang_version(version ? std::string_view(version->value) : "latest",
                                   version ? std::string_view(version->shown_as) : "sglang-version");
  if (const EngineOption* o = option("sglang-free-before-load")) s.free_before_load = parse_memory_size(o->value, o->shown_as);
  if (const EngineOption* o = option("sglang-free-after-load")) s.free_after_load = parse_memory_size(o->value, o->shown_as);
  s.speculative = sglang_speculative(request);
  // DP attention splits the attention's batch over data-parallel ranks, each with a pool of its
  // own, and changes what the MLA latent and the draft cost per GPU: not read.
  if (const EngineOption* o = option("enable-dp-attention"); o && truthy(o->value))
    throw Error(fmt::format("{}: DP attention is not modelled by the SGLang profile (each data-parallel rank keeps a "
                            "pool of its own and the attention's per-GPU cost changes): no verdict for it",
                            o->shown_as),
                ExitCode::unsupported_architecture);
  if (const EngineOption* o = option("dp-size"); o && parse_positive_u32(o->value, o->shown_as) > 1)
    throw Error(fmt::format("{} {}: data-parallel replicas are not modelled by the SGLang profile; plan one replica (its "
                            "--tp-size GPUs): every replica is alike",
                            o->shown_as, o->value),
                ExitCode::unsupported_architecture);
  return s;
}

std::uint64_t round_up(std::uint64_t tokens, std::uint64_t page) { return round_up_to(tokens, page, "KV cache"); }

/// What other processes hold on the card (--used, or the card less --free; the larger when both
/// are given): the engine measures free memory at start-up, and they are not free.
std::uint64_t co_tenant_bytes(const PlanRequest& request, const GpuSpec& gpu) {
  std::uint64_t held = request.used_bytes.value_or(0);
  if (request.free_bytes && *request.free_bytes < gpu.memory_bytes) held = std::max(held, gpu.memory_bytes - *request.free_bytes);
  return held;
}

class SglangProfile final : public Profile {
 public:
  SglangProfile(const ModelSpec& model, const std::vector<GpuSpec>& gpus, const PlanRequest& request)
      : model_(model), base_(base_settings(request)) {
    const SettingNames& names = request.names;
    const RankLayout deployment =
        resolve_deployment(gpus, tensor_parallel(request), "--tp-size", u32_option(request, "pp-size"), "--pp-size", "SGLang");
    base_.tp = deployment.tp;
    base_.pp = deployment.pp;
    gpus_ = deployment.gpus;
    base_.co_tenant_bytes = co_tenant_bytes(request, gpus_.front());
    if (request.weight_dtype)
      throw Error(fmt::format("{} does not apply to the SGLang profile: SGLang runs the checkpoint's own weights (give the "
                              "quantized checkpoint you serve)",
                              names.weight_dtype));
    if (request.overhead_bytes)
      throw Error(fmt::format("{} does not apply to the SGLang profile: SGLang's activations and CUDA graphs live in the "
                              "share --mem-fraction-static leaves",
                              names.overhead));
    if (request.utilization_millionths)
      throw Error(fmt::format("{} does not apply to the SGLang profile: give --mem-fraction-static, the share of the free "
                              "memory before load that weights and pools may take",
                              names.utilization));
    if (!request.mtp_layers.empty()) throw Error(fmt::format("{} is not modelled by the SGLang profile yet", names.mtp_layers));
    if (request.contexts_are_totals) throw Error("a total context for all sequences is llama.cpp's -c, not SGLang's");
    if (const EngineOption* c = find_option(request, "context-length")) {
      if (!request.contexts.empty())
        throw Error(fmt::format("give either {} or {}, not both: they are the same setting", c->shown_as, names.ctx));
      contexts_ = parse_token_list(c->value, c->shown_as);
    }
    if (const EngineOption* o = find_option(request, "allow-overwrite-longer-context-len")) allow_long_ = truthy(o->value);

    // One result gives the budget every row shares, and refuses a model SGLang's rules do not cover.
    SglangSettings probe = base_;
    probe.context_length = model.max_context ? model.max_context : 1;
    const SglangResult r = plan_sglang(model, gpus_, probe);
    const SglangBudget& b = r.budget;
    settings_.batch = request.batch;
    // NEXTN's draft caches the target's MTP layers: the header and the JSON settings say how many.
    settings_.mtp_layers = r.draft && r.draft->own_layers ? r.draft->layers : 0;
    settings_.overhead_bytes = 0;
    settings_.utilization_millionths =
        std::clamp(static_cast<std::uint32_t>(b.mem_fraction_static * 1e6 + 0.5), 1u, 1'000'000u);
    settings_.budget_rule = fmt::format(
        "{} per GPU = {} free before load x --mem-fraction-static {:.6g}{}: weights and the token pool must fit in it; fits "
        "when SGLang starts and the requests' tokens fit in its pool",
        format_gib(static_cast<std::int64_t>(b.static_bytes)), format_gib(static_cast<std::int64_t>(b.free_before_load)),
        b.mem_fraction_static, b.before_measured && b.after_measured ? "" : " (ESTIMATED free memory)");
    settings_.overhead_rule = fmt::format("none inside the budget: activations, CUDA graphs and the request table use the "
                                          "{} that --mem-fraction-static leaves",
                                          format_gib(static_cast<std::int64_t>(b.headroom_bytes)));
  }

  std::optional<CacheRefusal> cache_refusal(const CacheDtypes& cache) const override {
    // nvfp4 too: on a card without it (before Blackwell) it is not a row, whatever pricing it would
    // say of the model (an fp4 cache beside sliding layers is not modelled: that must not refuse
    // the model's other dtypes).
    if (!cache.k || cache.k != cache.v) return std::nullopt;
    SglangSettings settings = base_;
    settings.kv_dtype = cache.k;
    try {
      if (std::optional<std::string> why = sglang_cache_refusal(model_, gpus_, settings)) return CacheRefusal{std::move(*why), true};
      return std::nullopt;
    } catch (const Error&) {
      return std::nullopt;  // a row says what is wrong
    }
  }

  Row price(const RowQuery& query) const override {
    if (query.cache.k != query.cache.v)
      throw Error("SGLang stores K and V at one dtype (--kv-cache-dtype): give one dtype per row");
    SglangSettings settings = base_;
    settings.context_length = query.ctx;
    settings.kv_dtype = query.cache.k;
    settings.words = query.words && query.section_words;  // SglangResult::rules: the section's words
    auto detail = std::make_shared<SglangDetail>();
    SglangResult& r = detail->result;
    r = plan_sglang(model_, gpus_, settings);
    const SglangBudget& b = r.budget;

    Row row;
    row.ctx = r.context_length;
    row.batch = query.batch;
    row.cache = {r.dtype, r.dtype};
    row.weight_dtype = model_.weight_dtype;
    const SglangStage& decisive = r.stages[r.decisive_stage];
    row.kv_bytes_per_token = decisive.pool_bytes_per_token;

    // What the requests take from the pool: whole pages of every token, the sliding pool only its window.
    const std::uint64_t page = r.page_size;
    // A drafted request also holds its draft and verify slots in the pool (speculative.h).
    const std::uint64_t draft_slots = r.draft ? r.draft->slots_per_request : 0;
    const std::uint64_t full_tokens = round_up(checked_add(row.ctx, draft_slots, "KV cache"), page);
    const std::uint64_t swa_tokens = round_up(std::min(row.ctx, saturating_add(r.window, r.chunked_prefill_size)), page);
    std::uint64_t needed_full = checked_mul(full_tokens, query.batch, "KV cache");
    std::uint64_t needed_swa = 0;
    const auto add = [&](LayerKind kind, std::uint64_t window, std::uint32_t layers, std::uint64_t tokens,
                         std::uint64_t per_token) {
      const std::uint64_t bytes = checked_mul(checked_mul(tokens, per_token, "KV cache"), query.batch, "KV cache");
      row.kv_bytes = checked_add(row.kv_bytes, bytes, "KV cache");
      row.breakdown.push_back({kind, window, layers, tokens, bytes});
    };
    std::uint32_t full_layers = 0, swa_layers = 0, linear_layers = 0;
    for (std::uint32_t i = decisive.first_layer; i < decisive.first_layer + decisive.layers; ++i) {
      const LayerKind kind = model_.layers[i].kind;
      if (kind == LayerKind::sliding) ++swa_layers;
      else if (kind == LayerKind::linear) ++linear_layers;
      else if (kind != LayerKind::none) ++full_layers;
    }
    const LayerKind attention = r.layout == SglangResult::Layout::mla || r.layout == SglangResult::Layout::dsa
                                    ? LayerKind::mla
                                    : LayerKind::full;
    if (r.layout == SglangResult::Layout::swa) {
      needed_swa = checked_mul(swa_tokens, query.batch, "KV cache");
      if (full_layers) add(LayerKind::full, 0, full_layers, full_tokens, decisive.full_bytes_per_token);
      add(LayerKind::sliding, r.window, swa_layers, swa_tokens, decisive.swa_bytes_per_token);
    } else {
      add(attention, 0, full_layers, full_tokens, decisive.pool_bytes_per_token);
      if (!row.breakdown.empty() && decisive.indexer_bytes_per_token) {
        row.breakdown.back().indexer_layers = full_layers;
        row.breakdown.back().indexer_bytes =
            checked_mul(checked_mul(full_tokens, decisive.indexer_bytes_per_token, "KV cache"), query.batch, "KV cache");
      }
    }
    if (r.draft) {
      // The draft's pool mirrors the target's tokens at its own layers.
      add(r.draft->kind, 0, r.draft->layers, full_tokens, r.draft->cell_bytes);
      row.breakdown.back().mtp = r.draft->own_layers;
      row.kv_bytes_per_token = checked_add(row.kv_bytes_per_token, r.draft->cell_bytes, "KV cache per token");
    }
    if (r.layout == SglangResult::Layout::mamba) {
      row.state_bytes = checked_mul(decisive.mamba_bytes_per_request, query.batch, "state");
      row.kv_bytes = checked_add(row.kv_bytes, row.state_bytes, "KV cache");
      row.breakdown.push_back({LayerKind::linear, 0, linear_layers, 0, row.state_bytes});
    }
    row.weights_bytes = decisive.weights;
    if (b.after_measured) row.weights_bytes = b.weights;
    row.weights_rule = b.after_measured ? "what loading took: SGLang's free memory before load - after load, as given"
                       : r.tp * r.pp == 1 ? "the checkpoint, loaded whole"
                                          : fmt::format("the checkpoint's share of the stage's layers / {} (tensor "
                                                        "parallel, per GPU)",
                                                        r.tp);
    const std::uint64_t draft_inside = r.draft && r.draft->era == SglangSpeculativeEra::inside ? r.draft->weights : 0;
    if (r.draft)
      row.weights_rule += draft_inside ? fmt::format(", + the draft {} (ESTIMATE, inside the budget from 0.5.16)",
                                                     format_gib(static_cast<std::int64_t>(draft_inside)))
                                       : fmt::format("; the draft's {} come out of what --mem-fraction-static leaves",
                                                     format_gib(static_cast<std::int64_t>(r.draft->weights)));
    row.weights_bytes = checked_add(row.weights_bytes, draft_inside, "weights");
    const std::uint64_t available = b.available > 0 ? static_cast<std::uint64_t>(b.available) : 0;
    row.overhead_bytes = 0;
    row.capacity_bytes = checked_add(checked_add(row.weights_bytes, available, "budget"), r.mamba_bytes, "budget");

    row.engine.available_kv_bytes = available;
    row.engine.kv_cache_tokens = r.max_total_num_tokens;
    double concurrency = static_cast<double>(r.max_total_num_tokens) / static_cast<double>(full_tokens);
    if (r.layout == SglangResult::Layout::swa)
      concurrency = std::min(concurrency, static_cast<double>(r.swa_tokens) / static_cast<double>(swa_tokens));
    row.engine.max_concurrency = std::min(concurrency, static_cast<double>(r.max_running_requests));
    add_findings(row, r, needed_full, needed_swa);
    row.engine.starts = r.starts && !refuses_context(r);

    // Every GPU's share: its stage's weights and what the requests put in its stage's layers.
    row.tp = r.tp;
    row.pp = r.pp;
    if (gpus_.size() > 1) {
      for (std::size_t rank = 0; rank < gpus_.size(); ++rank) {
        const SglangStage& st = r.stages[rank / r.tp];
        GpuShare share;
        share.rank = static_cast<std::uint32_t>(rank % r.tp);
        share.stage = st.stage;
        share.gpu = gpus_[rank].id;
        share.weights_bytes = checked_add(b.after_measured ? b.weights : st.weights, draft_inside, "weights");
        share.kv_bytes = st.stage == decisive.stage ? row.kv_bytes : stage_kv_bytes(st, full_tokens, query.batch);
        share.capacity_bytes = checked_add(checked_add(share.weights_bytes, available, "budget"), r.mamba_bytes, "budget");
        row.per_gpu.push_back(share);
      }
    }
    row.assumptions = r.assumptions;
    row.detail = std::move(detail);
    return row;
  }

  PlanSettings settings() const override { return settings_; }

  // SGLang sizes its pools to fill mem_fraction_static of the memory free before the weights load.
  std::uint64_t footprint(const Row& row) const override { return row.capacity_bytes; }
  bool ranks_alike() const override { return true; }
  /// The batch is the row's alone (the request's is only the settings' figure).
  bool depends_on_batch() const override { return false; }

  std::string budget_semantics() const override {
    return "takes weights + pools sized from mem_fraction_static of the memory FREE BEFORE LOAD (what other processes "
           "hold shrinks its pools: --sglang-free-before-load gives the figure it would measure)";
  }

  std::vector<std::uint64_t> default_contexts() const override {
    if (!contexts_.empty()) return contexts_;
    if (model_.max_context == 0)
      throw Error("--context-length (--ctx) is required: the model does not state its trained context");
    return {model_.max_context};
  }

  std::vector<CacheDtypes> default_caches() const override { return {CacheDtypes{}}; }

  void write_section(const Plan& plan, EngineSection& section) const override {
    std::vector<const SglangResult*> results;
    for (const Row& row : plan.rows) results.push_back(&static_cast<const SglangDetail&>(*row.detail).result);
    write_sglang_section(results, section);
  }

 private:
  bool refuses_context(const SglangResult& r) const {
    return model_.max_context && r.context_length > model_.max_context && !allow_long_;
  }

  /// A stage's part of the requests' cache (the stages differ in layers only).
  static std::uint64_t stage_kv_bytes(const SglangStage& st, std::uint64_t tokens, std::uint64_t batch) {
    return checked_add(checked_mul(checked_mul(tokens, st.pool_bytes_per_token, "KV cache"), batch, "KV cache"),
                       checked_mul(st.mamba_bytes_per_request, batch, "state"), "KV cache");
  }

  /// What would stop SGLang, or the row, in words a CI log can show.
  void add_findings(Row& row, const SglangResult& r, std::uint64_t needed_full, std::uint64_t needed_swa) const {
    if (!r.dtype_supported) {
      row.findings.push_back({"dtype_not_supported_by_engine", r.dtype_reason, true});
      row.findings.push_back({"engine_refuses_start", "SGLang would not start: " + r.dtype_reason, true});
    }
    if (model_.max_context && r.context_length > model_.max_context) {
      const std::string text = fmt::format("context_length {} is beyond the trained context of {} tokens",
                                           format_thousands(r.context_length), format_thousands(model_.max_context));
      if (allow_long_) {
        row.findings.push_back(
            {"beyond_trained_context", text + " (SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1: SGLang warns and starts)", false});
      } else {
        row.findings.push_back({"beyond_trained_context", text, true});
        row.findings.push_back({"engine_refuses_start",
                                fmt::format("SGLang refuses a --context-length of {} above the model's {} unless "
                                            "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1",
                                            format_thousands(r.context_length), format_thousands(model_.max_context)),
                                true});
      }
    }
    if (!r.refusal.empty()) row.findings.push_back({"engine_refuses_start", "SGLang would not start: " + r.refusal, true});
    if (r.refusal.empty() && needed_full > r.max_total_num_tokens)
      row.findings.push_back({"kv_pool_too_small",
                              fmt::format("{} requests of {} tokens need {} tokens; SGLang's pool holds {}", row.batch,
                                          format_thousands(row.ctx), format_thousands(needed_full),
                                          format_thousands(r.max_total_num_tokens)),
                              true});
    if (r.refusal.empty() && needed_swa > r.swa_tokens)
      row.findings.push_back({"kv_pool_too_small",
                              fmt::format("{} requests need {} tokens of the sliding-window pool; it holds {}", row.batch,
                                          format_thousands(needed_swa), format_thousands(r.swa_tokens)),
                              true});
    if (r.refusal.empty() && row.batch > r.max_running_requests)
      row.findings.push_back({"exceeds_max_running_requests",
                              fmt::format("{} sequences are more than max_running_requests {}: SGLang runs at most {} at "
                                          "once",
                                          row.batch, r.max_running_requests, r.max_running_requests),
                              true});
    const SglangBudget& b = r.budget;
    if (!b.before_measured || !b.after_measured)
      row.findings.push_back({"estimate",
                              "SGLang's free memory before and after loading is an estimate (it measures them at "
                              "startup); --sglang-free-before-load and --sglang-free-after-load make #tokens exact",
                              false});
  }

  const ModelSpec& model_;
  std::vector<GpuSpec> gpus_;
  SglangSettings base_;
  PlanSettings settings_;
  std::vector<std::uint64_t> contexts_;
  bool allow_long_ = false;
};

std::shared_ptr<const Profile> make_sglang(const ModelSpec& model, const std::vector<GpuSpec>& gpus,
                                           const PlanRequest& request) {
  refuse_llamacpp_only_layouts(model, request, "SGLang");
  return std::make_shared<SglangProfile>(model, gpus, request);
}

}  // namespace

const SglangResult* sglang_result(const Row& row) {
  const auto* detail = dynamic_cast<const SglangDetail*>(row.detail.get());
  return detail ? &detail->result : nullptr;
}

const EngineEntry& sglang_engine() {
  static const EngineEntry entry{"sglang", "SGLang", "", "what SGLang's launch_server allocates, per GPU",
                                 "SGLang profile (with --runtime sglang; launch_server's spellings accepted)", kOptions,
                                 &make_sglang, &sglang_draft_named, "sglang-version", &parses_release<parse_sglang_version>};
  return entry;
}

}  // namespace kvplan
