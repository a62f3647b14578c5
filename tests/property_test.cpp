// Properties of the budget engine that hold for every model and every question, checked with
// Catch2 generators over the whole catalog and over random layer layouts: memory never decreases
// with the context or the batch, an fp8 cache is exactly half an fp16 one, a window never makes a
// layer hold more than full attention, a model's cache is the sum of its layers' caches, and the
// largest context that fits is exactly the boundary. (Every catalog model round-tripping through
// its own spec file is in spec_json_test.cpp.)

#include <algorithm>
#include <random>

#include <catch2/catch.hpp>

#include "kvplan/plan.h"
#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "support/generic_rows.h"

using namespace kvplan;
using kvplan::testing::max_fitting_ctx;

namespace {

const Dtype& cache_type(std::string_view name) { return parse_kv_dtype(name, parse_weight_dtype("bf16")); }

RowSettings settings_for(std::uint64_t ctx, std::uint64_t batch, const Dtype& cache,
                         std::uint64_t memory = 80 * GiB) {
  RowSettings settings;
  settings.ctx = ctx;
  settings.batch = batch;
  settings.cache = {&cache, &cache};
  settings.gpu_memory_bytes = memory;
  return settings;
}

const ModelSpec& catalog_model(std::size_t index) { return builtin_models().models.at(index); }

std::size_t catalog_size() { return builtin_models().models.size(); }

/// A random but valid layout: 1 to 48 layers of full, sliding, chunked, MLA and linear kinds with
/// random heads, widths and windows, from `seed`.
ModelSpec random_model(std::uint32_t seed) {
  std::mt19937 rng(seed);
  const auto pick = [&](std::uint32_t low, std::uint32_t high) {
    return std::uniform_int_distribution<std::uint32_t>(low, high)(rng);
  };
  ModelSpec spec;
  spec.id = "random-" + std::to_string(seed);
  spec.name = spec.id;
  spec.attention_heads = 64;
  spec.params = 1'000'000'000ull * pick(1, 100);
  spec.weight_dtype = &parse_weight_dtype("bf16");
  const std::uint32_t layers = pick(1, 48);
  const std::uint32_t heads_choices[] = {1, 2, 4, 8, 16, 32, 64};
  const std::uint32_t dims[] = {32, 64, 96, 128, 160, 192, 256};  // whole q4_0 blocks
  for (std::uint32_t i = 0; i < layers; ++i) {
    LayerSpec layer;
    switch (pick(0, 5)) {
      case 0:
      case 1: layer.kind = LayerKind::full; break;
      case 2: layer.kind = LayerKind::sliding; break;
      case 3: layer.kind = LayerKind::chunked; break;
      case 4: layer.kind = LayerKind::mla; break;
      default: layer.kind = LayerKind::linear; break;
    }
    if (layer.kind == LayerKind::mla) {
      layer.kv_heads = 1;
      layer.k_head_dim = 512 + 64;
    } else if (layer.kind == LayerKind::linear) {
      layer.state = {{"conv", pick(1, 100000), &parse_weight_dtype("bf16")},
                     {"ssm", pick(1, 1000000), &parse_weight_dtype("fp32")}};
    } else {
      layer.kv_heads = heads_choices[pick(0, 6)];
      layer.k_head_dim = dims[pick(0, 6)];
      layer.v_head_dim = pick(0, 3) == 0 ? dims[pick(0, 6)] : layer.k_head_dim;
    }
    if (layer.kind == LayerKind::sliding || layer.kind == LayerKind::chunked) layer.window = pick(1, 1 << 20);
    spec.layers.push_back(layer);
  }
  return spec;
}

/// Every catalog model, then 100 random layouts.
ModelSpec model_number(std::size_t index) {
  if (index < catalog_size()) return catalog_model(index);
  return random_model(static_cast<std::uint32_t>(index));
}

std::size_t model_count() { return catalog_size() + 100; }

}  // namespace

TEST_CASE("memory never decreases as the context grows", "[property]") {
  const std::size_t index = GENERATE(range(std::size_t{0}, model_count()));
  const ModelSpec model = model_number(index);
  INFO(model.id);
  for (const char* dtype : {"fp16", "fp8", "q4_0", "q8_0"}) {
    const Dtype& cache = cache_type(dtype);
    // Contexts on both sides of every window, and random ones up to 2^24.
    std::vector<std::uint64_t> contexts = {1, 2, 4095, 4096, 4097, 131072, 1 << 24};
    for (const LayerSpec& layer : model.layers)
      if (layer.window) contexts.insert(contexts.end(), {layer.window - 1, layer.window, layer.window + 1});
    std::mt19937_64 rng(index);
    for (int i = 0; i < 40; ++i) contexts.push_back(std::uniform_int_distribution<std::uint64_t>(1, 1 << 24)(rng));
    std::sort(contexts.begin(), contexts.end());
    contexts.erase(std::remove(contexts.begin(), contexts.end(), 0u), contexts.end());
    Row previous = plan_row(model, settings_for(contexts.front(), 1, cache));
    for (const std::uint64_t ctx : contexts) {
      const Row row = plan_row(model, settings_for(ctx, 3, cache));
      const Row one = plan_row(model, settings_for(ctx, 1, cache));
      INFO(dtype << " ctx " << ctx);
      CHECK(one.kv_bytes >= previous.kv_bytes);
      CHECK(one.total_bytes >= previous.total_bytes);
      CHECK(row.kv_bytes == 3 * one.kv_bytes);
      previous = one;
    }
  }
}

TEST_CASE("memory never decreases as the batch grows", "[property]") {
  const std::size_t index = GENERATE(range(std::size_t{0}, model_count()));
  const std::uint64_t ctx = GENERATE(1u, 777u, 32768u, 1048576u);
  const ModelSpec model = model_number(index);
  INFO(model.id << " ctx " << ctx);
  const Dtype& cache = cache_type("fp16");
  Row previous = plan_row(model, settings_for(ctx, 1, cache));
  for (std::uint64_t batch = 2; batch <= 4096; batch = batch * 3 / 2 + 1) {
    const Row row = plan_row(model, settings_for(ctx, batch, cache));
    INFO("batch " << batch);
    CHECK(row.kv_bytes >= previous.kv_bytes);
    CHECK(row.total_bytes >= previous.total_bytes);
    CHECK(row.kv_bytes == batch * (previous.kv_bytes / previous.batch));  // linear in the batch
    previous = row;
  }
}

TEST_CASE("an fp8 cache is exactly half an fp16 cache", "[property]") {
  const std::size_t index = GENERATE(range(std::size_t{0}, model_count()));
  const ModelSpec model = model_number(index);
  std::mt19937_64 rng(index);
  for (int i = 0; i < 20; ++i) {
    const std::uint64_t ctx = std::uniform_int_distribution<std::uint64_t>(1, 1 << 22)(rng);
    const std::uint64_t batch = std::uniform_int_distribution<std::uint64_t>(1, 64)(rng);
    const Row fp16 = plan_row(model, settings_for(ctx, batch, cache_type("fp16")));
    const Row fp8 = plan_row(model, settings_for(ctx, batch, cache_type("fp8")));
    INFO(model.id << " ctx " << ctx << " batch " << batch);
    CHECK(2 * fp8.kv_bytes_per_token == fp16.kv_bytes_per_token);
    // Recurrent state is kept at its own dtype, whatever the cache dtype.
    CHECK(fp8.state_bytes == fp16.state_bytes);
    CHECK(2 * (fp8.kv_bytes - fp8.state_bytes) == fp16.kv_bytes - fp16.state_bytes);
    CHECK(fp8.weights_bytes == fp16.weights_bytes);
  }
}

TEST_CASE("a window never makes a layer hold more than full attention", "[property]") {
  const std::size_t index = GENERATE(range(std::size_t{0}, model_count()));
  const ModelSpec windowed = model_number(index);
  if (std::none_of(windowed.layers.begin(), windowed.layers.end(), [](const LayerSpec& layer) {
        return layer.kind == LayerKind::sliding || layer.kind == LayerKind::chunked;
      }))
    return;
  ModelSpec full = windowed;
  for (LayerSpec& layer : full.layers)
    if (layer.kind == LayerKind::sliding || layer.kind == LayerKind::chunked) {
      layer.kind = LayerKind::full;
      layer.window = 0;
    }
  std::mt19937_64 rng(index);
  for (int i = 0; i < 30; ++i) {
    const std::uint64_t ctx = std::uniform_int_distribution<std::uint64_t>(1, 1 << 22)(rng);
    const Row with_window = plan_row(windowed, settings_for(ctx, 2, cache_type("fp16")));
    const Row without = plan_row(full, settings_for(ctx, 2, cache_type("fp16")));
    INFO(windowed.id << " ctx " << ctx);
    CHECK(with_window.kv_bytes <= without.kv_bytes);
    CHECK(with_window.kv_bytes_per_token == without.kv_bytes_per_token);
    for (const KvBreakdownItem& item : with_window.breakdown) {
      if (item.kind != LayerKind::sliding && item.kind != LayerKind::chunked) continue;
      CHECK(item.tokens_held <= ctx);
      CHECK(item.tokens_held == std::min(ctx, item.window));
    }
  }
}

TEST_CASE("a model's cache is the sum of its layers' caches", "[property]") {
  const std::size_t index = GENERATE(range(std::size_t{0}, model_count()));
  const ModelSpec model = model_number(index);
  INFO(model.id);
  for (const char* dtype : {"fp16", "q4_1"}) {
    const RowSettings settings = settings_for(100'003, 5, cache_type(dtype));
    const Row whole = plan_row(model, settings);
    std::uint64_t kv = 0;
    std::uint64_t per_token = 0;
    std::uint64_t state = 0;
    std::uint32_t layers = 0;
    for (const LayerSpec& layer : model.layers) {
      ModelSpec one = model;
      one.layers = {layer};
      const Row row = plan_row(one, settings);
      kv += row.kv_bytes;
      per_token += row.kv_bytes_per_token;
      state += row.state_bytes;
    }
    for (const KvBreakdownItem& item : whole.breakdown) layers += item.layers;
    std::uint64_t breakdown_bytes = 0;
    for (const KvBreakdownItem& item : whole.breakdown) breakdown_bytes += item.bytes;
    INFO(dtype);
    CHECK(whole.kv_bytes == kv);
    CHECK(whole.kv_bytes_per_token == per_token);
    CHECK(whole.state_bytes == state);
    CHECK(breakdown_bytes == whole.kv_bytes);
    CHECK(layers == model.layer_count());
  }
}

TEST_CASE("the largest context that fits is exactly the boundary", "[property]") {
  const std::size_t index = GENERATE(range(std::size_t{0}, model_count()));
  const std::uint64_t memory = GENERATE(24 * GiB, 80 * GiB, 1024 * GiB);
  const ModelSpec model = model_number(index);
  const RowSettings settings = settings_for(1, 4, cache_type("fp8"), memory);
  const std::uint64_t limit = 1 << 26;
  const std::optional<std::uint64_t> max_ctx = max_fitting_ctx(model, settings, limit);
  INFO(model.id << " on " << memory / GiB << " GiB");
  const auto fits = [&](std::uint64_t ctx) {
    RowSettings at = settings;
    at.ctx = ctx;
    return plan_row(model, at).fits;
  };
  if (!max_ctx) {
    CHECK_FALSE(fits(1));
    return;
  }
  CHECK(fits(*max_ctx));
  if (*max_ctx < limit) CHECK_FALSE(fits(*max_ctx + 1));
}

// --- Every engine profile, through the one planning core ------------------------------------

namespace {

/// The plan of `model` under `runtime`, or nullopt when the engine's rules do not cover the model
/// (exit 3: a kind the profile does not model) or refuse the settings outright.
std::optional<Plan> plan_under(const std::string& runtime, const ModelSpec& model, const std::vector<GpuSpec>& gpus,
                               std::vector<std::uint64_t> contexts, std::uint64_t batch) {
  PlanRequest request;
  request.runtime = runtime;
  request.contexts = std::move(contexts);
  request.batch = batch;
  request.batch_given = true;
  if (runtime == "generic") {
    const Dtype& fp8 = cache_type("fp8");
    request.caches = {{&fp8, &fp8}};
  }
  try {
    return make_plan(model, gpus, request);
  } catch (const Error&) {
    return std::nullopt;
  }
}

std::vector<GpuSpec> cards(std::string_view name, std::size_t count = 1) {
  return std::vector<GpuSpec>(count, *builtin_gpus().find(name));
}

}  // namespace

TEST_CASE("every profile: memory never shrinks as the context or the batch grows", "[property][profiles]") {
  const std::string runtime = GENERATE(from_range(runtime_names()));
  const std::size_t index = GENERATE(range(std::size_t{0}, std::size_t{70}, std::size_t{7}));
  if (index >= catalog_size()) return;
  const ModelSpec& model = catalog_model(index);
  INFO(runtime << " " << model.id);
  const std::vector<std::uint64_t> contexts = {512, 4096, 8192, 32768, 65536};
  std::optional<Plan> previous;
  for (const std::uint64_t batch : {1u, 2u, 4u}) {
    const std::optional<Plan> plan = plan_under(runtime, model, cards("h200"), contexts, batch);
    if (!plan) return;  // the engine does not model this one (said with exit 3)
    REQUIRE(plan->rows.size() == contexts.size());
    for (std::size_t i = 1; i < plan->rows.size(); ++i) {
      CHECK(plan->rows[i].kv_bytes >= plan->rows[i - 1].kv_bytes);
      CHECK(plan->rows[i].total_bytes >= plan->rows[i - 1].total_bytes);
    }
    if (previous)
      for (std::size_t i = 0; i < plan->rows.size(); ++i) CHECK(plan->rows[i].kv_bytes >= previous->rows[i].kv_bytes);
    previous = plan;
  }
}

TEST_CASE("every profile: total is the sum of its parts, and a fit fits every GPU", "[property][profiles]") {
  const std::string runtime = GENERATE(from_range(runtime_names()));
  const std::size_t index = GENERATE(range(std::size_t{0}, std::size_t{70}, std::size_t{5}));
  const std::size_t count = GENERATE(1u, 2u);
  if (index >= catalog_size()) return;
  const ModelSpec& model = catalog_model(index);
  INFO(runtime << " " << model.id << " on " << count << " GPUs");
  const std::optional<Plan> plan = plan_under(runtime, model, cards("h100", count), {4096, 32768}, 2);
  if (!plan) return;
  for (const Row& row : plan->rows) {
    CHECK(row.total_bytes == row.weights_bytes + std::max(row.kv_bytes, row.kv_pool_bytes.value_or(0)) + row.overhead_bytes);
    CHECK(row.headroom_bytes ==
          static_cast<std::int64_t>(row.capacity_bytes) - static_cast<std::int64_t>(row.total_bytes));
    CHECK(row.fits == (row.verdict == Verdict::fits));
    REQUIRE_FALSE(row.per_gpu.empty());
    for (const GpuShare& share : row.per_gpu) {
      CHECK(share.total_bytes == share.weights_bytes + share.kv_bytes + share.other_bytes);
      if (row.fits) CHECK(share.fits);
    }
    CHECK(row.state_bytes <= row.kv_bytes);
  }
}

TEST_CASE("every profile: the largest context fits and one more token does not", "[property][profiles]") {
  const std::string runtime = GENERATE(from_range(runtime_names()));
  const std::size_t index = GENERATE(range(std::size_t{0}, std::size_t{70}, std::size_t{6}));
  const char* card = GENERATE("rtx4090", "h100");
  if (index >= catalog_size()) return;
  const ModelSpec& model = catalog_model(index);
  INFO(runtime << " " << model.id << " on " << card);
  const std::optional<Plan> plan = plan_under(runtime, model, cards(card), {4096}, 1);
  if (!plan) return;
  for (const ContextLimit& limit : plan->context_limits) {
    if (!limit.max_ctx || limit.reached_search_limit) continue;
    const std::optional<Plan> at = plan_under(runtime, model, cards(card), {*limit.max_ctx}, 1);
    const std::optional<Plan> past = plan_under(runtime, model, cards(card), {*limit.max_ctx + 1}, 1);
    REQUIRE(at);
    REQUIRE(past);
    CHECK(at->rows.front().fits);
    CHECK_FALSE(past->rows.front().fits);
  }
}

TEST_CASE("every profile: sizes near 2^32, 2^53, 2^63 and 2^64 are an error or an answer, never a wrap", "[property][profiles]") {
  const std::string runtime = GENERATE(from_range(runtime_names()));
  const std::uint64_t ctx = GENERATE(std::uint64_t{1} << 32, (std::uint64_t{1} << 53) + 1, std::uint64_t{1} << 62,
                                     (std::uint64_t{1} << 63) - 1);
  const std::uint64_t batch = GENERATE(std::uint64_t{1}, std::uint64_t{1} << 31, (std::uint64_t{1} << 63) - 1);
  INFO(runtime << " ctx " << ctx << " batch " << batch);
  const ModelSpec& model = *builtin_models().find("llama3.1-8b");
  PlanRequest request;
  request.runtime = runtime;
  request.contexts = {ctx};
  request.batch = batch;
  request.batch_given = true;
  try {
    const Plan plan = make_plan(model, cards("h100"), request);
    for (const Row& row : plan.rows) {
      // An answer at these sizes never fits a card, and its figures are not wrapped to small ones.
      CHECK_FALSE(row.fits);
      CHECK(row.total_bytes >= row.weights_bytes);
    }
  } catch (const Error&) {
    SUCCEED("refused");  // exit 2 or 3 with a message: the contract
  }
}
