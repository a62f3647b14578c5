#include "loaders/logs/log_input.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <istream>
#include <vector>

#include <fmt/format.h>

#include "kvplan/error.h"
#include "loaders/logs/engine_log.h"
#include "model/text.h"

namespace kvplan::logs {

LogText read_log_stream(std::istream& in) {
  LogText out;
  std::vector<char> buffer(64 * 1024);
  while (out.text.size() < kMaxLogBytes) {
    const std::size_t want = std::min(buffer.size(), kMaxLogBytes - out.text.size());
    in.read(buffer.data(), static_cast<std::streamsize>(want));
    const std::streamsize got = in.gcount();
    if (got <= 0) break;
    out.text.append(buffer.data(), static_cast<std::size_t>(got));
  }
  if (in.bad()) throw Error("the log cannot be read");
  // One more byte tells a log of exactly the limit from a longer one.
  if (out.text.size() >= kMaxLogBytes && in.good() && in.peek() != std::char_traits<char>::eof()) out.cut = true;
  return out;
}

LogText read_log_file(const std::string& path) {
  const std::string shown = printable(path, 200);
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) throw Error(fmt::format("{}: no such file", shown));
  if (std::filesystem::is_directory(status)) throw Error(fmt::format("{}: is a directory, expected a log file", shown));
  if (!std::filesystem::is_regular_file(status))
    throw Error(fmt::format("{}: is not a regular file (a pipe, socket or device); pipe it to 'kvplan explain -' instead",
                            shown));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot be read", shown));
  LogText out = read_log_stream(in);
  return out;
}

}  // namespace kvplan::logs
