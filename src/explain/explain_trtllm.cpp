// TensorRT-LLM's startup figures beside the TensorRT-LLM profile. The pool it allocates is exact
// given its token count ("Allocated X GiB for max tokens in paged KV cache (N)": N tokens x the
// bytes a token takes on one GPU), so that line checks kvplan's bytes a token. The token count
// itself comes from the free memory TensorRT-LLM measures after its dry run, which kvplan
// estimates; when the log prints the tokens that measurement gave ("Both free_gpu_memory_fraction
// and max_tokens are set (to F and N ...)"), N is fed back as max_tokens and only the rounding to
// whole blocks is left, which the printed count must match.

#include "explain/explain_engines.h"

#include <fmt/format.h>

#include "engines/trtllm/engine.h"
#include "engines/trtllm/rules.h"
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
using logs::LogFact;

/// The settings the log recovered, as trtllm-serve's flags; `versioned`: the log printed its version.
LogRequest trtllm_request(const logs::EngineLog& log, Explanation& out, bool& versioned) {
  LogRequest req(log, "trtllm", out);
  req.option("max_seq_len", req.value("max_seq_len"), "--max_seq_len");
  req.option("max_batch_size", req.value("max_batch_size"), "--max_batch_size");
  req.option("max_num_tokens", req.value("max_num_tokens"), "--max_num_tokens");
  req.option("tokens_per_block", req.value("tokens_per_block"), "--tokens_per_block");
  req.option("kv_cache_free_gpu_memory_fraction", req.value("free_gpu_memory_fraction"),
             "--kv_cache_free_gpu_memory_fraction");
  versioned = false;
  if (const std::string version = req.value("trtllm_version"); !version.empty()) {
    try {
      (void)parse_trtllm_version(version, "trtllm-version");
      req.option("trtllm-version", version, "--trtllm-version");
      versioned = true;
    } catch (const Error&) {
      out.notes.push_back(fmt::format("TensorRT-LLM {}: not a version kvplan has rules for; compared with the latest", version));
    }
  }
  return req;
}

}  // namespace

void explain_trtllm(const logs::EngineLog& log, const ModelSpec& model, const std::vector<GpuSpec>& gpus,
                    Explanation& out) {
  bool versioned = false;
  LogRequest req = trtllm_request(log, out, versioned);
  const LogRequest unfed = req;
  const LogFact* measured = log.figure("max_tokens");
  if (measured) req.option("max_tokens", measured->value, "--max_tokens");
  out.command = req.command;
  const Plan plan = make_plan(model, gpus, req.request(model));
  const Row& row = plan.rows.front();
  const TrtllmResult* r = trtllm_result(row);
  if (!r) return;
  const TrtllmStage& stage = r->stages[r->decisive_stage];

  add_row(out, memory_row("weights", "weights", {log.figure("weights")}, stage.weights, false,
                      fmt::format("kvplan: {} per GPU; TensorRT-LLM: what rank 0's weights took",
                                  r->tp * r->pp == 1 ? "the checkpoint, loaded whole" : "the checkpoint's share")));

  // The token count: from the log's own max_tokens only the rounding to blocks is kvplan's; with no
  // version printed, both roundings kvplan knows (up to 0.20, down from 0.21) bound it.
  const LogFact* tokens = log.figure("kv_cache_tokens");
  std::optional<std::uint64_t> low = r->tokens, high = r->tokens;
  bool exact = false;
  std::string rule = "blocks x tokens_per_block from kvplan's ESTIMATE of the free memory after the dry run (the log "
                     "prints no max_tokens)";
  if (measured) {
    const std::optional<std::uint64_t> given = logs::whole_number(measured->value);
    exact = given && r->max_tokens >= static_cast<double>(*given);
    if (!versioned && exact) {
      // The other rounding: 0.20's ceil when kvplan's latest floors, so the two bound the count.
      const EngineOption old_rounding{"trtllm-version", "0.20", "--trtllm-version"};
      const EngineOption fed{"max_tokens", measured->value, "--max_tokens"};
      const Plan other = make_plan(model, gpus, unfed.request(model, {old_rounding, fed}));
      if (const TrtllmResult* o = trtllm_result(other.rows.front())) {
        low = std::min(r->tokens, o->tokens);
        high = std::max(r->tokens, o->tokens);
      }
    }
    rule = fmt::format("the log's max_tokens {} (line {}) in whole blocks of {}{}: KVCacheManager's primary pool",
                       measured->value, measured->line, r->tokens_per_block,
                       versioned ? std::string()
                                 : " (rounded up to 0.20, down from 0.21: the log prints no version)");
    if (!exact)
      rule += "; kvplan's ESTIMATE of fraction x free memory is below it, and bounds the pool here";
  }
  Reconciled count = count_row("KV tokens", "kv_cache_tokens", tokens, low, high, "tokens", rule);
  if (!exact && !count.from.empty()) count.agreement = Agreement::estimate;
  add_row(out, std::move(count));

  // The pool for the printed count: exact whatever the count, unless the windows split it (VSWA).
  // A plain integer, not an optional: gcc 12 -O3 takes an optional read through fmt for unset.
  const std::uint64_t printed = tokens ? logs::whole_number(tokens->value).value_or(0) : 0;
  std::vector<const LogFact*> pool;
  if (const LogFact* kv = log.figure("kv_cache")) pool.push_back(kv);
  if (!pool.empty() && printed > 0 && !r->vswa && r->windows.size() == 1) {
    const std::uint64_t per_token = r->windows.front().pool_bytes_per_token;
    Reconciled kv = memory_row("KV cache", "kv_cache", pool, checked_mul(printed, per_token, "KV cache"), true,
                               fmt::format("{} printed tokens x {} B a token per GPU ({} layers, {} cache): the pool "
                                           "TensorRT-LLM allocates",
                                           format_thousands(printed), format_thousands(per_token), stage.layers,
                                           r->kv_dtype));
    if (kv.agreement == Agreement::differs && kv.engine_value)
      kv.rule += fmt::format("; the log's figure is {} B a token: a cache dtype other than kvplan's (TensorRT-LLM's "
                             "\"auto\" is the checkpoint's own KV quantization)",
                             format_thousands(*kv.engine_value / printed));
    add_row(out, std::move(kv));
  } else if (!pool.empty()) {
    add_row(out, memory_row("KV cache", "kv_cache", pool, std::nullopt, false,
                        r->vswa ? "the pool is split across attention windows (VSWA): not compared"
                                : "the log prints no token count to size the pool from"));
  }
  for (const std::string& text : row.assumptions) out.notes.push_back(text);
}

}  // namespace kvplan
