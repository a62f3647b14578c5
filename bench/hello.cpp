// The comparison for kvplan's start-up: a C++ hello world that links libstdc++ and libfmt
// dynamically, as most C++ tools on this machine do.

#include <fmt/format.h>

int main() {
  fmt::print("hello\n");
  return 0;
}
