#pragma once
/// SGLang's speculative decoding as launch_server's flags set it up (--speculative-algorithm
/// EAGLE, EAGLE3 or STANDALONE with --speculative-draft-model-path): the draft runs its own model with a
/// KV pool of its own layers and the target's #tokens (the two share the token allocator). Where
/// the draft's weights and pool are paid from changed twice (shared/reference/engine-rules-
/// serving.md, read in sgl-project/sglang; the era boundaries dated by merge date):
///
///   headroom (0.4.10 - 0.5.6): #tokens = profiled + R x steps x topk + R x draft tokens + 100
///            (model_runner.py init_memory_pool: both pools take it, past the budget); the draft's
///            weights and pool come after the target's pool, out of what --mem-fraction-static
///            leaves; the default fraction reserves 2,048 MiB more (6,144 for STANDALONE).
///   outside  (0.5.8 - 0.5.10, PR #15748): the same without the extra tokens.
///   inside   (0.5.16 and on, PRs #23862 and #28855): the draft loads before the target's pool is
///            profiled, so its weights count against the fraction, and the cell is scaled by
///            (1 + draft layers / target layers) so that both pools fit; no extra reservation.
///
/// 0.5.7 and 0.5.11 - 0.5.15 may hold either side of a boundary: refused (exit 3) rather than
/// guessed. max_running_requests defaults to 48 in every era.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "engines/core/profile.h"
#include "kvplan/model_spec.h"

namespace kvplan {

struct SglangVersion;

enum class SglangSpeculativeEra { headroom, outside, inside };

struct SglangSpeculative {
  /// nextn: the target's own MTP layers draft (NEXTN, SGLang's alias of EAGLE, or EAGLE naming no
  /// head, or the target's checkpoint, as DeepSeek-V3's recipes give it).
  enum class Algorithm { eagle, eagle3, standalone, nextn } algorithm = Algorithm::eagle3;
  std::string name;                      ///< as given: "EAGLE", "EAGLE3", "STANDALONE", "NEXTN"
  std::uint64_t num_steps = 0;           ///< --speculative-num-steps
  std::uint64_t eagle_topk = 0;          ///< --speculative-eagle-topk
  std::uint64_t num_draft_tokens = 0;    ///< --speculative-num-draft-tokens (steps + 1 with topk 1)
  bool auto_chosen = false;              ///< none of the three given: SGLang's (5, 4, 8) (the rules pick MTP drafts')
  /// The draft checkpoint loaded; null for NEXTN without a path (the target's own checkpoint).
  std::shared_ptr<const DraftModel> draft;

  /// The pool slots a running request holds beyond its own tokens: steps x topk draft tokens and
  /// the draft tokens verified (eagle_worker.py _draft_preprocess_decode; inferred as an upper bound).
  std::uint64_t slots_per_request() const { return num_steps * eagle_topk + num_draft_tokens; }
};

/// The speculative setup --speculative-algorithm and its companions ask for; nullopt without one.
/// Exit 2 for what SGLang refuses (a draft-less EAGLE3), exit 3 for what is not modelled (NGRAM,
/// the token map, and a draft the front end did not load). Whether the target has MTP layers SGLang
/// drafts with is the rules' to check (sglang/rules.cpp).
std::optional<SglangSpeculative> sglang_speculative(const PlanRequest& request);

/// The draft checkpoint --speculative-draft-model-path names, for the front end to load.
std::optional<std::string> sglang_draft_named(const PlanRequest& request);

/// Which way `version` pays for the draft; exit 3 for a release a boundary may fall in.
SglangSpeculativeEra sglang_speculative_era(const SglangVersion& version, const std::string& algorithm);

/// MiB the default --mem-fraction-static sets aside for the draft (0.4.10 - 0.5.6 and 0.5.8 -
/// 0.5.10: server_args.py, 2,048 for EAGLE and EAGLE3, 6,144 for STANDALONE; none from 2026).
std::uint64_t sglang_speculative_reserve_mib(const SglangSpeculative& spec, SglangSpeculativeEra era);

std::string to_string(SglangSpeculativeEra era);

}  // namespace kvplan
