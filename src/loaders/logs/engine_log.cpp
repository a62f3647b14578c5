// The dispatcher: the input cut into bounded lines, each line cleaned once and offered to every
// engine's reader; the engine is the one whose lines the log holds most of.

#include "loaders/logs/engine_log.h"

#include <array>

#include "loaders/logs/engine_lines.h"
#include "loaders/logs/line_cleanup.h"
#include "model/wide_int.h"

namespace kvplan::logs {

std::string_view to_string(LogEngine engine) {
  switch (engine) {
    case LogEngine::vllm: return "vllm";
    case LogEngine::sglang: return "sglang";
    case LogEngine::trtllm: return "trtllm";
    case LogEngine::llamacpp: return "llama.cpp";
    case LogEngine::ollama: return "ollama";
    case LogEngine::unknown: break;
  }
  return "unknown";
}

std::string_view display_name(LogEngine engine) {
  switch (engine) {
    case LogEngine::vllm: return "vLLM";
    case LogEngine::sglang: return "SGLang";
    case LogEngine::trtllm: return "TensorRT-LLM";
    case LogEngine::llamacpp: return "llama.cpp";
    case LogEngine::ollama: return "Ollama";
    case LogEngine::unknown: break;
  }
  return "an unknown engine";
}

const LogFact* EngineLog::setting(std::string_view name) const {
  for (const LogFact& fact : settings)
    if (fact.name == name) return &fact;
  return nullptr;
}

const LogFact* EngineLog::figure(std::string_view name, std::string_view device) const {
  for (const LogFact& fact : figures)
    if (fact.name == name && (device.empty() || fact.device == device)) return &fact;
  return nullptr;
}

std::vector<const LogFact*> EngineLog::all(std::string_view name) const {
  std::vector<const LogFact*> found;
  for (const LogFact& fact : figures)
    if (fact.name == name) found.push_back(&fact);
  return found;
}

namespace {

/// The process tag when it names a rank ("Worker_TP1", "TP0", "rank1"), so that figures of
/// several ranks can be told apart; "EngineCore" and "APIServer" name no rank.
std::string_view rank_of(std::string_view source) {
  if (source.find("TP") != std::string_view::npos || source.find("PP") != std::string_view::npos ||
      source.substr(0, 4) == "rank")
    return source;
  return {};
}

/// The unit a printed unit means. SGLang and TensorRT-LLM print "GB" for 2^30 bytes (SGLang's
/// get_available_gpu_memory and "mem usage", TensorRT-LLM's "uses X GB for model weights" all
/// divide by 1 << 30: engine-rules-serving.md, "Units"), so their "GB" is read as GiB.
std::string_view meant_unit(LogEngine engine, std::string_view unit) {
  if (unit == "GB" && (engine == LogEngine::sglang || engine == LogEngine::trtllm)) return "GiB";
  return unit;
}

}  // namespace

LogFact FactSink::make(const LogLine& line, LogEngine engine, std::string_view name, std::string_view value,
                       std::string_view unit, std::string_view device) const {
  LogFact fact;
  fact.name = std::string(name);
  fact.value = std::string(value.substr(0, 512));
  fact.unit = std::string(meant_unit(engine, unit).substr(0, 16));
  fact.device = std::string(device.substr(0, 64));
  fact.line = line.number;
  fact.text = std::string(line.text);
  fact.engine = engine;
  return fact;
}

void FactSink::setting(const LogLine& line, LogEngine engine, std::string_view name, std::string_view value,
                       std::string_view unit) {
  if (value.empty() || log_.setting(name)) return;
  if (log_.settings.size() + log_.figures.size() >= kMaxFacts) {
    log_.dropped_facts = true;
    return;
  }
  log_.settings.push_back(make(line, engine, name, value, unit, {}));
}

void FactSink::figure(const LogLine& line, LogEngine engine, std::string_view name, std::string_view value,
                      std::string_view unit, std::string_view device) {
  if (value.empty()) return;
  if (log_.settings.size() + log_.figures.size() >= kMaxFacts) {
    log_.dropped_facts = true;
    return;
  }
  log_.figures.push_back(make(line, engine, name, value, unit, device.empty() ? rank_of(line.source) : device));
}

bool FactSink::figure_after(const LogLine& line, LogEngine engine, std::string_view anchor, std::string_view name,
                            std::string_view device) {
  const auto rest = after(line.body, anchor);
  if (!rest) return false;
  const auto number = leading_number(*rest);
  if (!number) return false;
  figure(line, engine, name, *number, unit_after(*rest, *number), device);
  return true;
}

bool FactSink::setting_after(const LogLine& line, LogEngine engine, std::string_view anchor, std::string_view name) {
  const auto rest = after(line.body, anchor);
  if (!rest) return false;
  const auto number = leading_number(*rest);
  if (!number) return false;
  setting(line, engine, name, *number);
  return true;
}

bool FactSink::keyed_figure(const LogLine& line, LogEngine engine, std::string_view key, std::string_view name,
                            std::string_view unit, std::string_view device) {
  const auto value = keyed_value(line.body, key);
  if (!value) return false;
  std::string_view v = *value;
  if (!v.empty() && v.front() == '[') v.remove_prefix(1);
  const auto number = leading_number(v);
  if (!number) return false;
  const std::string_view printed = unit_after(v, *number);
  figure(line, engine, name, *number, printed.empty() ? unit : printed, device);
  return true;
}

EngineLog read_engine_log(std::string_view text) {
  EngineLog log;
  if (text.size() > kMaxLogBytes) {
    text = text.substr(0, kMaxLogBytes);
    log.cut_input = true;
  }
  FactSink sink(log);
  std::array<std::size_t, 6> votes{};
  const auto offer = [&](const std::string& clean, std::size_t number) {
    const CleanLine parts = split_prefix(clean);
    const LogLine line{parts.body, parts.source, clean, number};
    // Each reader is tried in turn; Ollama's runner prints llama.cpp's lines too, and those count
    // for llama.cpp, while a single scheduler line says the log is Ollama's.
    if (read_vllm_line(line, sink) || read_vllm_metrics_line(line, sink)) ++votes[static_cast<std::size_t>(LogEngine::vllm)];
    else if (read_ollama_line(line, sink)) votes[static_cast<std::size_t>(LogEngine::ollama)] += 100;
    else if (read_llamacpp_line(line, sink)) ++votes[static_cast<std::size_t>(LogEngine::llamacpp)];
    else if (read_sglang_line(line, sink)) ++votes[static_cast<std::size_t>(LogEngine::sglang)];
    else if (read_trtllm_line(line, sink)) ++votes[static_cast<std::size_t>(LogEngine::trtllm)];
  };
  // A terminal or a paste hard-wraps long lines: a line with no prefix of its own that follows a
  // long line with a process tag ("(EngineCore pid=1) ...") is that line's continuation, joined
  // back (without a separator: the wrap cut mid-word). Facts keep the first line's number.
  std::string pending;
  std::size_t pending_number = 0;
  bool pending_tagged = false;
  std::size_t previous_length = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view raw = text.substr(start, end - start);
    start = end + 1;
    ++log.lines;
    if (raw.size() > kMaxLineChars) {
      raw = raw.substr(0, kMaxLineChars);
      ++log.cut_lines;
    }
    std::string clean = strip_control(raw);
    const CleanLine parts = split_prefix(clean);
    // Leading blanks are no prefix: a wrap may cut just before a space.
    const std::size_t blanks = clean.find_first_not_of(" \t");
    const std::size_t unblanked = blanks == std::string::npos ? 0 : clean.size() - blanks;
    const bool has_prefix = !parts.source.empty() || parts.body.size() != unblanked;
    const bool continues = !has_prefix && !clean.empty() && pending_tagged && previous_length >= 100 &&
                           pending.size() + clean.size() <= kMaxLineChars;
    previous_length = raw.size();
    if (continues) {
      pending += clean;
      continue;
    }
    if (pending_number) offer(pending, pending_number);
    pending_tagged = !parts.source.empty();
    pending = std::move(clean);
    pending_number = log.lines;
  }
  if (pending_number) offer(pending, pending_number);
  std::size_t best = 0;
  for (std::size_t i = 1; i < votes.size(); ++i)
    if (votes[i] > votes[best]) best = i;
  log.engine = votes[best] > 0 ? static_cast<LogEngine>(best) : LogEngine::unknown;
  return log;
}

std::optional<Decimal> parse_decimal(std::string_view text) {
  Decimal d;
  bool point = false;
  int digits = 0;
  for (const char c : text) {
    if (c == ',') {
      if (point) return std::nullopt;
      continue;
    }
    if (c == '.') {
      if (point) return std::nullopt;
      point = true;
      continue;
    }
    if (c < '0' || c > '9') return std::nullopt;
    if (++digits > 18) return std::nullopt;
    d.digits = d.digits * 10 + static_cast<std::uint64_t>(c - '0');
    if (point) ++d.decimals;
  }
  if (digits == 0) return std::nullopt;
  return d;
}

std::optional<std::uint64_t> whole_number(std::string_view text) {
  const auto d = parse_decimal(text);
  if (!d || d->decimals != 0) return std::nullopt;
  return d->digits;
}

std::optional<ByteBand> byte_band(const LogFact& fact) {
  std::uint64_t unit = 0;
  if (fact.unit == "B") unit = 1;
  else if (fact.unit == "KiB") unit = std::uint64_t{1} << 10;
  else if (fact.unit == "MiB") unit = std::uint64_t{1} << 20;
  else if (fact.unit == "GiB") unit = std::uint64_t{1} << 30;
  else if (fact.unit == "TiB") unit = std::uint64_t{1} << 40;
  else if (fact.unit == "KB" || fact.unit == "kB") unit = 1000;
  else if (fact.unit == "MB") unit = 1000'000;
  else if (fact.unit == "GB") unit = 1000'000'000;
  else return std::nullopt;
  const auto d = parse_decimal(fact.value);
  if (!d) return std::nullopt;
  // value = digits / 10^decimals units; the band is half a last digit either side. Twice the
  // value is formed first so the half stays an integer: (2 x digits -/+ 1) x unit / (2 x 10^d).
  u128 scale = 2;
  for (std::uint32_t i = 0; i < d->decimals; ++i) scale *= 10;
  const u128 twice = u128{d->digits} * 2;
  const u128 low = (twice == 0 ? 0 : (twice - 1) * unit) / scale;
  const u128 high = ceil_div_wide((twice + 1) * unit, scale);
  const u128 mid = (twice * unit + scale / 2) / scale;
  constexpr u128 kMax = ~std::uint64_t{0};
  if (high > kMax) return std::nullopt;
  return ByteBand{static_cast<std::uint64_t>(low), static_cast<std::uint64_t>(mid), static_cast<std::uint64_t>(high)};
}

}  // namespace kvplan::logs
