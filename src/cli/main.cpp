// kvplan's executable: the library plus this trampoline.

#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "cli/cli.h"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  const kvplan::Terminal terminal{isatty(STDOUT_FILENO) == 1, std::getenv("NO_COLOR") != nullptr};
  return kvplan::run_cli(argc, argv, std::cout, std::cerr, terminal);
}
