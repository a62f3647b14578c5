// kvplan fit: which catalog models run on a card. Every figure is make_plan's (the row at the asked
// context and batch) or find_limits' (the largest context, the concurrency): this file chooses the
// models, formats and caches to ask about, says why a row is rejected, and ranks the answers.

#include "kvplan/fit.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "engines/core/profile.h"
#include "engines/core/settle.h"
#include "engines/core/weight_formats.h"
#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "kvplan/units.h"
#include "loaders/ollama_tags.h"
#include "model/text.h"

namespace kvplan {

namespace {

constexpr std::string_view kRankingRule =
    "the largest model first (parameters, all experts counted), then the fastest decode bound; each model's best "
    "row: the most precise quality level, then cache, then weights (the larger format of a level), then the "
    "fastest bound";

bool holds_word(const ModelSpec& model, const std::string& word) {
  const auto has = [&](std::string_view text) { return ascii_lower(text).find(word) != std::string::npos; };
  if (has(model.id) || has(model.name) || has(model.architecture)) return true;
  return std::any_of(model.aliases.begin(), model.aliases.end(), has);
}

bool passes_filters(const ModelSpec& model, const FitRequest& request, const std::string& family) {
  if (!family.empty() && !holds_word(model, family)) return false;
  if (request.min_params && model.params < *request.min_params) return false;
  if (request.max_params && model.params > *request.max_params) return false;
  return true;
}

constexpr std::array<std::string_view, 6> kCacheLadder = {"fp8", "int8", "q8_0", "int4", "q4_0", "nvfp4"};

/// The engine's own cache ({null, null}: its default, lossless), then the advisor's quantized
/// ladder (fp8, int8, q8_0, int4, q4_0, nvfp4) as far as the quality level allows. The engine
/// refuses the ones it does not offer.
std::vector<CacheDtypes> cache_candidates(const ModelSpec& spec, Quality allowed) {
  std::vector<CacheDtypes> out{CacheDtypes{}};
  for (const std::string_view name : kCacheLadder) {
    const Dtype& type = parse_kv_dtype(name, *spec.weight_dtype);
    if (quality_of(type) <= allowed) out.push_back({&type, &type});
  }
  return out;
}

Quality cache_quality(const CacheDtypes& cache) {
  Quality q = Quality::lossless;
  for (const Dtype* type : {cache.k, cache.v})
    if (type) q = std::max(q, quality_of(*type));
  return q;
}

const Finding* refusing_dtype(const Row& row) {
  for (const Finding& f : row.findings)
    if (f.code == "dtype_not_supported_by_engine") return &f;
  return nullptr;
}

/// Why a row does not run at the asked context and batch; empty when it does.
std::string rejection(const Row& row, std::uint64_t trained_context) {
  if (row.verdict == Verdict::engine_refuses || !row.fits) {
    for (const Finding& f : row.findings)
      if (f.blocking) return f.text;
    if (row.verdict == Verdict::engine_refuses) return "the engine would not start with these settings";
    return fmt::format("needs {} of {} ({} over)", format_gib(static_cast<std::int64_t>(row.total_bytes)),
                       format_gib(static_cast<std::int64_t>(row.capacity_bytes)), format_gib(-row.headroom_bytes));
  }
  if (trained_context && row.ctx > trained_context)
    return fmt::format("ctx {} is beyond the model's trained context of {} tokens", format_thousands(row.ctx),
                       format_thousands(trained_context));
  return {};
}

bool loads_gguf(std::string_view runtime) { return runtime == "llama.cpp" || runtime == "ollama"; }

/// The most rows `model` can give: each format fit_variants finds x every cache candidate.
std::size_t most_rows(const ModelSpec& model, std::string_view runtime) {
  if (!model.weight_dtype) return 0;
  const std::size_t formats = 1 + (loads_gguf(runtime) ? ollama_variants(model.id).size() : 0);
  return formats * (1 + kCacheLadder.size());
}

double speed_of(const FitRow& row) { return row.row.decode_bound ? row.row.decode_bound->tokens_per_s_per_sequence : 0.0; }

/// Within one model: the most precise level; at one level the more precise cache, then the more
/// precise weights and the larger of one level (q4_K_M keeps more bits than q4_K_S), then the
/// fastest bound, then the longest context.
bool better_in_model(const FitRow& a, const FitRow& b) {
  if (a.quality != b.quality) return a.quality < b.quality;
  if (a.cache_quality != b.cache_quality) return a.cache_quality < b.cache_quality;
  if (a.format.quality != b.format.quality) return a.format.quality < b.format.quality;
  if (a.row.weights_bytes != b.row.weights_bytes) return a.row.weights_bytes > b.row.weights_bytes;
  if (speed_of(a) != speed_of(b)) return speed_of(a) > speed_of(b);
  return a.max_ctx.value_or(0) > b.max_ctx.value_or(0);
}

struct Evaluation {
  const std::vector<GpuSpec>& gpus;
  const FitRequest& request;
  FitResult& result;

  void refuse(const ModelSpec& model, const FitFormat& format, std::string cache, std::string reason) {
    result.refusals.push_back({model.id, format.name, format.kind, std::move(cache), std::move(reason)});
  }

  /// The plan of `caches` at the asked context and batch, with the profile offered_caches built
  /// for the same settings (the request differs in what no profile reads, unless an engine option
  /// names a cache type too: llama.cpp's -ctk beside the list, which make_plan then refuses, as the
  /// engine would).
  Plan plan_of(const ModelSpec& model, const std::vector<CacheDtypes>& caches, const std::shared_ptr<const Profile>& made) {
    PlanRequest asked = request.base;
    asked.caches = caches;
    asked.rows_only = true;  // the largest context is find_limits' (evaluate), asked once
    asked.section_words = false;  // no fit report shows a row's engine section (evaluate drops it)
    Plan plan = made && request.base.engine_options.empty() ? make_plan_with(made, model, gpus, asked)
                                                            : make_plan(model, gpus, asked);
    if (result.settings.budget_rule.empty()) result.settings = plan.settings;
    return plan;
  }

  /// A cache dtype the engine does not take (its profile refuses it without a row, make_plan throws
  /// for it, or its row has a finding that the engine does not offer it), listed in the order of
  /// the candidates (cache_candidates).
  struct Refusal {
    std::size_t candidate;
    std::string cache;
    std::string reason;
  };

  /// One variant's candidates, as evaluate takes them: the ones still in the running with their
  /// place in the list, and the refused ones.
  struct Candidates {
    std::uint64_t batch = 1;  ///< the rows' batch, as make_plan resolves it (rows_batch)
    std::vector<CacheDtypes> caches;
    std::vector<std::size_t> places;
    std::vector<Refusal> refused;
  };

  /// make_plan with every candidate at once; when the engine refuses one outright (an Error), each
  /// alone, so that the others still count. The rows of the caches it takes. An unsupported
  /// architecture before any cache the engine offers refuses the model (evaluate's caller, with the
  /// candidates refused before it): it is not modelled for the engine's own dtype. Only for another
  /// one (SGLang's fp4 cache beside sliding layers) is that dtype not a row.
  std::vector<Row> plan_rows(const ModelSpec& model, const FitVariant& variant, Candidates& c,
                             const std::shared_ptr<const Profile>& made) {
    try {
      return std::move(plan_of(variant.spec, c.caches, made).rows);
    } catch (const Error&) {
      // Each alone, below.
    }
    std::vector<Row> rows;
    Candidates taken;
    taken.batch = c.batch;
    taken.refused = std::move(c.refused);
    bool offered = false;  // a row of a cache the engine offers (no finding refusing its dtype)
    for (std::size_t i = 0; i < c.caches.size(); ++i) {
      try {
        Plan plan = plan_of(variant.spec, {c.caches[i]}, made);
        offered = offered || !refusing_dtype(plan.rows.front());
        rows.push_back(std::move(plan.rows.front()));
        taken.caches.push_back(c.caches[i]);
        taken.places.push_back(c.places[i]);
      } catch (const Error& plan_error) {
        // make_plan checks the request before it prices a row: the engine's own refusal of the
        // model or of the cache dtype, when pricing it throws, is the reason given.
        const std::optional<Error> own = made ? pricing_error(*made, c.caches[i], c.batch) : std::nullopt;
        const Error& error = own ? *own : plan_error;
        if (error.code() == ExitCode::unsupported_architecture && !offered) {
          // The model is refused: the candidates refused before this one stay listed.
          std::erase_if(taken.refused, [&](const Refusal& r) { return r.candidate > c.places[i]; });
          flush(model, variant, taken.refused);
          throw error;
        }
        taken.refused.push_back({c.places[i], c.caches[i].label(), error.what()});
      }
    }
    c = std::move(taken);
    return rows;
  }

  /// The Error pricing `cache` at the asked context and `batch` throws; nullopt when it prices it.
  std::optional<Error> pricing_error(const Profile& profile, const CacheDtypes& cache, std::uint64_t batch) {
    RowQuery query;
    query.words = false;
    query.ctx = request.base.contexts.front();
    query.batch = batch;
    query.cache = cache;
    try {
      (void)profile.price(query);
    } catch (const Error& error) {
      return error;
    }
    return std::nullopt;
  }

  /// The candidates the engine may offer: those its profile refuses without a row
  /// (Profile::cache_refusal; 5 of 7 candidates under SGLang) are refused, make_plan decides the
  /// rest. `profile`: the engine's profile for the variant.
  Candidates offered_caches(const ModelSpec& model, const FitVariant& variant, const std::vector<CacheDtypes>& all,
                            std::shared_ptr<const Profile>& profile) {
    const EngineEntry& engine = find_engine(request.base.runtime, request.base.names.runtime);
    try {
      profile = engine.make(variant.spec, gpus, request.base);
    } catch (const Error& error) {
      if (error.code() == ExitCode::unsupported_architecture) throw;
      refuse(model, variant.format, "", error.what());
      return {};
    }
    Candidates out;
    out.batch = rows_batch(request.base, *profile);
    for (std::size_t i = 0; i < all.size(); ++i) {
      if (std::optional<CacheRefusal> refused = profile->cache_refusal(all[i])) {
        // What its row would say (its finding, or the Error make_plan would throw), without pricing it.
        out.refused.push_back({i, all[i].label(), std::move(refused->text)});
        continue;
      }
      out.caches.push_back(all[i]);
      out.places.push_back(i);
    }
    return out;
  }

  void flush(const ModelSpec& model, const FitVariant& variant, std::vector<Refusal>& refused) {
    std::stable_sort(refused.begin(), refused.end(),
                     [](const Refusal& a, const Refusal& b) { return a.candidate < b.candidate; });
    for (Refusal& r : refused) refuse(model, variant.format, std::move(r.cache), std::move(r.reason));
    refused.clear();
  }

  void evaluate(const ModelSpec& model, const FitVariant& variant) {
    std::shared_ptr<const Profile> profile;
    Candidates candidates = offered_caches(model, variant, cache_candidates(variant.spec, request.quality), profile);
    std::vector<Row> rows = candidates.caches.empty() ? std::vector<Row>{} : plan_rows(model, variant, candidates, profile);
    // Drop what the engine does not offer (a blocking finding naming the dtype) and what resolves
    // to a cache already seen ("auto" may mean one of the quantized ones).
    std::vector<CacheDtypes> kept_caches;
    std::vector<Row> kept_rows;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (const Finding* f = refusing_dtype(rows[i])) {
        candidates.refused.push_back({candidates.places[i], rows[i].cache.label(), f->text});
        continue;
      }
      const bool seen = std::any_of(kept_rows.begin(), kept_rows.end(), [&](const Row& r) {
        return r.cache.k == rows[i].cache.k && r.cache.v == rows[i].cache.v;
      });
      if (seen || cache_quality(rows[i].cache) > request.quality) continue;
      kept_caches.push_back(candidates.caches[i]);
      kept_rows.push_back(std::move(rows[i]));
    }
    flush(model, variant, candidates.refused);
    if (kept_rows.empty()) return;

    LimitsRequest limits_request;
    limits_request.plan = request.base;
    limits_request.plan.caches = kept_caches;
    // The batch the rows were priced at (the engine's default when none was given), as find_limits
    // would resolve it: it then builds no profile only to ask.
    limits_request.plan.batch = candidates.batch;
    limits_request.plan.batch_given = true;
    limits_request.search_uncapped_ctx = false;
    limits_request.search_gpus = false;
    limits_request.answer_rows = false;
    limits_request.known_rows = kept_rows;  // make_plan's rows at the asked context and batch
    Limits limits;
    try {
      // Its profiles, for the rows' batch, share what this variant's read of the model (remake).
      limits = find_limits_with(profile.get(), variant.spec, gpus, limits_request);
    } catch (const Error& error) {
      refuse(model, variant.format, "", error.what());
      return;
    }
    result.batch = limits.batch;
    for (std::size_t i = 0; i < kept_rows.size(); ++i) {
      FitRow out;
      out.model_id = model.id;
      out.model_name = model.name;
      out.architecture = model.architecture;
      out.params = model.params;
      out.active_params = model.active_params;
      out.trained_context = model.max_context;
      out.format = variant.format;
      out.cache_quality = cache_quality(kept_rows[i].cache);
      out.quality = std::max(out.format.quality, out.cache_quality);
      out.row = std::move(kept_rows[i]);
      // No fit report shows the engine's own section, and it is most of a row's memory (the
      // llama.cpp and Ollama results with their caches and devices): let the rows that follow reuse
      // it. Kept, the process touched 375 more pages under llama.cpp (each a page fault).
      out.row.detail.reset();
      const CacheLimits& found = limits.caches[i];
      out.max_ctx = found.max_ctx;
      out.ctx_stop = found.ctx_stop;
      out.max_batch = found.max_batch;
      out.batch_stop = found.batch_stop;
      out.rejected = rejection(out.row, model.max_context);
      result.rows.push_back(std::move(out));
    }
  }
};

}  // namespace

Quality quality_of(const Dtype& type) {
  const std::uint64_t bits_x_elements = std::uint64_t{type.block_bytes} * 8;  // bits per value x block_elements
  if (bits_x_elements >= std::uint64_t{16} * type.block_elements) return Quality::lossless;
  if (type.name.substr(0, 3) == "fp8") return Quality::fp8;
  if (bits_x_elements >= std::uint64_t{8} * type.block_elements) return Quality::int8;
  return Quality::int4;
}

std::vector<FitVariant> fit_variants(const ModelSpec& model, std::string_view runtime) {
  std::vector<FitVariant> out;
  if (!model.weight_dtype) return out;
  out.push_back({FitFormat{std::string(model.weight_dtype->name), "checkpoint", "the catalog entry", Quality::lossless}, model});
  if (!loads_gguf(runtime)) return out;
  const std::vector<OllamaVariant> tags = ollama_variants(model.id);
  if (tags.empty()) return out;
  ModelCatalog own;
  own.models.push_back(model);
  for (const OllamaVariant& tag : tags) {
    // A GGUF format's Dtype has its main type's block (q4_k_m: q4_K, 144 B per 256 values, 4.5 bits).
    const Dtype& type = parse_requested_weight_dtype(tag.quant);
    out.push_back({FitFormat{tag.quant, "gguf", "Ollama tag " + tag.tag, quality_of(type)},
                   load_ollama_tag(tag.tag, own)});
  }
  return out;
}

std::string_view fit_ranking_rule() { return kRankingRule; }

FitResult fit_models(const std::vector<ModelSpec>& models, const std::vector<GpuSpec>& gpus, const FitRequest& request) {
  if (request.base.weight_dtype || !request.base.caches.empty()) throw Error("fit chooses the weight and cache dtypes itself");
  if (request.base.contexts.size() != 1) throw Error(fmt::format("{}: give one context", request.base.names.ctx));
  if (gpus.empty()) throw Error(fmt::format("{}: no GPU to plan for", request.base.names.gpu));
  FitResult result;
  result.runtime = std::string(find_engine(request.base.runtime, request.base.names.runtime).name);
  result.ctx = request.base.contexts.front();
  result.batch = request.base.batch;
  const std::string family = ascii_lower(request.family);

  // Room for every row before the first: a vector of 800-byte rows that doubles is a fresh mapping
  // each time, faulted in page by page (156 page faults under llama.cpp, about 1.5 ms on the 2-core
  // machine of docs/performance.md). What the rows do not fill is never touched.
  std::size_t most = 0;
  for (const ModelSpec& model : models)
    if (passes_filters(model, request, family)) most += most_rows(model, result.runtime);
  result.rows.reserve(most);

  bool checked = false;
  Evaluation evaluation{gpus, request, result};
  for (const ModelSpec& model : models) {
    if (!passes_filters(model, request, family)) continue;
    if (!checked) {
      // The settings themselves, once, at the engine's own dtypes: an error here is the user's (a
      // flag the engine does not take). A model the engine refuses (exit 3: an fp8 safetensors
      // release under llama.cpp) is refused below, and the next model checks them.
      PlanRequest settings = request.base;
      settings.rows_only = true;
      try {
        (void)make_plan(model, gpus, settings);
        checked = true;
      } catch (const Error& error) {
        if (error.code() != ExitCode::unsupported_architecture) throw;
      }
    }
    ++result.models;
    std::vector<FitVariant> variants;
    try {
      variants = fit_variants(model, result.runtime);
    } catch (const Error& error) {
      evaluation.refuse(model, FitFormat{}, "", error.what());
      continue;
    }
    for (const FitVariant& variant : variants) {
      if (variant.format.quality > request.quality) continue;
      try {
        evaluation.evaluate(model, variant);
      } catch (const Error& error) {
        if (error.code() != ExitCode::unsupported_architecture) throw;
        evaluation.refuse(model, variant.format, "", error.what());
      }
    }
  }

  // Each model's best fitting row, then every fitting row ranked: the largest model, its best
  // row's speed, its id, then the rows of one model best first.
  std::vector<std::size_t> best_of_model(result.rows.size(), result.rows.size());
  for (std::size_t i = 0, first = 0; i < result.rows.size(); ++i) {
    if (i > 0 && result.rows[i].model_id != result.rows[i - 1].model_id) first = i;  // rows come model by model
    if (!result.rows[i].rejected.empty()) continue;
    result.fitting.push_back(i);
    std::size_t& best = best_of_model[first];
    if (best == result.rows.size() || better_in_model(result.rows[i], result.rows[best])) best = i;
  }
  std::vector<std::size_t> model_best(result.rows.size());  // row -> its model's best fitting row
  for (std::size_t i = 0, first = 0; i < result.rows.size(); ++i) {
    if (i > 0 && result.rows[i].model_id != result.rows[i - 1].model_id) first = i;
    model_best[i] = best_of_model[first];
    if (best_of_model[first] == i) result.best.push_back(i);
  }
  const auto ranks_before = [&](std::size_t a, std::size_t b) {
    const FitRow& x = result.rows[a];
    const FitRow& y = result.rows[b];
    if (x.params != y.params) return x.params > y.params;
    if (x.model_id != y.model_id) {
      const double sx = speed_of(result.rows[model_best[a]]), sy = speed_of(result.rows[model_best[b]]);
      if (sx != sy) return sx > sy;
      return x.model_id < y.model_id;
    }
    return better_in_model(x, y);
  };
  std::stable_sort(result.best.begin(), result.best.end(), ranks_before);
  std::stable_sort(result.fitting.begin(), result.fitting.end(), ranks_before);
  return result;
}

}  // namespace kvplan
