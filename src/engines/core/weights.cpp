#include <fmt/format.h>

#include "kvplan/error.h"
#include "kvplan/plan.h"
#include "model/wide_int.h"

namespace kvplan {

namespace {

/// Bytes of `count` values of `type`, partial blocks rounded up (int4's odd parameter).
std::uint64_t bytes_of(std::uint64_t count, const Dtype& type, std::string_view what) {
  const std::uint64_t blocks = count / type.block_elements + (count % type.block_elements != 0 ? 1 : 0);
  return checked_mul(blocks, type.block_bytes, what);
}

std::string per_value(const Dtype& type) {
  return type.block_elements == 1 ? fmt::format("{} B", type.block_bytes)
                                  : fmt::format("{}/{} B", type.block_bytes, type.block_elements);
}

}  // namespace

WeightsEstimate estimate_weights(const ModelSpec& model, const Dtype* dtype) {
  const Dtype& own = *model.weight_dtype;
  const Dtype& target = dtype ? *dtype : own;
  const bool same = target.name == own.name;
  if (model.weights_bytes && same)
    return {*model.weights_bytes, model.weights_source.empty() ? fmt::format("checkpoint size ({} as published)", target.name)
                                                               : model.weights_source};
  if (model.params > 0)
    return {bytes_of(model.params, target, "weight size"),
            fmt::format("params x {} ({}){}", per_value(target), target.name,
                        model.params_source.empty() ? "" : "; " + model.params_source)};
  if (model.weights_bytes) {
    // No parameter count, but the checkpoint's size: the same values at the other width. An
    // estimate, since a checkpoint keeps some tensors (norms, scales) at their own dtype.
    const u128 scaled = u128{*model.weights_bytes} * target.block_bytes * own.block_elements;
    const u128 per = u128{target.block_elements} * own.block_bytes;
    const u128 bytes = scaled / per + (scaled % per != 0 ? 1 : 0);
    if (bytes > UINT64_MAX) throw Error("weight size does not fit in 64 bits");
    return {static_cast<std::uint64_t>(bytes),
            fmt::format("estimate: the {} checkpoint's size x {}/{} (no parameter count to price {} from)", own.name,
                        per_value(target), per_value(own), target.name)};
  }
  throw Error(fmt::format("{}: the size of its weights is unknown ({}); give the checkpoint's size (--weights SIZE) "
                          "or its parameter count (--params N), or put model.safetensors.index.json beside its config.json",
                          model.id, model.params_source.empty() ? "no parameter count and no checkpoint size" : model.params_source),
              ExitCode::unsupported_architecture);
}

}  // namespace kvplan
