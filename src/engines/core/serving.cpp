#include "engines/core/serving.h"

#include <charconv>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "kvplan/error.h"
#include "kvplan/units.h"

namespace kvplan {

unsigned compute_capability(const GpuSpec& gpu) {
  const std::size_t at = gpu.arch.find("sm_");
  if (at == std::string::npos) return 0;
  unsigned value = 0;
  const char* begin = gpu.arch.data() + at + 3;
  std::from_chars(begin, gpu.arch.data() + gpu.arch.size(), value);
  return value;
}

const GpuSpec& smallest_card(const std::vector<GpuSpec>& gpus) {
  const GpuSpec* smallest = &gpus.front();
  for (const GpuSpec& gpu : gpus)
    if (gpu.memory_bytes < smallest->memory_bytes) smallest = &gpu;
  return *smallest;
}

CudaTotal cuda_visible_total(const GpuSpec& gpu) {
  if (gpu.cuda_total_bytes) return {*gpu.cuda_total_bytes, true};
  if (gpu.memory_basis == "given") return {gpu.memory_bytes, true};
  // An H100 SXM: nvidia-smi's 81,559 MiB against CUDA's 85,029,615,043 B, 0.457 GiB apart
  // (gpus/gpus.json, from vLLM logs); other cards' gap is taken to be the same.
  const std::uint64_t driver_gap = 491'194'941;
  return {gpu.memory_bytes > driver_gap ? gpu.memory_bytes - driver_gap : 0, false};
}

RankLayout resolve_deployment(const std::vector<GpuSpec>& gpus, std::optional<std::uint32_t> tp,
                              std::string_view tp_flag, std::optional<std::uint32_t> pp, std::string_view pp_flag,
                              std::string_view engine) {
  if (gpus.empty()) throw Error("no GPU to plan for");
  RankLayout d;
  d.pp = pp.value_or(1);
  if (gpus.size() == 1) {
    d.tp = tp.value_or(1);
    const std::uint64_t world = std::uint64_t{d.tp} * d.pp;
    if (world > 4096) throw Error(fmt::format("{} x {}: more than 4096 GPUs", tp_flag, pp_flag));
    d.gpus.assign(static_cast<std::size_t>(world), gpus.front());  // at most 4096: fits a 32-bit size_t
    return d;
  }
  const auto count = static_cast<std::uint32_t>(gpus.size());
  if (tp) {
    if (std::uint64_t{*tp} * d.pp != count)
      throw Error(fmt::format("{} {} x {} {} on {} GPUs: {} runs tensor parallel x pipeline parallel = the GPUs it is "
                              "given",
                              tp_flag, *tp, pp_flag, d.pp, count, engine));
    d.tp = *tp;
  } else {
    if (count % d.pp != 0)
      throw Error(fmt::format("{} {} does not divide the {} GPUs given", pp_flag, d.pp, count));
    d.tp = count / d.pp;
  }
  d.gpus = gpus;
  return d;
}

std::vector<std::uint64_t> parse_token_list(std::string_view text, std::string_view flag) {
  std::vector<std::uint64_t> out;
  while (true) {
    const std::size_t comma = text.find(',');
    out.push_back(parse_token_count(text.substr(0, comma), flag));
    if (comma == std::string_view::npos) return out;
    text.remove_prefix(comma + 1);
  }
}

double parse_engine_fraction(std::string_view text, std::string_view flag) {
  parse_fraction_millionths(text, flag);  // refuses what is not a fraction in (0, 1]
  const std::string copy(text);
  return std::strtod(copy.c_str(), nullptr);
}

std::string engine_gib(std::uint64_t bytes) {
  return fmt::format("{:.2f}", static_cast<double>(bytes) / static_cast<double>(GiB));
}

}  // namespace kvplan
