#include "loaders/detect/detected_gpus.h"

#include <charconv>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kvplan/error.h"
#include "kvplan/units.h"
#include "model/checked.h"
#include "model/text.h"

namespace kvplan {

namespace {

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t at = text.find(separator, start);
    parts.push_back(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

/// A whole decimal number, or nullopt ("[N/A]", "", "12.5", "-1").
std::optional<std::uint64_t> whole_number(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

/// nvidia-smi's words for a field this card or mode does not report.
bool not_available(std::string_view field) {
  return field.find("N/A") != std::string_view::npos || field.find("Not Supported") != std::string_view::npos;
}

std::string shown(std::string_view text) { return std::string(text.substr(0, 80)); }

}  // namespace

std::vector<DetectedGpu> parse_nvidia_smi_csv(std::string_view text) {
  std::vector<DetectedGpu> gpus;
  std::size_t line_number = 0;
  for (std::string_view line : split(text, '\n')) {
    ++line_number;
    line = trim(line);
    if (line.empty()) continue;
    // index, name, total, used: the name is everything between the first and the last two commas.
    const std::vector<std::string_view> fields = split(line, ',');
    if (fields.size() < 4)
      throw Error(fmt::format("nvidia-smi line {}: '{}' is not 'index, name, memory.total, memory.used'", line_number,
                              shown(line)));
    DetectedGpu gpu;
    gpu.index = std::string(trim(fields.front()));
    for (std::size_t i = 1; i + 2 < fields.size(); ++i) {
      if (i > 1) gpu.name += ',';
      gpu.name.append(fields[i]);
    }
    gpu.name = std::string(trim(gpu.name));
    const std::string_view total = trim(fields[fields.size() - 2]);
    const std::string_view used = trim(fields.back());
    const std::optional<std::uint64_t> total_mib = whole_number(total);
    if (!total_mib) {
      if (not_available(total))
        throw Error(fmt::format("nvidia-smi reports memory.total '{}' for GPU {} ({}): give --gpu NAME or --gpu SIZE",
                                shown(total), gpu.index, gpu.name),
                    ExitCode::unsupported_architecture);
      throw Error(fmt::format("nvidia-smi line {}: memory.total '{}' is not a number of MiB", line_number, shown(total)));
    }
    gpu.total_bytes = checked_mul(*total_mib, MiB, "nvidia-smi memory.total");
    if (const std::optional<std::uint64_t> used_mib = whole_number(used))
      gpu.used_bytes = checked_mul(*used_mib, MiB, "nvidia-smi memory.used");
    else if (!not_available(used))
      throw Error(fmt::format("nvidia-smi line {}: memory.used '{}' is not a number of MiB", line_number, shown(used)));
    if (gpu.total_bytes == 0) throw Error(fmt::format("nvidia-smi reports 0 MiB for GPU {} ({})", gpu.index, gpu.name));
    gpus.push_back(std::move(gpu));
  }
  if (gpus.empty()) throw Error("nvidia-smi listed no GPU");
  return gpus;
}

std::vector<DetectedGpu> parse_rocm_smi_json(std::string_view text) {
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    throw Error("rocm-smi did not print JSON");
  }
  if (!document.is_object()) throw Error("rocm-smi did not print a JSON object of cards");
  std::vector<DetectedGpu> gpus;
  for (const auto& item : document.items()) {
    const std::string& key = item.key();
    const nlohmann::json& card = item.value();
    // rocm-smi adds a "system" object beside the cards in some versions; only cardN are cards.
    if (key.rfind("card", 0) != 0 || !card.is_object()) continue;
    const auto text_of = [&](const char* field) -> std::string {
      const auto it = card.find(field);
      return it != card.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    DetectedGpu gpu;
    gpu.index = key;
    gpu.name = text_of("Card Series");
    if (gpu.name.empty()) gpu.name = text_of("Card series");
    const std::optional<std::uint64_t> total = whole_number(text_of("VRAM Total Memory (B)"));
    if (!total || *total == 0)
      throw Error(fmt::format("rocm-smi gives no 'VRAM Total Memory (B)' for {}: give --gpu NAME or --gpu SIZE", key),
                  ExitCode::unsupported_architecture);
    gpu.total_bytes = *total;
    gpu.used_bytes = whole_number(text_of("VRAM Total Used Memory (B)"));
    gpus.push_back(std::move(gpu));
  }
  if (gpus.empty()) throw Error("rocm-smi listed no card");
  return gpus;
}

DetectedGpu parse_apple_sysctl(std::string_view text) {
  const std::string_view lines = trim(text);
  const std::size_t newline = lines.find('\n');
  const std::optional<std::uint64_t> memory = whole_number(trim(lines.substr(0, newline)));
  if (newline == std::string_view::npos || !memory || *memory == 0)
    throw Error("sysctl did not print hw.memsize and machdep.cpu.brand_string");
  DetectedGpu gpu;
  gpu.index.push_back('0');  // one Mac, one GPU (an assignment of "0" trips a GCC 12 false -Wstringop-overflow)
  const std::string_view chip = trim(lines.substr(newline + 1));
  gpu.name = std::string(chip.begin(), chip.end());
  gpu.total_bytes = *memory;
  return gpu;
}

}  // namespace kvplan
