#include "engines/core/profile.h"

#include <fmt/format.h>

#include "kvplan/error.h"
#include "model/suggest.h"

namespace kvplan {

namespace {

/// Does `spellings` (space-separated) hold `word`?
bool spelled(std::string_view spellings, std::string_view word) {
  while (!spellings.empty()) {
    const std::size_t space = spellings.find(' ');
    if (spellings.substr(0, space) == word) return true;
    if (space == std::string_view::npos) break;
    spellings.remove_prefix(space + 1);
  }
  return false;
}

bool declares(const EngineEntry& engine, std::string_view option) {
  for (const OptionSpec& spec : engine.options)
    if (spec.name == option) return true;
  return false;
}

}  // namespace

void Profile::write_section(const Plan&, EngineSection&) const {}

void clear_row(Row& row) {
  // Field by field (assigning a whole Row{} costs more than the rest of a generic row's pricing);
  // the size check makes a field added to Row fail to compile until it is reset here too.
  static_assert(sizeof(void*) != 8 || sizeof(Row) == 448, "a field was added to Row: reset it in clear_row");
  row.ctx = 0;
  row.batch = 1;
  row.cache = {};
  row.weight_dtype = nullptr;
  row.kv_bytes_per_token = 0;
  row.kv_bytes = 0;
  row.state_bytes = 0;
  row.breakdown.clear();
  row.kv_pool_bytes.reset();
  row.weights_bytes = 0;
  row.weights_rule.clear();
  row.overhead_bytes = 0;
  row.capacity_bytes = 0;
  row.total_bytes = 0;
  row.headroom_bytes = 0;
  row.verdict = Verdict::does_not_fit;
  row.fits = false;
  row.engine = {};
  row.findings.clear();
  row.detail.reset();
  row.tp = 1;
  row.pp = 1;
  row.per_gpu.clear();
  row.assumptions.clear();
  row.decode_bound.reset();
  row.host.reset();
}

const EngineEntry& find_engine(std::string_view name, std::string_view setting) {
  std::vector<std::string> known;
  for (const EngineEntry& engine : engines()) {
    if (engine.name == name || spelled(engine.aliases, name)) return engine;
    known.emplace_back(engine.name);
  }
  std::string list;
  for (const std::string& each : known) list += (list.empty() ? "" : ", ") + each;
  throw Error(fmt::format("{}: unknown runtime '{}' (kvplan knows {}){}", setting, name, list, did_you_mean(name, known)));
}

const GpuSpec& single_gpu(const std::vector<GpuSpec>& gpus, std::string_view engine) {
  if (gpus.empty()) throw Error("no GPU to plan for");
  if (gpus.size() > 1)
    throw Error(fmt::format("the {} profile plans one GPU so far; {} were given", engine, gpus.size()),
                ExitCode::unsupported_architecture);
  return gpus.front();
}

std::uint64_t rows_batch(const PlanRequest& request, const Profile& profile) {
  return request.batch_given ? request.batch : profile.default_batch().value_or(request.batch);
}

std::optional<std::string> draft_checkpoint_named(const PlanRequest& request) {
  const EngineEntry* engine = nullptr;
  try {
    engine = &find_engine(request.runtime, request.names.runtime);
  } catch (const Error&) {
    return std::nullopt;  // make_plan names the runtime it does not know
  }
  return engine->draft_named ? engine->draft_named(request) : std::nullopt;
}

const EngineOption* find_option(const PlanRequest& request, std::string_view name) {
  for (const EngineOption& option : request.engine_options)
    if (option.name == name) return &option;
  return nullptr;
}

void refuse_compressed_caches(const ModelSpec& model, const PlanRequest& request, std::string_view engine) {
  for (std::size_t il = 0; il < model.layers.size(); ++il)
    if (model.layers[il].compress_ratio != 0)
      throw unsupported_architecture(
          fmt::format("layer {} compress_ratio", il),
          fmt::format("{} (DeepSeek-V4's compressed caches: kvplan sizes them as llama.cpp lays them out; {}'s rules "
                      "for them are not read: add {} llama.cpp)",
                      model.layers[il].compress_ratio, engine, request.names.runtime));
}

void refuse_llamacpp_only_layouts(const ModelSpec& model, const PlanRequest& request, std::string_view engine) {
  refuse_compressed_caches(model, request, engine);
  for (std::size_t il = 0; il < model.layers.size(); ++il) {
    const LayerSpec& layer = model.layers[il];
    if (layer.index_head_dim != 0 && layer.kind != LayerKind::mla)
      throw unsupported_architecture(
          fmt::format("layer {} index_head_dim", il),
          fmt::format("{} on a {} layer (a sparse-attention indexer beside plain attention, as {}'s; {}'s indexer "
                      "rules are DSA's, for MLA models: add {} llama.cpp, whose layout for it was read)",
                      layer.index_head_dim, to_string(layer.kind),
                      model.architecture.empty() ? std::string("this model") : model.architecture, engine,
                      request.names.runtime));
  }
  if (!model.file) return;
  for (std::size_t il = 0; il < model.layers.size(); ++il)
    if (!model.layers[il].state.empty())
      throw unsupported_architecture(
          fmt::format("layer {} state", il),
          fmt::format("llama.cpp's recurrent state (f32), as the GGUF file gives it; {} keeps its own state dtype, "
                      "read from the model's config.json: give that (or add {} llama.cpp)",
                      engine, request.names.runtime));
}

void refuse_foreign_options(const PlanRequest& request, const EngineEntry& engine) {
  for (const EngineOption& option : request.engine_options) {
    if (declares(engine, option.name)) continue;
    for (const EngineEntry& other : engines())
      if (declares(other, option.name))
        throw Error(fmt::format("{} is a {} flag: add {} {}", option.shown_as, other.display, request.names.runtime, other.name));
    throw Error(fmt::format("{}: no engine profile has this setting", option.shown_as));
  }
}

}  // namespace kvplan
