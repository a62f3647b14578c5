#pragma once
// A built-in card's GpuSpec from the fields the build read out of gpus/gpus.json
// (embedded::GpuFacts): --gpu 4090 then parses no JSON (issue #10: the headline command's
// start-up). The catalog file itself is still parsed, and checked, wherever it is listed.

#include "kvplan/gpu.h"
#include "loaders/embedded_files.h"

namespace kvplan {

GpuSpec gpu_from_facts(const embedded::GpuFacts& facts);

}  // namespace kvplan
