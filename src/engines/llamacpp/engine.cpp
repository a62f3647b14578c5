// The llama.cpp profile as an engine: llama.cpp's flags, and each row priced by its rules
// (rules.h): what sits on the GPU against memory x utilization, with a flat overhead the user sets.

#include "engines/llamacpp/engine.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>
#include <limits>
#include <memory>

#include <fmt/format.h>

#include "engines/core/declared_ram.h"
#include "engines/llamacpp/host_memory.h"
#include "engines/llamacpp/rules.h"
#include "engines/llamacpp/section.h"
#include "model/checked.h"
#include "kvplan/error.h"
#include "kvplan/units.h"
#include "model/wide_int.h"

namespace kvplan {

namespace {

constexpr std::array<OptionSpec, 15> kOptions = {{
    {"ctx-size", "LIST",
     "-c under --runtime llama.cpp: llama.cpp's n_ctx, the TOTAL for all sequences (split across -np as llama-server "
     "does); 0 = the trained context [default: 0]",
     "", "-c"},
    {"parallel", "N", "-np: sequences (llama-server slots) [default: --batch, else 1]", "-np"},
    {"batch-size", "N", "-b under --runtime llama.cpp: logical batch n_batch [default: 2048]", "", "-b"},
    {"ubatch-size", "N", "-ub: physical batch n_ubatch [default: 512]", "-ub"},
    {"cache-type-k", "TYPE", "-ctk: K cache type: f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 iq4_nl [default: f16]", "-ctk"},
    {"cache-type-v", "TYPE", "-ctv: V cache type (quantized V needs flash attention) [default: f16]", "-ctv"},
    {"flash-attn", "MODE", "-fa: on, off or auto [default: auto]", "-fa"},
    {"kv-unified", "", "-kvu: one KV stream shared by all sequences", "-kvu"},
    {"swa-full", "", "Full-size SWA cache (sliding layers hold the whole context)"},
    {"n-gpu-layers", "N", "-ngl: layers on the GPU, of n_layer + 1 (the output layer); a number, all or auto [default: all]",
     "-ngl --gpu-layers"},
    {"split-mode", "MODE", "-sm: how several GPUs share the model: layer, row or none [default: layer]", "-sm"},
    {"tensor-split", "LIST", "-ts: each GPU's share of the layers, comma-separated (3,1) [default: by free memory]", "-ts"},
    {"main-gpu", "N", "-mg: the GPU --split-mode none uses [default: 0]", "-mg"},
    {"ram", "SIZE|auto",
     "System RAM llama.cpp may keep layers in (64GiB; auto: MemAvailable of /proc/meminfo): a row that does not fit "
     "on the GPU keeps the most layers that do, as llama.cpp's own fitting (llama_params_fit) would [default: none counted]"},
    {"ram-bandwidth", "GB/s|TYPE",
     "That RAM's bandwidth for the speed bound: GB/s, or ddr4-3200 ddr5-4800 ddr5-5600 ddr5-6000 ddr5-6400 (dual "
     "channel) [default: ddr5-5600, 89.6 GB/s]"},
}};

constexpr std::uint64_t kDefaultOverhead = 2 * GiB;

struct LlamaCppDetail final : EngineDetail {
  LlamaCppResult result;
};

std::uint64_t parse_count(std::string_view text, std::string_view flag) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    throw Error(fmt::format("{}: '{}' is not a whole number", flag, text));
  return value;
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
  // deepseek4's compressor states are counted with their caches: CSA's and LID's with the CSA item
  // (LID's as its indexer part), HCA's with the HCA item.
  const auto state_gpu_bytes = [&](std::string_view name) {
    for (const LlamaCppCompressorState& s : r.compressor_states)
      if (s.name == name) return s.gpu_bytes;
    return std::uint64_t{0};
  };
  for (const LlamaCppKvCache& c : r.caches) {
    if (c.layers == 0) continue;
    if (c.compress_ratio != 0) {
      const auto csa = std::find_if(items.begin(), items.end(), [](const KvBreakdownItem& i) { return i.compress_ratio == 4; });
      if (c.role == "LID KV" && csa != items.end()) {
        csa->indexer_layers = c.layers;
        csa->indexer_bytes = c.gpu_bytes + state_gpu_bytes("LID");
        csa->bytes += csa->indexer_bytes;  // parts of gpu_cache_bytes, a checked sum
        continue;
      }
      KvBreakdownItem item{LayerKind::sliding, 0, c.layers, c.cells, c.gpu_bytes + state_gpu_bytes(c.role.substr(0, 3))};
      item.compress_ratio = c.compress_ratio;
      items.push_back(item);
      continue;
    }
    if (c.role == "indexer KV" && !items.empty()) {
      // The DSA indexer's keys are part of the MLA layers' group, as the other profiles show them.
      KvBreakdownItem& mla_item = items.back();
      mla_item.indexer_layers = c.layers;
      mla_item.indexer_bytes = c.gpu_bytes;
      mla_item.bytes += c.gpu_bytes;  // both are parts of gpu_cache_bytes, a checked sum
      continue;
    }
    const bool swa = c.role == "SWA KV";
    items.push_back({swa ? windowed : mla ? LayerKind::mla : LayerKind::full, swa ? window : 0, c.layers, c.cells, c.gpu_bytes});
  }
  if (r.recurrent) items.push_back({LayerKind::linear, 0, r.recurrent->layers, 0, r.recurrent->gpu_bytes});
  return items;
}

class LlamaCppProfile final : public Profile {
 public:
  /// `facts`: another profile's of the same model, or null to read them here (first: a file
  /// llama.cpp cannot read is refused before the settings).
  LlamaCppProfile(const ModelSpec& model, const std::vector<GpuSpec>& gpus, const PlanRequest& request,
                  std::shared_ptr<const LlamaCppModelFacts> facts = nullptr)
      : model_(model),
        gpus_(gpus),
        facts_(facts ? std::move(facts) : std::make_shared<const LlamaCppModelFacts>(llamacpp_facts(model))) {
    const SettingNames& names = request.names;
    if (request.weight_dtype)
      throw Error(fmt::format("{} does not apply to the llama.cpp profile: llama.cpp runs the GGUF file's own tensors "
                              "(give the GGUF of the quantization you want)",
                              names.weight_dtype));
    if (!request.mtp_layers.empty())
      throw Error(fmt::format("{} does not apply to the llama.cpp profile: its cache follows the GGUF's own layer count",
                              names.mtp_layers));
    const auto option = [&](std::string_view name) { return find_option(request, name); };
    ram_ = read_declared_ram(request);

    // Sequences: -np, or the batch; both given, they must agree.
    if (const EngineOption* np = option("parallel")) {
      base_.n_parallel = parse_positive_u32(np->value, np->shown_as);
      if (request.batch_given && request.batch != base_.n_parallel)
        throw Error(fmt::format("{} {} and {} {} disagree: both count sequences", np->shown_as, base_.n_parallel,
                                names.batch, request.batch));
      parallel_given_ = true;
    } else if (!request.batch_given) {
      common_rules_.push_back("no -np: 1 sequence (llama-server without -np runs 4 slots sharing one unified cache; "
                              "price that with -np 4 --kv-unified)");
    }
    if (const EngineOption* o = option("batch-size")) base_.n_batch = parse_positive_u32(o->value, o->shown_as);
    if (const EngineOption* o = option("ubatch-size")) base_.n_ubatch = parse_positive_u32(o->value, o->shown_as);
    base_.kv_unified = option("kv-unified") != nullptr;
    base_.swa_full = option("swa-full") != nullptr;
    if (const EngineOption* o = option("flash-attn")) base_.flash_attn = parse_llamacpp_flash_attn(o->value);
    if (const EngineOption* o = option("n-gpu-layers")) {
      if (o->value == "all" || o->value == "-1" || o->value == "-2") {
        base_.n_gpu_layers = -1;
      } else if (o->value == "auto") {
        base_.n_gpu_layers = -1;
        if (!ram_)
          common_rules_.push_back("-ngl auto: llama-server's --fit may keep layers in host memory to fit the free "
                                  "memory it sees; kvplan prices all layers on the GPU (declare the system RAM to "
                                  "price the offload)");
      } else {
        base_.n_gpu_layers = static_cast<std::int64_t>(parse_count(o->value, o->shown_as));
        ngl_given_ = true;
      }
    }

    // Contexts: -c totals, or kvplan's per-sequence --ctx, not both.
    if (const EngineOption* c = option("ctx-size")) {
      if (!request.contexts.empty())
        throw Error(fmt::format("give either {} (llama.cpp's total for all sequences) or {} (kvplan's per sequence), "
                                "not both",
                                c->shown_as, names.ctx));
      for (const std::string& text : split_commas(c->value))
        ctx_totals_.push_back(text == "0" ? 0 : parse_token_count(text, c->shown_as));
    }
    // Cache types: -ctk/-ctv (one pair), or kvplan's list of K = V types, not both.
    const EngineOption* k = option("cache-type-k");
    const EngineOption* v = option("cache-type-v");
    if (k || v) {
      if (!request.caches.empty())
        throw Error(fmt::format("give either -ctk/-ctv (llama.cpp's) or {} (kvplan's list of K = V types), not both",
                                names.kv_dtype));
      typed_cache_ = {k ? &cache_dtype(parse_llamacpp_cache_type(k->value, k->shown_as)) : nullptr,
                      v ? &cache_dtype(parse_llamacpp_cache_type(v->value, v->shown_as)) : nullptr};
    }
    kv_dtype_setting_ = names.kv_dtype;

    // Several GPUs: llama.cpp's layer split (rules.h), by each card's memory unless -ts says.
    if (const EngineOption* o = option("split-mode")) base_.split_mode = parse_llamacpp_split_mode(o->value);
    if (const EngineOption* o = option("main-gpu")) base_.main_gpu = static_cast<std::uint32_t>(parse_count(o->value, o->shown_as));
    if (const EngineOption* o = option("tensor-split")) {
      for (const std::string& part : split_commas(o->value)) {
        char* end = nullptr;
        const float share = std::strtof(part.c_str(), &end);
        if (part.empty() || end != part.c_str() + part.size() || !(share >= 0.0f) || share > 1e30f)
          throw Error(fmt::format("{}: '{}' is not a share (a number of at least 0)", o->shown_as, part));
        base_.tensor_split.push_back(share);
      }
      if (base_.tensor_split.size() > gpus.size())
        throw Error(fmt::format("{}: {} shares for {} GPU{}", o->shown_as, base_.tensor_split.size(), gpus.size(),
                                gpus.size() == 1 ? "" : "s"));
      base_.tensor_split.resize(gpus.size(), 0.0f);
    }
    if (base_.main_gpu >= gpus.size())
      throw Error(fmt::format("--main-gpu: {} is not one of the {} GPU{} (llama.cpp: \"invalid value for main_gpu\")",
                              base_.main_gpu, gpus.size(), gpus.size() == 1 ? "" : "s"));

    settings_.batch = parallel_given_ ? base_.n_parallel : request.batch;
    settings_.overhead_bytes = request.overhead_bytes.value_or(kDefaultOverhead);
    settings_.utilization_millionths = request.utilization_millionths.value_or(1'000'000);
    for (const GpuSpec& gpu : gpus)
      base_.device_free.push_back(scale_by_millionths(gpu.memory_bytes, settings_.utilization_millionths));
    if (gpus.size() == 1) base_.device_free.clear();
    const std::uint64_t capacity = scale_by_millionths(gpus.front().memory_bytes, settings_.utilization_millionths);
    settings_.budget_rule =
        gpus.size() == 1
            ? fmt::format("{} = memory x utilization {}; fits when what llama.cpp puts on the GPU + overhead <= budget",
                          format_gib(static_cast<std::int64_t>(capacity)), format_percent(settings_.utilization_millionths))
            : fmt::format("each GPU's memory x utilization {}; fits when what llama.cpp puts on every GPU + the overhead "
                          "(on each GPU) <= its budget; the row's figures are the fullest GPU's",
                          format_percent(settings_.utilization_millionths));
    settings_.overhead_rule = fmt::format("runtime, {}", names.overhead);
    if (ram_)
      settings_.notes.push_back(fmt::format(
          "{}; {}", declared_ram_text(*ram_),
          ngl_given_ ? "-ngl is given, so llama.cpp keeps it (its --fit changes only settings left at their defaults)"
                     : "a row that does not fit on the GPU keeps -ngl " + std::string(kFitRule)));
  }

  /// llama.cpp's own fitting (llama_params_fit, common/fit; PR #16653), as kvplan applies it.
  static constexpr std::string_view kFitRule =
      "as llama.cpp's --fit chooses it: the most of the n_layer + 1 offloadable layers whose GPU part fits (layers "
      "leave the GPU from the first repeating layer on; llama_params_fit, PR #16653, with kvplan's overhead in place "
      "of its 1 GiB --fit-target margin; the context is kept as asked, not lowered)";

  std::optional<std::uint32_t> offload_layers(const RowQuery& query) const override {
    if (!ram_ || ngl_given_) return std::nullopt;
    const Row row = price(query);
    return static_cast<const LlamaCppDetail&>(*row.detail).result.n_layer_all + 1;
  }

  std::optional<CacheRefusal> cache_refusal(const CacheDtypes& cache) const override {
    // What price() throws for a type llama.cpp has no cache of (K first, as it reads them).
    for (const Dtype* type : {cache.k, cache.v})
      if (type)
        if (std::optional<std::string> error = llamacpp_cache_type_error(type->name, kv_dtype_setting_))
          return CacheRefusal{std::move(*error), false};
    return std::nullopt;
  }

  Row price(const RowQuery& query) const override {
    LlamaCppSettings s = base_;
    s.n_parallel = parallel_given_ ? base_.n_parallel : to_u32(query.batch);
    s.words = query.words && query.section_words;  // LlamaCppResult::rules: the section's words
    s.type_k = query.cache.k ? &ggml_of(*query.cache.k) : nullptr;
    s.type_v = query.cache.v ? &ggml_of(*query.cache.v) : nullptr;
    if (query.gpu_layers) s.n_gpu_layers = *query.gpu_layers;
    // The sentences only for a row that shows them (RowQuery::words): a probe's are never read.
    std::string why;
    if (query.ctx_is_total) {
      s.n_ctx = query.ctx;
      if (s.words)
        why = query.ctx == 0 ? "no -c: llama.cpp's default -c 0, the trained context"
                           : fmt::format("-c {}: the total for all {} (llama-server splits it across -np)", query.ctx,
                                         s.n_parallel == 1 ? std::string("1 sequence")
                                                           : fmt::format("{} sequences", s.n_parallel));
    } else {
      s.n_ctx = s.kv_unified ? query.ctx : checked_mul(query.ctx, s.n_parallel, "ctx x sequences");
      if (s.words)
        why = fmt::format("--ctx {} per sequence x {} sequence{}: -c {}", query.ctx, s.n_parallel,
                        s.n_parallel == 1 ? "" : "s", s.n_ctx);
    }
    auto detail = std::make_shared<LlamaCppDetail>();
    LlamaCppResult& r = detail->result;
    r = plan_llamacpp(model_, s, *facts_);
    if (s.words) {
      std::vector<std::string> rules{why};
      rules.insert(rules.end(), common_rules_.begin(), common_rules_.end());
      r.rules.insert(r.rules.begin(), rules.begin(), rules.end());
    }

    Row row;
    row.ctx = r.n_ctx_seq;
    row.batch = s.n_parallel;
    static const Dtype& f16 = cache_dtype(parse_llamacpp_cache_type("f16", ""));  // llama.cpp's default, by name once
    row.cache = {s.type_k ? &cache_dtype(*s.type_k) : &f16, s.type_v ? &cache_dtype(*s.type_v) : &f16};
    row.weight_dtype = model_.weight_dtype;
    row.kv_bytes = r.gpu_cache_bytes;
    row.state_bytes = r.recurrent ? r.recurrent->gpu_bytes : 0;
    for (const LlamaCppCompressorState& state : r.compressor_states) row.state_bytes += state.gpu_bytes;  // in gpu_cache_bytes
    for (const LlamaCppKvCache& c : r.caches)
      if (c.layers > 0)
        row.kv_bytes_per_token = checked_add(row.kv_bytes_per_token,
                                             (c.k_bytes + c.v_bytes) / (c.cells * c.streams) / std::max(c.compress_ratio, 1u),
                                             "cache");
    row.breakdown = breakdown_of(r, model_);
    row.weights_bytes = r.model_gpu_bytes;
    // Never "estimate..." (plan.cpp's estimate finding reads that prefix): a probe does without it.
    if (query.words)
      row.weights_rule = fmt::format("llama.cpp model buffer on the GPU ({} of {} layers, {}); {:.2f} GiB in host memory",
                                   r.gpu_layers, r.n_layer_all + 1,
                                   r.model_host_exact ? "sum of GGUF tensor sizes" : "approximate",
                                   static_cast<double>(r.model_host_bytes) / GiB);
    row.overhead_bytes = settings_.overhead_bytes;
    row.capacity_bytes = scale_by_millionths(gpus_.front().memory_bytes, settings_.utilization_millionths);
    if (gpus_.size() > 1) split_row(row, r);
    const u128 used = u128{row.weights_bytes} + row.overhead_bytes;
    row.engine.available_kv_bytes =
        used <= row.capacity_bytes ? row.capacity_bytes - static_cast<std::uint64_t>(used) : 0;
    row.engine.kv_cache_tokens = r.n_ctx;
    row.engine.max_concurrency = static_cast<double>(r.n_seq_max);
    if (ram_) note_partly_on_cpu(row, r, query.gpu_layers.has_value());
    row.detail = std::move(detail);
    return row;
  }

  PlanSettings settings() const override { return settings_; }

  /// With system RAM declared: what llama.cpp keeps there and what a decode step reads from it
  /// (host_memory.h). The core decides whether it fits the declared RAM.
  std::optional<HostMemory> host_memory(const Row& row) const override {
    if (!ram_ || !row.detail) return std::nullopt;
    return against_declared(llamacpp_host_memory(static_cast<const LlamaCppDetail&>(*row.detail).result), *ram_);
  }

  /// "partly on CPU": the layers left in system RAM and what they keep there.
  void note_partly_on_cpu(Row& row, const LlamaCppResult& r, bool fitted) const {
    row.assumptions.push_back("system RAM counts the host model buffer, the cache of the layers kept there and the "
                              "logits buffer; the CPU's compute buffer is not counted");
    if (r.gpu_layers > r.n_layer_all) return;  // every layer on the GPU
    const HostMemory host = llamacpp_host_memory(r);
    row.findings.push_back(
        {"partly_on_cpu",
         fmt::format("partly on CPU: -ngl {} keeps {} of {} layers on the GPU and the rest in system RAM: {} there "
                     "({} weights, {} cache, {} logits){}",
                     r.gpu_layers, r.gpu_layers, r.n_layer_all + 1, format_gib(static_cast<std::int64_t>(host.host_bytes)),
                     format_gib(static_cast<std::int64_t>(r.model_host_bytes)),
                     format_gib(static_cast<std::int64_t>(r.host_cache_bytes)),
                     format_gib(static_cast<std::int64_t>(r.output_buffer_bytes.value_or(0))),
                     fitted ? fmt::format("; -ngl {} {}", r.gpu_layers, kFitRule) : std::string()),
         false});
  }

  /// -np is the row's batch (RowQuery::batch) unless given; the request's is only the settings' figure.
  bool depends_on_batch() const override { return false; }

  /// make() and remake(): `facts` null reads them.
  static std::shared_ptr<const Profile> build(const ModelSpec& model, const std::vector<GpuSpec>& gpus,
                                              const PlanRequest& request,
                                              std::shared_ptr<const LlamaCppModelFacts> facts = nullptr) {
    if (gpus.empty()) throw Error("no GPU to plan for");
    return std::make_shared<LlamaCppProfile>(model, gpus, request, std::move(facts));
  }

  std::shared_ptr<const Profile> remake(const std::vector<GpuSpec>& gpus, const PlanRequest& request) const override {
    return build(model_, gpus, request, facts_);
  }

  std::string budget_semantics() const override {
    return "allocates what the rows need (model, cache and compute buffers)";
  }

  /// One share per GPU of the split (its layers' weights and cache, the overhead on each GPU); the
  /// row's figures become the fullest GPU's (the least headroom).
  void split_row(Row& row, const LlamaCppResult& r) const {
    std::vector<GpuShare> shares;
    for (std::uint32_t i = 0; i < gpus_.size(); ++i) {
      GpuShare share;
      share.rank = i;
      share.gpu = gpus_[i].id;
      share.capacity_bytes = scale_by_millionths(gpus_[i].memory_bytes, settings_.utilization_millionths);
      for (const LlamaCppDevice& d : r.devices)
        if (d.index == i) {
          share.weights_bytes = d.weights_bytes;
          share.kv_bytes = d.cache_bytes;
          share.other_bytes = settings_.overhead_bytes;
        }
      shares.push_back(share);
    }
    const auto headroom = [](const GpuShare& s) {
      const std::uint64_t used = (Checked(s.weights_bytes, "total memory") + s.kv_bytes + s.other_bytes).value();
      if (used > (std::uint64_t{1} << 62) || s.capacity_bytes > (std::uint64_t{1} << 62))
        throw Error("total memory is too large to compare (over 2^62 bytes)");
      return static_cast<std::int64_t>(s.capacity_bytes) - static_cast<std::int64_t>(used);
    };
    const GpuShare* fullest = &shares.front();
    for (const GpuShare& s : shares)
      if ((s.other_bytes > 0 || s.weights_bytes > 0) && headroom(s) < headroom(*fullest)) fullest = &s;
    row.weights_bytes = fullest->weights_bytes;
    row.kv_bytes = fullest->kv_bytes;
    row.overhead_bytes = fullest->other_bytes;
    row.capacity_bytes = fullest->capacity_bytes;
    row.state_bytes = 0;
    for (const LlamaCppDevice& d : r.devices)
      if (d.index == fullest->rank) row.state_bytes = d.state_bytes;
    const u128 used = u128{row.weights_bytes} + row.overhead_bytes;
    row.engine.available_kv_bytes = used <= row.capacity_bytes ? row.capacity_bytes - static_cast<std::uint64_t>(used) : 0;
    row.per_gpu = std::move(shares);
    row.assumptions.push_back(fmt::format("llama.cpp's layer split over {} GPUs: each card's memory stands for the free "
                                          "memory llama.cpp splits by; the overhead ({}) is on every GPU",
                                          gpus_.size(), format_gib(static_cast<std::int64_t>(settings_.overhead_bytes))));
  }

  std::vector<std::uint64_t> default_contexts() const override {
    return ctx_totals_.empty() ? std::vector<std::uint64_t>{0} : ctx_totals_;
  }
  bool default_contexts_are_totals() const override { return true; }

  std::optional<std::uint64_t> default_batch() const override {
    return parallel_given_ ? std::optional<std::uint64_t>(base_.n_parallel) : std::nullopt;
  }

  std::vector<CacheDtypes> default_caches() const override {
    if (typed_cache_.k || typed_cache_.v) return {typed_cache_};
    return {CacheDtypes{}};
  }

  /// llama.cpp keeps n_ctx in 32 bits: half of that across the sequences.
  std::uint64_t search_cap() const override {
    return std::numeric_limits<std::uint32_t>::max() / 2 / std::max<std::uint32_t>(base_.n_parallel, 1);
  }

  void write_section(const Plan& plan, EngineSection& section) const override {
    std::vector<const LlamaCppResult*> results;
    for (const Row& row : plan.rows) results.push_back(&static_cast<const LlamaCppDetail&>(*row.detail).result);
    write_llamacpp_section(results, section);
  }

 private:
  /// kvplan's name of a llama.cpp cache type (f16 -> fp16), for the row's label.
  static const Dtype& cache_dtype(const GgmlType& type) {
    static const Dtype& bf16 = parse_weight_dtype("bf16");
    // Every priced row asks for its two cache types: the answer for each type llama.cpp caches is
    // looked up once. Any other type, or one parse_kv_dtype refuses (kept as nullptr), is asked
    // again, so it is answered or thrown as before.
    struct Known {
      const GgmlType* type;
      const Dtype* dtype;
    };
    static const std::array<Known, 9> known = [] {
      std::array<Known, 9> out{};
      constexpr std::array<std::string_view, 9> names = {"f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl"};
      for (std::size_t i = 0; i < names.size(); ++i) {
        out[i].type = &ggml_type_by_name(names[i]);
        try {
          out[i].dtype = &parse_kv_dtype(out[i].type->name, bf16);
        } catch (const Error&) {
          out[i].dtype = nullptr;
        }
      }
      return out;
    }();
    for (const Known& k : known)
      if (k.type == &type && k.dtype) return *k.dtype;
    return parse_kv_dtype(type.name, bf16);
  }
  const GgmlType& ggml_of(const Dtype& type) const { return parse_llamacpp_cache_type(type.name, kv_dtype_setting_); }
  static std::uint32_t to_u32(std::uint64_t n) {
    if (n > std::numeric_limits<std::uint32_t>::max()) throw Error(fmt::format("{} sequences: too many for llama.cpp", n));
    return static_cast<std::uint32_t>(n);
  }

  const ModelSpec& model_;
  std::vector<GpuSpec> gpus_;
  std::shared_ptr<const LlamaCppModelFacts> facts_;  ///< read once, shared by remake()'s profiles
  LlamaCppSettings base_;
  bool parallel_given_ = false;
  bool ngl_given_ = false;  ///< -ngl N: llama.cpp's --fit leaves it alone
  std::optional<DeclaredRam> ram_;  ///< the ram option: system RAM declared
  std::vector<std::uint64_t> ctx_totals_;
  CacheDtypes typed_cache_;
  std::string kv_dtype_setting_;
  std::vector<std::string> common_rules_;
  PlanSettings settings_;
};

std::shared_ptr<const Profile> make_llamacpp(const ModelSpec& model, const std::vector<GpuSpec>& gpus,
                                             const PlanRequest& request) {
  return LlamaCppProfile::build(model, gpus, request);
}

}  // namespace

const EngineEntry& llamacpp_engine() {
  static const EngineEntry entry{"llama.cpp", "llama.cpp", "llamacpp llama-cpp",
                                 "what llama.cpp v0.4.0 allocates",
                                 "llama.cpp profile (with --runtime llama.cpp; llama.cpp's spellings accepted)", kOptions,
                                 &make_llamacpp};
  return entry;
}

}  // namespace kvplan
