#include "engines/sglang/speculative.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "engines/core/serving.h"
#include "engines/sglang/rules.h"
#include "kvplan/error.h"

namespace kvplan {

namespace {

std::string upper(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return text;
}

std::optional<std::uint64_t> count_option(const PlanRequest& request, std::string_view name) {
  const EngineOption* o = find_option(request, name);
  if (!o) return std::nullopt;
  return parse_positive_integer(o->value, o->shown_as);
}

}  // namespace

std::optional<std::string> sglang_draft_named(const PlanRequest& request) {
  const EngineOption* algorithm = find_option(request, "speculative-algorithm");
  const EngineOption* path = find_option(request, "speculative-draft-model-path");
  if (!algorithm || !path) return std::nullopt;
  const std::string name = upper(algorithm->value);
  if (name != "EAGLE" && name != "EAGLE3" && name != "STANDALONE" && name != "NEXTN") return std::nullopt;
  return path->value;
}

std::optional<SglangSpeculative> sglang_speculative(const PlanRequest& request) {
  const EngineOption* algorithm = find_option(request, "speculative-algorithm");
  const std::optional<std::uint64_t> steps = count_option(request, "speculative-num-steps");
  const std::optional<std::uint64_t> topk = count_option(request, "speculative-eagle-topk");
  const std::optional<std::uint64_t> draft_tokens = count_option(request, "speculative-num-draft-tokens");
  const EngineOption* path = find_option(request, "speculative-draft-model-path");
  if (!algorithm) {
    for (const char* name : {"speculative-num-steps", "speculative-eagle-topk", "speculative-num-draft-tokens",
                             "speculative-draft-model-path"})
      if (const EngineOption* o = find_option(request, name))
        throw Error(fmt::format("{} has no effect without --speculative-algorithm", o->shown_as));
    return std::nullopt;
  }
  SglangSpeculative spec;
  spec.name = upper(algorithm->value);
  if (spec.name == "NGRAM")
    throw Error(fmt::format("{} {}: not modelled by the SGLang profile (its n-gram tables beside the pool were not "
                            "read); EAGLE, EAGLE3, NEXTN and STANDALONE drafts are",
                            algorithm->shown_as, algorithm->value),
                ExitCode::unsupported_architecture);
  if (const EngineOption* map = find_option(request, "speculative-token-map"))
    throw Error(fmt::format("{} {}: the hot-vocabulary head it builds is not modelled by the SGLang profile; plan "
                            "without it (the draft's full head, an upper bound)",
                            map->shown_as, map->value),
                ExitCode::unsupported_architecture);
  if (spec.name == "EAGLE") spec.algorithm = SglangSpeculative::Algorithm::eagle;
  else if (spec.name == "EAGLE3") spec.algorithm = SglangSpeculative::Algorithm::eagle3;
  else if (spec.name == "STANDALONE") spec.algorithm = SglangSpeculative::Algorithm::standalone;
  else if (spec.name == "NEXTN") spec.algorithm = SglangSpeculative::Algorithm::nextn;
  else
    throw Error(fmt::format("{} {}: SGLang's speculative algorithms are EAGLE, EAGLE3, NEXTN, STANDALONE and NGRAM",
                            algorithm->shown_as, algorithm->value));
  // NEXTN is EAGLE under another name (speculative_hook.py _resolve_speculative_algorithm_alias);
  // without a path SGLang drafts with the target's checkpoint for the MTP architectures
  // (_handle_eagle_family, PR #5793): the rules check that the target has such layers.
  const bool own_layers = spec.algorithm == SglangSpeculative::Algorithm::nextn ||
                          (spec.algorithm == SglangSpeculative::Algorithm::eagle && !path);
  if (own_layers) spec.algorithm = SglangSpeculative::Algorithm::nextn;
  if (!path && !own_layers)  // EAGLE3 or STANDALONE (EAGLE without one drafts with MTP layers)
    throw Error(fmt::format("{} {} needs --speculative-draft-model-path: the draft checkpoint ({})", algorithm->shown_as,
                            algorithm->value,
                            spec.algorithm == SglangSpeculative::Algorithm::eagle3 ? "an EAGLE-3 head" : "a smaller model"));
  if (path && !request.draft_model)
    throw Error(fmt::format("{} {}: the draft was not loaded; the command line loads it", path->shown_as, path->value),
                ExitCode::unsupported_architecture);
  spec.draft = path ? request.draft_model : nullptr;
  const std::string architecture = spec.draft ? spec.draft->spec.architecture : "";
  // EAGLE naming a checkpoint with MTP layers (DeepSeek-V3's own, as its recipes give it; an EAGLE
  // head has none) drafts with those layers, as NEXTN does.
  if (spec.algorithm == SglangSpeculative::Algorithm::eagle && spec.draft && spec.draft->spec.mtp_layers > 0)
    spec.algorithm = SglangSpeculative::Algorithm::nextn;
  const bool eagle3_head = architecture == "llama_eagle3";
  const bool eagle_head = architecture == "llama_eagle";
  if (spec.algorithm == SglangSpeculative::Algorithm::eagle3 && !eagle3_head)
    throw Error(fmt::format("{} {}: EAGLE3 drafts are EAGLE-3 heads (architectures LlamaForCausalLMEagle3); this is {}",
                            path->shown_as, path->value,
                            eagle_head ? "an EAGLE head: give --speculative-algorithm EAGLE"
                                       : "a '" + architecture + "' model: give it with --speculative-algorithm STANDALONE"));
  if (spec.algorithm == SglangSpeculative::Algorithm::eagle && !eagle_head) {
    if (eagle3_head)
      throw Error(fmt::format("{} {}: an EAGLE-3 head drafts with --speculative-algorithm EAGLE3", path->shown_as,
                              path->value));
    throw Error(fmt::format("{} {}: its config says '{}', not LlamaForCausalLMEagle: the SGLang profile prices EAGLE heads "
                            "as SGLang's LlamaForCausalLMEagle builds them (the lmsys/sglang-EAGLE-* checkpoints)",
                            path->shown_as, path->value, architecture),
                ExitCode::unsupported_architecture);
  }
  if (spec.algorithm == SglangSpeculative::Algorithm::standalone && (eagle3_head || eagle_head))
    throw Error(fmt::format("{} {}: an EAGLE head drafts with --speculative-algorithm {}, not STANDALONE", path->shown_as,
                            path->value, eagle3_head ? "EAGLE3" : "EAGLE"));

  // server_args.py: none of the three given, SGLang picks them (auto_choose_speculative_params:
  // (5, 4, 8); the rules pick the MTP drafts' by model and release, mtp_draft_beside); with topk 1
  // the draft tokens are steps + 1 (_handle_eagle_family).
  if (!steps && !topk && !draft_tokens) {
    spec.num_steps = 5, spec.eagle_topk = 4, spec.num_draft_tokens = 8, spec.auto_chosen = true;
  } else if (steps && topk && draft_tokens) {
    spec.num_steps = *steps, spec.eagle_topk = *topk, spec.num_draft_tokens = *draft_tokens;
    if (spec.eagle_topk == 1) spec.num_draft_tokens = spec.num_steps + 1;
  } else {
    throw Error("--speculative-num-steps, --speculative-eagle-topk and --speculative-num-draft-tokens: give all three or "
                "none (SGLang then picks 5, 4 and 8; 3, 1 and 4 for DeepSeek's MTP layers)");
  }
  return spec;
}

SglangSpeculativeEra sglang_speculative_era(const SglangVersion& version, const std::string& algorithm) {
  const std::uint32_t n = version.number;
  const auto unsettled = [&](std::string_view why, std::string_view choices) {
    return Error(fmt::format("--speculative-algorithm {} under SGLang {}: {}; give the --sglang-version whose rules your "
                             "build follows ({})",
                             algorithm, to_string(version), why, choices),
                 ExitCode::unsupported_architecture);
  };
  if (n < 4010)
    throw Error(fmt::format("--speculative-algorithm {} under SGLang {}: releases before 0.4.10 are not modelled with a "
                            "draft (their request default and headroom rule differ)",
                            algorithm, to_string(version)),
                ExitCode::unsupported_architecture);
  if (n <= 5006) return SglangSpeculativeEra::headroom;
  if (n == 5007)
    throw unsettled("PR #15748 (merged 2025-12-24, the end of the extra draft tokens) may or may not be in it",
                    "0.5.6 without it, 0.5.8 with it");
  if (n <= 5010) return SglangSpeculativeEra::outside;
  if (n < 5016)
    throw unsettled("PRs #23862 and #28855 (2026-04-27 and 2026-06-21: the draft's pool, then its weights, moved inside "
                    "the budget) may or may not be in it",
                    "0.5.10 without either, latest with both");
  return SglangSpeculativeEra::inside;
}

std::uint64_t sglang_speculative_reserve_mib(const SglangSpeculative& spec, SglangSpeculativeEra era) {
  if (era == SglangSpeculativeEra::inside) return 0;
  return spec.algorithm == SglangSpeculative::Algorithm::standalone ? 6144 : 2048;
}

std::string to_string(SglangSpeculativeEra era) {
  switch (era) {
    case SglangSpeculativeEra::headroom: return "0.4.10 - 0.5.6";
    case SglangSpeculativeEra::outside: return "0.5.8 - 0.5.10";
    case SglangSpeculativeEra::inside: return "0.5.16+";
  }
  return "";
}

}  // namespace kvplan
