#pragma once
// The plan's settings as the user typed them -- CLI flag values or the C API's fields -- and the
// one place they become a PlanRequest. Every front end applies the same defaults and the same
// parsers, so `kvplan --overhead 0` and a C caller's `overhead = "0"` cannot drift apart.

#include <string>
#include <string_view>
#include <vector>

#include "kvplan/budget.h"
#include "kvplan/gpu.h"
#include "kvplan/model_spec.h"

namespace kvplan {

/// What errors call each setting: the CLI's flag names, or the C API's field names.
struct SettingNames {
  std::string_view ctx;
  std::string_view batch;
  std::string_view overhead;
  std::string_view utilization;
  std::string_view mtp_layers;
};
inline constexpr SettingNames kFlagNames{"--ctx", "--batch", "--overhead", "--util", "--mtp-layers"};

/// Unparsed settings. An empty value means the default named beside it. List settings may be
/// given as one comma-separated value or several; an empty item ("32k,,64k") is refused.
struct PlanTexts {
  std::vector<std::string> contexts;   ///< tokens per sequence; default 32k,64k,128k
  std::vector<std::string> kv_dtypes;  ///< default: default_kv_dtype_names()
  std::string weight_dtype;            ///< default: the model's own
  std::string batch;                   ///< sequences; default 1
  std::string overhead;                ///< default 2GiB; "0" is allowed
  std::string utilization;             ///< default 1.0
  std::string mtp_layers;              ///< default 0 (MTP layers not cached)
};

/// The plan command as typed: which model on which card, the settings, and how to answer.
struct PlanInputs {
  std::string model;
  std::string gpu;
  PlanTexts texts;
  std::string format;  ///< default table
  bool color = false;
  bool check = false;  ///< exit 1 when a row does not fit
};

/// {"32k,64k", "128k"} -> {"32k", "64k", "128k"}; empty items are kept, so that they are refused.
std::vector<std::string> split_list(const std::vector<std::string>& values);

/// The generic profile's request: every setting parsed, defaults applied. Throws Error naming the
/// setting as `names` spells it.
PlanRequest build_plan_request(const PlanTexts& texts, const ModelSpec& model, const GpuSpec& gpu,
                               const SettingNames& names = kFlagNames);

/// Only the budget part (overhead, utilization, the GPU's memory), for profiles that build their
/// rows themselves (llama.cpp).
void apply_budget_settings(const PlanTexts& texts, const GpuSpec& gpu, const SettingNames& names, PlanRequest& request);

}  // namespace kvplan
