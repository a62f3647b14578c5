// The GPU catalog file (gpus/gpus.json) and what --gpu means: a catalog name, or a memory size
// with its unit.

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "kvplan/error.h"
#include "loaders/unified_memory.h"
#include "kvplan/catalog.h"
#include "kvplan/gpu.h"
#include "kvplan/units.h"
#include "loaders/embedded_files.h"
#include "loaders/gpu_facts.h"
#include "loaders/json_reader.h"
#include "model/suggest.h"

namespace kvplan {

namespace {

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

bool is_bare_number(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) || c == '.';
  });
}

/// "24GiB", "80G", "-24GB", "1e9GB": meant as a memory size (a number, then a unit), so that the
/// size parser says what is wrong with it; "4060ti" is meant as a card.
bool looks_like_size(std::string_view text) {
  if (text.empty()) return false;
  const char first = text.front();
  if (!(std::isdigit(static_cast<unsigned char>(first)) || first == '.' || first == '-' || first == '+')) return false;
  const std::string lower = normalized_gpu_name(text);
  for (std::string_view unit : {"kib", "mib", "gib", "tib", "kb", "mb", "gb", "tb", "k", "m", "g", "t", "b"})
    if (lower.size() > unit.size() && lower.compare(lower.size() - unit.size(), unit.size(), unit) == 0) {
      const char before = lower[lower.size() - unit.size() - 1];
      return std::isdigit(static_cast<unsigned char>(before)) || before == '.' || unit.size() > 1;
    }
  return first == '-' || first == '+';
}

/// Whether `name` is `prefix` and then a memory size ("a100" + "40gb", "4060ti" + "16gb"): the
/// same card with other memory. "4070" + "tisuper" is another card, which "4070" does not mean.
bool is_memory_variant(const std::string& name, const std::string& prefix) {
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return false;
  std::size_t i = prefix.size();
  const std::size_t digits = i;
  while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i]))) ++i;
  const std::string_view unit = std::string_view(name).substr(i);
  return i > digits && (unit == "g" || unit == "gb");
}

/// Cards a name other than their own id could also mean: "a100" names the 80 GB card in the
/// catalog, but a100-40g is an A100 too. Only cards whose memory differs by more than 5%.
/// A MIG instance (a100-40gb-1g.5gb) is never what a card's name means, only its own.
std::vector<const GpuSpec*> also_meant(std::string_view typed, const GpuSpec& found, const GpuCatalog& catalog) {
  const std::string prefix = normalized_gpu_name(typed);
  std::vector<const GpuSpec*> others;
  if (normalized_gpu_name(found.id) == prefix) return others;
  for (const GpuSpec& gpu : catalog.gpus) {
    if (&gpu == &found || gpu.arch.find("a MIG instance") != std::string::npos) continue;
    bool starts = is_memory_variant(normalized_gpu_name(gpu.id), prefix);
    for (const std::string& alias : gpu.aliases) starts = starts || is_memory_variant(normalized_gpu_name(alias), prefix);
    const std::uint64_t a = std::min(gpu.memory_bytes, found.memory_bytes);
    const std::uint64_t b = std::max(gpu.memory_bytes, found.memory_bytes);
    if (starts && (b - a) * 20 > b) others.push_back(&gpu);
  }
  return others;
}

/// The built-in entries one part of a --gpu value can name or be the start of: the build's index
/// (embedded::gpu_entries) says which, and holds their fields, so no JSON is parsed.
GpuCatalog builtin_entries_like(std::string_view part) {
  const std::string wanted = normalized_gpu_name(part);
  GpuCatalog catalog;
  // A name on a line of its own never holds a line break, so neither does one that starts with it.
  if (wanted.find('\n') != std::string::npos) return catalog;
  for (const embedded::GpuFacts& card : embedded::gpu_facts()) {
    // A line that starts with `wanted` is an occurrence of it at a line's start: one search of the
    // card's names, not one comparison per line (a tenth of --gpu 4090's instructions, issue #10).
    const std::string_view names = card.names;
    bool candidate = false;
    for (std::size_t at = names.find(wanted); !candidate && at != std::string_view::npos; at = names.find(wanted, at + 1))
      candidate = at == 0 || names[at - 1] == '\n';
    if (candidate) catalog.gpus.push_back(gpu_from_facts(card));
  }
  return catalog;
}

}  // namespace

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

GpuSpec resolve_gpu(std::string_view text, const GpuCatalog& catalog, std::string_view setting) {
  if (std::optional<GpuSpec> mac = apple_silicon_gpu(text, setting)) return std::move(*mac);  // "m3-max-128gb"
  if (const GpuSpec* found = catalog.find(text)) {
    std::vector<const GpuSpec*> cards = also_meant(text, *found, catalog);
    if (cards.empty()) return *found;
    // Ambiguous: plan for the smallest card it can mean, never a larger one, and say so.
    cards.push_back(found);
    std::sort(cards.begin(), cards.end(), [](const GpuSpec* x, const GpuSpec* y) {
      return x->memory_bytes != y->memory_bytes ? x->memory_bytes < y->memory_bytes : x->id < y->id;
    });
    GpuSpec chosen = *cards.front();
    std::string list;
    for (std::size_t i = 0; i < cards.size(); ++i)
      list += fmt::format("{}{} ({})", i == 0 ? "" : i + 1 == cards.size() ? " or " : ", ", cards[i]->id,
                          format_gib(static_cast<std::int64_t>(cards[i]->memory_bytes)));
    chosen.resolution_note = fmt::format("'{}' can mean {}: planned for {}, the smallest; name the card to plan for another",
                                         text, list, chosen.id);
    return chosen;
  }
  std::vector<std::string> candidates;
  for (const GpuSpec& gpu : catalog.gpus) candidates.push_back(gpu.id);
  const std::vector<std::string> names = catalog.names();
  candidates.insert(candidates.end(), names.begin(), names.end());
  // Suggest catalog ids only: the aliases are spellings of the same cards.
  std::vector<std::string> ids;
  for (const std::string& name : closest_names(text, candidates, 8)) {
    const GpuSpec* gpu = catalog.find(name);
    if (gpu && std::find(ids.begin(), ids.end(), gpu->id) == ids.end()) ids.push_back(gpu->id);
    if (ids.size() == 3) break;
  }
  std::string suggestion;
  for (std::size_t i = 0; i < ids.size(); ++i) suggestion += (i ? ", " : "") + ids[i];
  suggestion = ids.empty() ? "not in the catalog (kvplan gpus lists it)" : "did you mean: " + suggestion + "?";
  if (is_bare_number(text))
    throw Error(fmt::format("{}: '{}' is a number without a unit: not a GPU in the catalog ({}) and not a memory size, "
                            "which needs its unit (24GiB = 24 x 2^30 bytes, 24GB = 24 x 10^9)",
                            setting, text, suggestion));
  if (!looks_like_size(text))
    throw Error(fmt::format("{}: unknown GPU '{}' ({}); or give its memory, e.g. 16GiB", setting, text, suggestion));
  GpuSpec gpu;
  gpu.memory_bytes = parse_memory_size(text, setting);
  gpu.id = std::string(text);
  gpu.name = fmt::format("{} card", text);
  gpu.memory_basis = "given";
  gpu.memory_source = fmt::format("{} as given", setting);
  return gpu;
}

namespace {

/// resolve_gpus with the catalog chosen per part.
template <typename CatalogFor>
std::vector<GpuSpec> resolve_parts(std::string_view text, std::string_view setting, const CatalogFor& catalog_for) {
  constexpr std::uint64_t kMaxGpus = 4096;
  std::vector<GpuSpec> gpus;
  std::string_view rest = text;
  while (true) {
    const std::size_t plus = rest.find('+');
    std::string_view part = rest.substr(0, plus);
    // "2x4090": a count, an x, a card. A card's own name never starts with digits and an x.
    std::uint64_t count = 1;
    std::size_t digits = 0;
    while (digits < part.size() && std::isdigit(static_cast<unsigned char>(part[digits]))) ++digits;
    if (digits > 0 && digits < part.size() && (part[digits] == 'x' || part[digits] == 'X') && digits + 1 < part.size()) {
      count = 0;
      for (std::size_t i = 0; i < digits; ++i) {
        count = count * 10 + static_cast<unsigned>(part[i] - '0');
        if (count > kMaxGpus) throw Error(fmt::format("{}: more than {} GPUs", setting, kMaxGpus));
      }
      if (count == 0) throw Error(fmt::format("{}: '{}' asks for no GPU", setting, part));
      part.remove_prefix(digits + 1);
    }
    if (part.empty()) throw Error(fmt::format("{}: '{}' has an empty card in it", setting, text.substr(0, 80)));
    const GpuSpec gpu = resolve_gpu(part, catalog_for(part), setting);
    if (gpus.size() + count > kMaxGpus) throw Error(fmt::format("{}: more than {} GPUs", setting, kMaxGpus));
    gpus.insert(gpus.end(), count, gpu);
    if (plus == std::string_view::npos) break;
    rest.remove_prefix(plus + 1);
  }
  return gpus;
}

}  // namespace

std::vector<GpuSpec> resolve_gpus(std::string_view text, const GpuCatalog& catalog, std::string_view setting) {
  return resolve_parts(text, setting, [&](std::string_view) -> const GpuCatalog& { return catalog; });
}

std::vector<GpuSpec> resolve_builtin_gpus(std::string_view text, std::string_view setting) {
  GpuCatalog subset;
  return resolve_parts(text, setting, [&](std::string_view part) -> const GpuCatalog& {
    subset = builtin_entries_like(part);
    // Not a card's name: the whole catalog, for "did you mean" (and a size needs none of it).
    if (!subset.find(part) && !looks_like_size(part)) return builtin_gpus();
    return subset;
  });
}

}  // namespace kvplan
