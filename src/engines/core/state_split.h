#pragma once
/// How tensor parallelism splits a recurrent layer's state (Mamba, Mamba2, Gated DeltaNet, KDA,
/// short convolution, lightning attention): the rule vLLM's MambaStateShapeCalculator applies
/// (model_executor/layers/mamba/mamba_utils.py), each tensor's shards divided over the ranks and
/// Mamba2's groups replicated up to the TP size. A pure function.

#include <cstdint>
#include <string_view>

#include "kvplan/model_spec.h"

namespace kvplan {

/// The elements of `tensor` one of `tp` ranks holds. Throws an unsupported-architecture Error
/// (exit 3) when the tensor does not state its shards, and an Error (exit 2) naming `tp_flag` where
/// the engine refuses the split: shards not divisible by TP ("Tensor parallel world size must divide
/// num heads"), groups neither divisible by TP nor 1 (MambaMixer2's assertion).
std::uint64_t state_elements_per_rank(const StateTensor& tensor, std::uint32_t tp, std::string_view tp_flag);

/// The bytes of `layer`'s state one of `tp` ranks holds, each tensor at its own dtype (vLLM's
/// MambaSpec, TensorRT-LLM's MambaCacheManager). Errors as state_elements_per_rank.
std::uint64_t state_bytes_per_rank(const LayerSpec& layer, std::uint32_t tp, std::string_view tp_flag);

}  // namespace kvplan
