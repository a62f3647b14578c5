// Runs a kvplan command many times and prints its wall time, its process CPU time (user + system,
// the kernel's accounting of the finished child) and its peak resident memory.
// Usage: kvplan_cli_bench [runs] -- <kvplan binary> <arguments...>
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
#include <vector>

namespace {

struct Sample {
  double milliseconds;
  double cpu_milliseconds;
  long max_rss_kib;
};

double milliseconds_of(const timeval& t) { return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_usec) / 1e3; }

Sample run_once(char** command) {
  const auto start = std::chrono::steady_clock::now();
  const pid_t child = fork();
  if (child == 0) {
    const int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, STDOUT_FILENO);
    execv(command[0], command);
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  wait4(child, &status, 0, &usage);
  const auto end = std::chrono::steady_clock::now();
  if (!WIFEXITED(status) || WEXITSTATUS(status) > 1) {
    std::fprintf(stderr, "kvplan_cli_bench: the command failed (status %d)\n", status);
    std::exit(2);
  }
  return {std::chrono::duration<double, std::milli>(end - start).count(),
          milliseconds_of(usage.ru_utime) + milliseconds_of(usage.ru_stime), usage.ru_maxrss};
}

double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  return values[static_cast<std::size_t>(p * static_cast<double>(values.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 200;
  int first = 1;
  if (argc > 1 && std::strcmp(argv[1], "--") != 0) runs = std::max(1, std::atoi(argv[first++]));
  if (first < argc && std::strcmp(argv[first], "--") == 0) ++first;
  if (first >= argc) {
    std::fprintf(stderr, "usage: kvplan_cli_bench [runs] -- <kvplan binary> <arguments...>\n");
    return 2;
  }
  std::vector<double> times;
  std::vector<double> cpu_times;
  long max_rss = 0;
  run_once(argv + first);  // warm the page cache
  for (int i = 0; i < runs; ++i) {
    const Sample sample = run_once(argv + first);
    times.push_back(sample.milliseconds);
    cpu_times.push_back(sample.cpu_milliseconds);
    max_rss = std::max(max_rss, sample.max_rss_kib);
  }
  std::printf("runs            %d\n", runs);
  std::printf("wall median     %.2f ms\n", percentile(times, 0.5));
  std::printf("wall p90        %.2f ms\n", percentile(times, 0.9));
  std::printf("wall min        %.2f ms\n", percentile(times, 0.0));
  std::printf("CPU median      %.2f ms (user + system)\n", percentile(cpu_times, 0.5));
  std::printf("peak RSS (max)  %.2f MiB\n", static_cast<double>(max_rss) / 1024.0);
  return 0;
}
