#pragma once
/// The fused-MoE buffers vLLM keeps after its profiling forward pass. Its modular MoE kernel takes
/// them from the worker's WorkspaceManager (v1/worker/workspace.py), which keeps one allocation,
/// grown to the largest request, for the life of the worker; the dummy sampler runs after the
/// forward pass, so the torch peak vLLM subtracts is the sampler's on top of these. A pure function.

#include <cstdint>

#include "kvplan/dtype.h"
#include "kvplan/model_spec.h"

namespace kvplan {

/// The bytes one GPU keeps for a forward pass of `tokens` tokens (max_num_batched_tokens) at the
/// activations' dtype, the experts split by `tensor_parallel`; 0 for a model without routed experts.
/// TritonExperts.workspace_shapes (fused_moe/fused_moe.py), taken by
/// FusedMoEKernelModularImpl._allocate_buffers in one get_simultaneous call (each rounded up to
/// 256 B): workspace13 (tokens, top_k, max(I, width)), which the output (tokens, width) shares and
/// never outgrows, and workspace2 (tokens, top_k, max(N, width)), N = w13's rows (2I gated, I
/// not), I the intermediate width per rank.
std::uint64_t moe_workspace_bytes(const ModelSpec& model, const Dtype& activations, std::uint64_t tokens,
                                  std::uint32_t tensor_parallel);

}  // namespace kvplan
