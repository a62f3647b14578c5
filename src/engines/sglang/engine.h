#pragma once
// `--runtime sglang`: what SGLang's launch_server allocates, per GPU (rules.h), with its own flags.

#include "engines/core/profile.h"

namespace kvplan {

const EngineEntry& sglang_engine();

}  // namespace kvplan
