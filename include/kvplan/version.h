#pragma once
/// kvplan's version, set by the build from CMake's project(VERSION).

#include "kvplan/export.h"

namespace kvplan {
KVPLAN_API extern const char* const kVersion;
}  // namespace kvplan
