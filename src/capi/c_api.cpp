// The C API (include/kvplan/kvplan.h): the CLI's plan command as a function. It takes the same
// texts as the flags, builds its request with the same builder (engines/core/request_texts.h),
// plans with the same core and prints it with the same JSON formatter. No exception leaves this file.

#include "kvplan/kvplan.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "engines/core/profile.h"
#include "engines/core/request_texts.h"
#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "kvplan/model_loader.h"
#include "kvplan/plan.h"
#include "kvplan/report.h"
#include "kvplan/units.h"
#include "kvplan/version.h"
#include "loaders/draft_model.h"
#include "loaders/spec_json.h"

namespace kvplan {

namespace {

/// The C API names its settings by their fields (SettingNames' defaults).
constexpr SettingNames kFieldNames{};

/// The most engine options a request may carry: a guard against an array without its NULL.
constexpr std::size_t kMaxEngineOptions = 256;

/// The request's fields as the texts the CLI's flags would hold; NULL (or batch 0) is unset.
PlanTexts texts_of(const kvplan_request& in) {
  PlanTexts texts;
  // A NULL list is the default; an empty one is a list with one empty item, refused as on the CLI.
  if (in.ctx) texts.contexts.emplace_back(in.ctx);
  if (in.kv_dtypes) texts.kv_dtypes.emplace_back(in.kv_dtypes);
  if (in.weight_dtype) texts.weight_dtype = in.weight_dtype;
  if (in.batch != 0) texts.batch = std::to_string(in.batch);
  // "" means the default here, as an unset field does.
  if (in.overhead) texts.overhead = in.overhead;
  if (in.utilization) texts.utilization = in.utilization;
  if (in.mtp_layers) texts.mtp_layers = in.mtp_layers;
  if (in.runtime) texts.runtime = in.runtime;
  if (in.weights) texts.weights = in.weights;
  if (in.params) texts.params = in.params;
  if (in.engine_options) {
    for (std::size_t i = 0; in.engine_options[i] != nullptr; ++i) {
      if (i == kMaxEngineOptions) throw Error("engine_options: more than 256 entries (is the array NULL-terminated?)");
      const std::string_view item = in.engine_options[i];
      const std::size_t equals = item.find('=');
      const std::string name(item.substr(0, equals));
      if (name.empty()) throw Error(fmt::format("engine_options[{}]: '{}' has no name", i, item.substr(0, 80)));
      texts.engine_options.push_back(
          {name, equals == std::string_view::npos ? std::string() : std::string(item.substr(equals + 1)), name});
    }
  }
  return texts;
}

ModelSpec load_requested_model(const kvplan_request& in) {
  if ((in.model == nullptr) == (in.model_json == nullptr))
    throw Error("give exactly one of model (a name or a path) and model_json (a spec document)");
  if (in.model_json) return parse_model_spec(in.model_json, "model_json");
  return load_model(in.model);
}

/// A malloc'd copy, NUL-terminated; newlines become spaces when `one_line`.
char* copy_string(std::string_view text, bool one_line = false) {
  auto* out = static_cast<char*>(std::malloc(text.size() + 1));
  if (out == nullptr) throw std::bad_alloc();
  std::memcpy(out, text.data(), text.size());
  out[text.size()] = '\0';
  if (one_line)
    for (std::size_t i = 0; i < text.size(); ++i)
      if (out[i] == '\n' || out[i] == '\r') out[i] = ' ';
  return out;
}

template <std::size_t N>
void copy_name(char (&out)[N], std::string_view text) {
  const std::size_t n = text.size() < N - 1 ? text.size() : N - 1;
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

kvplan_row to_c_row(const Row& row) {
  kvplan_row out{};
  out.ctx = row.ctx;
  out.batch = row.batch;
  copy_name(out.kv_dtype, row.cache.label());
  copy_name(out.weight_dtype, row.weight_dtype->name);
  out.kv_bytes_per_token = row.kv_bytes_per_token;
  out.kv_bytes = row.kv_bytes;
  out.state_bytes = row.state_bytes;
  out.weights_bytes = row.weights_bytes;
  out.overhead_bytes = row.overhead_bytes;
  out.total_bytes = row.total_bytes;
  out.capacity_bytes = row.capacity_bytes;
  out.headroom_bytes = row.headroom_bytes;
  out.fits = row.fits ? 1 : 0;
  return out;
}

void plan_into(const kvplan_request& in, kvplan_result& result) {
  if (in.gpu == nullptr) throw Error("gpu is required (a catalog name such as 4090, or a capacity such as 24GiB)");
  const PlanTexts texts = texts_of(in);
  const ModelSpec model = apply_weight_overrides(load_requested_model(in), texts, kFieldNames);
  Report report;
  report.model = &model;
  report.gpus = resolve_builtin_gpus(in.gpu, "gpu");
  PlanRequest request = build_plan_request(texts, model, kFieldNames);
  if (const std::optional<std::string> draft = draft_checkpoint_named(request))
    request.draft_model = load_draft_model(*draft, "");
  report.plan = make_plan(model, report.gpus, request);

  const std::string json = format_json(report);
  const std::size_t count = report.plan.rows.size();
  auto* rows = static_cast<kvplan_row*>(std::calloc(count == 0 ? 1 : count, sizeof(kvplan_row)));
  if (rows == nullptr) throw std::bad_alloc();
  for (std::size_t i = 0; i < count; ++i) rows[i] = to_c_row(report.plan.rows[i]);
  try {
    result.json = copy_string(json);
  } catch (...) {
    std::free(rows);
    throw;
  }
  result.rows = rows;
  result.row_count = count;
}

void fail(kvplan_result& result, kvplan_status status, std::string_view message) noexcept {
  std::free(result.json);
  std::free(result.rows);
  result.json = nullptr;
  result.rows = nullptr;
  result.row_count = 0;
  result.status = status;
  try {
    result.error = copy_string(message, true);
  } catch (...) {
    result.error = nullptr;  // documented as non-NULL, but there is no memory to say more
  }
}

}  // namespace

}  // namespace kvplan

extern "C" kvplan_result* kvplan_plan(const kvplan_request* request) {
  using namespace kvplan;
  auto* result = static_cast<kvplan_result*>(std::calloc(1, sizeof(kvplan_result)));
  if (result == nullptr) return nullptr;
  result->status = KVPLAN_OK;
  try {
    if (request == nullptr) throw Error("request is NULL");
    plan_into(*request, *result);
  } catch (const Error& error) {
    fail(*result,
         error.code() == ExitCode::unsupported_architecture ? KVPLAN_UNSUPPORTED_ARCHITECTURE : KVPLAN_INVALID_INPUT,
         error.what());
  } catch (const std::bad_alloc&) {
    fail(*result, KVPLAN_INTERNAL_ERROR, "out of memory");
  } catch (const std::exception& error) {
    // As the CLI: anything else a loader lets through is an invalid input.
    fail(*result, KVPLAN_INVALID_INPUT, error.what());
  } catch (...) {
    fail(*result, KVPLAN_INTERNAL_ERROR, "unknown error");
  }
  return result;
}

extern "C" void kvplan_free(kvplan_result* result) {
  if (result == nullptr) return;
  std::free(result->error);
  std::free(result->json);
  std::free(result->rows);
  std::free(result);
}

extern "C" const char* kvplan_version(void) { return kvplan::kVersion; }
