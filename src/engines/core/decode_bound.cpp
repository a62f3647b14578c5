// A decode step of a memory-bound LLM reads every weight it uses and every sequence's cache once;
// nothing can make the step faster than those bytes over the card's bandwidth. Tensor-parallel
// ranks read their shares at once; pipeline stages (and a layer split) one after the other.

#include "engines/core/decode_bound.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <cmath>
#include <map>

#include <fmt/compile.h>
#include <fmt/format.h>

#include "kvplan/units.h"
#include "model/text_append.h"
#include "model/wide_int.h"

namespace kvplan {

using namespace std::string_view_literals;  // literals of known length: a sweep writes this for every row

namespace {

/// The weights a token reads: all of them, or an MoE's active share (params scaled, rounded up:
/// the router picks different experts per token, and shared parts are read in full either way).
std::uint64_t active_share(std::uint64_t weights, const ModelSpec& model) {
  if (!model.active_params || !model.params || model.active_params >= model.params) return weights;
  const u128 scaled = ceil_div_wide(u128{weights} * model.active_params, model.params);
  return static_cast<std::uint64_t>(scaled);
}

}  // namespace

std::optional<DecodeBound> decode_bound(const Row& row, const ModelSpec& model, const GpuSpec& gpu,
                                        const std::optional<HostMemory>& host) {
  DecodeBound bound;
  if (!decode_bound_into(bound, row, model, gpu, host)) return std::nullopt;
  return bound;
}

bool decode_bound_into(DecodeBound& bound, const Row& row, const ModelSpec& model, const GpuSpec& gpu,
                       const std::optional<HostMemory>& host) {
  if (!gpu.bandwidth_gbps || *gpu.bandwidth_gbps <= 0) return false;
  std::string reused = std::move(bound.rule);
  reused.clear();
  bound = DecodeBound{};
  bound.rule = std::move(reused);
  bound.bandwidth_gbps = *gpu.bandwidth_gbps;
  if (row.per_gpu.size() <= 1) {
    bound.weights_bytes_read = active_share(row.weights_bytes, model);
    bound.kv_bytes_read = row.kv_bytes;
  } else {
    // Each stage takes as long as its fullest GPU; the stages run one after the other. A GPU's
    // cache share is what the sequences use, not a pool allocated whole.
    std::map<std::uint32_t, std::pair<std::uint64_t, std::uint64_t>> stages;  // stage -> (weights, kv)
    for (const GpuShare& share : row.per_gpu) {
      const std::uint64_t weights = active_share(share.weights_bytes, model);
      const std::uint64_t kv = std::min(share.kv_bytes, row.kv_bytes);
      auto& [w, k] = stages[share.stage];
      if (u128{weights} + kv > u128{w} + k) {
        w = weights;
        k = kv;
      }
    }
    for (const auto& [stage, bytes] : stages) {
      bound.weights_bytes_read = checked_add(bound.weights_bytes_read, bytes.first, "decode bytes");
      bound.kv_bytes_read = checked_add(bound.kv_bytes_read, bytes.second, "decode bytes");
    }
  }
  const double bytes = static_cast<double>(bound.weights_bytes_read) + static_cast<double>(bound.kv_bytes_read);
  if (bytes <= 0) return false;
  double step_seconds = bytes / (bound.bandwidth_gbps * 1e9);
  // Layers kept in system RAM (llama.cpp with --ram): their bytes go at the RAM's bandwidth, after
  // the GPU's (the layers run one after the other). MoE weights read their active share there too.
  std::uint64_t host_read = 0;
  if (host && host->read_bytes > 0 && host->ram_bandwidth_gbps > 0) {
    host_read = active_share(host->read_bytes, model);
    step_seconds += static_cast<double>(host_read) / (host->ram_bandwidth_gbps * 1e9);
  }
  bound.tokens_per_s_per_sequence = 1.0 / step_seconds;
  bound.tokens_per_s_batch = static_cast<double>(row.batch) / step_seconds;
  const bool moe = active_share(1'000'000'000, model) != 1'000'000'000;
  // Written into a buffer of its own, then copied once: a sweep writes this sentence for every
  // row. The sentence has at most 215 characters: 117 of words, three GiB figures of at most 24,
  // a batch of at most 20 digits and a bandwidth of at most 6.
  std::array<char, 256> text;
  char* at = text.data();
  const auto words = [&](std::string_view part) {
    std::memcpy(at, part.data(), part.size());
    at += part.size();
  };
  words("roofline bound, not a prediction: "sv);
  at = write_gib_number(at, static_cast<std::int64_t>(bound.weights_bytes_read + bound.kv_bytes_read));
  words(" GiB read per decode step ("sv);
  at = write_gib_number(at, static_cast<std::int64_t>(bound.weights_bytes_read));
  words(moe ? " GiB active weights + "sv : " GiB weights + "sv);
  at = write_gib_number(at, static_cast<std::int64_t>(bound.kv_bytes_read));
  words(" GiB cache of "sv);
  at = write_decimal(at, row.batch);
  words(row.batch == 1 ? " sequence) / "sv : " sequences) / "sv);
  std::string& rule = bound.rule;
  // {:g} of a whole number below 10^6 is its digits (3350): written so without a float format.
  if (bound.bandwidth_gbps < 1e6 && bound.bandwidth_gbps == std::floor(bound.bandwidth_gbps)) {
    at = write_decimal(at, static_cast<std::uint64_t>(bound.bandwidth_gbps));
    words(" GB/s"sv);
    rule.assign(text.data(), static_cast<std::size_t>(at - text.data()));
  } else {
    rule.assign(text.data(), static_cast<std::size_t>(at - text.data()));
    fmt::format_to(std::back_inserter(rule), FMT_COMPILE("{:g}"), bound.bandwidth_gbps);
    rule += " GB/s"sv;
  }
  if (host_read > 0)
    bound.rule += fmt::format(" + {} read from system RAM / {:g} GB/s ({}; an estimate)",
                              format_gib(static_cast<std::int64_t>(host_read)), host->ram_bandwidth_gbps,
                              host->ram_bandwidth_source);
  return true;
}

}  // namespace kvplan
