#include <fmt/format.h>

#include "engines/core/weight_formats.h"
#include "kvplan/error.h"
#include "kvplan/plan.h"
#include "kvplan/units.h"
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

/// "<rule>; language model 25.60 GiB + vision tower 0.80 GiB + projector 0.01 GiB" for a
/// multimodal checkpoint (the rule first: an estimate stays marked), `rule` alone for a text-only one.
std::string with_parts(const ModelSpec& model, std::uint64_t total, const std::string& rule) {
  if (model.parts.empty()) return rule;
  const std::uint64_t parts = parts_bytes(model);
  std::string split = fmt::format("language model {}", format_gib(static_cast<std::int64_t>(total > parts ? total - parts : 0)));
  for (const ModelPart& part : model.parts)
    split += part.params ? fmt::format(" + {} {}", part.name, format_gib(static_cast<std::int64_t>(part.bytes)))
                         : fmt::format(" + {} (not counted)", part.name);
  return rule + "; " + split;
}

/// The whole checkpoint's bytes (the language model at `dtype`, the parts at their own) and the rule.
WeightsEstimate estimate_language_and_parts(const ModelSpec& model, const Dtype* dtype) {
  const Dtype& own = *model.weight_dtype;
  const Dtype& target = dtype ? *dtype : own;
  const bool same = target.name == own.name;
  // A named format (q4_k_m, awq, nvfp4) is priced tensor by tensor; the parts stay at their own dtype.
  if (!same)
    if (std::optional<WeightsEstimate> format = price_weight_format(model, target)) {
      format->bytes = checked_add(format->bytes, parts_bytes(model), "weight size");
      return *format;
    }
  if (model.weights_bytes && same)
    return {*model.weights_bytes, model.weights_source.empty() ? fmt::format("checkpoint size ({} as published)", target.name)
                                                               : model.weights_source};
  // The parts (towers, projectors) stay at the checkpoint's own dtype whatever the language
  // model's weights are priced at.
  if (model.params > 0)
    return {checked_add(bytes_of(model.params, target, "weight size"), parts_bytes(model), "weight size"),
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
  // A format kvplan does not price is not sized by an index either: only the user's figure helps.
  if (model.params_source.starts_with("not priced"))
    throw Error(fmt::format("{}: the size of its weights is unknown ({}); give their size (--weights SIZE, the "
                            "checkpoint's or what the engine reports loading)",
                            model.id, model.params_source),
                ExitCode::unsupported_architecture);
  throw Error(fmt::format("{}: the size of its weights is unknown ({}); give the checkpoint's size (--weights SIZE) "
                          "or its parameter count (--params N), or put model.safetensors.index.json beside its config.json",
                          model.id, model.params_source.empty() ? "no parameter count and no checkpoint size" : model.params_source),
              ExitCode::unsupported_architecture);
}

}  // namespace

WeightsEstimate estimate_weights(const ModelSpec& model, const Dtype* dtype) {
  WeightsEstimate estimate = estimate_language_and_parts(model, dtype);
  estimate.rule = with_parts(model, estimate.bytes, estimate.rule);
  return estimate;
}

}  // namespace kvplan
