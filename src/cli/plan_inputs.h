#pragma once
// The main command's flags as typed, for the subcommands that plan too (kvplan max, kvplan sweep):
// their --model, --gpu, --runtime, --ctx ... fall through to the main command's options.

#include <string>

#include "engines/core/request_texts.h"

namespace kvplan {

struct PlanInputs {
  const std::string& model;
  const std::string& gpu;
  const std::string& gpu_count;  ///< --gpus N
  const std::string& format;
  const PlanTexts& texts;
};

}  // namespace kvplan
