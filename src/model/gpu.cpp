#include "kvplan/gpu.h"

#include <cctype>

#include <fmt/format.h>

#include "loaders/json_reader.h"
#include "kvplan/error.h"
#include "model/suggest.h"
#include "kvplan/units.h"

namespace kvplan {

namespace {

/// "RTX 4090", "rtx-4090" and "rtx_4090" all name the same card.
std::string normalized(std::string_view name) {
  std::string out;
  for (const char c : name) {
    if (c == ' ' || c == '-' || c == '_') continue;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

/// cuda_total_bytes and its source come together, and CUDA cannot see more than the driver reports.
void validate_cuda_total(const JsonObjectReader& reader, const GpuSpec& gpu) {
  if (!gpu.cuda_total_bytes) {
    if (!gpu.cuda_total_source.empty()) reader.fail("cuda_total_bytes", "is missing (cuda_total_source describes nothing)");
    return;
  }
  if (gpu.cuda_total_source.empty()) reader.fail("cuda_total_source", "is missing (say which log printed cuda_total_bytes)");
  if (*gpu.cuda_total_bytes == 0) reader.fail("cuda_total_bytes", "must be more than zero");
  if (*gpu.cuda_total_bytes > gpu.memory_bytes)
    reader.fail("cuda_total_bytes", fmt::format("({}) is more than memory_bytes ({}): CUDA sees at most what the driver "
                                                "reports", *gpu.cuda_total_bytes, gpu.memory_bytes));
}

GpuSpec parse_gpu(const nlohmann::json& object, const std::string& context) {
  JsonObjectReader reader(object, context);
  GpuSpec gpu;
  gpu.id = reader.required_string("id");
  gpu.name = reader.required_string("name");
  gpu.aliases = reader.optional_string_list("aliases");
  gpu.vendor = reader.optional_string("vendor").value_or("");
  gpu.arch = reader.optional_string("arch").value_or("");
  gpu.memory_bytes = reader.required_uint("memory_bytes");
  gpu.memory_basis = reader.required_string("memory_basis");
  gpu.memory_source = reader.optional_string("memory_source").value_or("");
  gpu.cuda_total_bytes = reader.optional_uint("cuda_total_bytes");
  gpu.cuda_total_source = reader.optional_string("cuda_total_source").value_or("");
  reader.optional_uint("memory_marketed_gb");
  gpu.bandwidth_gbps = reader.optional_number("bandwidth_gbps");
  gpu.fp8 = reader.optional_bool("fp8").value_or(false);
  gpu.int8 = reader.optional_bool("int8").value_or(false);
  gpu.price_usd_per_hour = reader.optional_number("price_usd_per_hour");
  gpu.price_source = reader.optional_string("price_source").value_or("");
  reader.reject_unknown_keys();
  if (gpu.memory_bytes == 0) reader.fail("memory_bytes", "must be more than zero");
  validate_cuda_total(reader, gpu);
  return gpu;
}

bool looks_like_capacity(std::string_view text) {
  return !text.empty() && (std::isdigit(static_cast<unsigned char>(text.front())) || text.front() == '.' ||
                           text.front() == '-' || text.front() == '+');
}

}  // namespace

const GpuSpec* GpuCatalog::find(std::string_view name) const {
  const std::string wanted = normalized(name);
  for (const GpuSpec& gpu : gpus) {
    if (normalized(gpu.id) == wanted || normalized(gpu.name) == wanted) return &gpu;
    for (const std::string& alias : gpu.aliases)
      if (normalized(alias) == wanted) return &gpu;
  }
  return nullptr;
}

std::vector<std::string> GpuCatalog::names() const {
  std::vector<std::string> out;
  for (const GpuSpec& gpu : gpus) {
    out.push_back(gpu.id);
    out.insert(out.end(), gpu.aliases.begin(), gpu.aliases.end());
  }
  return out;
}

GpuCatalog parse_gpu_catalog(std::string_view json_text, std::string_view origin) {
  const nlohmann::json document = parse_json_document(json_text, origin);
  JsonObjectReader reader(document, std::string(origin));
  reader.optional_string("source");
  const nlohmann::json* list = reader.find("gpus");
  if (!list || !list->is_array()) reader.fail("gpus", "expected an array of GPUs");
  reader.reject_unknown_keys();
  GpuCatalog catalog;
  for (std::size_t i = 0; i < list->size(); ++i)
    catalog.gpus.push_back(parse_gpu((*list)[i], fmt::format("{}: gpus[{}]", origin, i)));
  return catalog;
}

GpuSpec resolve_gpu(std::string_view text, const GpuCatalog& catalog) {
  if (const GpuSpec* gpu = catalog.find(text)) return *gpu;
  if (!looks_like_capacity(text)) {
    std::vector<std::string> candidates;
    for (const GpuSpec& gpu : catalog.gpus) candidates.push_back(gpu.id);
    const std::vector<std::string> names = catalog.names();
    candidates.insert(candidates.end(), names.begin(), names.end());
    throw Error(fmt::format("--gpu: unknown GPU '{}'{}; or give a capacity such as 24GiB", text,
                            did_you_mean(text, candidates)));
  }
  GpuSpec gpu;
  gpu.memory_bytes = parse_memory_size(text, "--gpu");
  gpu.id = std::string(text);
  gpu.name = fmt::format("{} card", text);
  gpu.memory_basis = "given";
  gpu.memory_source = "--gpu on the command line";
  return gpu;
}

}  // namespace kvplan
