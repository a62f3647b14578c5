#pragma once
// The engines' line readers, one file each, behind read_engine_log (engine_log.cpp). Each gets
// one cleaned line and adds what it recognises; it returns true when the line was one of its own.

#include <string_view>

#include "loaders/logs/engine_log.h"

namespace kvplan::logs {

/// One line as the readers see it.
struct LogLine {
  std::string_view body;    ///< the message, prefixes removed (line_cleanup.h)
  std::string_view source;  ///< the process or rank that printed it, when the prefix named one
  std::string_view text;    ///< the whole line, colour codes removed
  std::size_t number = 0;   ///< 1-based
};

/// Adds facts to a log, first setting of a name wins, at most kMaxFacts in all.
class FactSink {
 public:
  explicit FactSink(EngineLog& log) : log_(log) {}
  void setting(const LogLine& line, LogEngine engine, std::string_view name, std::string_view value,
               std::string_view unit = {});
  void figure(const LogLine& line, LogEngine engine, std::string_view name, std::string_view value,
              std::string_view unit, std::string_view device = {});
  /// A figure whose number and unit follow `anchor` in the line ("size = 3072.00 MiB"); false
  /// when the anchor is absent or no number follows it.
  bool figure_after(const LogLine& line, LogEngine engine, std::string_view anchor, std::string_view name,
                    std::string_view device = {});
  /// A setting whose value is a number right after `anchor`.
  bool setting_after(const LogLine& line, LogEngine engine, std::string_view anchor, std::string_view name);
  /// A figure from a `key=value` list (Go's logger, Python's reprs): key="12.5 GiB", key=12.5 GB,
  /// or a bracketed list of GPUs "[12.5 GiB 12.5 GiB]" (its first). `unit` when the value prints
  /// none ("max_total_num_tokens=444500"). False when the key or its number is absent.
  bool keyed_figure(const LogLine& line, LogEngine engine, std::string_view key, std::string_view name,
                    std::string_view unit = {}, std::string_view device = {});

 private:
  LogFact make(const LogLine& line, LogEngine engine, std::string_view name, std::string_view value,
               std::string_view unit, std::string_view device) const;
  EngineLog& log_;
};

bool read_vllm_line(const LogLine& line, FactSink& sink);
bool read_vllm_metrics_line(const LogLine& line, FactSink& sink);
bool read_llamacpp_line(const LogLine& line, FactSink& sink);
bool read_ollama_line(const LogLine& line, FactSink& sink);
bool read_sglang_line(const LogLine& line, FactSink& sink);
bool read_trtllm_line(const LogLine& line, FactSink& sink);

}  // namespace kvplan::logs
