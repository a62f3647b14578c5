#include "engines/core/state_split.h"

#include <fmt/format.h>

#include "kvplan/dtype.h"
#include "kvplan/error.h"
#include "model/checked.h"

namespace kvplan {

std::uint64_t state_elements_per_rank(const StateTensor& tensor, std::uint32_t tp, std::string_view tp_flag) {
  if (tp <= 1) return tensor.elements;
  if (tensor.shards == 0)
    throw unsupported_architecture(fmt::format("the {} state split over {} {} ranks", tensor.name, tp_flag, tp),
                                   "its heads or channels are not stated (a spec file's linear_state without shards)");
  if (tensor.shards % tp != 0)
    throw Error(fmt::format("{} {}: the recurrent layers' {} state splits {} heads or channels over the ranks, so the "
                            "tensor-parallel size must divide them",
                            tp_flag, tp, tensor.name, tensor.shards));
  // extra_groups_for_head_shards: groups that TP does not divide are replicated to one a rank,
  // which MambaMixer2 allows only for a single group.
  std::uint64_t groups = tensor.groups;
  if (groups != 0 && groups % tp != 0) {
    if (groups != 1)
      throw Error(fmt::format("{} {}: the recurrent layers' {} groups must be divisible by the tensor-parallel size, or "
                              "be 1 (MambaMixer2)",
                              tp_flag, tp, tensor.groups));
    groups = tp;
  }
  const std::uint64_t per_group = tensor.groups ? tensor.group_elements / tensor.groups : 0;
  const std::uint64_t total =
      (Checked(tensor.elements - tensor.group_elements, "state") + Checked(per_group, "state") * groups).value();
  if (total % tp != 0)
    throw Error(fmt::format("{} {}: the recurrent layers' {} state ({} values) does not split evenly over the ranks",
                            tp_flag, tp, tensor.name, total));
  return total / tp;
}

std::uint64_t state_bytes_per_rank(const LayerSpec& layer, std::uint32_t tp, std::string_view tp_flag) {
  std::uint64_t bytes = 0;
  for (const StateTensor& tensor : layer.state)
    bytes = checked_add(bytes, dtype_bytes(*tensor.dtype, state_elements_per_rank(tensor, tp, tp_flag)), "state");
  return bytes;
}

}  // namespace kvplan
