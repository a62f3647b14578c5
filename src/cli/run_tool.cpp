#include "cli/run_tool.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "kvplan/error.h"

namespace kvplan {

namespace {

constexpr std::size_t kMaxOutput = 1 << 20;

/// Closes a descriptor when it goes out of scope.
class Descriptor {
 public:
  explicit Descriptor(int fd = -1) : fd_(fd) {}
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  ~Descriptor() { reset(); }
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

/// Waits for the child, killing it first when `kill_first`; returns its wait status.
int reap(pid_t child, bool kill_first) {
  if (kill_first) kill(child, SIGKILL);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace

std::optional<std::string> find_on_path(const std::string& name, const std::string& path) {
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t end = std::min(path.find(':', start), path.size());
    std::string directory = path.substr(start, end - start);
    start = end + 1;
    while (directory.size() > 1 && directory.back() == '/') directory.pop_back();
    if (directory.empty() || directory.front() != '/') continue;  // only absolute directories
    const std::string candidate = directory + "/" + name;
    struct stat info {};
    if (stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode) && access(candidate.c_str(), X_OK) == 0)
      return candidate;
  }
  return std::nullopt;
}

ToolResult run_tool(const std::string& program, const std::vector<std::string>& arguments, const std::string& path,
                    std::chrono::milliseconds limit) {
  const std::string shown = program.substr(program.rfind('/') + 1);
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) throw Error(fmt::format("cannot run {}: {}", shown, std::strerror(errno)));
  Descriptor read_end(pipe_fds[0]);
  Descriptor write_end(pipe_fds[1]);

  // Everything execve needs is built before fork: the child only duplicates descriptors and execs.
  std::vector<std::string> words{program};
  words.insert(words.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  std::string path_entry = "PATH=" + path;
  std::string locale_entry = "LC_ALL=C";
  char* envp[] = {path_entry.data(), locale_entry.data(), nullptr};

  const pid_t child = fork();
  if (child < 0) throw Error(fmt::format("cannot run {}: {}", shown, std::strerror(errno)));
  if (child == 0) {
    const int null_fd = open("/dev/null", O_RDWR);
    if (null_fd >= 0) {
      dup2(null_fd, STDIN_FILENO);
      dup2(write_end.get(), STDERR_FILENO);  // a failing tool explains itself on either stream
    }
    dup2(write_end.get(), STDOUT_FILENO);
    execve(program.c_str(), argv.data(), envp);
    _exit(127);
  }
  write_end.reset();

  ToolResult result;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  char buffer[4096];
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      reap(child, true);
      throw Error(fmt::format("{} did not answer within {} s (killed): give --gpu NAME", shown, limit.count() / 1000));
    }
    pollfd waiting{read_end.get(), POLLIN, 0};
    const int ready = poll(&waiting, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) continue;  // the deadline check above kills it
    const ssize_t n = read(read_end.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    result.output.append(buffer, static_cast<std::size_t>(n));
    if (result.output.size() > kMaxOutput) {
      reap(child, true);
      throw Error(fmt::format("{} printed more than 1 MiB: give --gpu NAME", shown));
    }
  }
  const int status = reap(child, false);
  if (WIFSIGNALED(status)) throw Error(fmt::format("{} was killed by signal {}: give --gpu NAME", shown, WTERMSIG(status)));
  result.exit_status = WEXITSTATUS(status);
  if (result.exit_status == 127 && result.output.empty())
    throw Error(fmt::format("cannot run {}: give --gpu NAME", program));
  return result;
}

}  // namespace kvplan
