#pragma once
/// Whether an engine has the rules of a release: EngineEntry::knows_release from the engine's own
/// version parser, so the parser stays the one judge of what its --*-version takes.

#include <string_view>

#include "kvplan/error.h"

namespace kvplan {

/// True when `Parse` (an engine's `(text, flag)` version parser, which throws Error for a release
/// it has no rules for) takes `release`.
template <auto Parse>
bool parses_release(std::string_view release) {
  try {
    (void)Parse(release, "version");
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace kvplan
