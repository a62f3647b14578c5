#pragma once
// Facts the serving-engine profiles (SGLang, TensorRT-LLM) share: what a card's name says about
// it, the memory CUDA shows, and sizes printed the way Python and printf print them.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvplan/gpu.h"

namespace kvplan {

/// "sm_90" in the catalog's architecture text -> 90; 0 when absent (not an NVIDIA card).
unsigned compute_capability(const GpuSpec& gpu);

/// The card that bounds every rank of one shape: the one with the least memory (the first of
/// those). `gpus` must not be empty.
const GpuSpec& smallest_card(const std::vector<GpuSpec>& gpus);

/// The memory CUDA reports as the device total (torch.cuda.mem_get_info()[1]).
struct CudaTotal {
  std::uint64_t bytes = 0;
  bool known = false;  ///< a real log printed it; false: the driver's total less ~0.46 GiB (an H100's gap)
};
/// A size given as memory (--gpu 24GiB) is taken as the CUDA total itself.
CudaTotal cuda_visible_total(const GpuSpec& gpu);

/// The GPUs of a tp x pp deployment, rank order stage-major (rank = stage x tp + tp rank). Not
/// `Deployment`: that is kvplan check's (loaders/deployments/deployment.h), and two classes of one
/// name in one namespace share their inline destructors at link time (the wasm build crashed).
struct RankLayout {
  std::uint32_t tp = 1;
  std::uint32_t pp = 1;
  std::vector<GpuSpec> gpus;
};
/// One card given: tp x pp of it. Several: tp defaults to their count / pp, and a tp given must
/// make tp x pp their count. `tp_flag` / `pp_flag` name the flags in errors; `engine` the engine.
RankLayout resolve_deployment(const std::vector<GpuSpec>& gpus, std::optional<std::uint32_t> tp,
                              std::string_view tp_flag, std::optional<std::uint32_t> pp, std::string_view pp_flag,
                              std::string_view engine);

/// "8k,32k,131072": token counts, comma-separated. Errors name `flag`.
std::vector<std::uint64_t> parse_token_list(std::string_view text, std::string_view flag);

/// A fraction as the engine's Python reads it (float("0.93")), more than 0 and at most 1.
double parse_engine_fraction(std::string_view text, std::string_view flag);

/// bytes / 2^30 with two decimals, as Python's "{:.2f}" and printf's "%0.2f" round the binary value.
std::string engine_gib(std::uint64_t bytes);

}  // namespace kvplan
