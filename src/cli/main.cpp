// kvplan's executable: the library plus this trampoline.

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>

#include "cli/cli.h"
#include "cli/headline_fast_path.h"
#include "cli/huge_heap.h"

namespace {

/// The terminal's width, so that the table's long lines wrap where the terminal would; 100 when a
/// terminal does not say.
std::size_t terminal_columns() {
  winsize size{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 100;
}

}  // namespace

int main(int argc, char** argv) {
  kvplan::Terminal terminal;
  terminal.stdout_is_tty = isatty(STDOUT_FILENO) == 1;
  terminal.no_color_env = std::getenv("NO_COLOR") != nullptr;
  terminal.columns = terminal.stdout_is_tty ? terminal_columns() : 0;
  // The headline command's common forms skip CLI11's set-up (issue #10); any other line, or any
  // doubt, goes to run_cli. Tests compare the two on the same lines (headline_fast_path_test).
  if (const std::optional<int> code = kvplan::run_headline_fast_path(argc, argv, std::cout, std::cerr, terminal)) {
    // The report was written and flushed (write_output checks that), so the process ends here:
    // tearing down every static object (CLI11's validators, eleven copies) was 27 K instructions.
    std::fflush(nullptr);
    _exit(*code);
  }
  // Every other command allocates far more than the headline one (kvplan fit: 3.3 MiB, ~500 fresh
  // pages); the headline one touches too few for a huge page to pay (docs/performance.md).
  (void)kvplan::back_heap_with_huge_pages();
  // Unsynchronized streams get a buffer each, the six of them 120 KB of heap: 4 of the headline
  // command's page faults, and it writes its report in one piece, so only the other commands
  // (kvplan sweep writes rows by the million) unsynchronize.
  std::ios::sync_with_stdio(false);
  kvplan::Environment env;
  for (const std::string& name : kvplan::environment_names())
    if (const char* value = std::getenv(name.c_str())) env.variables[name] = value;
  return kvplan::run_cli(argc, argv, std::cout, std::cerr, terminal, env);
}
