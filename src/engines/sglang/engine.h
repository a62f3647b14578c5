#pragma once
// `--runtime sglang`: what SGLang's launch_server allocates, per GPU (rules.h), with its own flags.

#include "engines/core/profile.h"

namespace kvplan {

struct SglangResult;

const EngineEntry& sglang_engine();

/// The rules' result behind a row this profile priced (its K and V buffers, its budget), for
/// `kvplan explain`; nullptr for a row another profile priced.
const SglangResult* sglang_result(const Row& row);

}  // namespace kvplan
