#pragma once
// The generic profile: what an engine that exploits every layer's structure must hold.

#include "engines/core/profile.h"

namespace kvplan {

const EngineEntry& generic_engine();

}  // namespace kvplan
