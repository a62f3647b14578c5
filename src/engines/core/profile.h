#pragma once
// What every engine profile implements, and the registry that names them. make_plan
// (engines/core/plan.cpp) is the only caller of a profile's price(): it loops over the rows,
// runs the searches and settles every verdict, so a profile only says what a row costs.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kvplan/gpu.h"
#include "kvplan/model_spec.h"
#include "kvplan/plan.h"

namespace kvplan {

struct EngineSection;  // reports/section.h

/// The engine's own figures for a row (Row::detail); each profile derives its own.
struct EngineDetail {
  virtual ~EngineDetail() = default;
};

/// System RAM a row uses, when the user declared some (llama.cpp keeps layers there): the core
/// decides the row against it and adds its reads to the decode bound.
struct HostMemory {
  std::uint64_t ram_bytes = 0;   ///< declared
  std::uint64_t host_bytes = 0;  ///< what the engine keeps there (weights, cache, buffers)
  std::uint64_t read_bytes = 0;  ///< what a decode step reads from it (the layers kept there)
  double ram_bandwidth_gbps = 0; ///< GB/s (10^9 bytes)
  std::string ram_bandwidth_source;  ///< where that figure comes from, in words
};

/// One row's question to a profile.
struct RowQuery {
  std::uint64_t ctx = 0;       ///< tokens per sequence, or all sequences' total when ctx_is_total
  bool ctx_is_total = false;   ///< llama.cpp's -c
  std::uint64_t batch = 1;
  CacheDtypes cache;           ///< {null, null}: the engine's default
  /// false: a probe whose caller reads only the verdict, the figures and the findings (the
  /// searches, fit's cache probe): an engine may leave its rule sentences out (llama.cpp's).
  bool words = true;
  /// false: the row's fields keep their words (weights_rule, findings) but the engine's own section
  /// (Row::detail) may leave its rule sentences out: a caller that shows no section (kvplan fit).
  bool section_words = true;
  const Dtype* weight_dtype = nullptr;  ///< nullptr: the checkpoint's own
  /// Offloadable layers to keep on the GPUs (llama.cpp's -ngl), chosen by the core's offload
  /// search (Profile::offload_layers); nullopt: the engine's own setting.
  std::optional<std::uint32_t> gpu_layers;
};

/// How an engine refuses a cache dtype it does not offer (Profile::cache_refusal).
struct CacheRefusal {
  std::string text;
  /// true: its rows carry `text` as the blocking finding dtype_not_supported_by_engine (SGLang,
  /// TensorRT-LLM); false: pricing a row throws it as an Error (no such llama.cpp or Ollama type).
  bool as_finding = true;
};

/// What a search varies.
enum class SearchAxis { context, batch };

/// An engine's rules bound to one model, one card and one set of settings.
class Profile {
 public:
  virtual ~Profile() = default;

  /// Every cost field of the row, its engine figures and its findings, per GPU. The core then
  /// settles total, headroom and verdict (decide): a profile never does.
  virtual Row price(const RowQuery& query) const = 0;
  /// price(query) into `row`, which holds an earlier row (or none): every field as price() sets
  /// it. A profile that overrides it reuses the row's vectors and strings, so that a sweep's rows,
  /// priced one after another into one Row, allocate nothing (engines/core/sweep.cpp).
  virtual void price_into(const RowQuery& query, Row& row) const { row = price(query); }

  /// The settings every row shares, resolved, with the budget and overhead rules in words.
  virtual PlanSettings settings() const = 0;

  /// The contexts, cache dtypes and batch of a request that names none (an engine's own flags
  /// may name them: llama.cpp's -c, -ctk/-ctv and -np).
  virtual std::vector<std::uint64_t> default_contexts() const = 0;
  virtual bool default_contexts_are_totals() const { return false; }
  /// true: the engine can pick the context itself (PlanRequest::context_auto_fit); its rows then
  /// carry the length it picked, and there is no longer context to search for.
  virtual bool picks_context() const { return false; }
  virtual std::vector<CacheDtypes> default_caches() const = 0;
  virtual std::optional<std::uint64_t> default_batch() const { return std::nullopt; }

  /// What the engine takes on its fullest GPU for this row: what it needs (the default), or the
  /// pool it allocates whatever the rows need (vLLM's utilization x total). A budget or co-tenants'
  /// memory (PlanRequest::budget_bytes, used_bytes) must leave room for it.
  virtual std::uint64_t footprint(const Row& row) const { return row.total_bytes; }
  /// How the engine's memory fraction reads (vLLM: of the card's total), for the report.
  virtual std::string budget_semantics() const { return "it takes what the rows need"; }
  /// True when the engine refuses to start (rather than running short) when co-tenants leave it
  /// less than its footprint (vLLM checks the free memory at start-up).
  virtual bool refuses_when_short() const { return false; }

  /// True when every GPU runs a rank of the same shape (tensor and pipeline parallelism: vLLM,
  /// SGLang, TensorRT-LLM), so that on unlike cards the smallest bounds them all; false when the
  /// engine splits by each card's memory (llama.cpp, Ollama).
  virtual bool ranks_alike() const { return false; }

  /// When the user declared system RAM and the engine would keep layers there: the number of
  /// offloadable layers of `query` (llama.cpp: n_layer + 1, the output layer counting as one), so
  /// the core can find the most that fit on the GPUs (RowQuery::gpu_layers). nullopt: the engine
  /// places no layers by memory (or no RAM was declared), and the row is priced as asked.
  virtual std::optional<std::uint32_t> offload_layers(const RowQuery& query) const {
    (void)query;
    return std::nullopt;
  }

  /// The system RAM the row uses, when RAM was declared; nullopt otherwise (then host memory is not
  /// counted: a row that does not fit on the GPUs does not fit).
  virtual std::optional<HostMemory> host_memory(const Row& row) const {
    (void)row;
    return std::nullopt;
  }

  /// The profile make() builds for this profile's model under `gpus` and `request`, sharing what
  /// this one read of the model alone (llama.cpp's and Ollama's tensor facts, a third of an Ollama
  /// build); nullptr when the engine has nothing to share (the caller then calls make()). kvplan
  /// fit's searches build theirs, for the batch its rows were priced at, from the one that priced them.
  virtual std::shared_ptr<const Profile> remake(const std::vector<GpuSpec>& gpus, const PlanRequest& request) const {
    (void)gpus;
    (void)request;
    return nullptr;
  }

  /// True when rows depend on the batch the profile was built with (PlanRequest::batch), not only
  /// on the row's own (RowQuery::batch): Ollama sizes its parallel slots by it. The batch search
  /// then builds a profile for every batch it tries; a profile that says false is reused (under
  /// vLLM a build was a fifth of `kvplan fit`'s time).
  virtual bool depends_on_batch() const { return true; }

  /// The values in [2, up_to] of the batch or of the context per sequence (`axis`; the rest as in
  /// `query`) from which a row may take less memory than at one fewer, because the engine changes a
  /// choice of its own there (Ollama E4 lowers its automatic batch as its prediction grows,
  /// e4_choices.h), in ascending order. Between two of them memory never shrinks as the value
  /// grows: the searches ask for those below their first answer and, when there are some, search
  /// each stretch, so that an answer's smaller values all fit. None (the default): memory never
  /// shrinks.
  virtual std::vector<std::uint64_t> shrink_points(const RowQuery& query, SearchAxis axis, std::uint64_t up_to) const {
    (void)query;
    (void)axis;
    (void)up_to;
    return {};
  }

  /// False when memory may also shrink at points shrink_points() does not list: Ollama's layer split
  /// across several GPUs moves a layer to another card as the context grows (E1 on a 5090 + 3090:
  /// Llama 3.1 70B fits at 14,273 tokens, not at 14,274, and again at 16,000). The searches then only
  /// start from 1, as they always did, and find the boundary that search finds, not necessarily the
  /// first one.
  virtual bool lists_every_shrink() const { return true; }

  /// When the engine does not offer `cache` at all: what it says, found without pricing a row
  /// (kvplan fit asks about seven cache dtypes for every model; most engines refuse several).
  /// nullopt: it offers it, or cannot tell without a row (the default: price one).
  virtual std::optional<CacheRefusal> cache_refusal(const CacheDtypes& cache) const {
    (void)cache;
    return std::nullopt;
  }

  /// The largest context per sequence the searches may try (an engine's own limit).
  virtual std::uint64_t search_cap() const { return std::uint64_t{1} << 40; }

  /// True when the engine can load the checkpoint at another weight dtype, so that "with fp8
  /// weights it fits" is an answer worth giving.
  virtual bool reprices_weights() const { return false; }

  /// The engine's own section of the report (vLLM's blocks, llama.cpp's buffers), from the rows'
  /// details. Nothing for profiles without one.
  virtual void write_section(const Plan& plan, EngineSection& section) const;
};

/// One of an engine's own flags, as the command line and the C API accept it.
struct OptionSpec {
  std::string_view name;        ///< long name without dashes: "max-num-seqs"
  std::string_view value_name;  ///< "N", "SIZE"; empty for a switch
  std::string_view help;
  /// Other spellings the engine accepts, space-separated, dashes included: "-tp --tp".
  std::string_view spellings = {};
  /// Spellings of kvplan's own short flags that mean this option only under this runtime
  /// (llama.cpp's -c and -b).
  std::string_view runtime_spellings = {};
  /// An environment variable the command line reads for it when the flag is not given.
  std::string_view env = {};
};

/// One engine kvplan knows, as registered in engines/registry.cpp.
struct EngineEntry {
  std::string_view name;      ///< --runtime value: "vllm"
  std::string_view display;   ///< as people write it: "vLLM"
  std::string_view aliases;   ///< other --runtime spellings, space-separated
  std::string_view summary;   ///< one phrase for --help
  std::string_view options_title;  ///< the --help group of its options
  std::span<const OptionSpec> options;
  /// Parses the request's engine options and settings into the engine's profile. Throws Error
  /// naming a setting the engine refuses (as request.names or the option's shown_as spell it).
  std::shared_ptr<const Profile> (*make)(const ModelSpec& model, const std::vector<GpuSpec>& gpus,
                                         const PlanRequest& request);
  /// The draft checkpoint the request's engine options name (vLLM's --speculative-config model),
  /// for the front end to load into request.draft_model; null: the engine reads none.
  std::optional<std::string> (*draft_named)(const PlanRequest& request) = nullptr;
  /// The option naming the release whose rules apply ("vllm-version"); empty: the engine has none.
  std::string_view version_option = {};
  /// Whether the engine has the rules of `release` ("0.11.0", as a container image's tag carries
  /// it): what version_option would take. kvplan check sets the option from a deployment's image.
  bool (*knows_release)(std::string_view release) = nullptr;
};

/// The draft checkpoint the request's engine names in its options, nullopt when none (or when the
/// runtime is not known: make_plan reports that).
std::optional<std::string> draft_checkpoint_named(const PlanRequest& request);

/// Sets every field of `row` to its default, as `Row{}` has it, keeping the buffers of its
/// vectors and strings for what is written into it next (Profile::price_into).
void clear_row(Row& row);

/// Every engine, in the order --help lists them.
std::span<const EngineEntry> engines();

/// The engine of a --runtime name or alias; Error naming `setting` (with the known names) otherwise.
const EngineEntry& find_engine(std::string_view name, std::string_view setting);

/// The batch a request's rows are priced at: the one the user gave, else the engine's default
/// (llama.cpp's -np, OLLAMA_NUM_PARALLEL), else the request's.
std::uint64_t rows_batch(const PlanRequest& request, const Profile& profile);

/// The request's value of one of the engine's options, or nullptr when not given.
const EngineOption* find_option(const PlanRequest& request, std::string_view name);

/// The one card of `gpus`; an Error naming the engine when it was given several (a profile that
/// does not split a model across GPUs yet).
const GpuSpec& single_gpu(const std::vector<GpuSpec>& gpus, std::string_view engine);

/// Refuses options the engine does not declare: "--parallel is a llama.cpp flag: add --runtime llama.cpp".
void refuse_foreign_options(const PlanRequest& request, const EngineEntry& engine);

/// Refuses (exit 3) a model with compressed caches (LayerSpec::compress_ratio: DeepSeek-V4 as
/// llama.cpp lays it out) under `engine`, whose rules for them kvplan has not read, pointing at the
/// llama.cpp profile by the request's name for the runtime setting.
void refuse_compressed_caches(const ModelSpec& model, const PlanRequest& request, std::string_view engine);

/// What a serving engine with its own cache rules (vLLM, SGLang, TensorRT-LLM) refuses (exit 3),
/// because only the llama.cpp profile has read the layout: compressed caches (as above); a
/// sparse-attention indexer on a layer that is not MLA (MiniMax-M3's MSA, Qwen4Exp's QSA, from their
/// GGUF files), where the engine's indexer rules are DSA's, for MLA models; and recurrent state read
/// from a GGUF file, which is llama.cpp's (f32 whatever the model) while the engine keeps its own
/// state dtype from the model's config.json.
void refuse_llamacpp_only_layouts(const ModelSpec& model, const PlanRequest& request, std::string_view engine);

}  // namespace kvplan
