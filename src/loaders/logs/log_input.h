#pragma once
// A log's bytes, bounded: a regular file (a FIFO would block, a device never ends) or a stream
// (stdin), read up to kMaxLogBytes. A longer log is not refused: its start holds the startup lines.

#include <iosfwd>
#include <string>

namespace kvplan::logs {

struct LogText {
  std::string text;
  bool cut = false;  ///< more than kMaxLogBytes: the rest was not read
};

/// Throws Error (exit 2) for a missing path, a directory, a non-regular file or a read error.
LogText read_log_file(const std::string& path);
/// Reads until end of stream or kMaxLogBytes; Error on a read error.
LogText read_log_stream(std::istream& in);

}  // namespace kvplan::logs
