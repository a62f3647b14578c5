// The generic profile: the engine-neutral cost of a row (engines/core/cache_cost.h), the
// checkpoint's weights, and a flat overhead the user sets, against memory x utilization. On N
// alike GPUs it is N-way tensor parallelism at its ideal: weights / N and KV heads split on every
// GPU, what an engine that shards perfectly needs (real engines replicate a little more).

#include "engines/generic/generic.h"

#include <fmt/format.h>

#include "engines/core/cache_cost.h"
#include "kvplan/error.h"
#include "model/wide_int.h"

namespace kvplan {

namespace {

constexpr std::uint64_t kDefaultOverhead = 2 * GiB;  // seed 000's figure
const Dtype kNotPriced{"(not priced)", 1, 2, ""};  // marks weights that could not be priced ahead

class GenericProfile final : public Profile {
 public:
  GenericProfile(const ModelSpec& model, const std::vector<GpuSpec>& gpus, const PlanRequest& request)
      : model_(model), shapes_(layer_shapes(model)), gpu_(gpus.front()), ranks_(static_cast<std::uint32_t>(gpus.size())) {
    for (const GpuSpec& other : gpus)
      if (other.memory_bytes != gpu_.memory_bytes)
        throw Error("the generic profile splits a model across alike GPUs; cards of different memory are planned per "
                    "engine (--runtime llama.cpp splits layers by memory)",
                    ExitCode::unsupported_architecture);
    settings_.batch = request.batch;
    settings_.overhead_bytes = request.overhead_bytes.value_or(kDefaultOverhead);
    settings_.utilization_millionths = request.utilization_millionths.value_or(1'000'000);
    settings_.mtp_layers = resolve_mtp_layers(request.mtp_layers, model, request.names.mtp_layers);
    const std::uint64_t capacity = scale_by_millionths(gpu_.memory_bytes, settings_.utilization_millionths);
    settings_.budget_rule = fmt::format("{}{} = memory x utilization {}; fits when weights + KV + overhead <= budget",
                                        format_gib(static_cast<std::int64_t>(capacity)), ranks_ > 1 ? " per GPU" : "",
                                        format_percent(settings_.utilization_millionths));
    settings_.overhead_rule = fmt::format("runtime, {}", request.names.overhead);
    if (request.contexts_are_totals)
      throw Error(fmt::format("{}: a total context for all sequences is llama.cpp's -c; the generic profile takes "
                              "tokens per sequence",
                              request.names.ctx));
    automatic_ = &parse_kv_dtype("auto", *model.weight_dtype);
    try {
      request_weights_ = weights_of(request.weight_dtype);
    } catch (const Error&) {
      request_weights_.dtype = &kNotPriced;  // no row's dtype: every row prices (and throws) itself
    }
  }

  Row price(const RowQuery& query) const override {
    Row row;
    price_into(query, row);
    return row;
  }

  void price_into(const RowQuery& query, Row& row) const override {
    clear_row(row);
    row.ctx = query.ctx;
    row.batch = query.batch;
    row.cache = resolve(query.cache);
    row.weight_dtype = query.weight_dtype ? query.weight_dtype : model_.weight_dtype;
    CacheCost cost = cache_cost(std::move(row.breakdown), model_, shapes_, query.ctx, query.batch, row.cache,
                                settings_.mtp_layers, ranks_);
    row.kv_bytes_per_token = cost.kv_bytes_per_token;
    row.kv_bytes = cost.kv_bytes;
    row.state_bytes = cost.state_bytes;
    row.breakdown = std::move(cost.breakdown);
    // The request's weights by reference: a copy would cost its rule's string twice a row.
    Weights other;
    const Weights& weights =
        query.weight_dtype == request_weights_.dtype ? request_weights_ : (other = weights_of(query.weight_dtype));
    row.weights_bytes = weights.bytes;
    row.weights_rule = weights.rule;
    row.tp = ranks_;
    if (ranks_ > 1)
      row.assumptions.push_back(fmt::format("{}-way tensor parallelism at its ideal: weights / {}, KV heads split (each GPU "
                                            "keeps at least one), MLA latents and recurrent state whole on every GPU",
                                            ranks_, ranks_));
    row.overhead_bytes = settings_.overhead_bytes;
    row.capacity_bytes = scale_by_millionths(gpu_.memory_bytes, settings_.utilization_millionths);
    // What the cache may use, and how many sequences of this context that is.
    const u128 used = u128{row.weights_bytes} + row.overhead_bytes;
    if (used <= row.capacity_bytes) {
      const std::uint64_t available = row.capacity_bytes - static_cast<std::uint64_t>(used);
      row.engine.available_kv_bytes = available;
      const std::uint64_t per_sequence = row.kv_bytes / row.batch;
      if (per_sequence > 0) row.engine.max_concurrency = static_cast<double>(available / per_sequence);
    } else {
      row.engine.available_kv_bytes = 0;
      row.engine.max_concurrency = 0.0;
    }
    for (std::uint32_t rank = 0; rank < ranks_ && ranks_ > 1; ++rank) {
      GpuShare share;
      share.rank = rank;
      share.gpu = gpu_.id;
      share.weights_bytes = row.weights_bytes;
      share.kv_bytes = row.kv_bytes;
      share.other_bytes = row.overhead_bytes;
      share.capacity_bytes = row.capacity_bytes;
      row.per_gpu.push_back(share);
    }
  }

  PlanSettings settings() const override { return settings_; }

  /// The batch is the row's alone (the request's is only the settings' figure).
  bool depends_on_batch() const override { return false; }

  std::string budget_semantics() const override {
    return "takes what the rows need: weights + cache + overhead, within memory x utilization";
  }

  std::vector<std::uint64_t> default_contexts() const override { return {32 * 1024, 64 * 1024, 128 * 1024}; }

  std::vector<CacheDtypes> default_caches() const override {
    std::vector<CacheDtypes> caches;
    for (std::string_view name : default_kv_dtype_names()) {
      const Dtype& type = parse_kv_dtype(name, *model_.weight_dtype);
      caches.push_back({&type, &type});
    }
    return caches;
  }

  bool reprices_weights() const override { return true; }

 private:
  /// "auto": the model's compute dtype (bf16 for quantized checkpoints), as vLLM means it.
  CacheDtypes resolve(const CacheDtypes& cache) const {
    return {cache.k ? cache.k : automatic_, cache.v ? cache.v : automatic_};
  }

  /// One GPU's weights at `dtype` (nullptr: the checkpoint's own), and the rule.
  struct Weights {
    const Dtype* dtype = nullptr;
    std::uint64_t bytes = 0;
    std::string rule;
  };
  Weights weights_of(const Dtype* dtype) const {
    const WeightsEstimate weights = estimate_weights(model_, dtype);
    return {dtype, weights.bytes / ranks_ + (weights.bytes % ranks_ != 0 ? 1 : 0),
            ranks_ == 1 ? weights.rule : fmt::format("{}, / {} GPUs (tensor parallel)", weights.rule, ranks_)};
  }

  const ModelSpec& model_;  // the plan refers to its model (Plan::profile)
  LayerShapes shapes_;      // model_'s layers by shape, for every row's cache_cost
  GpuSpec gpu_;
  std::uint32_t ranks_ = 1;
  PlanSettings settings_;
  const Dtype* automatic_ = nullptr;  // the cache dtype "auto" means
  // The weights at the request's dtype, the same for every row of a plan or a sweep: priced once.
  // Errors (weights of unknown size) wait for a row to ask, as they did before.
  Weights request_weights_;
};

std::shared_ptr<const Profile> make_generic(const ModelSpec& model, const std::vector<GpuSpec>& gpus,
                                            const PlanRequest& request) {
  refuse_compressed_caches(model, request, "the generic profile");
  return std::make_shared<GenericProfile>(model, gpus, request);
}

}  // namespace

const EngineEntry& generic_engine() {
  static const EngineEntry entry{"generic", "generic", "", "the engine-neutral cost: weights + cache + a flat overhead", "", {},
                                 &make_generic};
  return entry;
}

}  // namespace kvplan
