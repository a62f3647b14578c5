#pragma once
// Deployment files: kvplan's own list (JSON or YAML), Kubernetes manifests (Deployment,
// StatefulSet, Pod, Job, List, KServe InferenceService) and docker-compose files, each reduced to
// Deployments with the place they came from.

#include <string>
#include <string_view>
#include <vector>

#include "loaders/deployments/deployment.h"

namespace kvplan {

/// Every deployment in `text`, the contents of `file` ("-" for stdin). JSON when it starts with
/// `{` or `[`, YAML otherwise (several documents allowed). Documents that deploy nothing (a
/// Service, a ConfigMap) are skipped. Throws Error "FILE:LINE: ..." for a file that cannot be read
/// at all; an entry that is malformed comes back with its `problem` set, so the others are checked.
std::vector<Deployment> read_deployments(std::string_view text, const std::string& file);

/// A command line given with `kvplan check --cmd`, named by its position ("cmd 1").
Deployment deployment_from_command_line(std::string_view line, std::uint64_t index);

}  // namespace kvplan
