#pragma once
/// vLLM's --speculative-config: the JSON text vLLM takes, read as vLLM reads it (config/speculative.py,
/// SpeculativeConfig.__post_init__ and _verify_args), down to what changes memory. Pure: no I/O.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "kvplan/model_spec.h"
#include "kvplan/plan.h"

namespace kvplan {

/// What a speculative configuration adds to what vLLM allocates.
struct VllmSpeculative {
  std::string method;                       ///< "mtp", "ngram" or "suffix" (MTP model types folded into "mtp")
  std::uint32_t num_speculative_tokens = 0;  ///< k: draft tokens a step proposes
  /// The draft model's attention layers, each with a KV cache of the target's kind: the checkpoint's
  /// MTP layers (all of them, whatever k: vLLM cycles through them, spec_step_idx % n_predict). 0
  /// for methods without a draft model (ngram, suffix).
  std::uint32_t draft_layers = 0;
  /// eagle, eagle3, draft_model: the draft's checkpoint (its layers join the cache; its weights are loaded
  /// beside the target's). Null for MTP (the target's own checkpoint) and methods without a draft.
  std::shared_ptr<const DraftModel> draft;
};

/// The draft checkpoint --speculative-config (`text`) names for a method whose draft the vLLM
/// profile reads (eagle3, draft_model); nullopt for any other text, well-formed or not (the parse
/// reports it).
/// The front end loads it and hands it back as `draft`.
std::optional<std::string> vllm_speculative_draft_name(std::string_view text);

/// Reads `text` (flag `flag`) for `model` served at tensor parallel `tp`. Error (exit 2) where vLLM
/// refuses the configuration (not JSON, a bad value, MTP on a model without MTP layers, k not a
/// multiple of them); an unsupported-architecture Error (exit 3) naming the method or field for
/// what the vLLM profile does not derive (a separate draft checkpoint: eagle, eagle3, draft_model,
/// ...; an MTP family whose draft layers were not read; a field that changes the draft's memory).
VllmSpeculative parse_vllm_speculative_config(std::string_view text, std::string_view flag, const ModelSpec& model,
                                              std::uint32_t tp, std::shared_ptr<const DraftModel> draft = nullptr);

}  // namespace kvplan
