#include "engines/vllm/moe_workspace.h"

#include <algorithm>
#include <string_view>

#include "model/checked.h"

namespace kvplan {

std::uint64_t moe_workspace_bytes(const ModelSpec& model, const Dtype& activations, std::uint64_t tokens,
                                  std::uint32_t tensor_parallel) {
  if (!model.routed_experts) return 0;
  const RoutedExperts& routed = *model.routed_experts;
  const std::uint64_t intermediate = ceil_div(routed.intermediate, tensor_parallel);
  const std::uint64_t n = routed.gated ? 2 * intermediate : intermediate;  // widths are at most 2^24
  const std::uint64_t element = ceil_div(activations.block_bytes, activations.block_elements);
  // The tokens are max_num_batched_tokens: an absurd one is what overflows, so the error says so.
  constexpr std::string_view kWhat = "MoE workspace of max_num_batched_tokens tokens";
  const auto buffer = [&](std::uint64_t width) {
    const std::uint64_t values = checked_mul(checked_mul(tokens, routed.per_token, kWhat), width, kWhat);
    return round_up_to(checked_mul(values, element, kWhat), 256, kWhat);
  };
  return checked_add(buffer(std::max(intermediate, routed.input_width)), buffer(std::max(n, routed.input_width)),
                     "MoE workspace");
}

}  // namespace kvplan
