#include "cli/plan_texts.h"

#include "kvplan/dtype.h"
#include "kvplan/units.h"

namespace kvplan {

namespace {

constexpr std::string_view kDefaultContexts = "32k,64k,128k";
constexpr std::string_view kDefaultOverhead = "2GiB";
constexpr std::string_view kDefaultUtilization = "1.0";

std::string_view or_default(const std::string& text, std::string_view fallback) {
  return text.empty() ? fallback : std::string_view(text);
}

}  // namespace

std::vector<std::string> split_list(const std::vector<std::string>& values) {
  std::vector<std::string> items;
  for (const std::string& value : values) {
    std::size_t start = 0;
    while (true) {
      const std::size_t comma = value.find(',', start);
      items.push_back(value.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return items;
}

void apply_budget_settings(const PlanTexts& texts, const GpuSpec& gpu, const SettingNames& names, PlanRequest& request) {
  request.overhead_bytes = parse_memory_size_or_zero(or_default(texts.overhead, kDefaultOverhead), names.overhead);
  request.utilization_millionths =
      parse_fraction_millionths(or_default(texts.utilization, kDefaultUtilization), names.utilization);
  request.gpu_memory_bytes = gpu.memory_bytes;
}

PlanRequest build_plan_request(const PlanTexts& texts, const ModelSpec& model, const GpuSpec& gpu,
                               const SettingNames& names) {
  PlanRequest request;
  const std::vector<std::string> contexts =
      texts.contexts.empty() ? split_list({std::string(kDefaultContexts)}) : split_list(texts.contexts);
  for (const std::string& ctx : contexts) request.contexts.push_back(parse_token_count(ctx, names.ctx));

  std::vector<std::string> dtypes = split_list(texts.kv_dtypes);
  if (texts.kv_dtypes.empty())
    for (std::string_view name : default_kv_dtype_names()) dtypes.emplace_back(name);
  for (const std::string& name : dtypes) {
    const Dtype& type = parse_kv_dtype(name, *model.weight_dtype);
    request.caches.push_back({&type, &type});
  }

  request.batch = texts.batch.empty() ? 1 : parse_positive_integer(texts.batch, names.batch);
  if (!texts.weight_dtype.empty()) request.weight_dtype = &parse_weight_dtype(texts.weight_dtype);
  apply_budget_settings(texts, gpu, names, request);
  request.mtp_layers = resolve_mtp_layers(texts.mtp_layers, model, names.mtp_layers);
  return request;
}

}  // namespace kvplan
