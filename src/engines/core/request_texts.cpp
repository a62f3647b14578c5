#include "engines/core/request_texts.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "engines/core/weight_formats.h"
#include "kvplan/dtype.h"
#include "kvplan/error.h"
#include "kvplan/units.h"

namespace kvplan {

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

PlanRequest build_plan_request(const PlanTexts& texts, const ModelSpec& model, const SettingNames& names) {
  PlanRequest request;
  request.names = names;
  if (!texts.runtime.empty()) request.runtime = texts.runtime;
  const std::vector<std::string> contexts = split_list(texts.contexts);
  // "auto" and "-1", as vLLM's human_readable_int_or_auto reads them: the engine picks the length.
  const auto is_auto = [](const std::string& ctx) { return ctx == "auto" || ctx == "-1"; };
  if (std::any_of(contexts.begin(), contexts.end(), is_auto)) {
    if (contexts.size() > 1)
      throw Error(fmt::format("{}: auto picks the one length that fits; give it alone", names.ctx));
    request.context_auto_fit = true;
  } else {
    for (const std::string& ctx : contexts) request.contexts.push_back(parse_token_count(ctx, names.ctx));
  }
  for (const std::string& name : split_list(texts.kv_dtypes)) {
    if (name == "auto") {
      request.caches.push_back({});  // the engine's own default, resolved per profile
      continue;
    }
    if (name.empty()) throw Error(fmt::format("{}: an empty item in the list", names.kv_dtype));
    const Dtype& type = parse_kv_dtype(name, *model.weight_dtype);
    request.caches.push_back({&type, &type});
  }
  if (!texts.batch.empty()) {
    request.batch = parse_positive_integer(texts.batch, names.batch);
    request.batch_given = true;
  }
  if (!texts.weight_dtype.empty()) request.weight_dtype = &parse_requested_weight_dtype(texts.weight_dtype);
  if (!texts.overhead.empty()) request.overhead_bytes = parse_memory_size_or_zero(texts.overhead, names.overhead);
  if (!texts.utilization.empty())
    request.utilization_millionths = parse_fraction_millionths(texts.utilization, names.utilization);
  request.mtp_layers = texts.mtp_layers;
  request.engine_options = texts.engine_options;
  // The budget settings are named as the caller names the others: flags on the command line.
  const bool flags = names.ctx.rfind("--", 0) == 0;
  const std::string budget = flags ? "--budget" : "budget";
  const std::string free = flags ? "--free" : "free";
  const std::string used = flags ? "--used" : "used";
  if (!texts.budget.empty()) request.budget_bytes = parse_memory_size(texts.budget, budget);
  if (!texts.free.empty() && !texts.used.empty())
    throw Error(fmt::format("{} and {}: give one (free = the card's memory - used)", free, used));
  if (!texts.free.empty()) request.free_bytes = parse_memory_size(texts.free, free);
  if (!texts.used.empty()) request.used_bytes = parse_memory_size_or_zero(texts.used, used);
  return request;
}

std::uint64_t parse_param_count(std::string_view text, std::string_view setting) {
  // A count with B (10^9) or M (10^6): parameters are counted in decimal, never in 2^30.
  std::string_view number = text;
  std::uint64_t scale = 1;
  if (!number.empty() && (number.back() == 'B' || number.back() == 'b')) scale = 1'000'000'000, number.remove_suffix(1);
  else if (!number.empty() && (number.back() == 'M' || number.back() == 'm')) scale = 1'000'000, number.remove_suffix(1);
  std::uint64_t whole = 0;
  std::uint64_t fraction = 0;
  std::uint64_t fraction_scale = 1;
  bool digits = false;
  bool point = false;
  for (const char c : number) {
    if (c == '.' && !point) {
      point = true;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c)))
      throw Error(fmt::format("{}: '{}' is not a parameter count (examples: 32.5B, 494M, 8030261248)", setting, text));
    digits = true;
    const unsigned digit = static_cast<unsigned>(c - '0');
    if (!point) {
      if (__builtin_mul_overflow(whole, 10, &whole) || __builtin_add_overflow(whole, digit, &whole))
        throw Error(fmt::format("{}: '{}' is too large", setting, text));
    } else if (fraction_scale < scale) {
      fraction = fraction * 10 + digit;
      fraction_scale *= 10;
    } else if (digit != 0) {
      throw Error(fmt::format("{}: '{}' is not a whole number of parameters", setting, text));
    }
  }
  if (!digits) throw Error(fmt::format("{}: '{}' is not a parameter count (examples: 32.5B, 494M)", setting, text));
  std::uint64_t count = 0;
  if (__builtin_mul_overflow(whole, scale, &count) || __builtin_add_overflow(count, fraction * (scale / fraction_scale), &count))
    throw Error(fmt::format("{}: '{}' is too large", setting, text));
  if (count == 0) throw Error(fmt::format("{}: must be more than zero", setting));
  return count;
}

ModelSpec apply_weight_overrides(ModelSpec model, const PlanTexts& texts, const SettingNames& names) {
  if (!texts.params.empty()) {
    model.params = parse_param_count(texts.params, names.params);
    model.active_params = 0;
    model.params_source = fmt::format("{} {}, given", names.params, texts.params);
    model.weights_bytes.reset();
    model.weights_source.clear();
  }
  if (!texts.weights.empty()) {
    model.weights_bytes = parse_memory_size(texts.weights, names.weights);
    // "(given:" is what weights_are_given() reads.
    model.weights_source = fmt::format("{} {} (given: the checkpoint's size)", names.weights, texts.weights);
  }
  if (texts.text_only && !model.parts.empty()) {
    // The parts' bytes come off the checkpoint's size; a count is priced without them anyway.
    const std::uint64_t parts = parts_bytes(model);
    std::string left_out;
    for (const ModelPart& part : model.parts) left_out += (left_out.empty() ? "" : ", ") + part.name;
    if (model.weights_bytes) {
      if (*model.weights_bytes < parts)
        throw Error(fmt::format("{}: the weights ({}) are smaller than the {} they would leave out ({})", names.text_only,
                                format_gib(static_cast<std::int64_t>(*model.weights_bytes)), left_out,
                                format_gib(static_cast<std::int64_t>(parts))));
      model.weights_bytes = *model.weights_bytes - parts;
    }
    model.weights_source = fmt::format("{}{}{} leaves out the {} ({})", model.weights_source, model.weights_source.empty() ? "" : "; ",
                                       names.text_only, left_out, format_gib(static_cast<std::int64_t>(parts)));
    model.parts.clear();
  }
  return model;
}

}  // namespace kvplan
