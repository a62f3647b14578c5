// The inverse searches (kvplan max): the largest context, the largest batch and the fewest GPUs at
// which a row still fits. Each asks the same settle() as make_plan, so an answer is a verdict of
// the engine's own rules, and each is exact: memory never shrinks as the context, the batch or the
// GPU count's pressure grows (tests/property_test.cpp), so a search that keeps the boundary between
// a row that fits and one that does not finds it exactly, wherever it probes. Where an engine's
// own choices do make it shrink (Ollama E4's automatic batch, Profile::shrink_points), each
// stretch between two such points is searched by itself: the answer is the largest n whose every
// smaller n fits, never one past a gap.

#include <algorithm>
#include <array>
#include <functional>
#include <limits>
#include <span>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "engines/core/cache_cost.h"
#include "engines/core/profile.h"
#include "engines/core/decode_bound.h"
#include "engines/core/largest_fitting.h"
#include "engines/core/settle.h"
#include "kvplan/error.h"
#include "kvplan/search.h"
#include "kvplan/units.h"
#include "model/wide_int.h"

namespace kvplan {

namespace {

/// The names engines give their tensor- and pipeline-parallel flags (OptionSpec::name). The GPU
/// search sets these itself, so the request's own are dropped from its deployments.
constexpr std::array<std::string_view, 3> kTensorParallelOptions = {"tensor-parallel-size", "tp-size", "tp_size"};
constexpr std::array<std::string_view, 3> kPipelineOptions = {"pp-size", "pp_size", "pipeline-parallel-size"};
/// The engines' flags that set the batch themselves (llama.cpp's -np, Ollama's OLLAMA_NUM_PARALLEL):
/// the batch search varies the batch, so their value becomes the request's batch instead.
constexpr std::array<std::string_view, 2> kBatchOptions = {"parallel", "num-parallel"};

bool is_one_of(std::string_view name, std::span<const std::string_view> names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

/// The engine's pipeline-stage option, or nullptr when it has none.
const OptionSpec* pipeline_option(const EngineEntry& engine) {
  for (const OptionSpec& spec : engine.options)
    if (is_one_of(spec.name, kPipelineOptions)) return &spec;
  return nullptr;
}

/// A row `query` asks for, or nullopt when the engine cannot price it (a size past 64 bits).
/// Unsupported architectures are not a "does not fit": they propagate (exit 3).
std::optional<Row> try_settle(const Profile& profile, const RowQuery& query, const ModelSpec& model,
                              const std::vector<GpuSpec>& gpus, const std::optional<MemoryRoom>& room) {
  try {
    return settle(profile, query, model, gpus, room);
  } catch (const Error& error) {
    if (error.code() == ExitCode::unsupported_architecture) throw;
    return std::nullopt;
  }
}

/// Why the row one step past an answer does not fit: a blocking finding (the engine's own limit)
/// or memory.
SearchStop stop_of(const std::optional<Row>& past) {
  if (!past) return {SearchBound::memory, ""};  // a size past 64 bits
  for (const Finding& finding : past->findings) {
    if (!finding.blocking) continue;
    // A budget or a pool too small is memory, the budget's or the pool's.
    if (finding.code == "over_budget" || finding.code == "kv_pool_too_small") return {SearchBound::memory, finding.code};
    return {SearchBound::engine, finding.code};
  }
  if (past->verdict == Verdict::engine_refuses) return {SearchBound::engine, "engine_refuses_start"};
  return {SearchBound::memory, ""};
}

/// The row at n (a context or a batch), or nullopt when the engine cannot price it.
using RowAt = std::function<std::optional<Row>(std::uint64_t)>;

/// A row the caller has already priced at n on the search's axis (kvplan fit's row at the asked
/// context and batch): the search starts from it instead of pricing it again.
struct KnownRow {
  std::uint64_t n = 0;
  const Row* row = nullptr;  ///< nullptr: none
  /// Whether the search may start from it. Only where memory never shrinks except at the profile's
  /// shrink points (Profile::lists_every_shrink): elsewhere a search that starts from it may find
  /// another of several boundaries than the one the search finds from 1.
  bool start_here = true;
};

/// The largest n in [1, limit] whose row fits, the row there and what stops the next step
/// (`at_limit` when the answer is the limit itself).
struct Found {
  std::optional<std::uint64_t> value;
  std::optional<Row> row;
  SearchStop stop;
};

/// Where the next probe between `low` (fits) and `high` (does not) goes: where the headroom, taken
/// as linear between their rows, runs out; nullopt when the rows cannot say (the miss was not
/// memory's, or it could not be priced).
using Guess = std::function<std::optional<std::uint64_t>(std::uint64_t low, std::uint64_t high)>;

/// The last n that holds in (low, high], given that low holds and high does not (no guess:
/// bisection). Each probe only moves one end inward, so for a monotone `holds` the answer is
/// bisection's, whatever the probes. A guess is probed with its neighbour across the boundary (n + 1 after a fit, n - 1 after a
/// miss), which closes the bracket when the guess was right: about four probes where memory grows
/// linearly, against log2(high - low) for bisection (17 for a 128K context). A guess that did not
/// close it is followed by a midpoint, so the worst case stays within a few times bisection's.
std::uint64_t narrow(std::uint64_t low, std::uint64_t high, const std::function<bool(std::uint64_t)>& holds,
                     const Guess* guess) {
  bool bisect_next = false;
  while (high - low > 1) {
    const std::optional<std::uint64_t> guessed = bisect_next || !guess ? std::nullopt : (*guess)(low, high);
    if (!guessed) {
      const std::uint64_t middle = low + (high - low) / 2;
      (holds(middle) ? low : high) = middle;
      bisect_next = false;
      continue;
    }
    const std::uint64_t n = std::clamp(*guessed, low + 1, high - 1);
    if (holds(n)) {
      low = n;
      if (high - low > 1) (holds(n + 1) ? low : high) = n + 1;
    } else {
      high = n;
      if (high - low > 1) (holds(n - 1) ? low : high) = n - 1;
    }
    bisect_next = true;
  }
  return low;
}

/// How a search probes: from the limit down, then guided by the rows' headroom (a context, whose
/// answer is often the cap), or from 1 up, where the headroom of the last two rows that fit, taken
/// as linear, runs out (a batch, whose answer is far below its limit of 2^32).
enum class Probe { from_limit, from_below };

/// Where the probes from below go next, given that `low` holds: where the headroom of the last two
/// rows that fit, taken as linear, runs out; nullopt when they cannot say (fewer than two, or
/// headroom that does not fall).
using Extrapolation = std::function<std::optional<std::uint64_t>(std::uint64_t low)>;

/// The largest n in [low, end] for which `holds`, given that `low` holds and that `holds` does not
/// turn true again once false in this stretch. From below, an extrapolated n is probed with its
/// neighbour n + 1, which closes the bracket when the guess was right (1, 2, the guess and its
/// neighbour where memory grows linearly with n, against 2 log2(answer) probes by doubling and
/// bisection); a guess that did not close it is followed by a doubling, so the probes never fall
/// far behind doubling's. Each probe only raises the last n that holds, or sets the first that
/// does not, so the answer is bisection's wherever they go.
std::uint64_t largest_in(std::uint64_t low, std::uint64_t end, Probe probe, const std::function<bool(std::uint64_t)>& holds,
                         const Guess& guess, const Extrapolation& extrapolate) {
  if (low == end) return end;
  if (probe == Probe::from_limit) return holds(end) ? end : narrow(low, end, holds, &guess);
  bool guided = true;
  while (low < end) {
    const std::optional<std::uint64_t> guessed = guided ? extrapolate(low) : std::nullopt;
    const std::uint64_t next =
        guessed ? std::clamp(*guessed, low + 1, end) : (low > end / 2 ? end : low * 2);
    if (!holds(next)) return narrow(low, next, holds, &guess);
    low = next;
    if (guessed && low < end) {
      if (!holds(low + 1)) return low;
      ++low;
    }
    guided = !guessed;
  }
  return end;
}

/// The largest n in [1, limit] such that `holds` for every n' <= n; nullopt when not even 1 does.
/// `steps` (ascending) are where the engine may take less than at one fewer (Profile::
/// shrink_points): between them `holds` never turns true again once false, so each stretch is
/// searched by itself and the search stops at the first n that does not hold. Where an engine
/// shrinks, a larger n may hold again (under Ollama with a budget, 187 sequences fit where 179 to
/// 186 do not): the answer is still the last n before the first that does not. From the limit, a
/// stretch is probed at its end first: memory does not shrink inside it, so when its last n holds
/// every n of it does, and one probe settles it (its first n is then not probed either).
std::optional<std::uint64_t> largest_holding_guided(std::uint64_t limit, Probe probe,
                                                    const std::function<bool(std::uint64_t)>& holds, const Guess& guess,
                                                    const Extrapolation& extrapolate, std::span<const std::uint64_t> steps) {
  if (limit == 0) return std::nullopt;
  if (steps.empty()) {
    if (!holds(1)) return std::nullopt;
    return largest_in(1, limit, probe, holds, guess, extrapolate);
  }
  // Stretch by stretch: [start, the next step - 1], then [start, limit]; every n below `start`
  // holds. The largest n of a stretch that holds with every n before it, 0 when none does: a
  // stretch probed at its end first holds whole when that end holds.
  std::uint64_t start = 1;
  const auto stretch = [&](std::uint64_t end) -> std::uint64_t {
    if (probe == Probe::from_limit && holds(end)) return end;
    if (!holds(start)) return start - 1;
    return largest_in(start, end, probe, holds, guess, extrapolate);
  };
  const auto answer = [](std::uint64_t n) { return n == 0 ? std::nullopt : std::optional<std::uint64_t>(n); };
  for (const std::uint64_t step : steps) {
    if (step <= start) continue;
    if (step > limit) break;
    const std::uint64_t last = stretch(step - 1);
    if (last < step - 1) return answer(last);
    start = step;
  }
  return answer(stretch(limit));
}

/// Profile::shrink_points up to a value, for one search's axis; empty: none.
using StepsUpTo = std::function<std::vector<std::uint64_t>(std::uint64_t up_to)>;

Found search(const RowAt& row_at, std::uint64_t limit, SearchBound at_limit, const StepsUpTo& steps_up_to,
             Probe probe = Probe::from_limit, const KnownRow& seed = {}) {
  // The probes only ever raise the last n that fits and lower the last that does not, so the rows
  // at the bracket's ends are the last of each kind probed: the guess reads their headroom, and the
  // answer's row and the row one past it are kept, not priced again. The seed is borrowed, not copied.
  struct Probed {
    std::uint64_t n = 0;  // 0: none yet
    std::optional<Row> row;
    const Row* borrowed = nullptr;  // the seed's row, when it is this end
    const Row* view() const { return row ? &*row : borrowed; }
  };
  Probed last_fit, last_miss;
  std::uint64_t fit_before_n = 0;  // the fit probed before last_fit (0: none), and its headroom
  std::int64_t fit_before_room = 0;
  std::vector<std::pair<std::uint64_t, bool>> known;  // every n probed: a second pass prices only new ones
  const auto fits = [&](std::uint64_t n) {
    for (const auto& [at, fit] : known)
      if (at == n) return fit;
    Probed probed{n};
    if (seed.row && n == seed.n) probed.borrowed = seed.row;
    else probed.row = row_at(n);
    const bool fit = probed.view() && probed.view()->fits;
    if (fit && last_fit.view()) {
      fit_before_n = last_fit.n;
      fit_before_room = last_fit.view()->headroom_bytes;
    }
    (fit ? last_fit : last_miss) = std::move(probed);
    known.emplace_back(n, fit);
    return fit;
  };
  // A seed the search may start from; otherwise it is only a probe that costs nothing when asked.
  const bool seeded = seed.row && seed.start_here && seed.n >= 1 && seed.n <= limit;
  if (seeded) (void)fits(seed.n);
  const Guess guess = [&](std::uint64_t low, std::uint64_t high) -> std::optional<std::uint64_t> {
    if (last_fit.n != low || last_miss.n != high || !last_fit.view() || !last_miss.view()) return std::nullopt;
    const std::int64_t room = last_fit.view()->headroom_bytes;  // >= 0: it fits
    const std::int64_t short_by = last_miss.view()->headroom_bytes;
    if (room < 0 || short_by >= 0) return std::nullopt;  // the miss is not memory's: nothing to interpolate
    const u128 span = u128{static_cast<std::uint64_t>(room)} + static_cast<std::uint64_t>(-(short_by + 1)) + 1;
    return low + static_cast<std::uint64_t>(u128{high - low} * static_cast<std::uint64_t>(room) / span);
  };
  const Extrapolation extrapolate = [&](std::uint64_t low) -> std::optional<std::uint64_t> {
    if (last_fit.n != low || !last_fit.view() || fit_before_n == 0 || fit_before_n >= low) return std::nullopt;
    const std::int64_t room = last_fit.view()->headroom_bytes;
    if (room < 0 || fit_before_room <= room) return std::nullopt;  // headroom that does not fall: no line to follow
    // Each n past `low` costs (fit_before_room - room) / (low - fit_before_n); the headroom runs out
    // after room / that many more.
    const u128 more = u128{static_cast<std::uint64_t>(room)} * (low - fit_before_n) /
                      static_cast<std::uint64_t>(fit_before_room - room);
    return static_cast<std::uint64_t>(std::min<u128>(u128{low} + more, std::numeric_limits<std::uint64_t>::max()));
  };
  const auto row_of = [&](Probed& probed, std::uint64_t n) -> std::optional<Row> {
    if (probed.n != n) return row_at(n);
    if (probed.borrowed) return *probed.borrowed;
    return std::move(probed.row);
  };
  Found found;
  if (!seeded) {
    found.value = largest_holding_guided(limit, probe, fits, guess, extrapolate, {});
  } else if (seed.row->fits) {
    // Every n below the seed fits too (this first pass takes memory as monotone; the second, below,
    // checks the stretches where it is not): the answer is the seed's or past it.
    found.value = largest_in(seed.n, limit, probe, fits, guess, extrapolate);
  } else if (seed.n > 1 && fits(1)) {
    // The answer is below the seed: between 1 and it, guided by both rows' headroom.
    found.value = narrow(1, seed.n, fits, &guess);
  }
  // Only where memory shrinks below that answer can a smaller value fail: searched again, stretch
  // by stretch, only then (the points are asked for up to the answer, which for Ollama's layouts
  // costs a few plans).
  if (found.value && *found.value > 1 && steps_up_to) {
    const std::vector<std::uint64_t> steps = steps_up_to(*found.value);
    // The answer cannot pass the first one (one more did not fit): the second pass stays below it,
    // each stretch probed at its end first (most hold whole; then one probe each).
    if (!steps.empty()) found.value = largest_holding_guided(*found.value, Probe::from_limit, fits, guess, extrapolate, steps);
  }
  if (found.value == limit) found.stop = {at_limit, ""};
  else found.stop = stop_of(row_of(last_miss, found.value.value_or(0) + 1));
  if (found.value) found.row = row_of(last_fit, *found.value);
  return found;
}

/// The request for a deployment of `d`: the engine's own tp / pp flags replaced by the search's.
PlanRequest deployment_request(const PlanRequest& base, const EngineEntry& engine, const GpuDeployment& d) {
  PlanRequest request = base;
  std::erase_if(request.engine_options, [](const EngineOption& option) {
    return is_one_of(option.name, kTensorParallelOptions) || is_one_of(option.name, kPipelineOptions);
  });
  if (d.pp > 1)
    if (const OptionSpec* pp = pipeline_option(engine))
      request.engine_options.push_back({std::string(pp->name), std::to_string(d.pp), "--" + std::string(pp->name)});
  return request;
}

/// engine.make(), sharing what `from` (a profile of the same model, or null) read of the model
/// alone when its engine can (Profile::remake).
std::shared_ptr<const Profile> make_like(const Profile* from, const EngineEntry& engine, const ModelSpec& model,
                                         const std::vector<GpuSpec>& gpus, const PlanRequest& request) {
  if (from)
    if (std::shared_ptr<const Profile> made = from->remake(gpus, request)) return made;
  return engine.make(model, gpus, request);
}

/// The first deployment in `order` on which the row fits; the ones before it that the engine
/// cannot plan are listed in `skipped`. `from`: a profile of the model, to share (make_like).
void fewest_gpus(const ModelSpec& model, const GpuSpec& card, const EngineEntry& engine, const Profile& from,
                 const PlanRequest& base, const std::vector<GpuDeployment>& order, RowQuery query,
                 const std::optional<MemoryRoom>& room, CacheLimits& out) {
  for (const GpuDeployment& d : order) {
    const std::vector<GpuSpec> gpus(d.gpus, card);
    const PlanRequest request = deployment_request(base, engine, d);
    std::optional<Row> row;
    try {
      const std::shared_ptr<const Profile> profile = make_like(&from, engine, model, gpus, request);
      row = try_settle(*profile, query, model, gpus, room);
    } catch (const Error& error) {
      // Not a deployment this engine runs (its tp must divide the heads, it plans one GPU, ...).
      out.skipped.push_back(fmt::format("{} GPUs (tp {}, pp {}): {}", d.gpus, d.tp, d.pp, error.what()));
      continue;
    }
    if (row && row->fits) {
      out.min_gpus = d;  // as tried; the row says how the engine ran it (a layer split is its own)
      row->decode_bound = decode_bound(*row, model, card);
      out.min_gpus_row = std::move(row);
      return;
    }
  }
}

}  // namespace

std::string_view to_string(SearchBound bound) {
  switch (bound) {
    case SearchBound::memory: return "memory";
    case SearchBound::trained_context: return "trained_context";
    case SearchBound::cap: return "cap";
    case SearchBound::engine: return "engine";
    case SearchBound::search_limit: return "search_limit";
  }
  return "memory";
}

std::vector<GpuDeployment> gpu_search_order(bool has_pipeline, std::uint32_t max_pp) {
  std::vector<GpuDeployment> order;
  for (const std::uint32_t tp : {1u, 2u, 4u, 8u})
    for (std::uint32_t pp = 1; pp <= (has_pipeline ? std::max(max_pp, 1u) : 1u); ++pp) order.push_back({tp * pp, tp, pp});
  std::stable_sort(order.begin(), order.end(), [](const GpuDeployment& a, const GpuDeployment& b) {
    return a.gpus != b.gpus ? a.gpus < b.gpus : a.pp < b.pp;
  });
  return order;
}

Limits find_limits(const ModelSpec& model, const std::vector<GpuSpec>& gpus, const LimitsRequest& request) {
  return find_limits_with(nullptr, model, gpus, request);
}

Limits find_limits_with(const Profile* made, const ModelSpec& model, const std::vector<GpuSpec>& gpus,
                        const LimitsRequest& request) {
  const PlanRequest& base = request.plan;
  if (gpus.empty()) throw Error(fmt::format("{}: no GPU to plan for", base.names.gpu));
  const EngineEntry& engine = find_engine(base.runtime, base.names.runtime);
  refuse_foreign_options(base, engine);
  if (base.batch == 0) throw Error(fmt::format("{}: must be at least 1", base.names.batch));
  if (base.contexts.size() > 1)
    throw Error(fmt::format("{}: give one context for the batch and GPU searches", base.names.ctx));
  if (base.context_auto_fit)
    throw Error(fmt::format("{} auto: the searches need a length; give one", base.names.ctx));
  if (base.contexts_are_totals)
    throw Error(fmt::format("{}: the searches take tokens per sequence, not a total for all sequences", base.names.ctx));
  if (request.ctx_cap && *request.ctx_cap == 0) throw Error("the context cap must be at least 1");

  // The batch an engine option sets (-np) becomes the request's own, so that the searches may vary it.
  PlanRequest searchable = base;
  searchable.batch = base.batch_given ? base.batch : rows_batch(base, *make_like(made, engine, model, gpus, base));
  searchable.batch_given = true;
  std::erase_if(searchable.engine_options,
                [](const EngineOption& option) { return is_one_of(option.name, kBatchOptions); });
  const std::shared_ptr<const Profile> profile = make_like(made, engine, model, gpus, searchable);
  Limits limits;
  limits.runtime = std::string(engine.name);
  limits.settings = profile->settings();
  limits.facts = cache_facts(model);
  const std::optional<MemoryRoom> room = memory_room(searchable, gpus.front());
  if (room)
    limits.settings.notes.push_back(fmt::format("at most {} per GPU ({}); {} {}",
                                                format_gib(static_cast<std::int64_t>(std::min(room->bytes, std::uint64_t{1} << 62))),
                                                room->why, engine.display, profile->budget_semantics()));
  const std::uint64_t engine_limit = profile->search_cap();
  if (request.ctx_cap) {
    limits.ctx_cap = std::min(*request.ctx_cap, engine_limit);
    limits.cap_kind = *request.ctx_cap <= engine_limit ? SearchBound::cap : SearchBound::search_limit;
  } else if (model.max_context) {
    limits.ctx_cap = std::min(model.max_context, engine_limit);
    limits.cap_kind = model.max_context <= engine_limit ? SearchBound::trained_context : SearchBound::search_limit;
  } else {
    limits.ctx_cap = engine_limit;
    limits.cap_kind = SearchBound::search_limit;
  }
  if (base.contexts.empty() && limits.cap_kind == SearchBound::search_limit)
    throw Error(fmt::format("{}: give the context of the batch and GPU searches (the model states no trained context)",
                            base.names.ctx));
  limits.ctx = base.contexts.empty() ? limits.ctx_cap : base.contexts.front();
  if (limits.ctx == 0) throw Error(fmt::format("{}: must be at least 1 token", base.names.ctx));
  limits.batch = searchable.batch;
  limits.tried = gpu_search_order(pipeline_option(engine) != nullptr, request.max_pp);
  if (gpus.front().arch.find("MIG") != std::string::npos) {
    // MIG instances have no peer-to-peer path between them: an engine runs in one.
    limits.tried = {GpuDeployment{}};
    limits.settings.notes.push_back(gpus.front().name + " is a MIG instance: the GPU search tries one (instances are not "
                                                        "split across)");
  }

  const std::vector<CacheDtypes> caches = searchable.caches.empty() ? profile->default_caches() : base.caches;
  for (std::size_t c = 0; c < caches.size(); ++c) {
    const CacheDtypes& cache = caches[c];
    const Row* known = c < request.known_rows.size() ? &request.known_rows[c] : nullptr;
    CacheLimits out;
    RowQuery query;
    query.cache = cache;
    query.weight_dtype = searchable.weight_dtype;
    query.batch = limits.batch;
    query.ctx = limits.ctx;

    // The probes read the verdict, the headroom and the findings; the rows kept at the answers are
    // priced again with the engine's words when the caller shows them.
    bool probing = true;
    const RowAt at_ctx = [&](std::uint64_t ctx) {
      RowQuery q = query;
      q.ctx = ctx;
      q.words = !probing;
      return try_settle(*profile, q, model, gpus, room);
    };
    // An engine may size itself by the batch it is given (Ollama's parallel slots), so each batch
    // is a profile of its own, as make_plan would build it, unless the profile says its rows do not
    // depend on it.
    const RowAt at_batch = [&](std::uint64_t batch) -> std::optional<Row> {
      RowQuery q = query;
      q.batch = batch;
      q.words = !probing;
      if (!profile->depends_on_batch()) return try_settle(*profile, q, model, gpus, room);
      PlanRequest with_batch = searchable;
      with_batch.batch = batch;
      try {
        return try_settle(*make_like(profile.get(), engine, model, gpus, with_batch), q, model, gpus, room);
      } catch (const Error& error) {
        if (error.code() == ExitCode::unsupported_architecture) throw;
        return std::nullopt;
      }
    };
    const StepsUpTo ctx_steps = [&](std::uint64_t up_to) {
      return profile->shrink_points(query, SearchAxis::context, up_to);
    };
    const bool may_start = profile->lists_every_shrink();
    Found ctx = search(at_ctx, limits.ctx_cap, limits.cap_kind, ctx_steps, Probe::from_limit, {limits.ctx, known, may_start});
    out.max_ctx = ctx.value;
    out.ctx_stop = ctx.stop;
    out.max_ctx_row = std::move(ctx.row);
    if (!request.search_uncapped_ctx) {
      // Not asked for: left unset.
    } else if (ctx.stop.bound == SearchBound::trained_context || ctx.stop.bound == SearchBound::cap) {
      // The cap bound it: what would memory allow?
      Found uncapped = search(at_ctx, engine_limit, SearchBound::search_limit, ctx_steps);
      out.uncapped_max_ctx = uncapped.value;
      out.uncapped_stop = uncapped.stop;
    } else {
      out.uncapped_max_ctx = out.max_ctx;
      out.uncapped_stop = out.ctx_stop;
    }

    const StepsUpTo batch_steps = [&](std::uint64_t up_to) { return profile->shrink_points(query, SearchAxis::batch, up_to); };
    Found batch = search(at_batch, request.batch_limit, SearchBound::search_limit, batch_steps, Probe::from_below,
                         {limits.batch, known, may_start});
    out.max_batch = batch.value;
    out.batch_stop = batch.stop;
    out.max_batch_row = std::move(batch.row);

    if (request.search_gpus) fewest_gpus(model, gpus.front(), engine, *profile, searchable, limits.tried, query, room, out);
    // The cache as the rows resolved it ("auto" becomes the dtype it meant).
    out.cache = cache;
    for (const std::optional<Row>* row : {&out.max_ctx_row, &out.max_batch_row, &out.min_gpus_row})
      if (*row) out.cache = (*row)->cache;
    if (!out.cache.k) {
      query.ctx = 1;
      query.batch = 1;
      if (const std::optional<Row> one = try_settle(*profile, query, model, gpus, room)) out.cache = one->cache;
    }
    // The answers' rows were probes: priced again with the engine's words, for a caller that shows them.
    probing = false;
    for (auto [row, n, at] : {std::tuple{&out.max_ctx_row, out.max_ctx, &at_ctx}, std::tuple{&out.max_batch_row, out.max_batch, &at_batch}}) {
      if (!*row) continue;
      if (!request.answer_rows) {
        row->reset();
        continue;
      }
      *row = (*at)(*n);
      if (*row) (*row)->decode_bound = decode_bound(**row, model, gpus.front());
    }
    limits.caches.push_back(std::move(out));
  }
  return limits;
}

std::optional<std::uint64_t> largest_fitting(std::uint64_t limit, const RowAt& row_at, const StepsUpTo& steps_up_to) {
  return search(row_at, limit, SearchBound::search_limit, steps_up_to).value;
}

}  // namespace kvplan
