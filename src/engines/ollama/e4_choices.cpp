// Ollama E4's own choices from its prediction (server/sched.go, llm/llama_server.go), and where
// they step so that llama.cpp may allocate less for more tokens (e4_choices.h).

#include "engines/ollama/e4_choices.h"

#include <algorithm>
#include <utility>
#include <limits>

#include "kvplan/error.h"
#include "kvplan/units.h"
#include "model/wide_int.h"

namespace kvplan {

namespace {

/// llama.cpp keeps n_ctx in 32 bits; plan_ollama refuses more.
constexpr std::uint64_t kMostTokens = std::numeric_limits<std::uint32_t>::max();

/// automaticGenerationBatch's test for `batch` at prediction `predicted` (doubles, as Ollama's Go).
bool batch_fits(std::uint32_t batch, std::uint64_t predicted, std::uint64_t most) {
  const double avail = static_cast<double>(most), p = static_cast<double>(predicted);
  const double surcharge = batch == 2048 ? 2.0 * GiB : batch == 1024 ? 768.0 * MiB : 0.0;
  const double headroom = batch == 2048 ? 0.6 : batch == 1024 ? 0.75 : 0.8;
  return p <= 0.8 * avail && p <= headroom * avail && surcharge <= 0.8 * avail - p;
}

bool holds_alone(std::uint64_t predicted, std::uint64_t available) {
  return static_cast<double>(predicted) <= 0.8 * static_cast<double>(available);
}

std::uint64_t most_available(const OllamaE4Inputs& in) {
  return in.available.empty() ? 0 : *std::max_element(in.available.begin(), in.available.end());
}

/// The first n_ctx in [2, kMostTokens] at which `holds` (true at small n_ctx, false from some
/// point on: it reads the prediction, which grows with n_ctx) is false; nullopt when none is.
template <typename Holds>
std::optional<std::uint64_t> first_failing(const Holds& holds) {
  if (!holds(1) || holds(kMostTokens)) return std::nullopt;
  std::uint64_t low = 1, high = kMostTokens;  // holds, does not
  while (high - low > 1) {
    const std::uint64_t middle = low + (high - low) / 2;
    (holds(middle) ? low : high) = middle;
  }
  return high;
}

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0); }

bool forced_single(const OllamaModelView& m) { return ollama_forces_single(m.arch, OllamaEra::e4); }

}  // namespace

OllamaE4Inputs ollama_e4_inputs(const OllamaModelView& m, const ModelSpec& model, const std::vector<OllamaDevice>& gpus,
                                const OllamaOptions& o) {
  OllamaE4Inputs in;
  in.file_bytes = model.weights_bytes.value_or(0);
  in.layers = m.block_count;
  in.heads_kv_min = m.heads_kv_min;
  in.head_dim = m.heads ? m.embedding / m.heads : 0;
  for (const OllamaDevice& g : gpus) {
    const std::uint64_t reserved = o.gpu_overhead + g.minimum_bytes;
    in.available.push_back(g.free_bytes > reserved ? g.free_bytes - reserved : 0);
    in.small_card = in.small_card || g.total_bytes <= 8 * GiB;
  }
  in.num_batch = o.num_batch;
  in.flash_attention_off = o.flash_attention.has_value() && !*o.flash_attention;
  return in;
}

std::uint64_t ollama_e4_predicted(const OllamaE4Inputs& in, std::uint64_t n_ctx) {
  const u128 kv = u128{2} * in.layers * in.heads_kv_min * in.head_dim * n_ctx * 2;
  return static_cast<std::uint64_t>(std::min<u128>(kv + in.file_bytes, u128{1} << 62));
}

std::uint32_t ollama_e4_batch(const OllamaE4Inputs& in, std::uint64_t n_ctx) {
  if (in.num_batch) return *in.num_batch;
  std::uint32_t b = n_ctx > 32768 ? 2048 : n_ctx > 4096 ? 1024 : 512;
  if (in.flash_attention_off) b = n_ctx > 4096 && in.small_card ? 256 : 512;
  const std::uint64_t predicted = ollama_e4_predicted(in, n_ctx), most = most_available(in);
  while (b > 512 && !batch_fits(b, predicted, most)) b /= 2;
  return b;
}

std::optional<std::size_t> ollama_e4_single_gpu(const OllamaE4Inputs& in, std::uint64_t n_ctx) {
  if (in.available.size() < 2) return std::nullopt;
  const std::uint64_t predicted = ollama_e4_predicted(in, n_ctx);
  std::optional<std::size_t> chosen;
  for (std::size_t i = 0; i < in.available.size(); ++i)
    if (holds_alone(predicted, in.available[i]) && (!chosen || in.available[i] > in.available[*chosen])) chosen = i;
  return chosen;
}

std::vector<std::uint64_t> ollama_e4_shrink_totals(const OllamaE4Inputs& in) {
  // The choices change only where the first batch steps (4096, 32768 tokens) or where one of the
  // tests on the prediction starts to fail; each candidate is then compared with one token fewer.
  std::vector<std::uint64_t> candidates = {4097, 32769};
  const std::uint64_t most = most_available(in);
  const auto add_failing = [&](const auto& holds) {
    if (const std::optional<std::uint64_t> at = first_failing(holds)) candidates.push_back(*at);
  };
  for (const std::uint32_t batch : {2048u, 1024u})
    add_failing([&](std::uint64_t n) { return batch_fits(batch, ollama_e4_predicted(in, n), most); });
  if (in.available.size() > 1)
    for (const std::uint64_t available : in.available)
      add_failing([&](std::uint64_t n) { return holds_alone(ollama_e4_predicted(in, n), available); });
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  std::vector<std::uint64_t> out;
  for (const std::uint64_t n : candidates)
    if (ollama_e4_batch(in, n) < ollama_e4_batch(in, n - 1) || ollama_e4_single_gpu(in, n) != ollama_e4_single_gpu(in, n - 1))
      out.push_back(n);
  return out;
}

namespace {

/// E1 / E3: the values in [1, limit] at which the layout puts the layers on the GPUs otherwise (it
/// uses another GPU, or moves a layer from one to another), or the automatic parallel (4 or 2,
/// then 1, before v0.10) falls, than at one fewer: bisection between two values whose choices
/// differ. A split that changed and changed back between two values probed alike would be missed;
/// the GPU count never falls and the parallel never rises as rows grow, and no such return has
/// been seen (tests/ollama_shrink_test.cpp walks the contexts of its examples one by one).
std::vector<std::uint64_t> layout_points(const ModelSpec& model, const std::vector<OllamaDevice>& gpus,
                                            const OllamaOptions& o, std::uint64_t num_ctx,
                                            std::optional<std::uint32_t> parallel, bool along_batch,
                                            std::uint64_t limit, const LlamaCppModelFacts* facts) {
  OllamaOptions quiet = o;
  quiet.words = false;
  // The choice at n: the layers on each GPU (which GPUs are used, and how the layers split between
  // them) and the parallel. A layer moved to another GPU can lower the fullest one's memory as
  // much as another GPU taken into use (E1 on an RTX 5090 + 3090: Llama 3.1 70B at 16,000 tokens).
  using Choice = std::pair<std::vector<std::uint32_t>, std::uint32_t>;
  const auto used = [&](std::uint64_t n) -> Choice {
    try {
      const OllamaResult r = along_batch ? plan_ollama(model, gpus, quiet, num_ctx, static_cast<std::uint32_t>(n), facts)
                                         : plan_ollama(model, gpus, quiet, n, parallel, facts);
      std::vector<std::uint32_t> layers(gpus.size(), 0);
      for (const OllamaGpuShare& g : r.gpus) layers[g.index] = g.layers;
      return {std::move(layers), r.parallel};
    } catch (const Error&) {
      return {{}, 0};  // not priced: past every layout
    }
  };
  std::vector<std::pair<std::uint64_t, Choice>> seen;  // each n planned once
  const auto choice = [&](std::uint64_t n) {
    for (const auto& [at, value] : seen)
      if (at == n) return value;
    seen.push_back({n, used(n)});
    return seen.back().second;
  };
  std::vector<std::uint64_t> out;
  // Each pending range [low, high] holds a change when its ends' choices differ.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> pending{{1, limit}};
  while (!pending.empty()) {
    const auto [low, high] = pending.back();
    pending.pop_back();
    if (high <= low || choice(low) == choice(high)) continue;
    if (high == low + 1) {
      out.push_back(high);
      continue;
    }
    const std::uint64_t middle = low + (high - low) / 2;
    pending.push_back({low, middle});
    pending.push_back({middle, high});
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::vector<std::uint64_t> ollama_shrink_points(const ModelSpec& model, const std::vector<OllamaDevice>& gpus,
                                                const OllamaOptions& o, std::uint64_t num_ctx,
                                                std::optional<std::uint32_t> parallel, bool along_batch,
                                                std::uint64_t up_to, const LlamaCppModelFacts* facts,
                                                const OllamaModelView* view) {
  if (num_ctx == 0 || up_to < 2) return {};
  if (ollama_era(o.version) != OllamaEra::e4) {
    const bool automatic_parallel = !along_batch && !parallel && !o.version.at_least(0, 10, 0);
    if (gpus.size() < 2 && !automatic_parallel) return {};
    // Past llama.cpp's 256 sequences or the trained context no row fits: no point to find there.
    const std::uint64_t most = along_batch ? 256 : model.max_context ? model.max_context : up_to;
    return layout_points(model, gpus, o, num_ctx, parallel, along_batch, std::min(up_to, most), facts);
  }
  std::optional<OllamaModelView> own_view;
  if (!view) own_view = ollama_model_view(model, facts);
  const OllamaModelView& m = view ? *view : *own_view;
  const std::vector<std::uint64_t> totals = ollama_e4_shrink_totals(ollama_e4_inputs(m, model, gpus, o));
  // num_ctx as plan_ollama settles it in E4: clamped to the trained context, a vision model's raised to 2048.
  const bool vision = m.vision_weights > 0;
  const auto settled = [&](std::uint64_t ctx) {
    if (m.train_ctx > 0) ctx = std::min(ctx, m.train_ctx);
    return vision ? std::max<std::uint64_t>(ctx, 2048) : ctx;
  };
  const std::uint64_t slots = forced_single(m) ? 1 : parallel.value_or(1);
  std::vector<std::uint64_t> out;
  for (const std::uint64_t total : totals) {
    std::uint64_t at = 0;
    if (along_batch) {
      if (forced_single(m)) break;  // the batch never reaches llama.cpp
      at = ceil_div(total, settled(num_ctx));
    } else {
      at = ceil_div(total, slots);
      // num_ctx is constant below 2048 for a vision model; past the trained context rows are refused.
      if ((vision && at <= 2048) || (m.train_ctx > 0 && at > m.train_ctx)) continue;
    }
    if (at >= 2 && at <= up_to && (out.empty() || out.back() != at)) out.push_back(at);
  }
  return out;
}

}  // namespace kvplan
