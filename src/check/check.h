#pragma once
// `kvplan check`: each deployment's settings read with the parsers `kvplan` uses, planned with
// make_plan (the one verdict), and the margin applied to the row with the least headroom.

#include <string>
#include <vector>

#include "check/check_result.h"
#include "loaders/deployments/deployment.h"

namespace kvplan {

/// Defaults from the command line, for what a deployment does not say.
struct CheckDefaults {
  std::string gpu;     ///< --gpu
  std::string model;   ///< --model: overrides the model of every deployment
  std::string margin = "5%";
  bool strict = false;
};

/// A margin as "5%" or "0.05": millionths of the budget. Errors name `setting`.
std::uint32_t parse_margin(std::string_view text, std::string_view setting);

/// One deployment, checked. Never throws for what is wrong with the deployment: that is its verdict.
CheckedDeployment check_deployment(const Deployment& deployment, const CheckDefaults& defaults);

}  // namespace kvplan
