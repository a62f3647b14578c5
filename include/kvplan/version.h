#pragma once
/// kvplan's version, set by the build from CMake's project(VERSION).

namespace kvplan {
extern const char* const kVersion;
}  // namespace kvplan
