#pragma once
// `--runtime llama.cpp`: what llama.cpp allocates (rules.h), with llama.cpp's own flags.

#include "engines/core/profile.h"

namespace kvplan {

const EngineEntry& llamacpp_engine();

}  // namespace kvplan
