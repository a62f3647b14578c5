#pragma once
// What the per-family tests (tests/arch/<family>_test.cpp) share: a fixture's spec, its parameter
// count and the bytes its cache holds.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "kvplan/plan.h"
#include "loaders/hf_config.h"
#include "loaders/param_count.h"
#include "support/run_binary.h"

namespace kvplan::testing {

/// tests/fixtures/hf/<id>/config.json as parsed JSON.
inline nlohmann::json hf_config(const std::string& id) {
  return nlohmann::json::parse(read_file(source_path("tests/fixtures/hf/" + id + "/config.json")));
}

/// The spec kvplan imports from the fixture folder (its model.safetensors.index.json included).
inline ModelSpec hf_model(const std::string& id) { return load_hf_model(source_path("tests/fixtures/hf/" + id)); }

/// The spec of an inline config, with an exact size standing in when given.
inline ModelSpec hf_model_of(const nlohmann::json& config, std::optional<std::uint64_t> size = std::nullopt) {
  return model_spec_from_hf_config(config, "inline/config.json", size);
}

inline ParamCount hf_count(const std::string& id) { return count_params(hf_config(id)); }

/// Bytes one sequence adds per token once every window is full, and what it holds whatever the
/// context (full sliding windows, recurrent state), with an fp16 cache.
struct CacheBytes {
  std::uint64_t per_token = 0;
  std::uint64_t fixed = 0;
};
inline CacheBytes cache_bytes(const ModelSpec& model, std::string_view dtype = "fp16") {
  const Dtype& type = parse_kv_dtype(dtype, parse_weight_dtype("bf16"));
  const auto at = [&](std::uint64_t ctx) {
    RowSettings settings;
    settings.ctx = ctx;
    settings.cache = {&type, &type};
    return plan_row(model, settings).kv_bytes;
  };
  const std::uint64_t far = 1ull << 22;  // past every window
  const std::uint64_t growth = at(far + 1) - at(far);
  return {growth, at(far) - growth * far};
}

/// The parameters of the model's part named `name` (a tower, a projector); 0 when it has none.
inline std::uint64_t part_params(const ModelSpec& model, std::string_view name) {
  for (const ModelPart& part : model.parts)
    if (part.name == name) return part.params;
  return 0;
}

/// a / b within `fraction` of 1: a rounded published figure.
inline bool near(std::uint64_t actual, double expected, double fraction) {
  const double a = static_cast<double>(actual);
  return a >= expected * (1 - fraction) && a <= expected * (1 + fraction);
}

}  // namespace kvplan::testing
