#pragma once
/// An engine's startup log, read: the settings it ran with and the memory and capacity figures it
/// printed, each with the line it came from. Engines print these lines for people, not programs,
/// so the reader looks for each sentence's fixed words anywhere in a line (behind any logger's
/// prefix) and keeps the line's text so a figure can always be checked by eye.
///
/// vLLM (V0 and V1 startup lines, its /metrics text), llama.cpp / llama-server, Ollama's scheduler
/// and runner lines, SGLang and TensorRT-LLM. Bounded: at most kMaxLogBytes are read, lines longer
/// than kMaxLineChars are cut (and counted), and nothing here throws on any input.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvplan::logs {

inline constexpr std::size_t kMaxLogBytes = std::size_t{64} << 20;  ///< 64 MiB: a week of a busy server's log
inline constexpr std::size_t kMaxLineChars = 16384;               ///< vLLM's config line is ~5,000
inline constexpr std::size_t kMaxFacts = 10000;                    ///< figures and settings kept, in all

enum class LogEngine { unknown, vllm, sglang, trtllm, llamacpp, ollama };
std::string_view to_string(LogEngine engine);   ///< "vllm", "llama.cpp", ...
std::string_view display_name(LogEngine engine);  ///< "vLLM", "llama.cpp", ...

/// One setting or figure as the log printed it.
struct LogFact {
  std::string name;    ///< stable key: "available_kv", "kv_cache", "max_model_len", ...
  std::string value;   ///< the number or word as printed ("58.11", "476,016", "auto")
  std::string unit;    ///< "GiB", "MiB", "GB", "tokens", "x", "blocks", "" for words and counts
  std::string device;  ///< "CUDA0", "CPU_Mapped", a rank ("Worker_TP1"); empty when the line names none
  std::size_t line = 0;  ///< 1-based
  std::string text;    ///< the line, colour codes and line end removed, at most kMaxLineChars
  LogEngine engine = LogEngine::unknown;
};

struct EngineLog {
  LogEngine engine = LogEngine::unknown;  ///< the engine most lines spoke for
  std::vector<LogFact> settings;          ///< first occurrence of each name wins
  std::vector<LogFact> figures;           ///< every occurrence, in line order (ranks repeat lines)
  std::size_t lines = 0;
  std::size_t cut_lines = 0;              ///< lines longer than kMaxLineChars, cut
  bool cut_input = false;                 ///< the input was longer than kMaxLogBytes; the rest was not read
  bool dropped_facts = false;             ///< more than kMaxFacts

  /// The first setting / figure of that name (and device, when given), or nullptr.
  const LogFact* setting(std::string_view name) const;
  const LogFact* figure(std::string_view name, std::string_view device = {}) const;
  /// Every figure of that name, in line order.
  std::vector<const LogFact*> all(std::string_view name) const;
  bool empty() const { return settings.empty() && figures.empty(); }
};

/// Reads the text of a log (or of vLLM's /metrics page). Never throws on content.
EngineLog read_engine_log(std::string_view text);

/// A decimal as printed: "58.11" is 5811 hundredths, "476,016" is 476016 units.
struct Decimal {
  std::uint64_t digits = 0;
  std::uint32_t decimals = 0;
};
/// Digits with an optional '.' and thousands commas; nullopt for anything else or more than 18 digits.
std::optional<Decimal> parse_decimal(std::string_view text);

/// The bytes a printed memory figure can stand for: [value - half a last digit, value + half a
/// last digit] x the unit, rounded outward. nullopt for a unit that is not a memory unit.
struct ByteBand {
  std::uint64_t low = 0;
  std::uint64_t mid = 0;  ///< the value as printed, rounded to the nearest byte
  std::uint64_t high = 0;
};
std::optional<ByteBand> byte_band(const LogFact& fact);
/// A whole number as printed ("476,016", "16384"); nullopt when it has decimals or is not a number.
std::optional<std::uint64_t> whole_number(std::string_view text);

}  // namespace kvplan::logs
