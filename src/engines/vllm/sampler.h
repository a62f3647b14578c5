#pragma once
/// Which kernel vLLM's sampler filters top-k and top-p with, and what its warm-up costs. The torch
/// peak vLLM subtracts while profiling is, for dense models, the dummy sampler's (gpu_model_runner,
/// _dummy_sampler_run): it asks for top-k and top-p on each of max_num_seqs rows of the whole
/// vocabulary, so the kernel that filters them sets the peak. A pure function of the release and
/// VLLM_USE_FLASHINFER_SAMPLER.

#include <cstdint>
#include <optional>
#include <string_view>

namespace kvplan {

enum class VllmSampler {
  /// apply_top_k_top_p_pytorch: a full sort of the fp32 logits (sorted values and int64 indices,
  /// with the sort's own index input and radix-sort buffers beside them).
  pytorch_sort,
  /// apply_top_k_top_p_triton (PR #33538): pivot search in place, no sort.
  triton,
  /// FlashInfer's top_k_top_p_sampling_from_logits (forward_cuda): rejection sampling, no sort.
  flashinfer,
};

/// "pytorch_sort", "triton", "flashinfer": as the JSON and the rules name them.
std::string_view to_string(VllmSampler sampler);

/// The first minor release whose sampler filters with the Triton kernel unless FlashInfer's is on
/// (PR #33538, merged February 2026, first in 0.17.0), for batches of 8 rows or more.
inline constexpr unsigned kVllmTritonSamplerMinor = 17;

/// The first minor release that uses FlashInfer's sampler unless VLLM_USE_FLASHINFER_SAMPLER=0
/// (PR #40376, merged 2026-04-29, first in 0.21.0); on a card FlashInfer does not support it falls
/// back to Triton's, at the same bytes.
inline constexpr unsigned kVllmFlashinferSamplerMinor = 21;

/// The sampler vLLM 0.`minor` ("latest" above every release) runs on an NVIDIA GPU, given
/// VLLM_USE_FLASHINFER_SAMPLER (nullopt: not set):
///   set to 1, or unset from 0.21: FlashInfer's (kvplan takes it to be installed, as vLLM then logs
///     "Using FlashInfer for top-p & top-k sampling.");
///   otherwise Triton's from 0.17 (for 8 rows or more: sampler_for_rows), the sort before.
/// Up to 0.11.0 vLLM also used FlashInfer's unset, but only where FlashInfer was installed (not a
/// pip dependency then; the docker image has it), which kvplan cannot see: the sort, the larger,
/// is taken. 0.11.1 (PR #26859) made FlashInfer's opt-in until 0.21.
VllmSampler vllm_sampler(unsigned minor, std::optional<bool> use_flashinfer);

/// The kernel `chosen` runs for a batch of `rows`: the Triton kernel leaves batches under 8 rows to
/// the sort, which is faster there (topk_topp_sampler.py, apply_top_k_top_p).
VllmSampler sampler_for_rows(VllmSampler chosen, std::uint64_t rows);

/// The rule in words, for a row's rules: which kernel, and why it is the one.
std::string_view sampler_rule(VllmSampler sampler);

/// The warm-up's peak per row and vocabulary entry: what the sampler holds at once, the model's
/// logits included.
std::uint64_t sampler_bytes_per_entry(VllmSampler sampler);

}  // namespace kvplan
