#pragma once
/// The cos/sin tables vLLM builds while it constructs the model: one `cos_sin_cache` buffer per
/// distinct rope (rotary_embedding/__init__.py, get_rope, keeps them in _ROPE_DICT keyed by head
/// size, rotary_dim, max_position, the rope parameters and dtype, so layers that share a rope share
/// one table), registered on the model, so "Model loading took" counts them. Replicated: every rank
/// holds them whole. A pure function.

#include <cstdint>
#include <string>
#include <vector>

#include "kvplan/dtype.h"
#include "kvplan/model_spec.h"

namespace kvplan {

/// One table: positions x rotary_dim values at the model dtype.
struct VllmRotaryTable {
  std::string rope;            ///< "global linear x8", "local (sliding layers)", ...
  std::uint64_t positions = 0;
  std::uint32_t rotary_dim = 0;
  std::uint64_t bytes = 0;
  bool estimate = false;       ///< a rope type whose table size kvplan has not read in vLLM's source
};

struct VllmRotary {
  std::vector<VllmRotaryTable> tables;
  std::uint64_t bytes = 0;  ///< all tables, per GPU
  std::string rule;         ///< in words, for the result's rules
};

/// "0.56 GiB" from 64 MiB up, "32 MiB" / "4 MiB" below: a size a reader can see at any scale.
std::string vllm_rotary_size(std::uint64_t bytes);

/// The model's tables at `model_dtype` (the dtype vLLM builds the model at); none when the spec
/// states no rope (the rule says so).
VllmRotary vllm_rotary_tables(const ModelSpec& model, const Dtype& model_dtype);

}  // namespace kvplan
