// The advisor's search. Every candidate is one make_plan with the engine's own rules: this file
// only chooses what to ask and ranks the answers.

#include "kvplan/advise.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "engines/core/profile.h"
#include "kvplan/error.h"

namespace kvplan {

namespace {

/// Bits a value of `type` takes, as a fraction: block_bytes x 8 / block_elements.
bool narrower(const Dtype& a, const Dtype& b) {
  return std::uint64_t{a.block_bytes} * b.block_elements < std::uint64_t{b.block_bytes} * a.block_elements;
}

/// The weight dtypes the level allows: the checkpoint's own (nullptr) and each narrower one.
std::vector<const Dtype*> allowed_weights(const ModelSpec& model, Quality quality) {
  std::vector<const Dtype*> out{nullptr};
  static constexpr std::array<std::pair<Quality, std::string_view>, 3> kSteps = {
      std::pair{Quality::fp8, "fp8"}, std::pair{Quality::int8, "int8"}, std::pair{Quality::int4, "int4"}};
  for (const auto& [level, name] : kSteps) {
    if (quality < level) break;
    const Dtype& type = parse_weight_dtype(name);
    if (!model.weight_dtype || narrower(type, *model.weight_dtype)) out.push_back(&type);
  }
  return out;
}

/// The cache dtypes the level allows: the model's own float type first (what "auto" means), then
/// the quantized ones of each level. fp8_e5m2 is never proposed: fp8 (E4M3) costs the same and
/// keeps more precision.
std::vector<CacheDtypes> allowed_caches(const ModelSpec& model, Quality quality) {
  std::vector<CacheDtypes> out;
  const Dtype& own = parse_kv_dtype("auto", *model.weight_dtype);
  out.push_back({&own, &own});
  static constexpr std::array<std::pair<Quality, std::string_view>, 6> kSteps = {
      std::pair{Quality::fp8, "fp8"},  std::pair{Quality::int8, "int8"}, std::pair{Quality::int8, "q8_0"},
      std::pair{Quality::int4, "int4"}, std::pair{Quality::int4, "q4_0"}, std::pair{Quality::int4, "nvfp4"}};
  for (const auto& [level, name] : kSteps) {
    if (quality < level) continue;
    const Dtype& type = parse_kv_dtype(name, own);
    out.push_back({&type, &type});
  }
  return out;
}

/// The engine's pipeline-stage option, where it has one (SGLang's --pp-size, TensorRT-LLM's
/// --pp_size); empty otherwise.
std::string_view pipeline_option(std::string_view runtime) {
  const EngineEntry& engine = find_engine(runtime, "runtime");
  for (const OptionSpec& spec : engine.options)
    if (spec.name == "pp-size" || spec.name == "pp_size") return spec.name;
  return {};
}

bool refused_by_engine(const Row& row) {
  if (row.verdict == Verdict::engine_refuses) return true;
  return std::any_of(row.findings.begin(), row.findings.end(),
                     [](const Finding& f) { return f.code == "dtype_not_supported_by_engine"; });
}

std::string refusal_reason(const Row& row) {
  for (const Finding& f : row.findings)
    if (f.blocking || f.code == "dtype_not_supported_by_engine") return f.text;
  return "the engine would not start";
}

/// Price, then headroom (largest first), then fewer GPUs; unpriced after every priced one.
bool cheaper_first(const AdviseConfig& a, const AdviseConfig& b) {
  if (a.usd_per_hour.has_value() != b.usd_per_hour.has_value()) return a.usd_per_hour.has_value();
  if (a.usd_per_hour && *a.usd_per_hour != *b.usd_per_hour) return *a.usd_per_hour < *b.usd_per_hour;
  if (a.row.headroom_bytes != b.row.headroom_bytes) return a.row.headroom_bytes > b.row.headroom_bytes;
  return a.count < b.count;
}

struct Search {
  const ModelSpec& model;
  const AdviseRequest& request;
  Advice advice;
  std::vector<AdviseConfig> all;

  /// One more configuration left out, and its reason among at most 8 distinct ones.
  static void tally(std::size_t& count, std::vector<std::string>& reasons, std::string reason) {
    ++count;
    if (reasons.size() < 8 && std::find(reasons.begin(), reasons.end(), reason) == reasons.end())
      reasons.push_back(std::move(reason));
  }
  void note_refusal(std::string reason) { tally(advice.not_offered, advice.not_offered_reasons, std::move(reason)); }
  void note_not_modelled(std::string reason) {
    tally(advice.not_modelled, advice.not_modelled_reasons, std::move(reason));
  }

  void keep(const PlanRequest& asked, const std::vector<GpuSpec>& gpus, std::size_t candidate) {
    const Plan plan = make_plan(model, gpus, asked);
    for (const Row& row : plan.rows) {
      ++advice.tried;
      if (refused_by_engine(row)) {
        note_refusal(refusal_reason(row));
        continue;
      }
      AdviseConfig config;
      config.candidate = candidate;
      config.count = static_cast<std::uint32_t>(gpus.size());
      if (const std::optional<double> price = request.candidates[candidate].usd_per_hour)
        config.usd_per_hour = *price * config.count;
      config.row = row;
      if (asked.weight_dtype) {
        // The generic rule prices requantized weights as params x width: a floor, since real
        // quantized checkpoints keep embeddings, norms and scales wider (docs/limits.md).
        config.row.findings.push_back(
            {"weights_requantized",
             fmt::format("{} weights are priced at params x {} B, a lower bound: a real {} checkpoint keeps some tensors "
                         "wider; plan it by its own files before relying on this",
                         asked.weight_dtype->name,
                         asked.weight_dtype->block_elements == 1
                             ? std::to_string(asked.weight_dtype->block_bytes)
                             : fmt::format("{}/{}", asked.weight_dtype->block_bytes, asked.weight_dtype->block_elements),
                         asked.weight_dtype->name),
             false});
      }
      all.push_back(std::move(config));
    }
  }

  /// One deployment at one weight dtype: every allowed cache in one plan; when the engine refuses
  /// one of them outright (an Error), each cache alone, so the others still count.
  void try_deployment(PlanRequest asked, const std::vector<GpuSpec>& gpus, std::size_t candidate,
                      const std::vector<CacheDtypes>& caches) {
    asked.caches = caches;
    std::string refused;
    try {
      keep(asked, gpus, candidate);
      return;
    } catch (const Error& error) {
      if (error.code() == ExitCode::unsupported_architecture) throw;
      refused = error.what();
    }
    if (caches.size() > 1) {
      // The same refusal at the engine's own cache: the deployment or the weight dtype is refused
      // (vLLM's --weight-dtype), whatever the cache. Otherwise one cache is: each alone.
      PlanRequest own = asked;
      own.caches.clear();
      bool whole = false;
      try {
        (void)make_plan(model, gpus, own);
      } catch (const Error& error) {
        if (error.code() == ExitCode::unsupported_architecture) throw;
        whole = error.what() == refused;
      }
      if (!whole) {
        for (const CacheDtypes& cache : caches) try_deployment(asked, gpus, candidate, {cache});
        return;
      }
    }
    advice.tried += caches.size();
    for (std::size_t i = 0; i < caches.size(); ++i) note_refusal(refused);
  }
};

}  // namespace

Quality parse_quality(std::string_view text, std::string_view setting) {
  for (const Quality q : {Quality::lossless, Quality::fp8, Quality::int8, Quality::int4})
    if (text == to_string(q)) return q;
  throw Error(fmt::format("{}: '{}' is not a quality level (lossless, fp8, int8, int4)", setting, text));
}

std::string_view to_string(Quality quality) {
  switch (quality) {
    case Quality::lossless: return "lossless";
    case Quality::fp8: return "fp8";
    case Quality::int8: return "int8";
    case Quality::int4: return "int4";
  }
  return "lossless";
}

PricedGpu priced(const GpuSpec& gpu) {
  PricedGpu out{gpu, gpu.price_usd_per_hour, "undated"};
  // The first date in the source ("Deploybase 'RunPod GPU Pricing' 2026-03-10 ...", "as of 2026-05").
  const std::string& source = gpu.price_source;
  const auto digits = [&](std::size_t at, std::size_t n) {
    if (at + n > source.size()) return false;
    for (std::size_t i = at; i < at + n; ++i)
      if (!std::isdigit(static_cast<unsigned char>(source[i]))) return false;
    return true;
  };
  for (std::size_t i = 0; i + 7 <= source.size(); ++i) {
    if ((i > 0 && std::isdigit(static_cast<unsigned char>(source[i - 1]))) || !digits(i, 4) || source[i + 4] != '-' ||
        !digits(i + 5, 2) || source.compare(i, 2, "20") != 0)
      continue;
    const bool day = i + 10 <= source.size() && source[i + 7] == '-' && digits(i + 8, 2);
    out.price_date = source.substr(i, day ? 10 : 7);
    break;
  }
  return out;
}

Advice advise(const ModelSpec& model, const AdviseRequest& request) {
  if (request.base.weight_dtype || !request.base.caches.empty())
    throw Error("the advisor chooses the weight and cache dtypes itself");
  if (request.base.contexts.size() != 1) throw Error(fmt::format("{}: give one context", request.base.names.ctx));
  if (request.max_gpus == 0) throw Error("at most 0 GPUs: nothing to try");
  if (!model.weight_dtype) throw Error("the model has no weight dtype");

  // The settings themselves, once, at the engine's own dtypes on the first card: an error here is
  // the user's (a flag the engine does not take), not a configuration the engine refuses.
  if (!request.candidates.empty()) (void)make_plan(model, request.candidates.front().gpu, request.base);

  Search search{model, request, {}, {}};
  const std::vector<const Dtype*> weights = allowed_weights(model, request.quality);
  const std::vector<CacheDtypes> caches = allowed_caches(model, request.quality);
  const std::string_view pp_option = pipeline_option(request.base.runtime);

  for (std::size_t c = 0; c < request.candidates.size(); ++c) {
    for (std::uint32_t count = 1; count <= request.max_gpus; count *= 2) {
      const std::vector<GpuSpec> gpus(count, request.candidates[c].gpu);
      for (std::uint32_t pp = 1; pp <= count; pp *= 2) {
        if (pp > 1 && pp_option.empty()) break;
        PlanRequest asked = request.base;
        if (pp > 1) asked.engine_options.push_back({std::string(pp_option), std::to_string(pp), "--" + std::string(pp_option)});
        try {
          for (const Dtype* weight : weights) {
            asked.weight_dtype = weight;
            search.try_deployment(asked, gpus, c, caches);
          }
        } catch (const Error& error) {
          // A split the profile does not model for this model is left out, said, not guessed; the
          // model itself (one stage) must still be modelled.
          if (pp == 1 || error.code() != ExitCode::unsupported_architecture) throw;
          search.note_not_modelled(fmt::format("pp {}: {}", pp, error.what()));
        }
      }
      if (count > request.max_gpus / 2) break;  // the next doubling would pass the limit (or wrap)
    }
  }

  Advice& advice = search.advice;
  std::vector<AdviseConfig>& all = search.all;
  std::stable_sort(all.begin(), all.end(), cheaper_first);
  for (const AdviseConfig& config : all) {
    if (!config.row.fits) continue;
    ++advice.fit_count;
    if (advice.fitting.size() < request.top) advice.fitting.push_back(config);
  }

  // Why the cheaper deployments do not: the configuration of each with the most headroom.
  const AdviseConfig* first_fit = advice.fitting.empty() ? nullptr : &advice.fitting.front();
  for (const AdviseConfig& config : all) {
    if (config.row.fits) continue;
    if (first_fit && !cheaper_first(config, *first_fit)) continue;
    if (first_fit && config.usd_per_hour == first_fit->usd_per_hour) continue;
    const auto same_deployment = [&](const AdviseConfig& other) {
      return other.candidate == config.candidate && other.count == config.count && other.row.tp == config.row.tp &&
             other.row.pp == config.row.pp;
    };
    const auto seen = std::find_if(advice.cheaper.begin(), advice.cheaper.end(), same_deployment);
    if (seen == advice.cheaper.end()) advice.cheaper.push_back(config);
    else if (config.row.headroom_bytes > seen->row.headroom_bytes) *seen = config;
  }
  std::stable_sort(advice.cheaper.begin(), advice.cheaper.end(), cheaper_first);

  std::vector<Row> rows;
  for (const AdviseConfig& config : advice.fitting) rows.push_back(config.row);
  advice.notes = find_quality_notes(rows);
  return advice;
}

}  // namespace kvplan
