// The Ollama profile as an engine: Ollama's settings (flags, OLLAMA_* variables, a Modelfile) and
// each row priced by its rules (rules.h): what Ollama puts on each GPU, and what stays in system RAM.

#include "engines/ollama/engine.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "engines/core/declared_ram.h"
#include "engines/core/release.h"
#include "engines/llamacpp/host_memory.h"
#include "engines/ollama/e4_choices.h"
#include "engines/ollama/rules.h"
#include "engines/ollama/section.h"
#include "kvplan/error.h"
#include "kvplan/units.h"
#include "model/wide_int.h"
#include "model/text.h"

namespace kvplan {

namespace {

constexpr std::array<OptionSpec, 11> kOptions = {{
    {"num-ctx", "LIST", "Tokens per sequence (num_ctx); comma-separated for several rows [default: the version's, "
                        "latest: by total VRAM 4096 / 32768 / 262144]",
     "", "", "OLLAMA_CONTEXT_LENGTH"},
    {"num-parallel", "N", "Sequences at once (OLLAMA_NUM_PARALLEL) [default: --batch, else the version's: 1; auto 4 or 2 "
                          "before v0.10]",
     "", "", "OLLAMA_NUM_PARALLEL"},
    {"kv-cache-type", "TYPE", "KV cache type: f16, q8_0 or q4_0 (quantized needs flash attention) [default: f16]", "", "",
     "OLLAMA_KV_CACHE_TYPE"},
    {"flash-attention", "BOOL", "Flash attention: 1/0, true/false (OLLAMA_FLASH_ATTENTION) [default: unset]", "", "",
     "OLLAMA_FLASH_ATTENTION"},
    {"gpu-overhead", "BYTES", "Memory Ollama leaves free on each GPU, in bytes or with a unit (OLLAMA_GPU_OVERHEAD) "
                              "[default: 0]",
     "", "", "OLLAMA_GPU_OVERHEAD"},
    {"num-gpu", "N", "Layers to put on the GPU (num_gpu), of the blocks + the output layer [default: Ollama decides]"},
    {"num-batch", "N", "num_batch [default: 512; 0.30 and later: the automatic batch]"},
    {"modelfile", "PATH", "An Ollama Modelfile: its PARAMETER num_ctx, num_gpu and num_batch apply"},
    {"ollama-version", "VERSION", "Whose rules: 0.2.0 to 0.33 (0.5.12, 0.11.3, 0.30.0) [default: latest]"},
    {"ram", "SIZE|auto",
     "System RAM Ollama may run the layers it cannot place on the GPUs from (64GiB; auto: this machine's available "
     "memory) [default: none counted]"},
    {"ram-bandwidth", "GB/s|TYPE",
     "That RAM's bandwidth for the speed bound: GB/s, or ddr4-3200 ddr5-4800 ddr5-5600 ddr5-6000 ddr5-6400 (dual "
     "channel) [default: ddr5-5600, 89.6 GB/s]"},
}};

struct OllamaDetail final : EngineDetail {
  OllamaResult result;
};

std::uint64_t parse_whole(std::string_view text, std::string_view flag) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    throw Error(fmt::format("{}: '{}' is not a whole number", flag, text));
  return value;
}

bool parse_bool(std::string_view text, std::string_view flag) {
  const std::string t = ascii_lower(text);
  // envconfig.Bool: strconv.ParseBool
  if (t == "1" || t == "t" || t == "true") return true;
  if (t == "0" || t == "f" || t == "false") return false;
  throw Error(fmt::format("{}: '{}' is not 1/0 or true/false", flag, text));
}

std::vector<std::string> split_commas(std::string_view text) {
  std::vector<std::string> items;
  while (true) {
    const std::size_t comma = text.find(',');
    items.emplace_back(text.substr(0, comma));
    if (comma == std::string_view::npos) return items;
    text.remove_prefix(comma + 1);
  }
}

const Dtype& row_dtype(std::string_view ggml_name) {
  // Every probe asks for one of Ollama's three cache types: each looked up by name once.
  static const Dtype& bf16 = parse_weight_dtype("bf16");
  static const Dtype& f16 = parse_kv_dtype("fp16", bf16);
  static const Dtype& q8_0 = parse_kv_dtype("q8_0", bf16);
  static const Dtype& q4_0 = parse_kv_dtype("q4_0", bf16);
  if (ggml_name == "f16") return f16;
  if (ggml_name == "q8_0") return q8_0;
  if (ggml_name == "q4_0") return q4_0;
  return parse_kv_dtype(ggml_name, bf16);
}

/// What Ollama's rows read of the model alone: read once, shared by the profiles built from one
/// another (Profile::remake; fit plans a model thousands of times).
struct OllamaModelPart {
  LlamaCppModelFacts facts;  ///< every row places the same tensors
  OllamaModelView view;      ///< the model as Ollama reads it
};

class OllamaProfile final : public Profile {
 public:
  /// `part`: another profile's of the same model, or null to read it here.
  OllamaProfile(const ModelSpec& model, const std::vector<GpuSpec>& gpus, const PlanRequest& request,
                std::shared_ptr<const OllamaModelPart> part = nullptr)
      : model_(model), part_(std::move(part)) {
    // The tensors are read first: a file llama.cpp cannot read is refused before the settings.
    std::optional<LlamaCppModelFacts> facts;
    if (!part_) facts = llamacpp_facts(model);
    const SettingNames& names = request.names;
    if (request.weight_dtype)
      throw Error(fmt::format("{} does not apply to the Ollama profile: Ollama runs the tag's GGUF blob (name the tag: "
                              "qwen3:32b-q8_0)",
                              names.weight_dtype));
    if (request.overhead_bytes)
      throw Error(fmt::format("{} does not apply to the Ollama profile: its reserve is MinimumMemory + "
                              "OLLAMA_GPU_OVERHEAD (--gpu-overhead) + its graph estimate",
                              names.overhead));
    if (!request.mtp_layers.empty())
      throw Error(fmt::format("{} does not apply to the Ollama profile: Ollama's blobs carry no MTP layers", names.mtp_layers));
    if (request.contexts_are_totals) throw Error("a total context for all sequences is llama.cpp's -c; Ollama's num_ctx is per sequence");
    const auto option = [&](std::string_view name) { return find_option(request, name); };

    if (const EngineOption* o = option("ollama-version")) options_.version = parse_ollama_version(o->value, o->shown_as);
    if (const EngineOption* o = option("modelfile")) {
      std::ifstream in(o->value, std::ios::binary);
      if (!in) throw Error(fmt::format("{}: cannot read '{}'", o->shown_as, o->value));
      std::ostringstream text;
      text << in.rdbuf();
      modelfile_ = parse_modelfile(text.str(), o->value);
    }
    // num_ctx: the flag (or OLLAMA_CONTEXT_LENGTH), kvplan's --ctx, the Modelfile; the request beats
    // the Modelfile, which beats the variable (server/routes.go modelOptions).
    const EngineOption* num_ctx = option("num-ctx");
    if (num_ctx && !request.contexts.empty())
      throw Error(fmt::format("give either {} or {} (both are num_ctx, tokens per sequence), not both", num_ctx->shown_as,
                              names.ctx));
    if (num_ctx && (num_ctx->shown_as != "OLLAMA_CONTEXT_LENGTH" || !modelfile_.num_ctx)) {
      for (const std::string& text : split_commas(num_ctx->value)) contexts_.push_back(parse_token_count(text, num_ctx->shown_as));
      ctx_from_ = num_ctx->shown_as;
    } else if (modelfile_.num_ctx && request.contexts.empty()) {
      contexts_.push_back(*modelfile_.num_ctx);
      ctx_from_ = "Modelfile PARAMETER num_ctx";
    }
    if (const EngineOption* o = option("num-parallel")) {
      parallel_ = parse_positive_u32(o->value, o->shown_as);
      if (*parallel_ > 256)
        throw Error(fmt::format("{}: {} sequences; the llama.cpp Ollama runs accepts 1 to 256 (LLAMA_MAX_SEQ)", o->shown_as,
                                *parallel_));
      if (request.batch_given && request.batch != *parallel_)
        throw Error(fmt::format("{} {} and {} {} disagree: both count sequences", o->shown_as, *parallel_, names.batch,
                                request.batch));
    } else if (request.batch_given) {
      if (request.batch > 256) throw Error(fmt::format("{}: {} sequences; llama.cpp runs at most 256", names.batch, request.batch));
      parallel_ = static_cast<std::uint32_t>(request.batch);
      batch_is_rows_ = true;
    }
    const EngineOption* kv = option("kv-cache-type");
    if (kv) {
      if (!request.caches.empty())
        throw Error(fmt::format("give either {} or {}, not both", kv->shown_as, names.kv_dtype));
      options_.kv_cache_type = parse_ollama_kv_type(kv->value, kv->shown_as);
    }
    // The cache types asked for are checked as each row is priced, not here: a sweep over every
    // dtype then leaves out the ones Ollama has no type for instead of refusing the whole grid.
    kv_dtype_flag_ = names.kv_dtype;
    batch_flag_ = names.batch;
    if (const EngineOption* o = option("flash-attention")) options_.flash_attention = parse_bool(o->value, o->shown_as);
    if (const EngineOption* o = option("gpu-overhead")) {
      const bool digits = !o->value.empty() && std::all_of(o->value.begin(), o->value.end(), [](char c) { return c >= '0' && c <= '9'; });
      options_.gpu_overhead = digits ? parse_whole(o->value, o->shown_as) : parse_memory_size_or_zero(o->value, o->shown_as);
    }
    if (const EngineOption* o = option("num-gpu")) {
      options_.num_gpu = o->value == "-1" ? -1 : static_cast<std::int64_t>(std::min<std::uint64_t>(parse_whole(o->value, o->shown_as), 1u << 20));
    } else if (modelfile_.num_gpu) {
      options_.num_gpu = modelfile_.num_gpu;
    }
    if (const EngineOption* o = option("num-batch")) {
      options_.num_batch = parse_positive_u32(o->value, o->shown_as);
    } else if (modelfile_.num_batch) {
      options_.num_batch = modelfile_.num_batch;
    }

    const std::uint32_t util = request.utilization_millionths.value_or(1'000'000);
    for (const GpuSpec& gpu : gpus) {
      OllamaDevice d;
      d.id = gpu.id;
      d.total_bytes = gpu.memory_bytes;
      d.free_bytes = scale_by_millionths(gpu.memory_bytes, util);
      devices_.push_back(d);
      gpu_ids_.push_back(gpu.id);
    }
    std::string why;
    default_ctx_ = ollama_default_num_ctx(options_.version, devices_, options_.gpu_overhead, &why);
    default_ctx_rule_ = why;

    settings_.batch = parallel_.value_or(1);
    settings_.utilization_millionths = util;
    settings_.overhead_bytes = options_.gpu_overhead;
    settings_.budget_rule = fmt::format(
        "each GPU's free memory (the card's memory x {}; nothing else loaded); fits when every layer goes to the GPU{} "
        "and llama.cpp's buffers + Ollama's reserve fit each one",
        format_percent(util), gpus.size() == 1 ? "" : "s");
    settings_.overhead_rule = fmt::format("Ollama {}: MinimumMemory 457 MiB + OLLAMA_GPU_OVERHEAD {} + its graph estimate "
                                          "(E1, E3) or llama-server's compute buffer and --fit margin (E4)",
                                          options_.version.text(), format_gib(static_cast<std::int64_t>(options_.gpu_overhead)));
    if (!modelfile_.from.empty()) settings_.notes.push_back("Modelfile FROM " + modelfile_.from);
    ram_ = read_declared_ram(request);
    if (ram_) {
      settings_.notes.push_back(declared_ram_text(*ram_) + "; " + ram_rule());
      settings_.budget_rule = fmt::format(
          "each GPU's free memory (the card's memory x {}; nothing else loaded); fits when llama.cpp's buffers + "
          "Ollama's reserve fit each GPU Ollama uses and what stays in system RAM fits the declared RAM",
          format_percent(util));
    }
    // The model as Ollama reads it, after the settings are checked (their errors come first): a
    // model it cannot place (recurrent layers, no weights) is refused here, not at every row.
    if (!part_) {
      auto read = std::make_shared<OllamaModelPart>();
      read->facts = std::move(*facts);
      read->view = ollama_model_view(model, &read->facts);
      part_ = std::move(read);
    }
  }

  /// make() and remake(): `part` null reads it.
  static std::shared_ptr<const Profile> build(const ModelSpec& model, const std::vector<GpuSpec>& gpus,
                                              const PlanRequest& request,
                                              std::shared_ptr<const OllamaModelPart> part = nullptr) {
    if (gpus.empty()) throw Error("no GPU to plan for");
    return std::make_shared<OllamaProfile>(model, gpus, request, std::move(part));
  }

  std::shared_ptr<const Profile> remake(const std::vector<GpuSpec>& gpus, const PlanRequest& request) const override {
    return build(model_, gpus, request, part_);
  }

  /// How Ollama treats system RAM in the era of the version, with its source.
  std::string ram_rule() const {
    const OllamaEra era = ollama_era(options_.version);
    std::string rule = "Ollama places the layers itself and runs those its GPUs cannot hold from system RAM; ";
    if (era == OllamaEra::e4)
      return rule + "from v0.30 (E4) it starts llama-server without checking system memory (llm/llama_server.go "
                    "llamaServerRunner.Load), so kvplan's over_ram is the only check";
    return rule + "Ollama v0.2 - v0.2x refuses to load when that part is more than free RAM + swap (\"model requires "
                  "more system memory\": llm/server.go NewLlamaServer to v0.12.10, llmServer.verifyLayout from "
                  "v0.12.11): the declared RAM stands for free RAM + swap";
  }

  std::optional<CacheRefusal> cache_refusal(const CacheDtypes& cache) const override {
    // What price() throws for a type Ollama has no cache of.
    if (!cache.k || cache.k != cache.v) return std::nullopt;
    std::optional<std::string> error =
        ollama_kv_type_error(cache.k->name == "fp16" ? "f16" : cache.k->name, kv_dtype_flag_);
    if (!error) return std::nullopt;
    return CacheRefusal{std::move(*error), false};
  }

  Row price(const RowQuery& query) const override {
    auto detail = std::make_shared<OllamaDetail>();
    OllamaResult& r = detail->result;
    OllamaOptions options = options_;
    options.words = query.words && query.section_words;  // OllamaResult::rules: the section's words
    if (query.cache.k) {
      if (query.cache.k != query.cache.v) throw Error("Ollama stores K and V at one type (OLLAMA_KV_CACHE_TYPE)");
      options.kv_cache_type = parse_ollama_kv_type(query.cache.k->name == "fp16" ? "f16" : query.cache.k->name, kv_dtype_flag_);
    }
    r = plan_ollama(model_, devices_, options, query.ctx, parallel_for(query), &part_->facts, &part_->view);
    if (options.words) r.rules.insert(r.rules.begin() + 1, ctx_rule(query.ctx));  // a probe's rules are never read

    Row row;
    const bool words_of_weights = query.words || weights_are_estimate(model_);
    row.ctx = r.num_ctx;
    row.batch = r.parallel;
    const Dtype& dtype = row_dtype(r.kv_type);
    row.cache = {&dtype, &dtype};
    row.weight_dtype = model_.weight_dtype;
    for (const LlamaCppKvCache& c : r.llama.caches)
      if (c.layers > 0)
        row.kv_bytes_per_token = checked_add(row.kv_bytes_per_token, (c.k_bytes + c.v_bytes) / (c.cells * c.streams), "cache");
    LayerKind windowed = LayerKind::sliding;
    std::uint64_t window = 0;
    for (const LayerSpec& layer : model_.layers)
      if (layer.kind == LayerKind::sliding || layer.kind == LayerKind::chunked) {
        windowed = layer.kind;
        window = layer.window;
      }
    for (const LlamaCppKvCache& c : r.llama.caches)
      if (c.layers > 0)
        row.breakdown.push_back({c.role == "SWA KV" ? windowed : LayerKind::full, c.role == "SWA KV" ? window : 0, c.layers,
                                 c.cells, c.k_bytes + c.v_bytes});

    for (const OllamaGpuShare& s : r.gpus) {
      GpuShare share;
      share.rank = s.index;
      share.gpu = gpu_ids_[s.index];
      share.weights_bytes = s.weights_bytes;
      share.kv_bytes = s.kv_bytes;
      share.other_bytes = s.reserve_bytes;
      share.capacity_bytes = s.capacity_bytes;
      row.per_gpu.push_back(share);
    }
    const auto headroom = [](const GpuShare& s) {
      // Wide: the sizes come from flags and files, and their sum can pass 2^63.
      return static_cast<i128>(s.capacity_bytes) - (static_cast<i128>(s.weights_bytes) + s.kv_bytes + s.other_bytes);
    };
    const bool spills = r.partly_on_cpu && !ram_;  // no RAM declared: the whole row must fit a GPU
    if (!spills && !row.per_gpu.empty()) {
      const GpuShare* fullest = &row.per_gpu.front();
      for (const GpuShare& s : row.per_gpu)
        if (headroom(s) < headroom(*fullest)) fullest = &s;
      row.weights_bytes = fullest->weights_bytes;
      row.kv_bytes = fullest->kv_bytes;
      row.overhead_bytes = fullest->other_bytes;
      row.capacity_bytes = fullest->capacity_bytes;
      // A probe's weights_rule is read only when it is an estimate's (plan.cpp's estimate finding).
      if (words_of_weights)
        row.weights_rule =
            r.partly_on_cpu
                ? fmt::format("{} of {} layers on the GPU{}: llama.cpp's model buffer ({}); the rest in system RAM",
                              r.gpu_layers, r.layers_model, devices_.size() == 1 ? "" : "s",
                              r.exact ? "the tensors of the GGUF" : "approximate")
                : fmt::format("every layer on the GPU{}: llama.cpp's model buffer ({})", row.per_gpu.size() == 1 ? "" : "s",
                              r.exact ? "the tensors of the GGUF" : "approximate");
      for (const GpuShare& s : row.per_gpu)
        if (s.weights_bytes + s.kv_bytes + s.other_bytes > s.capacity_bytes && r.estimate)
          row.findings.push_back({"ollama_estimate_low",
                                  fmt::format("Ollama's estimate puts {} on GPU {}, but llama.cpp's buffers there "
                                              "need more than its free memory: the load would fail",
                                              r.partly_on_cpu ? "its layers" : "every layer", s.rank),
                                  false});
    } else if (!spills) {
      // With RAM declared, no layer on a GPU: nothing of the row is on one.
      row.capacity_bytes = devices_.front().free_bytes;
      if (words_of_weights)
        row.weights_rule = fmt::format("no layer on the GPU{}: every layer in system RAM", devices_.size() == 1 ? "" : "s");
    } else {
      // Not every layer fits: the row is what running it all on one GPU would take.
      row.weights_bytes = r.whole_weights_bytes;
      row.kv_bytes = r.whole_kv_bytes;
      row.overhead_bytes = r.whole_reserve_bytes;
      row.capacity_bytes = devices_.front().free_bytes;
      for (const GpuShare& s : row.per_gpu) row.capacity_bytes = std::min(row.capacity_bytes, s.capacity_bytes);
      if (words_of_weights)
        row.weights_rule = fmt::format("every repeating and output layer ({}); {} of {} layers fit the GPU{}",
                                     r.exact ? "the tensors of the GGUF" : "approximate", r.gpu_layers, r.layers_model,
                                     devices_.size() == 1 ? "" : "s");
      row.findings.push_back({"partly_on_cpu",
                              fmt::format("Ollama puts {} of {} layers on the GPU{} and runs the rest from system RAM ({} of "
                                          "weights, {} of cache on the CPU){}",
                                          r.gpu_layers, r.layers_model, devices_.size() == 1 ? "" : "s",
                                          format_gib(static_cast<std::int64_t>(r.host_weights_bytes)),
                                          format_gib(static_cast<std::int64_t>(r.host_kv_bytes)),
                                          r.era == OllamaEra::e4 ? " (llama-server's --fit placement, INFERRED)" : ""),
                              true});
    }
    if (r.partly_on_cpu && ram_) note_partly_on_cpu(row, r);
    if (model_.max_context && query.ctx > model_.max_context)
      row.findings.push_back({"beyond_trained_context",
                              fmt::format("Ollama clamps num_ctx {} to the trained context {}: a sequence holds at most {} "
                                          "tokens (\"requested context size too large for model\")",
                                          format_thousands(query.ctx), format_thousands(model_.max_context),
                                          format_thousands(model_.max_context)),
                              true});
    if (!r.exact)
      row.findings.push_back({"estimate",
                              model_.file ? "the layer placement is an estimate: llama-server's --fit moves a MoE model's "
                                            "expert tensors to host memory before whole layers, which kvplan does not model"
                                          : "no GGUF tensor list: the layers' sizes are an even split of the checkpoint (give "
                                            "a GGUF file or an Ollama tag such as llama3.1:8b)",
                              false});
    if (weights_are_estimate(model_)) row.weights_rule = model_.weights_source + "; " + row.weights_rule;
    if (options_.version.at_least(0, 11, 11) && !options_.version.at_least(0, 12, 11))
      row.findings.push_back({"estimate",
                              "Ollama v0.11.11 - v0.12.10 measures Ollama-engine models at load (E2); kvplan uses the E1 "
                              "estimate for the layer count",
                              false});
    const u128 used = u128{row.weights_bytes} + row.overhead_bytes;
    row.engine.available_kv_bytes = used <= row.capacity_bytes ? row.capacity_bytes - static_cast<std::uint64_t>(used) : 0;
    row.engine.kv_cache_tokens = r.llama.n_ctx;
    row.engine.max_concurrency = static_cast<double>(r.parallel);
    if (devices_.size() == 1 && !spills) row.per_gpu.clear();  // one GPU: the row's own figures
    if (spills && row.per_gpu.size() == 0) {
      GpuShare share;
      share.gpu = gpu_ids_.front();
      share.capacity_bytes = row.capacity_bytes;
      row.per_gpu.push_back(share);
    }
    if (query.words)  // a probe's assumptions are never shown
      row.assumptions.push_back("free memory = the card's memory (nothing else on it); give --gpu as the free memory "
                                "nvidia-smi shows to match Ollama's memory.available");
    row.detail = std::move(detail);
    return row;
  }

  PlanSettings settings() const override { return settings_; }

  /// With system RAM declared: what the llama.cpp Ollama runs keeps there (host_memory.h). Ollama
  /// chooses the layers itself, so the core has no offload search to run (offload_layers).
  std::optional<HostMemory> host_memory(const Row& row) const override {
    if (!ram_ || !row.detail) return std::nullopt;
    return against_declared(llamacpp_host_memory(static_cast<const OllamaDetail&>(*row.detail).result.llama), *ram_);
  }

  /// "partly on CPU", not blocking: the RAM part is decided against the declared RAM by the core.
  void note_partly_on_cpu(Row& row, const OllamaResult& r) const {
    const HostMemory host = llamacpp_host_memory(r.llama);
    row.assumptions.push_back("system RAM counts llama.cpp's host model buffer, the cache of the layers kept there and "
                              "the logits buffer; the CPU's compute buffer is not counted");
    row.findings.push_back(
        {"partly_on_cpu",
         fmt::format("partly on CPU: Ollama puts {} of {} layers on the GPU{} and runs the rest from system RAM: {} there "
                     "({} weights, {} cache, {} logits){}",
                     r.gpu_layers, r.layers_model, devices_.size() == 1 ? "" : "s",
                     format_gib(static_cast<std::int64_t>(host.host_bytes)),
                     format_gib(static_cast<std::int64_t>(r.llama.model_host_bytes)),
                     format_gib(static_cast<std::int64_t>(r.llama.host_cache_bytes)),
                     format_gib(static_cast<std::int64_t>(r.llama.output_buffer_bytes.value_or(0))),
                     r.era == OllamaEra::e4 ? " (llama-server's --fit placement, INFERRED)" : ""),
         false});
  }

  std::string budget_semantics() const override {
    return "allocates what the rows need and fits layers to the memory it finds free";
  }

  std::vector<std::uint64_t> default_contexts() const override {
    return contexts_.empty() ? std::vector<std::uint64_t>{default_ctx_} : contexts_;
  }
  std::vector<CacheDtypes> default_caches() const override { return {CacheDtypes{}}; }
  std::optional<std::uint64_t> default_batch() const override {
    return parallel_ ? std::optional<std::uint64_t>(*parallel_) : std::nullopt;
  }
  std::uint64_t search_cap() const override {
    return std::numeric_limits<std::uint32_t>::max() / 2 / std::max<std::uint32_t>(parallel_.value_or(4), 1);
  }

  std::vector<std::uint64_t> shrink_points(const RowQuery& query, SearchAxis axis, std::uint64_t up_to) const override {
    // The rows' own num_ctx and this profile's parallel slots, as price() hands them to plan_ollama.
    return ollama_shrink_points(model_, devices_, options_, query.ctx, parallel_for(query), axis == SearchAxis::batch,
                                up_to, &part_->facts, &part_->view);
  }

  /// On several GPUs Ollama (or llama-server's --fit) chooses the layer split by the memory each row
  /// needs, so a longer context can move a layer to another card and take less on the fullest.
  bool lists_every_shrink() const override { return devices_.size() == 1; }

  /// With the slots set by the batch (not OLLAMA_NUM_PARALLEL), each row's own batch is its slots,
  /// as a profile built for that batch would have them: the batch search reuses this profile.
  bool depends_on_batch() const override { return !batch_is_rows_; }

  void write_section(const Plan& plan, EngineSection& section) const override {
    std::vector<const OllamaResult*> results;
    for (const Row& row : plan.rows) results.push_back(&static_cast<const OllamaDetail&>(*row.detail).result);
    write_ollama_section(results, section);
  }

 private:
  std::optional<std::uint32_t> parallel_for(const RowQuery& query) const {
    if (!batch_is_rows_) return parallel_;
    if (query.batch > 256) throw Error(fmt::format("{}: {} sequences; llama.cpp runs at most 256", batch_flag_, query.batch));
    return static_cast<std::uint32_t>(query.batch);
  }

  std::string ctx_rule(std::uint64_t ctx) const {
    if (!contexts_.empty()) return fmt::format("num_ctx {} ({})", ctx, ctx_from_);
    if (ctx == default_ctx_) return default_ctx_rule_;
    return fmt::format("num_ctx {} (--ctx)", ctx);
  }

  const ModelSpec& model_;
  std::shared_ptr<const OllamaModelPart> part_;  ///< never null once built
  OllamaOptions options_;
  Modelfile modelfile_;
  std::vector<OllamaDevice> devices_;
  std::vector<std::string> gpu_ids_;
  std::optional<std::uint32_t> parallel_;
  bool batch_is_rows_ = false;  ///< the slots are the request's batch: each row's own (RowQuery::batch)
  std::string batch_flag_;      ///< the batch setting's name, for the error that refuses > 256
  std::vector<std::uint64_t> contexts_;
  std::string ctx_from_;
  std::uint64_t default_ctx_ = 4096;
  std::string default_ctx_rule_;
  std::string kv_dtype_flag_;  ///< the cache-dtype setting's name, for the error that refuses one
  std::optional<DeclaredRam> ram_;  ///< the ram option: system RAM declared
  PlanSettings settings_;
};

std::shared_ptr<const Profile> make_ollama(const ModelSpec& model, const std::vector<GpuSpec>& gpus,
                                           const PlanRequest& request) {
  refuse_compressed_caches(model, request, "Ollama");
  return OllamaProfile::build(model, gpus, request);
}

}  // namespace

const OllamaResult* ollama_result(const Row& row) {
  const auto* detail = dynamic_cast<const OllamaDetail*>(row.detail.get());
  return detail ? &detail->result : nullptr;
}

const EngineEntry& ollama_engine() {
  static const EngineEntry entry{"ollama", "Ollama", "",
                                 "what Ollama (0.2 to 0.33) puts on each GPU, and what stays in system RAM",
                                 "Ollama profile (with --runtime ollama; OLLAMA_* variables read when a flag is not given)",
                                 kOptions, &make_ollama, nullptr, "ollama-version", &parses_release<parse_ollama_version>};
  return entry;
}

}  // namespace kvplan
