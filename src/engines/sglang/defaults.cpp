// SGLang's settings as it derives them before sizing anything: which release's rules, the
// default --mem-fraction-static and chunked prefill by card, and the budget step that decides
// whether any memory is left for the cache. Python floats, in SGLang's order.

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <initializer_list>

#include <fmt/format.h>

#include "engines/sglang/rules.h"
#include "kvplan/error.h"
#include "kvplan/units.h"

namespace kvplan {

namespace {

constexpr double kGiB = 1073741824.0;

/// A free-memory reading in GiB (get_available_gpu_memory): with more than one rank the bytes
/// pass through a float32 tensor for the MIN all-reduce, so they are rounded to float32 first.
double reading_gib(std::uint64_t bytes, bool distributed) {
  const double exact = static_cast<double>(bytes);
  return (distributed ? static_cast<double>(static_cast<float>(bytes)) : exact) / kGiB;
}

/// Python's round(x, 3).
double round3(double x) { return std::strtod(fmt::format("{:.3f}", x).c_str(), nullptr); }

// SGLang's (mem - reserved) / mem, rounded to 3 places. A card no larger than the reservation
// leaves nothing (SGLang would compute a fraction <= 0, or divide by zero, and fail to start).
double fraction_after_reserve(double mem, double reserved) {
  return mem > reserved ? round3((mem - reserved) / mem) : 0.0;
}

std::string parse_error(std::string_view flag, std::string_view text) {
  return fmt::format("{}: '{}' is not an SGLang version kvplan knows (0.4.x or 0.5.x, e.g. 0.4.9, 0.5.4, 0.5.4.post1, 0.5.16, latest)",
                     flag, text);
}

}  // namespace

SglangVersion parse_sglang_version(std::string_view text, std::string_view flag) {
  if (text == "latest") return {};
  unsigned parts[3] = {0, 0, 0};
  std::size_t count = 0;
  std::string_view rest = text;
  // A post release or a release candidate (0.5.4.post1, 0.5.0rc2) has its release's rules.
  for (const std::string_view suffix : {std::string_view(".post"), std::string_view("rc")})
    if (const std::size_t at = rest.find(suffix); at != std::string_view::npos && at > 0 &&
                                                  at + suffix.size() < rest.size() &&
                                                  rest.find_first_not_of("0123456789", at + suffix.size()) == std::string_view::npos)
      rest = rest.substr(0, at);
  while (count < 3) {
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), parts[count]);
    if (ec != std::errc() || end == rest.data()) throw Error(parse_error(flag, text));
    ++count;
    rest.remove_prefix(static_cast<std::size_t>(end - rest.data()));
    if (rest.empty()) break;
    if (rest.front() != '.') throw Error(parse_error(flag, text));
    rest.remove_prefix(1);
  }
  if (!rest.empty() || count < 2 || parts[0] != 0 || parts[1] < 4 || parts[1] > 5 || parts[2] > 999)
    throw Error(parse_error(flag, text));
  return {parts[1] * 1000 + parts[2]};
}

std::string to_string(SglangVersion version) {
  return fmt::format("0.{}.{}{}", version.number / 1000, version.number % 1000, version.number == SglangVersion{}.number ? "+" : "");
}

SglangRest sglang_rest(std::uint64_t free_before_load, std::uint64_t free_after_load, double mfs, bool distributed,
                       SglangVersion version) {
  SglangRest r;
  const double pre = reading_gib(free_before_load, distributed);
  const double after = reading_gib(free_after_load, distributed);
  r.rest_gib = after - pre * (1 - mfs);
  if (r.rest_gib > 0) return r;
  r.refused = true;
  if (version.value_error_on_no_memory()) {
    // KVCacheConfigurator._profile_available_bytes (0.5.14 on), verbatim but for the draft sentence.
    const double minimum = 1 - after / pre;
    r.refusal = fmt::format("ValueError: Loaded weights leave no GPU memory for the KV cache under "
                            "--mem-fraction-static={}. Raise --mem-fraction-static above {:.3f} (minimum viable = 1 - "
                            "available/pre = {:.4f}).",
                            mfs, std::ceil(minimum * 1000) / 1000, minimum);
  } else {
    r.refusal = fmt::format("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current "
                            "value: self.server_args.mem_fraction_static={}",
                            mfs);
  }
  return r;
}

std::uint64_t sglang_piecewise_capture_sizes(std::uint64_t max_tokens) {
  // Each list is a run of ranges (first, last, step), cut at max_tokens; 0 as last: max_tokens.
  struct Range {
    std::uint64_t first, last, step;
  };
  const auto count = [max_tokens](std::initializer_list<Range> ranges) {
    std::uint64_t sizes = 0;
    for (const Range& r : ranges) {
      const std::uint64_t last = std::min(r.last ? r.last : max_tokens, max_tokens);
      if (last >= r.first) sizes += (last - r.first) / r.step + 1;
    }
    return sizes;
  };
  const std::uint64_t coarse = count({{4, 32, 4}, {48, 256, 16}, {288, 512, 32}, {640, 4096, 128}, {4352, 0, 256}});
  const std::uint64_t fine =
      count({{4, 32, 4}, {48, 256, 16}, {288, 512, 32}, {576, 1024, 64}, {1280, 4096, 256}, {4608, 0, 512}});
  return std::max(coarse, fine);
}

SglangDefaults sglang_defaults(std::uint64_t gpu_mib, std::uint32_t tp, std::uint32_t pp,
                               std::optional<std::uint64_t> chunked, SglangVersion version,
                               std::uint64_t draft_reserve_mib, const SglangGraphs& graphs) {
  const std::optional<std::uint64_t>& cuda_graph_max_bs = graphs.cuda_graph_max_bs;
  SglangDefaults d;
  const double mem = static_cast<double>(gpu_mib);
  const double g = 1024;
  if (version.mfs_generation() == 1) {
    // server_args.py __post_init__, to ~0.4.9: by TP alone.
    d.mem_fraction_static = tp >= 16 ? 0.79 : tp >= 8 ? 0.81 : tp >= 4 ? 0.85 : tp >= 2 ? 0.87 : 0.88;
    d.chunked_prefill_size = chunked.value_or(gpu_mib < 25000 ? 2048 : 8192);
    d.rule = fmt::format("--mem-fraction-static {} (SGLang's default to 0.4.9: by TP {})", d.mem_fraction_static, tp);
    return d;
  }
  if (version.mfs_generation() == 2) {
    // server_args.py __post_init__, 0.4.10 - 0.5.3: memory reserved by card size and TP x PP.
    const double p = static_cast<double>(tp) * pp;
    const double draft = static_cast<double>(draft_reserve_mib);
    const double reserved = (mem < 35 * g ? (2.8 + p / 10) * g : mem < 90 * g ? (9.5 + p / 2) * g
                                                               : mem < 160 * g ? (12 + p / 2) * g
                                                                               : 32 * g) +
                            draft;
    d.mem_fraction_static = fraction_after_reserve(mem, reserved);
    d.chunked_prefill_size = chunked.value_or(mem < 35 * g ? 2048 : mem < 160 * g ? 8192 : 16384);
    d.rule = fmt::format("--mem-fraction-static {} = round(({} - {:.0f}) / {} MiB, 3): SGLang 0.4.10 - 0.5.3 reserve "
                         "by card size and TP x PP{}",
                         d.mem_fraction_static, gpu_mib, reserved, gpu_mib,
                         draft_reserve_mib ? fmt::format(", + {} for the speculative draft", draft_reserve_mib) : "");
    return d;
  }
  // _handle_gpu_memory_settings (PR #10975, 0.5.4 on): chunked prefill and CUDA-graph batch by card.
  std::uint64_t default_chunk = 0, graph_bs = 0;
  if (mem < 20 * g) default_chunk = 2048, graph_bs = 8;
  else if (mem < 35 * g) default_chunk = 2048, graph_bs = tp < 4 ? 24 : 80;
  else if (mem < 60 * g) default_chunk = 4096, graph_bs = tp < 4 ? 32 : 160;
  else if (mem < 160 * g) default_chunk = 8192, graph_bs = tp < 4 ? 256 : 512;
  else default_chunk = 16384, graph_bs = 512;
  d.chunked_prefill_size = chunked.value_or(default_chunk);
  if (cuda_graph_max_bs) graph_bs = *cuda_graph_max_bs;
  double reserved = 512 + static_cast<double>(std::max<std::uint64_t>(d.chunked_prefill_size, 2048)) * 1.5 +
                    static_cast<double>(graph_bs) * 2 + static_cast<double>(tp) * pp / 8 * 1024;
  // Piecewise CUDA graphs, on by default from 0.5.10: 8 MiB of non-torch memory a capture size,
  // before the floor (server_args.py _handle_gpu_memory_settings).
  const std::uint64_t piecewise_max_tokens = graphs.mla ? 2048 : d.chunked_prefill_size;
  const std::uint64_t piecewise_sizes =
      version.number >= 5010 && graphs.piecewise ? sglang_piecewise_capture_sizes(piecewise_max_tokens) : 0;
  reserved += static_cast<double>(piecewise_sizes) * 8;
  if (mem > 60 * g) reserved = std::max(reserved, 10 * g);
  // The draft's share comes after the floor (_handle_gpu_memory_settings), so a large card keeps it.
  reserved += static_cast<double>(draft_reserve_mib);
  d.mem_fraction_static = fraction_after_reserve(mem, reserved);
  d.rule = fmt::format("--mem-fraction-static {} = round(({} - {:.0f}) / {} MiB, 3): SGLang 0.5.4+ reserves 512 + "
                       "1.5 x chunked prefill {} + 2 x CUDA-graph batch {}{} + TP x PP / 8 GiB{}{} MiB{}",
                       d.mem_fraction_static, gpu_mib, reserved, gpu_mib, d.chunked_prefill_size, graph_bs,
                       cuda_graph_max_bs ? " (--cuda-graph-max-bs)" : "",
                       piecewise_sizes ? fmt::format(" + 8 x {} piecewise CUDA-graph sizes (0.5.10+; up to {} tokens)",
                                                     piecewise_sizes, piecewise_max_tokens)
                                       : "",
                       mem > 60 * g ? ", at least 10,240" : "",
                       draft_reserve_mib ? fmt::format(", + {} for the speculative draft", draft_reserve_mib) : "");
  return d;
}

}  // namespace kvplan
