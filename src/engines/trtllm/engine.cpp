// The TensorRT-LLM profile as an engine: trtllm-serve's flags (and the KvCacheConfig fields its
// YAML sets), and each row priced by its rules (rules.h), per GPU. kvplan's --ctx and --kv-dtype
// are its --max_seq_len and KvCacheConfig.dtype; --util does not apply (the fraction is of the free
// memory after the weights, not of the card).

#include "engines/trtllm/engine.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "engines/core/release.h"
#include "engines/core/serving.h"
#include "engines/trtllm/rules.h"
#include "engines/trtllm/section.h"
#include "model/checked.h"
#include "kvplan/error.h"
#include "kvplan/units.h"

namespace kvplan {

namespace {

constexpr std::array<OptionSpec, 14> kOptions = {{
    {"kv_cache_free_gpu_memory_fraction", "FRACTION",
     "Share of the free memory after the weights and the dry run for the KV cache, below 1 [default: 0.9]",
     "--kv_cache_free_gpu_mem_fraction --free_gpu_memory_fraction"},
    {"max_seq_len", "LIST", "Tokens a request may hold (the same as --ctx) [default: the trained context]"},
    {"max_batch_size", "N", "Requests at once [default: 2048]"},
    {"max_num_tokens", "N", "Tokens a step may hold; sizes the dry run [default: 8192]"},
    {"tp_size", "N", "Tensor-parallel ranks; figures are per GPU [default: the GPU count]"},
    {"pp_size", "N", "Pipeline stages, each a share of the layers [default: 1]"},
    {"tokens_per_block", "N", "Tokens per KV block [default: 32; 64 for the TensorRT-engine runtime and DeepSeek-V3.2]"},
    {"max_tokens", "N", "KvCacheConfig.max_tokens: caps the KV cache's tokens"},
    {"max_gpu_total_bytes", "SIZE", "KvCacheConfig.max_gpu_total_bytes: caps the KV memory (the VSWA pool) [default: none]"},
    {"max_attention_window", "LIST",
     "KvCacheConfig.max_attention_window: windows repeated over the layers; several distinct = VSWA [default: max_seq_len]"},
    {"trtllm-version", "VERSION",
     "Whose rules: 0.8 to 0.18 (TensorRT engines), 0.19, 0.20, 0.21, 1.0, 1.1 or later [default: latest]"},
    {"trtllm-free-memory", "SIZE",
     "Free memory per GPU the fraction multiplies, as TensorRT-LLM measured it (its 'available' figure) [default: estimated]"},
    {"tensor-parallel-size", "N", "GPUs one model is split across (TensorRT-LLM: --tp_size)", "-tp"},
    {"extra_llm_api_options", "FILE",
     "trtllm-serve's YAML of LLM API options: not read; named so that it is refused (exit 3) rather than left out "
     "(give its kv_cache_config fields as the flags above)"},
}};

struct TrtllmDetail final : EngineDetail {
  TrtllmResult result;
};

std::optional<std::uint32_t> u32_option(const PlanRequest& request, std::string_view name) {
  const EngineOption* o = find_option(request, name);
  if (!o) return std::nullopt;
  return parse_positive_u32(o->value, o->shown_as);
}

/// --tp_size and -tp name one setting: given both, they must agree.
std::optional<std::uint32_t> tensor_parallel(const PlanRequest& request) {
  const std::optional<std::uint32_t> a = u32_option(request, "tp_size");
  const std::optional<std::uint32_t> b = u32_option(request, "tensor-parallel-size");
  if (a && b && *a != *b)
    throw Error(fmt::format("--tp_size {} and --tensor-parallel-size {} disagree: both are TensorRT-LLM's tensor parallel",
                            *a, *b));
  return a ? a : b;
}

/// The settings every row shares, from TensorRT-LLM's flags.
TrtllmSettings base_settings(const PlanRequest& request) {
  TrtllmSettings s;
  const auto option = [&](std::string_view name) { return find_option(request, name); };
  if (const EngineOption* o = option("kv_cache_free_gpu_memory_fraction"))
    s.free_gpu_memory_fraction = parse_engine_fraction(o->value, o->shown_as);
  if (const EngineOption* o = option("max_batch_size")) s.max_batch_size = parse_positive_integer(o->value, o->shown_as);
  if (const EngineOption* o = option("max_num_tokens")) s.max_num_tokens = parse_positive_integer(o->value, o->shown_as);
  if (const EngineOption* o = option("tokens_per_block")) s.tokens_per_block = parse_positive_u32(o->value, o->shown_as);
  if (const EngineOption* o = option("max_tokens")) s.max_tokens = parse_positive_integer(o->value, o->shown_as);
  if (const EngineOption* o = option("max_gpu_total_bytes")) s.max_gpu_total_bytes = parse_memory_size(o->value, o->shown_as);
  if (const EngineOption* o = option("max_attention_window")) s.max_attention_window = parse_token_list(o->value, o->shown_as);
  const EngineOption* version = option("trtllm-version");
  s.version = parse_trtllm_version(version ? std::string_view(version->value) : "latest",
                                   version ? std::string_view(version->shown_as) : "trtllm-version");
  s.state_may_be_pooled = trtllm_state_may_be_pooled(version ? std::string_view(version->value) : "latest");
  if (const EngineOption* o = option("trtllm-free-memory")) s.free_memory = parse_memory_size(o->value, o->shown_as);
  // The YAML may hold what changes the pool: a speculative_config puts the draft's layers in the
  // target's pool, which TensorRT-LLM sizes from the target's layers alone (the pool then passes
  // the fraction's budget), loads the draft's weights before measuring, and lengthens max_seq_len;
  // how many layers and which pool changed across 2026 (engine-rules, docs/engines/trtllm.md).
  if (const EngineOption* o = option("extra_llm_api_options"))
    throw Error(fmt::format("{} {}: kvplan does not read the YAML (a speculative_config in it adds draft layers and "
                            "weights the TensorRT-LLM profile does not model); give its kv_cache_config fields as flags "
                            "(--kv_cache_free_gpu_memory_fraction, --max_tokens, --tokens_per_block, ...) and plan "
                            "without speculative decoding",
                            o->shown_as, o->value),
                ExitCode::unsupported_architecture);
  return s;
}

std::uint64_t round_up(std::uint64_t tokens, std::uint64_t block) { return round_up_to(tokens, block, "KV cache"); }

/// What other processes hold on the card (--used, or the card less --free; the larger when both
/// are given): the engine measures free memory at start-up, and they are not free.
std::uint64_t co_tenant_bytes(const PlanRequest& request, const GpuSpec& gpu) {
  std::uint64_t held = request.used_bytes.value_or(0);
  if (request.free_bytes && *request.free_bytes < gpu.memory_bytes) held = std::max(held, gpu.memory_bytes - *request.free_bytes);
  return held;
}

class TrtllmProfile final : public Profile {
 public:
  TrtllmProfile(const ModelSpec& model, const std::vector<GpuSpec>& gpus, const PlanRequest& request)
      : model_(model), base_(base_settings(request)) {
    const SettingNames& names = request.names;
    const RankLayout deployment = resolve_deployment(gpus, tensor_parallel(request), "--tp_size",
                                                     u32_option(request, "pp_size"), "--pp_size", "TensorRT-LLM");
    base_.tp = deployment.tp;
    base_.pp = deployment.pp;
    gpus_ = deployment.gpus;
    base_.co_tenant_bytes = co_tenant_bytes(request, gpus_.front());
    if (request.weight_dtype)
      throw Error(fmt::format("{} does not apply to the TensorRT-LLM profile: it runs the checkpoint's own weights (give "
                              "the quantized checkpoint you serve)",
                              names.weight_dtype));
    if (request.overhead_bytes)
      throw Error(fmt::format("{} does not apply to the TensorRT-LLM profile: it estimates the dry run's memory (or give "
                              "--trtllm-free-memory)",
                              names.overhead));
    if (request.utilization_millionths)
      throw Error(fmt::format("{} does not apply to the TensorRT-LLM profile: give --kv_cache_free_gpu_memory_fraction, "
                              "the share of the free memory after the weights and the dry run",
                              names.utilization));
    if (!request.mtp_layers.empty())
      throw Error(fmt::format("{} is not modelled by the TensorRT-LLM profile yet", names.mtp_layers));
    if (request.contexts_are_totals) throw Error("a total context for all sequences is llama.cpp's -c, not TensorRT-LLM's");
    if (const EngineOption* c = find_option(request, "max_seq_len")) {
      if (!request.contexts.empty())
        throw Error(fmt::format("give either {} or {}, not both: they are the same setting", c->shown_as, names.ctx));
      contexts_ = parse_token_list(c->value, c->shown_as);
    }

    TrtllmSettings probe = base_;
    probe.max_seq_len = model.max_context ? model.max_context : 1;
    const TrtllmResult r = plan_trtllm(model, gpus_, probe);
    const TrtllmBudget& b = r.budget;
    settings_.batch = request.batch;
    settings_.utilization_millionths = static_cast<std::uint32_t>(b.fraction * 1e6 + 0.5);
    settings_.overhead_bytes = overhead_of(b);
    settings_.budget_rule = fmt::format(
        "{} per GPU = weights + the dry run's peak + {} free x free_gpu_memory_fraction {}{}; fits when TensorRT-LLM "
        "starts and the requests' blocks fit in its pool",
        format_gib(static_cast<std::int64_t>((Checked(b.weights, "TensorRT-LLM memory") + overhead_of(b) + b.kv_budget).value())),
        format_gib(static_cast<std::int64_t>(b.free_memory)), b.fraction, b.measured ? "" : " (ESTIMATED free memory)");
    settings_.overhead_rule = b.measured ? "the CUDA total - the weights - the free memory given"
                                         : "ESTIMATED: the dry run's activations, CUDA context, graphs and NCCL";
    if (b.mamba_state)
      settings_.overhead_rule += fmt::format("{} the recurrent state of {} request slots, {}", b.measured ? ", of it" : ", and",
                                             b.mamba_slots, format_gib(static_cast<std::int64_t>(b.mamba_state)));
  }

  std::optional<CacheRefusal> cache_refusal(const CacheDtypes& cache) const override {
    // nvfp4 is left to a row: its pricing may refuse the model itself (exit 3) before its dtype,
    // and fit has always reported that.
    if (!cache.k || cache.k != cache.v || cache.k->name == "nvfp4") return std::nullopt;
    TrtllmSettings settings = base_;
    settings.kv_dtype = cache.k;
    try {
      if (std::optional<std::string> why = trtllm_cache_refusal(model_, gpus_, settings)) return CacheRefusal{std::move(*why), true};
      return std::nullopt;
    } catch (const Error&) {
      return std::nullopt;  // a row says what is wrong
    }
  }

  Row price(const RowQuery& query) const override {
    if (query.cache.k != query.cache.v)
      throw Error("TensorRT-LLM stores K and V at one dtype: give one dtype per row");
    TrtllmSettings settings = base_;
    settings.max_seq_len = query.ctx;
    settings.kv_dtype = query.cache.k;
    settings.words = query.words && query.section_words;  // TrtllmResult::rules: the section's words
    auto detail = std::make_shared<TrtllmDetail>();
    TrtllmResult& r = detail->result;
    r = plan_trtllm(model_, gpus_, settings);
    const TrtllmBudget& b = r.budget;

    Row row;
    row.ctx = r.max_seq_len;
    row.batch = query.batch;
    row.cache = {r.dtype, r.dtype};
    row.weight_dtype = model_.weight_dtype;
    const TrtllmStage& decisive = r.stages[r.decisive_stage];
    const std::uint64_t tpb = r.tokens_per_block;

    // What the requests take: whole blocks of every window they reach.
    double concurrency = static_cast<double>(r.max_batch_size);
    bool blocks_short = false;
    std::uint64_t needed_tokens = 0;
    for (const TrtllmWindow& w : r.windows) {
      const std::uint64_t tokens = round_up(std::min(row.ctx, w.window), tpb);
      const std::uint64_t bytes = checked_mul(checked_mul(tokens, w.pool_bytes_per_token, "KV cache"), query.batch, "KV cache");
      row.kv_bytes = checked_add(row.kv_bytes, bytes, "KV cache");
      row.kv_bytes_per_token = checked_add(row.kv_bytes_per_token, w.pool_bytes_per_token, "KV cache per token");
      const LayerKind kind = r.mla ? LayerKind::mla : w.window < row.ctx ? LayerKind::sliding : LayerKind::full;
      row.breakdown.push_back({kind, kind == LayerKind::sliding ? w.window : 0, w.layers, tokens, bytes});
      const std::uint64_t blocks = checked_mul(tokens / tpb, query.batch, "KV cache");
      blocks_short = blocks_short || blocks > w.blocks;
      needed_tokens = std::max(needed_tokens, checked_mul(tokens, query.batch, "KV cache"));
      concurrency = std::min(concurrency, static_cast<double>(w.blocks) / static_cast<double>(tokens / tpb));
    }
    row.weights_bytes = decisive.weights;
    row.weights_rule = r.tp * r.pp == 1 ? "the checkpoint, loaded whole"
                                        : fmt::format("the checkpoint's share of the stage's layers / {} (tensor parallel, "
                                                      "per GPU)",
                                                      r.tp);
    row.overhead_bytes = overhead_of(b);
    row.capacity_bytes = checked_add(checked_add(row.weights_bytes, row.overhead_bytes, "budget"),
                                     std::max(b.kv_budget, r.pool_bytes), "budget");
    row.engine.available_kv_bytes = b.kv_budget;
    row.engine.kv_cache_tokens = r.tokens;
    row.engine.max_concurrency = concurrency;
    add_findings(row, r, blocks_short, needed_tokens);
    row.engine.starts = r.starts;

    row.tp = r.tp;
    row.pp = r.pp;
    if (gpus_.size() > 1) {
      for (std::size_t rank = 0; rank < gpus_.size(); ++rank) {
        const TrtllmStage& st = r.stages[rank / r.tp];
        GpuShare share;
        share.rank = static_cast<std::uint32_t>(rank % r.tp);
        share.stage = st.stage;
        share.gpu = gpus_[rank].id;
        share.weights_bytes = st.weights;
        share.kv_bytes = st.stage == decisive.stage || r.vswa
                             ? row.kv_bytes
                             : checked_mul(checked_mul(round_up(row.ctx, tpb), st.bytes_per_token, "KV cache"), query.batch,
                                           "KV cache");
        share.other_bytes = row.overhead_bytes;
        share.capacity_bytes =
            checked_add(checked_add(st.weights, row.overhead_bytes, "budget"), std::max(b.kv_budget, r.pool_bytes), "budget");
        row.per_gpu.push_back(share);
      }
    }
    row.assumptions = r.assumptions;
    row.detail = std::move(detail);
    return row;
  }

  PlanSettings settings() const override { return settings_; }

  // TensorRT-LLM gives the cache kv_cache_free_gpu_memory_fraction of what is free after the weights.
  std::uint64_t footprint(const Row& row) const override { return row.capacity_bytes; }
  bool ranks_alike() const override { return true; }
  /// The batch is the row's alone (the request's is only the settings' figure).
  bool depends_on_batch() const override { return false; }

  std::string budget_semantics() const override {
    return "gives the cache kv_cache_free_gpu_memory_fraction of the memory FREE AFTER THE WEIGHTS and its dry run "
           "(what other processes hold shrinks it: --trtllm-free-memory gives the figure it would measure)";
  }

  std::vector<std::uint64_t> default_contexts() const override {
    if (!contexts_.empty()) return contexts_;
    if (model_.max_context == 0)
      throw Error("--max_seq_len (--ctx) is required: the model does not state its trained context");
    return {model_.max_context};
  }

  std::vector<CacheDtypes> default_caches() const override { return {CacheDtypes{}}; }

  void write_section(const Plan& plan, EngineSection& section) const override {
    std::vector<const TrtllmResult*> results;
    for (const Row& row : plan.rows) results.push_back(&static_cast<const TrtllmDetail&>(*row.detail).result);
    write_trtllm_section(results, section);
  }

 private:
  /// The memory besides weights and the KV pool: the dry run's peak, estimated or what the given
  /// free memory implies.
  static std::uint64_t overhead_of(const TrtllmBudget& b) {
    if (!b.measured) return checked_add(checked_add(b.activation, b.non_torch, "TensorRT-LLM memory"), b.mamba_state, "TensorRT-LLM memory");
    const std::uint64_t used = checked_add(b.weights, b.free_memory, "TensorRT-LLM memory");
    return b.cuda_total > used ? b.cuda_total - used : 0;
  }

  /// What would stop TensorRT-LLM, or the row, in words a CI log can show.
  void add_findings(Row& row, const TrtllmResult& r, bool blocks_short, std::uint64_t needed_tokens) const {
    if (!r.dtype_supported) {
      row.findings.push_back({"dtype_not_supported_by_engine", r.dtype_reason, true});
      row.findings.push_back({"engine_refuses_start", "TensorRT-LLM would not start: " + r.dtype_reason, true});
    }
    if (!r.refusal.empty())
      row.findings.push_back({"engine_refuses_start", "TensorRT-LLM would not start: " + r.refusal, true});
    if (r.refusal.empty() && !r.vswa && row.ctx > r.max_seq_len_bound)
      row.findings.push_back({"max_seq_len_reduced",
                              fmt::format("the pool's {} tokens cannot hold one {}-token sequence: TensorRT-LLM lowers "
                                          "max_seq_len to {} and refuses longer requests",
                                          format_thousands(r.tokens), format_thousands(row.ctx),
                                          format_thousands(r.max_seq_len_bound)),
                              true});
    else if (r.refusal.empty() && blocks_short)
      row.findings.push_back({"kv_pool_too_small",
                              fmt::format("{} requests of {} tokens need {} tokens of KV blocks; TensorRT-LLM's pool holds "
                                          "{}",
                                          row.batch, format_thousands(row.ctx), format_thousands(needed_tokens),
                                          format_thousands(r.tokens)),
                              true});
    if (row.batch > r.max_batch_size)
      row.findings.push_back({"exceeds_max_batch_size",
                              fmt::format("{} sequences are more than max_batch_size {}: TensorRT-LLM runs at most {} at "
                                          "once",
                                          row.batch, r.max_batch_size, r.max_batch_size),
                              true});
    if (!r.budget.measured)
      row.findings.push_back({"estimate",
                              "TensorRT-LLM's free memory after the weights and the dry run is an estimate (it measures "
                              "it at startup); --trtllm-free-memory makes the token count exact",
                              false});
  }

  const ModelSpec& model_;
  std::vector<GpuSpec> gpus_;
  TrtllmSettings base_;
  PlanSettings settings_;
  std::vector<std::uint64_t> contexts_;
};

std::shared_ptr<const Profile> make_trtllm(const ModelSpec& model, const std::vector<GpuSpec>& gpus,
                                           const PlanRequest& request) {
  refuse_llamacpp_only_layouts(model, request, "TensorRT-LLM");
  return std::make_shared<TrtllmProfile>(model, gpus, request);
}

}  // namespace

const TrtllmResult* trtllm_result(const Row& row) {
  const auto* detail = dynamic_cast<const TrtllmDetail*>(row.detail.get());
  return detail ? &detail->result : nullptr;
}

const EngineEntry& trtllm_engine() {
  static const EngineEntry entry{"trtllm", "TensorRT-LLM", "tensorrt-llm trt-llm",
                                 "what TensorRT-LLM allocates for its paged KV cache, per GPU",
                                 "TensorRT-LLM profile (with --runtime trtllm; trtllm-serve's spellings accepted)", kOptions,
                                 &make_trtllm, nullptr, "trtllm-version", &parses_release<parse_trtllm_version>};
  return entry;
}

}  // namespace kvplan
