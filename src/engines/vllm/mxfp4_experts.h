#pragma once
/// How vLLM lays out an mxfp4 checkpoint's routed experts as it loads them: the expert tensors are
/// created padded to the MoE backend's tiles, so a rank holds more than its share of the checkpoint.
/// A pure function of the model, the card and the tensor-parallel size.

#include <cstdint>
#include <optional>
#include <string>

#include "kvplan/gpu.h"
#include "kvplan/model_spec.h"

namespace kvplan {

struct VllmMxfp4Experts {
  /// Bytes one GPU holds beyond checkpoint / TP (the padding, and the w2 biases every rank keeps);
  /// nullopt when not derived for this model or card, `rule` then saying why.
  std::optional<std::uint64_t> extra_bytes;
  bool estimate = false;  ///< an upper estimate (Hopper from 0.12: the Triton backend's own layout is smaller)
  std::string rule;
};

/// For a gpt-oss checkpoint (quant_method mxfp4, which vLLM loads with Mxfp4MoEMethod; other
/// mxfp4 checkpoints are not derived). The expert count is read from the
/// checkpoint: its bytes beyond 2 per parameter are the mxfp4 values' (each 17/32 B: half a byte and
/// a 1-byte scale per 32), which must come to whole experts of the routed_experts shape, else not
/// derived. The backend follows the card (fused_moe/oracle/mxfp4.py, select_mxfp4_moe_backend):
/// sm_80-sm_89 Marlin; sm_90 Marlin up to 0.11 and Triton after it, both priced with Marlin's
/// padding (an upper estimate for Triton); Blackwell (FlashInfer TRT-LLM) and cards without a
/// CUDA compute capability are not derived.
VllmMxfp4Experts vllm_mxfp4_experts(const ModelSpec& model, const GpuSpec& gpu, std::uint32_t tensor_parallel);

}  // namespace kvplan
