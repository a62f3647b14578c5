// SGLang's startup figures beside the SGLang profile. SGLang sizes its token pool from two
// readings of free memory, before and after the weights load ("Load weight begin/end. avail
// mem="); given those, its rules are exact (rest = after - before x (1 - mem_fraction_static),
// #tokens = int(rest x 2^30) // the cell), so the plan is fed the log's own readings at both ends
// of their printed rounding and the printed max_total_num_tokens must fall between the two. The
// K and V buffers follow from the printed #tokens exactly. What kvplan would estimate without the
// readings (free memory, the weights) is set beside them as estimates.

#include "explain/explain_engines.h"

#include <fmt/format.h>

#include "engines/sglang/engine.h"
#include "engines/sglang/rules.h"
#include "explain/explain_parts.h"
#include "kvplan/error.h"
#include "kvplan/plan.h"
#include "kvplan/units.h"
#include "model/checked.h"

namespace kvplan {

namespace {

using explain_parts::count_row;
using explain_parts::add_row;
using explain_parts::LogRequest;
using explain_parts::memory_row;
using logs::ByteBand;
using logs::LogFact;

/// The settings the log recovered (server_args, the scheduler's line), as SGLang's flags.
LogRequest sglang_request(const logs::EngineLog& log, Explanation& out) {
  LogRequest req(log, "sglang", out);
  // A speculative run's second "Load weight" and "KV Cache is allocated" lines are the draft's, and
  // the draft's checkpoint is on the serving machine, not in the log.
  const std::string algorithm = req.value("speculative_algorithm");
  const std::string draft = req.value("speculative_draft");
  if (!algorithm.empty() || !draft.empty())
    throw Error(fmt::format("the log's speculative decoding ({}) loads a draft checkpoint kvplan explain does not read: "
                            "plan the run with --speculative-algorithm and --speculative-draft-model-path naming the "
                            "draft's folder",
                            algorithm.empty() ? draft : algorithm),
                ExitCode::unsupported_architecture);
  if (const std::string kv = req.value("kv_cache_dtype"); !kv.empty() && kv != "auto") {
    req.texts.kv_dtypes.push_back(kv);
    req.command += " --kv-cache-dtype " + kv;
  }
  if (const std::string mfs = req.value("mem_fraction_static"); !mfs.empty())
    req.option("mem-fraction-static", mfs, "--mem-fraction-static");
  else
    out.notes.push_back("mem_fraction_static not in the log: SGLang's default for the card (kvplan's latest rules)");
  req.option("context-length", req.value("context_length"), "--context-length");
  if (const std::string tp = req.value("tensor_parallel_size"); !tp.empty() && tp != "1") req.option("tp-size", tp, "--tp-size");
  if (const std::string pp = req.value("pipeline_parallel_size"); !pp.empty() && pp != "1") req.option("pp-size", pp, "--pp-size");
  req.option("page-size", req.value("page_size"), "--page-size");
  req.option("chunked-prefill-size", req.value("chunked_prefill_size"), "--chunked-prefill-size");
  req.option("max-total-tokens", req.value("max_total_tokens"), "--max-total-tokens");
  req.option("max-running-requests", req.value("max_running_requests"), "--max-running-requests");
  return req;
}

/// A printed reading: its band and how to give it back to the profile.
struct Reading {
  ByteBand band;
  std::string shown;  ///< "78.81GiB": the value the command and the middle plan use
  std::vector<const LogFact*> facts;
};

std::optional<Reading> reading(const LogFact* fact) {
  if (!fact) return std::nullopt;
  const auto band = logs::byte_band(*fact);
  if (!band) return std::nullopt;
  return Reading{*band, fact->value + fact->unit, {fact}};
}

/// Free memory before load: printed by "Load weight begin", or (from mid-2025, which prints only
/// the end) the end's avail mem + mem usage, which SGLang computes as before - after.
std::optional<Reading> free_before(const logs::EngineLog& log) {
  if (auto direct = reading(log.figure("avail_before_weights"))) return direct;
  const auto after = reading(log.figure("avail_after_weights"));
  const auto used = reading(log.figure("weights"));
  if (!after || !used) return std::nullopt;
  if (after->band.high > ~std::uint64_t{0} - used->band.high) return std::nullopt;  // no figure past 64 bits
  const ByteBand sum{after->band.low + used->band.low, after->band.mid + used->band.mid,
                     after->band.high + used->band.high};
  // Shown as the sum of the two printed figures ("22.39GiB"); the bands carry the exact ends.
  std::string shown = explain_parts::in_unit(sum.mid, "GiB", 2);
  shown.erase(shown.find(' '), 1);
  return Reading{sum, shown, {after->facts.front(), used->facts.front()}};
}

/// A memory figure the engine printed as a difference of two readings (before - after).
Reconciled difference_row(std::string component, std::string key, const Reading& before, const Reading& after,
                          std::uint64_t kvplan_bytes, std::string rule) {
  Reconciled row = memory_row(std::move(component), std::move(key), {}, kvplan_bytes, false, std::move(rule));
  if (before.band.mid < after.band.mid) return row;
  for (const Reading* r : {&before, &after})
    for (const LogFact* fact : r->facts) row.from.push_back(*fact);
  const std::uint64_t mid = before.band.mid - after.band.mid;
  row.engine_value = mid;
  row.engine_low = before.band.low > after.band.high ? before.band.low - after.band.high : 0;
  row.engine_high = before.band.high - after.band.low;
  row.engine = explain_parts::in_unit(mid, "GiB", 2);
  row.kvplan = explain_parts::in_unit(kvplan_bytes, "GiB", 2);
  row.difference = fmt::format("{:+.2f} GiB", (static_cast<double>(kvplan_bytes) - static_cast<double>(mid)) / 1073741824.0);
  row.agreement = Agreement::estimate;
  return row;
}

}  // namespace

void explain_sglang(const logs::EngineLog& log, const ModelSpec& model, const std::vector<GpuSpec>& gpus,
                    Explanation& out) {
  LogRequest req = sglang_request(log, out);
  const std::optional<Reading> before = free_before(log);
  const std::optional<Reading> after = reading(log.figure("avail_after_weights"));
  const bool fed = before && after;

  // kvplan's own estimate of the readings, and the plan fed the log's readings as printed.
  const Plan estimated = make_plan(model, gpus, req.request(model));
  const SglangResult* guess = sglang_result(estimated.rows.front());
  const LogRequest unfed = req;
  if (fed) {
    req.option("sglang-free-before-load", before->shown, "--sglang-free-before-load");
    req.option("sglang-free-after-load", after->shown, "--sglang-free-after-load");
  }
  out.command = req.command;
  const Plan plan = fed ? make_plan(model, gpus, req.request(model)) : estimated;
  const Row& row = plan.rows.front();
  const SglangResult* r = sglang_result(row);
  if (!r || !guess) return;
  const SglangStage& stage = r->stages[r->decisive_stage];

  add_row(out, memory_row("free before load", "free_before_load", before ? before->facts : std::vector<const LogFact*>{},
                      guess->budget.free_before_load, false,
                      "SGLang measures it (torch.cuda.mem_get_info, MIN over ranks) before the weights load; kvplan "
                      "ESTIMATES it: the card's CUDA total - the CUDA context (- NCCL's buffers with several ranks)"));
  add_row(out, memory_row("free after load", "free_after_load", after ? after->facts : std::vector<const LogFact*>{},
                      guess->budget.free_after_load, false,
                      "measured after the weights load; kvplan ESTIMATES it: free before load - the weights per GPU"));
  const std::string weights_rule =
      fmt::format("kvplan: {} per GPU; SGLang: the free memory loading took (before - after)",
                  r->tp * r->pp == 1 ? "the checkpoint, loaded whole" : "the checkpoint's share of the stage");
  if (fed && !log.figure("weights"))
    add_row(out, difference_row("weights", "weights", *before, *after, stage.weights, weights_rule));
  else
    add_row(out, memory_row("weights", "weights", {log.figure("weights")}, stage.weights, false, weights_rule));

  // The token pool: exact from the readings, so the printed count must fall between the plans fed
  // the readings' printed rounding at the ends that give the fewest and the most tokens.
  const LogFact* total_tokens = log.figure("max_total_num_tokens");
  const LogFact* pool_tokens = log.figure("kv_cache_tokens");
  std::optional<std::uint64_t> low = r->max_total_num_tokens, high = r->max_total_num_tokens;
  std::string pool_rule = "from kvplan's ESTIMATED free memory (the log prints no \"Load weight\" readings)";
  if (fed) {
    const auto tokens_with = [&](std::uint64_t free_before_load, std::uint64_t free_after_load) {
      const EngineOption b{"sglang-free-before-load", fmt::format("{}B", free_before_load), "--sglang-free-before-load"};
      const EngineOption a{"sglang-free-after-load", fmt::format("{}B", free_after_load), "--sglang-free-after-load"};
      const Plan p = make_plan(model, gpus, unfed.request(model, {b, a}));
      const SglangResult* s = sglang_result(p.rows.front());
      return s ? s->max_total_num_tokens : 0;
    };
    low = tokens_with(before->band.high, after->band.low);
    high = tokens_with(before->band.low, after->band.high);
    pool_rule = fmt::format("int((after - before x (1 - {})) x 2^30) // {} B a token per GPU{}, from the log's readings "
                            "(+/- half a last digit): SGLang's profile_max_num_token",
                            r->budget.mem_fraction_static, format_thousands(stage.cell_bytes),
                            r->page_size > 1 ? fmt::format(", floored to pages of {}", r->page_size) : std::string());
  }
  Reconciled pool = count_row("KV pool tokens", "kv_cache_tokens", total_tokens ? total_tokens : pool_tokens, low, high,
                              "tokens", pool_rule);
  if (!fed && !pool.from.empty()) pool.agreement = Agreement::estimate;
  add_row(out, std::move(pool));

  // The buffers: layers x (#tokens + one page) x heads x head dims x bytes, for the printed #tokens.
  const LogFact* printed_tokens = pool_tokens ? pool_tokens : total_tokens;
  // A plain integer, not an optional: gcc 12 -O3 takes an optional read through fmt for unset.
  const std::uint64_t tokens = printed_tokens ? logs::whole_number(printed_tokens->value).value_or(0) : 0;
  const bool plain = r->layout == SglangResult::Layout::mha || r->layout == SglangResult::Layout::mla;
  std::vector<const LogFact*> buffers;
  for (const char* name : {"kv_cache_k", "kv_cache_v", "kv_cache_latent"})
    if (const LogFact* fact = log.figure(name)) buffers.push_back(fact);
  if (!buffers.empty() && tokens > 0 && plain) {
    const std::uint64_t per_token = checked_add(stage.k_bytes_per_token, stage.v_bytes_per_token, "KV cache");
    const std::uint64_t bytes = checked_mul(checked_add(tokens, r->page_size, "KV cache"), per_token, "KV cache");
    add_row(out, memory_row(r->layout == SglangResult::Layout::mla ? "KV cache (latent)" : "KV cache (K + V)", "kv_cache",
                        buffers, bytes, true,
                        fmt::format("({} printed tokens + one page of {}) x {} B a token per GPU ({} layers x K and V "
                                    "rows): the pool's buffers as memory_pool.py allocates them",
                                    format_thousands(tokens), r->page_size, format_thousands(per_token), stage.layers)));
  } else if (!buffers.empty()) {
    add_row(out, memory_row("KV cache", "kv_cache", buffers, std::nullopt, false,
                        plain ? "the log prints no #tokens to size the buffers from"
                              : "kvplan checks the K and V buffers of MHA and MLA pools; this model's pools are split"));
  }
  add_row(out, memory_row("CUDA graphs", "cuda_graphs", {log.figure("cuda_graphs")}, std::nullopt, false,
                      "captured after the pool is sized: out of the (1 - mem_fraction_static) share"));

  out.notes.push_back("SGLang prints \"GB\" for 2^30 bytes (its figures divide by 1 << 30): they are GiB here");
  if (!fed)
    out.notes.push_back("the log has no \"Load weight begin/end. avail mem\" readings: kvplan's pool is from its own "
                        "estimate of them");
  for (const std::string& text : row.assumptions) out.notes.push_back(text);
}

}  // namespace kvplan
