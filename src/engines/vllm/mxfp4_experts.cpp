#include "engines/vllm/mxfp4_experts.h"

#include <fmt/format.h>

#include "engines/core/serving.h"
#include "model/checked.h"
#include "model/wide_int.h"

namespace kvplan {

namespace {

/// One expert's three matrices, 2I x H (gate and up) and H x I (down), as Mxfp4MoEMethod creates
/// them: half a byte a value and a 1-byte e8m0 scale per 32 along the input width, plus the bf16
/// biases of the two projections (2I + H). Both widths are multiples of 32.
std::uint64_t expert_bytes(std::uint64_t intermediate, std::uint64_t hidden) {
  const Checked values = Checked(3, "mxfp4 experts") * intermediate * hidden;
  return (values / 2 + values / 32 + Checked(2 * intermediate + hidden, "mxfp4 experts") * 2).value();
}

/// The routed experts in the checkpoint, every MoE layer's together: its bytes beyond 2 a parameter
/// are the mxfp4 values' (17/32 B each, against the 2 B their parameters would take at bf16), in
/// whole experts of 3 x I x H values; 0 when they are not.
std::uint64_t checkpoint_experts(const ModelSpec& model, const RoutedExperts& routed) {
  if (!model.weights_bytes) return 0;
  const u128 language = u128{*model.weights_bytes} - std::min<u128>(*model.weights_bytes, parts_bytes(model));
  const u128 at_bf16 = u128{model.params} * 2;
  if (language >= at_bf16) return 0;
  const u128 saved = (at_bf16 - language) * 32;  // = mxfp4 values x 47
  const u128 one_expert = u128{3} * routed.intermediate * routed.input_width;
  if (saved % 47 != 0 || (saved / 47) % one_expert != 0) return 0;
  const u128 count = saved / 47 / one_expert;
  return count <= UINT32_MAX ? static_cast<std::uint64_t>(count) : 0;
}

}  // namespace

VllmMxfp4Experts vllm_mxfp4_experts(const ModelSpec& model, const GpuSpec& gpu, std::uint32_t tensor_parallel) {
  VllmMxfp4Experts out;
  const unsigned cc = compute_capability(gpu);
  if (cc < 80 || cc >= 100) {
    if (cc == 0)
      out.rule = fmt::format("{} has no CUDA compute capability kvplan knows, and so no mxfp4 MoE backend it models", gpu.name);
    else if (cc < 80)
      out.rule = fmt::format("{} is sm_{}: the mxfp4 MoE backends kvplan models (Marlin, Triton) need sm_80 or later",
                             gpu.name, cc);
    else
      out.rule = fmt::format("on {} (sm_{}) vLLM runs mxfp4 experts with a backend whose layout kvplan has not verified ({})",
                             gpu.name, cc,
                             cc >= 110 ? "its choice among FlashInfer CUTLASS and Marlin not read" : "FlashInfer's TRT-LLM kernels");
    return out;
  }
  // quant_method mxfp4 (gpt-oss) is Mxfp4MoEMethod's; compressed-tensors' mxfp4 (Kimi K3) is
  // another method, with its own layout.
  if (model.architecture != "gpt_oss") {
    out.rule = fmt::format("kvplan derives vLLM's Mxfp4MoEMethod layout (gpt-oss's quant_method mxfp4), not that of "
                           "model type '{}'",
                           model.architecture.empty() ? "unknown" : model.architecture);
    return out;
  }
  if (!model.routed_experts || !model.routed_experts->gated) {
    out.rule = "the checkpoint does not state its routed experts' shape (gate, up and down projections)";
    return out;
  }
  const RoutedExperts& routed = *model.routed_experts;
  const std::uint64_t experts = checkpoint_experts(model, routed);
  if (experts == 0 || routed.input_width % 32 != 0 || routed.intermediate % 32 != 0) {
    out.rule = "the checkpoint's size is not its bf16 tensors and whole mxfp4 experts of the routed_experts shape, so "
               "kvplan cannot tell how many experts vLLM pads";
    return out;
  }
  // FusedMoE splits the intermediate width evenly (intermediate_size_per_partition); the padding
  // below then covers gpt_oss.py's shards of whole 32-value blocks (736 of 720 at TP 4).
  if (routed.intermediate % tensor_parallel != 0) {
    out.rule = fmt::format("the experts' intermediate width {} does not split evenly over tensor parallel {}",
                           format_thousands(routed.intermediate), tensor_parallel);
    return out;
  }
  // mxfp4_round_up_hidden_size_and_intermediate_size: Marlin pads I (per rank) to 128 and H to 256.
  // The Triton backend Hopper gets from 0.12 pads I to 64 only, then swizzles the weights and keeps
  // a second copy of the scales; vLLM 0.19's logs put it below Marlin's padding (gpt-oss-20b: 13.64
  // GiB loaded against 13.69 at TP 1, 7.01 against 7.08 at TP 2), so that padding bounds it.
  const std::uint64_t per_rank = routed.intermediate / tensor_parallel;
  const std::uint64_t intermediate = round_up_to(per_rank, 128, "mxfp4 experts");
  const std::uint64_t hidden = round_up_to(routed.input_width, 256, "mxfp4 experts");
  const std::uint64_t loaded = checked_mul(experts, expert_bytes(intermediate, hidden), "mxfp4 experts");
  const std::uint64_t share = checked_mul(experts, expert_bytes(routed.intermediate, routed.input_width), "mxfp4 experts") /
                              tensor_parallel;
  out.extra_bytes = loaded - std::min(loaded, share);
  out.estimate = cc >= 90;
  out.rule = fmt::format(
      "{}mxfp4 experts as vLLM creates them for its Marlin MoE backend on {} (sm_{}{}): {} experts (the "
      "checkpoint's mxfp4 bytes in 3 x {} x {} values each), the intermediate width per GPU {} -> {} and the hidden "
      "{} -> {} (mxfp4_round_up_hidden_size_and_intermediate_size): {} more per GPU than its share of the checkpoint",
      out.estimate ? "ESTIMATE: " : "", gpu.name, cc,
      out.estimate ? "; vLLM 0.12 and later run the Triton backend here, whose layout 0.19's logs put below this" : "",
      format_thousands(experts), format_thousands(routed.intermediate), format_thousands(routed.input_width),
      format_thousands(per_rank), format_thousands(intermediate), format_thousands(routed.input_width),
      format_thousands(hidden), format_gib(static_cast<std::int64_t>(*out.extra_bytes)));
  return out;
}

}  // namespace kvplan
