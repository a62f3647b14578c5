// Times several commands side by side, run in turn (A B C A B C ...) so that a busy machine slows
// them alike, and prints each one's median and its ratio to the first. kvplan's start-up target is
// at most 1.3x of /bin/true (issue #10). Beside the wall time (fork + exec + exit, what the target
// is about), the child's own CPU time (user + system from wait4, exec to exit): on a machine other
// builds keep busy, the wall time of a longer process grows with every preemption, its CPU time
// much less.
// Usage: kvplan_startup_bench [runs] -- <command A...> -- <command B...> [-- ...]
// A benchmark prints figures; it never passes or fails.

#include <sys/resource.h>
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

struct Times {
  double wall_ms = 0;
  double cpu_ms = 0;
};

double milliseconds(const timeval& t) { return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_usec) / 1e3; }

Times run_once(const std::vector<char*>& command) {
  const auto start = std::chrono::steady_clock::now();
  const pid_t child = fork();
  if (child == 0) {
    const int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, STDOUT_FILENO);
    execv(command[0], command.data());
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  wait4(child, &status, 0, &usage);
  const auto end = std::chrono::steady_clock::now();
  if (!WIFEXITED(status) || WEXITSTATUS(status) > 1) {
    std::fprintf(stderr, "kvplan_startup_bench: '%s' failed (status %d)\n", command[0], status);
    std::exit(2);
  }
  return {std::chrono::duration<double, std::milli>(end - start).count(),
          milliseconds(usage.ru_utime) + milliseconds(usage.ru_stime)};
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
  std::vector<std::vector<double>> wall(commands.size());
  std::vector<std::vector<double>> cpu(commands.size());
  for (const auto& command : commands) run_once(command);  // warm the page cache
  for (int i = 0; i < runs; ++i)
    for (std::size_t c = 0; c < commands.size(); ++c) {
      const Times t = run_once(commands[c]);
      wall[c].push_back(t.wall_ms);
      cpu[c].push_back(t.cpu_ms);
    }
  const double wall_base = median(wall[0]);
  const double cpu_base = median(cpu[0]);
  std::printf("%d runs each, interleaved; medians of the wall time and of the child's CPU time, each with its ratio to the first\n", runs);
  std::printf("  %9s  %6s  %9s  %6s\n", "wall", "", "cpu", "");
  for (std::size_t c = 0; c < commands.size(); ++c) {
    std::string label;
    for (char* const* word = commands[c].data(); *word; ++word) label += (label.empty() ? "" : " ") + std::string(*word);
    std::printf("  %6.3f ms  %5.2fx  %6.3f ms  %5.2fx  %s\n", median(wall[c]), median(wall[c]) / wall_base,
                median(cpu[c]), cpu_base > 0 ? median(cpu[c]) / cpu_base : 0.0, label.c_str());
  }
  return 0;
}
