#pragma once
// The plan's settings as the user typed them (CLI flag values or the C API's fields) and the one
// place they become a PlanRequest. Every front end applies the same parsers, so `kvplan --overhead
// 0` and a C caller's `overhead = "0"` cannot drift apart; each names the settings its own way.

#include <string>
#include <vector>

#include "kvplan/model_spec.h"
#include "kvplan/plan.h"

namespace kvplan {

/// Unparsed settings. An empty value means "not given": the profile's default applies. List
/// settings may be one comma-separated value or several; an empty item ("32k,,64k") is refused.
struct PlanTexts {
  std::string runtime;                 ///< default generic
  std::vector<std::string> contexts;   ///< tokens per sequence
  std::vector<std::string> kv_dtypes;  ///< "auto" is the engine's own default
  std::string weight_dtype;
  std::string batch;
  std::string overhead;                ///< "0" is allowed
  std::string utilization;
  std::string mtp_layers;
  std::string weights;                 ///< the checkpoint's size, overriding the model's
  std::string params;                  ///< the parameter count ("32.5B"), overriding the model's
  bool text_only = false;              ///< leave the model's towers and projectors (ModelSpec::parts) out
  std::string budget;                  ///< an absolute memory limit per GPU ("10GiB")
  std::string free;                    ///< memory free on each GPU before the engine starts
  std::string used;                    ///< memory other processes hold on each GPU
  std::vector<EngineOption> engine_options;
};

/// {"32k,64k", "128k"} -> {"32k", "64k", "128k"}; empty items are kept, so that they are refused.
std::vector<std::string> split_list(const std::vector<std::string>& values);

/// Every setting parsed; errors name the setting as `names` spells it.
PlanRequest build_plan_request(const PlanTexts& texts, const ModelSpec& model, const SettingNames& names);

/// The model with the user's own weight figures (--weights, --params) in place of its own, each
/// labelled as given, and with text_only its parts (towers, projectors) taken out of the weights.
/// Unchanged when none is given.
ModelSpec apply_weight_overrides(ModelSpec model, const PlanTexts& texts, const SettingNames& names);

/// "32.5B", "7b", "405B", "494M", "8030261248": a parameter count. Errors name `setting`.
std::uint64_t parse_param_count(std::string_view text, std::string_view setting);

}  // namespace kvplan
