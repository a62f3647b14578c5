// The C API (include/kvplan/kvplan.h): the CLI's plan command as a function. It takes the same
// texts as the flags, builds the same Report as src/cli.cpp and prints it with the same JSON
// formatter. No exception leaves this file.

#include "kvplan/kvplan.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "kvplan/budget.h"
#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "kvplan/model_loader.h"
#include "kvplan/report.h"
#include "kvplan/spec_json.h"
#include "kvplan/units.h"
#include "kvplan/version.h"

namespace kvplan {

namespace {

/// "32k,64k" -> {"32k", "64k"}; empty items are kept so that they are refused, as on the CLI.
std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> items;
  if (text.empty()) return items;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    items.emplace_back(text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return items;
}

/// The flags' defaults and parsers, as src/cli.cpp's build_request applies them.
PlanRequest build_request(const kvplan_request& in, const ModelSpec& model, const GpuSpec& gpu) {
  PlanRequest request;
  for (const std::string& ctx : split_list(in.ctx ? in.ctx : "32k,64k,128k"))
    request.contexts.push_back(parse_token_count(ctx, "ctx"));

  std::vector<std::string> dtypes;
  if (in.kv_dtypes) dtypes = split_list(in.kv_dtypes);
  else
    for (std::string_view name : default_kv_dtype_names()) dtypes.emplace_back(name);
  for (const std::string& name : dtypes) {
    const Dtype& type = parse_kv_dtype(name, *model.weight_dtype);
    request.caches.push_back({&type, &type});
  }

  request.batch = in.batch == 0 ? 1 : in.batch;
  if (in.weight_dtype) request.weight_dtype = &parse_weight_dtype(in.weight_dtype);
  const std::string_view overhead = in.overhead ? in.overhead : "2GiB";
  request.overhead_bytes = overhead == "0" ? 0 : parse_memory_size(overhead, "overhead");
  request.utilization_millionths = parse_fraction_millionths(in.utilization ? in.utilization : "1.0", "utilization");
  request.gpu_memory_bytes = gpu.memory_bytes;
  return request;
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
  out.ctx = row.settings.ctx;
  out.batch = row.settings.batch;
  copy_name(out.kv_dtype, row.settings.cache.label());
  copy_name(out.weight_dtype, row.weight_dtype->name);
  out.kv_bytes_per_token = row.kv_bytes_per_token;
  out.kv_bytes = row.kv_bytes;
  out.state_bytes = row.state_bytes;
  out.weights_bytes = row.weights_bytes;
  out.overhead_bytes = row.settings.overhead_bytes;
  out.total_bytes = row.total_bytes;
  out.capacity_bytes = row.capacity_bytes;
  out.headroom_bytes = row.headroom_bytes;
  out.fits = row.fits ? 1 : 0;
  return out;
}

void plan_into(const kvplan_request& in, kvplan_result& result) {
  if (in.gpu == nullptr) throw Error("gpu is required (a catalog name such as 4090, or a capacity such as 24GiB)");
  const ModelSpec model = load_requested_model(in);
  Report report;
  report.model = &model;
  report.gpu = resolve_gpu(in.gpu, builtin_gpus());
  report.request = build_request(in, model, report.gpu);
  report.plan = make_plan(model, report.request);

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
