// Which top-k/top-p kernel vLLM's sampler runs, and its warm-up's bytes per vocabulary entry
// (docs/engines/vllm.md, "The sampler's warm-up").

#include "engines/vllm/sampler.h"

namespace kvplan {

std::string_view to_string(VllmSampler sampler) {
  switch (sampler) {
    case VllmSampler::pytorch_sort: return "pytorch_sort";
    case VllmSampler::triton: return "triton";
    case VllmSampler::flashinfer: return "flashinfer";
  }
  return "pytorch_sort";
}

std::string_view sampler_rule(VllmSampler sampler) {
  switch (sampler) {
    case VllmSampler::pytorch_sort:
      return "top-k and top-p by a full sort of the logits: vLLM before its Triton kernel (0.17), unless FlashInfer's "
             "sampler is on (VLLM_USE_FLASHINFER_SAMPLER=1)";
    case VllmSampler::triton: return "top-k and top-p by vLLM's Triton kernel, no sort";
    case VllmSampler::flashinfer: return "top-k and top-p by FlashInfer's sampler, no sort";
  }
  return "";
}

VllmSampler vllm_sampler(unsigned minor, std::optional<bool> use_flashinfer) {
  if (use_flashinfer.value_or(minor >= kVllmFlashinferSamplerMinor)) return VllmSampler::flashinfer;
  return minor >= kVllmTritonSamplerMinor ? VllmSampler::triton : VllmSampler::pytorch_sort;
}

VllmSampler sampler_for_rows(VllmSampler chosen, std::uint64_t rows) {
  return chosen == VllmSampler::triton && rows < 8 ? VllmSampler::pytorch_sort : chosen;
}

std::uint64_t sampler_bytes_per_entry(VllmSampler sampler) {
  switch (sampler) {
    // Measured: 38.4 - 38.9 B an entry in the 0.11.0 table's torch peaks (Qwen3-0.6B, Qwen3-32B at
    // TP 1 and 2, Llama 3.1 8B; 1,024 rows), and PR #32558's benchmark puts the sort at 1.25 GB for
    // 256 x 131,072 (37 - 40 B). What a sort holds at once: the bf16 logits (2), their fp32 copy
    // (4), the sorted values and int64 indices (12), the sort's int64 index input (8) and its
    // radix passes' alternate keys and values (12), 38 B, and the forward pass's remains.
    case VllmSampler::pytorch_sort: return 39;
    // No sort: the logits, their fp32 copy, the probabilities and the sampling noise. 16 B is what
    // vLLM 0.19.0 logged for the Triton kernel (Llama 3.1 8B: 1.96 GiB at 1,024 rows) and fits
    // the 0.10.1.1 logs that name FlashInfer's.
    case VllmSampler::triton:
    case VllmSampler::flashinfer: return 16;
  }
  return 39;
}

}  // namespace kvplan
