// Sweeps: the rows of a grid, settled one at a time by the core's one verdict (settle) and handed
// to the caller, so a million rows never sit in memory (make_plan keeps at most kMaxPlanRows).

#include "kvplan/sweep.h"

#include <fmt/format.h>

#include "engines/core/profile.h"
#include "engines/core/settle.h"
#include "kvplan/error.h"
#include "kvplan/units.h"

namespace kvplan {

std::vector<SweptOut> sweep_rows(const ModelSpec& model, const std::vector<GpuSpec>& gpus, const PlanRequest& request,
                                 const std::function<void(Row&&)>& emit) {
  if (gpus.empty()) throw Error(fmt::format("{}: no GPU to plan for", request.names.gpu));
  const EngineEntry& engine = find_engine(request.runtime, request.names.runtime);
  refuse_foreign_options(request, engine);
  if (request.batch == 0) throw Error(fmt::format("{}: must be at least 1", request.names.batch));
  if (request.context_auto_fit) throw Error(fmt::format("{} auto: a sweep takes lengths; give them", request.names.ctx));
  const std::shared_ptr<const Profile> profile = engine.make(model, gpus, request);
  const std::vector<std::uint64_t> contexts = request.contexts.empty() ? profile->default_contexts() : request.contexts;
  const std::vector<CacheDtypes> asked = request.caches.empty() ? profile->default_caches() : request.caches;
  const std::optional<MemoryRoom> room = memory_room(request, gpus.front());

  RowQuery query;
  query.batch = rows_batch(request, *profile);
  query.weight_dtype = request.weight_dtype;
  query.ctx_is_total = request.contexts.empty() ? profile->default_contexts_are_totals() : request.contexts_are_totals;

  // The dtypes the engine takes, tried at the first context.
  std::vector<CacheDtypes> caches;
  std::vector<SweptOut> left_out;
  for (const CacheDtypes& cache : asked) {
    query.cache = cache;
    query.ctx = contexts.empty() ? 1 : contexts.front();
    try {
      (void)profile->price(query);
      caches.push_back(cache);
    } catch (const Error& error) {
      if (error.code() == ExitCode::unsupported_architecture) throw;
      if (dynamic_cast<const OverflowError*>(&error)) {
        caches.push_back(cache);  // a size, not the dtype: its rows are skipped below
        continue;
      }
      left_out.push_back({cache.label(), error.what()});
    }
  }
  // One row, settled into again and again: a profile that prices into it (Profile::price_into)
  // reuses its vectors and strings, so that a million rows are not a million sets of allocations.
  Row row;
  std::vector<Finding> spent;  // the findings of the row before, their strings reused
  for (const std::uint64_t ctx : contexts) {
    for (const CacheDtypes& cache : caches) {
      query.ctx = ctx;
      query.cache = cache;
      try {
        settle_shown_into(row, *profile, query, model, gpus, room, &spent);
        emit(std::move(row));
      } catch (const Error& error) {
        if (error.code() == ExitCode::unsupported_architecture) throw;
        // A row past 64 bits (or 2^62 bytes to compare) is no row: a grid's far corner. Said,
        // up to a hundred times.
        if (left_out.size() < 100) left_out.push_back({cache.label(), fmt::format("ctx {}: {}", ctx, error.what())});
      }
    }
  }
  return left_out;
}

std::vector<std::uint64_t> parse_context_range(std::string_view text, std::string_view setting, std::size_t limit) {
  std::vector<std::uint64_t> values;
  const auto add = [&](std::uint64_t value) {
    if (values.size() >= limit) throw Error(fmt::format("{}: more than {} contexts", setting, limit));
    values.push_back(value);
  };
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string_view item = text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    const std::size_t dots = item.find("..");
    if (dots == std::string_view::npos) {
      add(parse_token_count(item, setting));
    } else {
      const std::uint64_t from = parse_token_count(item.substr(0, dots), setting);
      std::string_view rest = item.substr(dots + 2);
      std::uint64_t step = 0;  // 0: doubling
      if (const std::size_t colon = rest.find(':'); colon != std::string_view::npos) {
        step = parse_token_count(rest.substr(colon + 1), setting);
        rest = rest.substr(0, colon);
      }
      const std::uint64_t to = parse_token_count(rest, setting);
      if (from == 0 || from > to)
        throw Error(fmt::format("{}: a range goes from at least 1 up to its end ('{}')", setting, item));
      for (std::uint64_t value = from;;) {
        add(value);
        const std::uint64_t next = step ? value + step : value * 2;
        if (next > to || next <= value) break;  // past the end (or past 64 bits)
        value = next;
      }
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  for (const std::uint64_t value : values)
    if (value == 0) throw Error(fmt::format("{}: a context of 0 tokens", setting));
  return values;
}

}  // namespace kvplan
