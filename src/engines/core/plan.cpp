// The planning core: the one loop over a request's rows, the one search for the largest context,
// and the one place where a row's total, headroom and verdict are settled.

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "engines/core/cache_cost.h"
#include "engines/core/decode_bound.h"
#include "engines/core/largest_fitting.h"
#include "engines/core/profile.h"
#include "engines/core/settle.h"
#include "kvplan/error.h"
#include "kvplan/plan.h"
#include "model/text_append.h"

namespace kvplan {

namespace {

constexpr std::uint64_t kMaxComparable = std::uint64_t{1} << 62;

bool has_finding(const Row& row, std::string_view code) {
  return std::any_of(row.findings.begin(), row.findings.end(), [&](const Finding& f) { return f.code == code; });
}

bool is_fp8(const Dtype* type) { return type && type->name.substr(0, 3) == "fp8"; }

/// A finding with `code` and `text`; its strings taken over from one with the same code in `spent`
/// (an earlier row's findings) when there is one, so that a sweep's repeated warning allocates
/// nothing.
void add_finding(Row& row, std::string_view code, std::string_view text, std::vector<Finding>* spent) {
  if (spent)
    for (Finding& old : *spent)
      if (old.code == code) {
        Finding reused = std::move(old);  // `old` is left without a code: taken once
        reused.text.assign(text.data(), text.size());
        reused.blocking = false;
        row.findings.push_back(std::move(reused));
        return;
      }
  row.findings.push_back({std::string(code), std::string(text), false});
}

/// The facts every engine's row shares: a context the model was not trained for, fp8 on a card
/// without fp8 tensor cores, weights that are an estimate. A profile that knows its engine's
/// stricter rule (vLLM refuses to start beyond the trained context) has already said so.
void add_common_findings(Row& row, const ModelSpec& model, const std::vector<GpuSpec>& gpus,
                         std::vector<Finding>* spent) {
  const GpuSpec& gpu = gpus.front();
  if (model.max_context && row.ctx > model.max_context && !has_finding(row, "beyond_trained_context"))
  {
    // Written into a buffer of its own and copied once: a sweep past the trained context writes
    // this for every row. At most 4 + 26 + 42 + 26 + 7 = 105 characters.
    std::array<char, 112> text;
    char* at = text.data();
    const auto words = [&](std::string_view part) {
      std::memcpy(at, part.data(), part.size());
      at += part.size();
    };
    words("ctx ");
    at = write_thousands(at, row.ctx);
    words(" is beyond the model's trained context of ");
    at = write_thousands(at, model.max_context);
    words(" tokens");
    add_finding(row, "beyond_trained_context", {text.data(), static_cast<std::size_t>(at - text.data())}, spent);
  }
  const bool fp8_cache = is_fp8(row.cache.k) || is_fp8(row.cache.v);
  const bool fp8_weights = is_fp8(row.weight_dtype);
  if ((fp8_cache || fp8_weights) && !gpu.fp8 && gpu.memory_basis != "given" && !has_finding(row, "fp8_not_native_on_gpu"))
    row.findings.push_back({"fp8_not_native_on_gpu",
                            fmt::format("{} has no FP8 tensor cores: fp8 {} stored in 8 bits but computed in 16", gpu.name,
                                        fp8_cache && fp8_weights ? "cache and weights are" : fp8_cache ? "cache is" : "weights are"),
                            false});
  if (!gpu.resolution_note.empty() && !has_finding(row, "gpu_ambiguous"))
    row.findings.push_back({"gpu_ambiguous", gpu.resolution_note, false});
  if (row.weights_rule.rfind("estimate", 0) == 0 && !has_finding(row, "estimate"))
    row.findings.push_back({"estimate", "the weights are an estimate: " + row.weights_rule, false});
}

/// Settles every GPU's total and headroom: the row fits only when each does.
bool decide_shares(Row& row, const GpuSpec& first) {
  if (row.per_gpu.empty()) {
    GpuShare share;
    share.gpu = first.id;
    share.weights_bytes = row.weights_bytes;
    share.kv_bytes = std::max(row.kv_bytes, row.kv_pool_bytes.value_or(0));
    share.other_bytes = row.overhead_bytes;
    share.capacity_bytes = row.capacity_bytes;
    row.per_gpu.push_back(share);
  }
  bool all_fit = true;
  for (GpuShare& share : row.per_gpu) {
    share.total_bytes = checked_add(checked_add(share.weights_bytes, share.kv_bytes, "total memory"), share.other_bytes,
                                    "total memory");
    if (share.total_bytes > kMaxComparable || share.capacity_bytes > kMaxComparable)
      throw Error("total memory is too large to compare (over 2^62 bytes)");
    share.headroom_bytes = static_cast<std::int64_t>(share.capacity_bytes) - static_cast<std::int64_t>(share.total_bytes);
    share.fits = share.total_bytes <= share.capacity_bytes;
    all_fit = all_fit && share.fits;
  }
  return all_fit;
}

/// Settles total, headroom and verdict from the row's parts, with checked arithmetic. The only
/// place a verdict is made.
void decide(Row& row, const GpuSpec& first) {
  const std::uint64_t kv_held = std::max(row.kv_bytes, row.kv_pool_bytes.value_or(0));
  row.total_bytes =
      checked_add(checked_add(row.weights_bytes, kv_held, "total memory"), row.overhead_bytes, "total memory");
  if (row.total_bytes > kMaxComparable || row.capacity_bytes > kMaxComparable)
    throw Error("total memory is too large to compare (over 2^62 bytes)");
  row.headroom_bytes = static_cast<std::int64_t>(row.capacity_bytes) - static_cast<std::int64_t>(row.total_bytes);
  const bool pool_holds = !row.kv_pool_bytes || row.kv_bytes <= *row.kv_pool_bytes;
  if (!pool_holds && !has_finding(row, "kv_pool_too_small"))
    row.findings.push_back({"kv_pool_too_small",
                            fmt::format("the sequences need {} of cache; the pool given to it holds {}", format_gib(static_cast<std::int64_t>(row.kv_bytes)),
                                        format_gib(static_cast<std::int64_t>(*row.kv_pool_bytes))),
                            true});
  const bool shares_fit = decide_shares(row, first);
  const bool refuses = !row.engine.starts || has_finding(row, "engine_refuses_start");
  const bool blocked = std::any_of(row.findings.begin(), row.findings.end(), [](const Finding& f) { return f.blocking; });
  if (refuses) row.verdict = Verdict::engine_refuses;
  else if (row.total_bytes <= row.capacity_bytes && shares_fit && pool_holds && !blocked) row.verdict = Verdict::fits;
  else row.verdict = Verdict::does_not_fit;
  row.fits = row.verdict == Verdict::fits;
}

bool is_wider_than_fp8(const Dtype& type) { return type.block_bytes > type.block_elements; }

/// The largest context per sequence (at most `limit`) at which `query` still fits, and every
/// shorter one too, as the engine prices it. Memory never shrinks as a context grows, except where
/// the engine's own choices step (Profile::shrink_points), so the guided search, stretch by stretch
/// between those steps, finds the exact boundary.
ContextLimit context_limit(const Profile& profile, RowQuery query, std::uint64_t limit, const ModelSpec& model,
                           const std::vector<GpuSpec>& gpus, const std::optional<MemoryRoom>& room) {
  ContextLimit out;
  out.cache = query.cache;
  query.ctx_is_total = false;
  query.words = false;  // only the verdict and the headroom are read
  out.max_ctx = largest_fitting(
      limit,
      [&](std::uint64_t ctx) -> std::optional<Row> {
        query.ctx = ctx;
        try {
          return settle(profile, query, model, gpus, room);
        } catch (const Error& error) {
          if (error.code() == ExitCode::unsupported_architecture) throw;
          return std::nullopt;  // a size past 64 bits certainly does not fit
        }
      },
      [&](std::uint64_t up_to) { return profile.shrink_points(query, SearchAxis::context, up_to); });
  out.reached_search_limit = out.max_ctx == limit;
  return out;
}

}  // namespace

std::optional<MemoryRoom> memory_room(const PlanRequest& request, const GpuSpec& gpu) {
  std::optional<MemoryRoom> room;
  const auto consider = [&](std::uint64_t bytes, bool co_tenants, std::string why) {
    if (!room || bytes < room->bytes) room = MemoryRoom{bytes, co_tenants, std::move(why)};
  };
  const std::int64_t memory = static_cast<std::int64_t>(std::min(gpu.memory_bytes, kMaxComparable));
  if (request.budget_bytes) consider(*request.budget_bytes, false, "a budget of " + format_gib(static_cast<std::int64_t>(std::min(*request.budget_bytes, kMaxComparable))));
  if (request.used_bytes) {
    if (*request.used_bytes > gpu.memory_bytes)
      throw Error(fmt::format("{} used by other processes is more than {}'s {}", format_gib(static_cast<std::int64_t>(std::min(*request.used_bytes, kMaxComparable))),
                              gpu.name, format_gib(memory)));
    consider(gpu.memory_bytes - *request.used_bytes, true,
             fmt::format("{} held by other processes of {}", format_gib(static_cast<std::int64_t>(*request.used_bytes)), format_gib(memory)));
  }
  if (request.free_bytes) {
    if (*request.free_bytes > gpu.memory_bytes)
      throw Error(fmt::format("{} free is more than {}'s {}", format_gib(static_cast<std::int64_t>(std::min(*request.free_bytes, kMaxComparable))),
                              gpu.name, format_gib(memory)));
    consider(*request.free_bytes, true, fmt::format("{} free of {}", format_gib(static_cast<std::int64_t>(*request.free_bytes)), format_gib(memory)));
  }
  return room;
}

namespace {

/// The row as priced, decided on the GPUs alone (within the room), into `row` (its buffers reused).
void settle_on_gpus(Row& row, const Profile& profile, const RowQuery& query, const ModelSpec& model,
                    const std::vector<GpuSpec>& gpus, const std::optional<MemoryRoom>& room,
                    std::vector<Finding>* spent = nullptr) {
  profile.price_into(query, row);
  add_common_findings(row, model, gpus, spent);
  decide(row, gpus.front());
  if (room) {
    // An engine that takes what the rows need fits in the room: its budget shrinks to it. One that
    // takes a pool whatever the rows need (vLLM's utilization x total) must find the pool's room.
    const std::uint64_t takes = profile.footprint(row);
    if (takes == row.total_bytes && room->bytes < row.capacity_bytes) {
      row.capacity_bytes = room->bytes;
      for (GpuShare& share : row.per_gpu) share.capacity_bytes = std::min(share.capacity_bytes, room->bytes);
      decide(row, gpus.front());
    }
    if (takes > room->bytes) {
      const bool refuses = room->co_tenants && profile.refuses_when_short();
      row.findings.push_back({refuses ? "engine_refuses_start" : "over_budget",
                              fmt::format("the engine takes {} on its fullest GPU ({}); {} leaves {}{}",
                                          format_gib(static_cast<std::int64_t>(takes)), profile.budget_semantics(), room->why,
                                          format_gib(static_cast<std::int64_t>(room->bytes)),
                                          refuses ? ": it refuses to start" : ""),
                              true});
      decide(row, gpus.front());
    }
  }
}

Row settle_on_gpus(const Profile& profile, const RowQuery& query, const ModelSpec& model,
                   const std::vector<GpuSpec>& gpus, const std::optional<MemoryRoom>& room) {
  Row row;
  settle_on_gpus(row, profile, query, model, gpus, room);
  return row;
}

/// With RAM declared, what the engine keeps in system memory must fit in it: the row does not fit
/// in GPU + RAM otherwise. Without a declaration host memory is not counted (as before --ram).
void decide_ram(const Profile& profile, Row& row, const GpuSpec& first) {
  const std::optional<HostMemory> host = profile.host_memory(row);
  row.host.reset();
  if (host) row.host = RowRam{host->host_bytes, host->ram_bytes, host->read_bytes};
  if (!host || host->host_bytes <= host->ram_bytes) return;
  row.findings.push_back({"over_ram",
                          fmt::format("the engine keeps {} in system RAM; {} was declared",
                                      format_gib(static_cast<std::int64_t>(std::min(host->host_bytes, kMaxComparable))),
                                      format_gib(static_cast<std::int64_t>(std::min(host->ram_bytes, kMaxComparable)))),
                          true});
  decide(row, first);
}

}  // namespace

void settle_into(Row& row, const Profile& profile, const RowQuery& query, const ModelSpec& model,
                 const std::vector<GpuSpec>& gpus, const std::optional<MemoryRoom>& room, std::vector<Finding>* spent) {
  settle_on_gpus(row, profile, query, model, gpus, room, spent);
  if (!row.fits && row.verdict != Verdict::engine_refuses && !query.gpu_layers) {
    if (const std::optional<std::uint32_t> layers = profile.offload_layers(query)) {
      // The most layers the GPUs hold: fewer layers never take more GPU memory, so bisection finds
      // the boundary. Probe n stands for n - 1 layers (largest_holding starts at 1; 0 layers is an
      // answer too). All of them did not fit: at most layers - 1.
      RowQuery probe = query;
      const std::optional<std::uint64_t> most = largest_holding(*layers, [&](std::uint64_t n) {
        probe.gpu_layers = static_cast<std::uint32_t>(n - 1);
        return settle_on_gpus(profile, probe, model, gpus, room).fits;
      });
      if (most) {
        probe.gpu_layers = static_cast<std::uint32_t>(*most - 1);
        row = settle_on_gpus(profile, probe, model, gpus, room);
      }
    }
  }
  decide_ram(profile, row, gpus.front());
}

Row settle(const Profile& profile, const RowQuery& query, const ModelSpec& model, const std::vector<GpuSpec>& gpus,
           const std::optional<MemoryRoom>& room) {
  Row row;
  settle_into(row, profile, query, model, gpus, room);
  return row;
}

void settle_shown_into(Row& row, const Profile& profile, const RowQuery& query, const ModelSpec& model,
                       const std::vector<GpuSpec>& gpus, const std::optional<MemoryRoom>& room,
                       std::vector<Finding>* spent) {
  std::optional<DecodeBound> bound = std::move(row.decode_bound);  // its sentence's buffer, reused
  row.decode_bound.reset();
  // The row's findings kept in `spent` for the new ones to take their strings over; the row gets
  // the vector `spent` held (its findings taken or left to clear_row).
  if (spent) row.findings.swap(*spent);
  settle_into(row, profile, query, model, gpus, room, spent);
  if (!bound) bound.emplace();
  if (decode_bound_into(*bound, row, model, gpus.front(), profile.host_memory(row))) row.decode_bound = std::move(bound);
}

Row settle_shown(const Profile& profile, const RowQuery& query, const ModelSpec& model, const std::vector<GpuSpec>& gpus,
                 const std::optional<MemoryRoom>& room) {
  Row row;
  settle_shown_into(row, profile, query, model, gpus, room);
  return row;
}

std::string CacheDtypes::label() const {
  if (!k || !v) return "auto";
  if (k == v) return std::string(k->name);
  return fmt::format("{}/{}", k->name, v->name);
}

std::string_view to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::fits: return "fits";
    case Verdict::does_not_fit: return "does_not_fit";
    case Verdict::engine_refuses: return "engine_refuses";
  }
  return "does_not_fit";
}

std::optional<std::uint64_t> largest_holding(std::uint64_t limit, const std::function<bool(std::uint64_t)>& holds) {
  if (limit == 0 || !holds(1)) return std::nullopt;
  if (holds(limit)) return limit;
  std::uint64_t low = 1;       // holds
  std::uint64_t high = limit;  // does not
  while (high - low > 1) {
    const std::uint64_t middle = low + (high - low) / 2;
    (holds(middle) ? low : high) = middle;
  }
  return low;
}

namespace {

/// Ranks of one shape on unlike cards: the smallest card bounds every rank, and what the larger
/// ones have beyond it stays unused. Nothing when the cards are alike.
std::optional<std::string> unlike_cards_note(const std::vector<GpuSpec>& gpus, std::string_view engine) {
  const auto smallest = std::min_element(gpus.begin(), gpus.end(), [](const GpuSpec& a, const GpuSpec& b) {
    return a.memory_bytes < b.memory_bytes;
  });
  std::string unused;
  std::vector<const GpuSpec*> told;
  for (const GpuSpec& card : gpus) {
    if (card.memory_bytes == smallest->memory_bytes) continue;
    if (std::any_of(told.begin(), told.end(), [&](const GpuSpec* seen) {
          return seen->name == card.name && seen->memory_bytes == card.memory_bytes;
        }))
      continue;
    told.push_back(&card);
    unused += fmt::format("{}{} leaves {} unused", unused.empty() ? "" : ", ", card.name,
                          format_gib(static_cast<std::int64_t>(card.memory_bytes - smallest->memory_bytes)));
  }
  if (unused.empty()) return std::nullopt;
  return fmt::format("{} runs every rank alike: the smallest card ({}, {}) bounds them all; {}", engine, smallest->name,
                     format_gib(static_cast<std::int64_t>(smallest->memory_bytes)), unused);
}

}  // namespace

Plan make_plan(const ModelSpec& model, const GpuSpec& gpu, const PlanRequest& request) {
  return make_plan(model, std::vector<GpuSpec>{gpu}, request);
}

Plan make_plan(const ModelSpec& model, const std::vector<GpuSpec>& gpus, const PlanRequest& request) {
  if (gpus.empty()) throw Error(fmt::format("{}: no GPU to plan for", request.names.gpu));
  const EngineEntry& engine = find_engine(request.runtime, request.names.runtime);
  refuse_foreign_options(request, engine);
  if (request.batch == 0) throw Error(fmt::format("{}: must be at least 1", request.names.batch));
  return make_plan_with(engine.make(model, gpus, request), model, gpus, request);
}

Plan make_plan_with(std::shared_ptr<const Profile> made, const ModelSpec& model, const std::vector<GpuSpec>& gpus,
                    const PlanRequest& request) {
  const GpuSpec& gpu = gpus.front();
  const EngineEntry& engine = find_engine(request.runtime, request.names.runtime);
  Plan plan;
  plan.runtime = std::string(engine.name);
  plan.profile = std::move(made);
  const Profile& profile = *plan.profile;
  plan.settings = profile.settings();
  if (!gpu.resolution_note.empty()) plan.settings.notes.push_back(gpu.resolution_note);
  if (profile.ranks_alike())
    if (std::optional<std::string> note = unlike_cards_note(gpus, engine.display)) plan.settings.notes.push_back(*note);
  plan.facts = cache_facts(model);
  const std::optional<MemoryRoom> room = memory_room(request, gpu);
  if (room)
    plan.settings.notes.push_back(fmt::format("at most {} per GPU ({}); {} {}",
                                              format_gib(static_cast<std::int64_t>(std::min(room->bytes, kMaxComparable))),
                                              room->why, engine.display, profile.budget_semantics()));

  if (request.context_auto_fit && !profile.picks_context())
    throw Error(fmt::format("{} auto: {} takes a length; only vLLM (0.14 or later) picks the longest that fits",
                            request.names.ctx, engine.display));
  if (request.context_auto_fit && !request.contexts.empty())
    throw Error(fmt::format("{}: auto picks the one length that fits; give it alone", request.names.ctx));
  const std::vector<std::uint64_t> contexts = request.contexts.empty() ? profile.default_contexts() : request.contexts;
  const std::vector<CacheDtypes> caches = request.caches.empty() ? profile.default_caches() : request.caches;
  if (contexts.empty() || caches.empty()) throw Error("nothing to plan: no context or no cache dtype");
  // 3,000 contexts x 300 dtypes once took 900 MB; a plan is for people and CI, a sweep is not.
  if (contexts.size() > kMaxPlanRows || caches.size() > kMaxPlanRows || contexts.size() * caches.size() > kMaxPlanRows)
    throw Error(fmt::format("{} contexts x {} cache dtypes are more rows than one plan holds (at most {})",
                            contexts.size(), caches.size(), kMaxPlanRows));

  RowQuery query;
  query.batch = rows_batch(request, profile);
  query.weight_dtype = request.weight_dtype;
  query.ctx_is_total = request.contexts.empty() ? profile.default_contexts_are_totals() : request.contexts_are_totals;
  query.section_words = request.section_words;
  std::uint64_t longest = 0;
  for (const std::uint64_t ctx : contexts) {
    for (const CacheDtypes& cache : caches) {
      query.ctx = ctx;
      query.cache = cache;
      plan.rows.push_back(settle_shown(profile, query, model, gpus, room));
      longest = std::max(longest, plan.rows.back().ctx);
    }
  }

  // The searches stop at the model's trained context or the longest row, whichever is larger.
  const std::uint64_t limit = std::min(std::max(model.max_context, longest), profile.search_cap());
  for (const CacheDtypes& cache : caches) {
    if (request.rows_only) break;  // the caller runs the searches it shows itself
    if (request.context_auto_fit) break;  // each row already is the longest context that fits
    query.cache = cache;
    ContextLimit found = context_limit(profile, query, limit, model, gpus, room);
    // Report the cache as the rows resolved it ("auto" becomes the dtype it meant).
    for (std::size_t i = 0; i < caches.size(); ++i)
      if (caches[i].k == cache.k && caches[i].v == cache.v) found.cache = plan.rows[i].cache;
    plan.context_limits.push_back(found);
  }

  for (std::size_t i = 0; i < plan.rows.size(); ++i) {
    const Row& row = plan.rows[i];
    if (row.fits) continue;
    WayOut way;
    way.row_index = i;
    if (!request.rows_only && profile.reprices_weights() && is_wider_than_fp8(*row.weight_dtype)) {
      RowQuery fp8 = query;
      fp8.ctx = contexts[i / caches.size()];
      fp8.cache = caches[i % caches.size()];
      fp8.weight_dtype = &parse_weight_dtype("fp8");
      way.with_fp8_weights = settle_shown(profile, fp8, model, gpus, room);
    }
    plan.ways_out.push_back(std::move(way));
  }
  plan.quality_notes = find_quality_notes(plan.rows);
  return plan;
}

Row plan_row(const ModelSpec& model, const RowSettings& settings) {
  PlanRequest request;
  request.batch = settings.batch;
  request.overhead_bytes = settings.overhead_bytes;
  request.utilization_millionths = settings.utilization_millionths;
  if (settings.mtp_layers) request.mtp_layers = std::to_string(settings.mtp_layers);
  std::vector<GpuSpec> gpus(1);
  gpus[0].memory_bytes = settings.gpu_memory_bytes;
  gpus[0].memory_basis = "given";
  const EngineEntry& engine = find_engine("generic", "runtime");
  const std::shared_ptr<const Profile> profile = engine.make(model, gpus, request);
  RowQuery query;
  query.ctx = settings.ctx;
  query.batch = settings.batch;
  query.cache = settings.cache;
  query.weight_dtype = settings.weight_dtype;
  return settle_shown(*profile, query, model, gpus);
}

std::vector<std::string> runtime_names() {
  std::vector<std::string> names;
  for (const EngineEntry& engine : engines()) names.emplace_back(engine.name);
  return names;
}

}  // namespace kvplan
