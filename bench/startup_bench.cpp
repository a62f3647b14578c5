// Times several commands side by side, run in turn (A B C A B C ...) so that a busy machine slows
// them alike, and prints each one's median and its ratio to the first. kvplan's start-up target is
// at most 1.3x of /bin/true (issue #10).
// Usage: kvplan_startup_bench [runs] -- <command A...> -- <command B...> [-- ...]
// A benchmark prints figures; it never passes or fails.

#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

double run_once(const std::vector<char*>& command) {
  const auto start = std::chrono::steady_clock::now();
  const pid_t child = fork();
  if (child == 0) {
    const int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, STDOUT_FILENO);
    execv(command[0], command.data());
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  const auto end = std::chrono::steady_clock::now();
  if (!WIFEXITED(status) || WEXITSTATUS(status) > 1) {
    std::fprintf(stderr, "kvplan_startup_bench: '%s' failed (status %d)\n", command[0], status);
    std::exit(2);
  }
  return std::chrono::duration<double, std::milli>(end - start).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 300;
  int at = 1;
  if (at < argc && std::strcmp(argv[at], "--") != 0) runs = std::max(1, std::atoi(argv[at++]));
  std::vector<std::vector<char*>> commands;
  for (; at < argc; ++at) {
    if (std::strcmp(argv[at], "--") == 0) {
      commands.emplace_back();
      continue;
    }
    if (commands.empty()) commands.emplace_back();
    commands.back().push_back(argv[at]);
  }
  std::erase_if(commands, [](const std::vector<char*>& c) { return c.empty(); });
  if (commands.empty()) {
    std::fprintf(stderr, "usage: kvplan_startup_bench [runs] -- <command A...> -- <command B...>\n");
    return 2;
  }
  for (auto& command : commands) command.push_back(nullptr);
  std::vector<std::vector<double>> times(commands.size());
  for (const auto& command : commands) run_once(command);  // warm the page cache
  for (int i = 0; i < runs; ++i)
    for (std::size_t c = 0; c < commands.size(); ++c) times[c].push_back(run_once(commands[c]));
  const double base = median(times[0]);
  std::printf("%d runs each, interleaved; median wall time, and its ratio to the first\n", runs);
  for (std::size_t c = 0; c < commands.size(); ++c) {
    std::string label;
    for (char* const* word = commands[c].data(); *word; ++word) label += (label.empty() ? "" : " ") + std::string(*word);
    std::printf("  %7.3f ms  %5.2fx  %s\n", median(times[c]), median(times[c]) / base, label.c_str());
  }
  return 0;
}
