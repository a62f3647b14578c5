#pragma once
// Shared by the libFuzzer targets: what counts as a finding beyond a crash or a sanitizer report.
// A kvplan::Error is the expected answer to a bad input; any other exception escaping a parser,
// or a broken invariant, aborts so that libFuzzer records the input.

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "kvplan/plan.h"
#include "kvplan/error.h"

namespace kvplan::fuzz {

[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "kvplan fuzz finding: %s\n", what.c_str());
  std::abort();
}

inline void require(bool condition, const std::string& what) {
  if (!condition) finding(what);
}

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// An error message says something.
inline void require_message(std::string_view message, std::string_view where) {
  require(!message.empty(), std::string(where) + ": empty error message");
}

/// A message that must be one line even before the CLI joins lines: the GGUF reader renders
/// everything it quotes from a file with printable().
inline void require_one_line(std::string_view message, std::string_view where) {
  require(!message.empty(), std::string(where) + ": empty error message");
  require(message.find('\n') == std::string_view::npos, std::string(where) + ": multi-line error message: " +
                                                            std::string(message));
}

/// What a loader accepted must plan: one fp16 row at `ctx` on an 80 GiB card, failing (say, on a
/// product past 64 bits) only with a kvplan::Error that says something.
inline void require_plans(const ModelSpec& spec, std::uint64_t ctx) {
  RowSettings settings;
  const Dtype& fp16 = parse_kv_dtype("fp16", *spec.weight_dtype);
  settings.ctx = ctx;
  settings.cache = {&fp16, &fp16};
  settings.gpu_memory_bytes = 80ull << 30;
  try {
    (void)plan_row(spec, settings);
  } catch (const Error& error) {
    require_message(error.what(), "plan_row");
  }
}

/// The input as a file: one in-memory file (memfd) per process, rewritten for every input, and
/// its /proc path, which opens, stats and reads like a file on disk.
inline const std::string& write_memfd(const std::uint8_t* data, std::size_t size) {
  static const int fd = memfd_create("kvplan-fuzz-input", 0);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (fd < 0) finding("memfd_create failed");
  if (ftruncate(fd, 0) != 0) finding("ftruncate failed");
  std::size_t written = 0;
  while (written < size) {
    const ssize_t n = pwrite(fd, data + written, size - written, static_cast<off_t>(written));
    if (n <= 0) finding("pwrite failed");
    written += static_cast<std::size_t>(n);
  }
  return path;
}

}  // namespace kvplan::fuzz
