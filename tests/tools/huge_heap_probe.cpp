// The executable's heap on 2 MiB pages (src/cli/huge_heap.cpp), checked in a fresh process as
// kvplan's main() calls it: first thing, before the heap holds much. After the call a block from
// the heap must lie in a mapping that starts on a 2 MiB boundary and that the kernel counts as
// eligible for transparent huge pages (/proc/self/smaps). Exit 0 when it does (or when the build
// or the kernel leaves nothing to check, said on stdout), 1 with the reason otherwise. ctest runs
// it as huge_heap.fresh_process. (A test inside the Catch2 binary would call it late, in a heap
// that hundreds of tests have used, which main() never does.)

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/huge_heap.h"

namespace {

#if KVPLAN_HUGE_HEAP
struct Mapping {
  bool found = false;
  std::uintptr_t start = 0;
  int thp_eligible = -1;
};

/// The smaps entry of the mapping holding `address`: its start and its THPeligible figure.
Mapping mapping_holding(std::uintptr_t address) {
  std::ifstream smaps("/proc/self/smaps");
  Mapping out;
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t from = 0, to = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> from >> dash >> to && dash == '-') {
      if (inside) break;  // the next mapping: the entry had no THPeligible line
      inside = from <= address && address < to;
      if (inside) out = {true, from, -1};
      continue;
    }
    if (inside && line.rfind("THPeligible:", 0) == 0) {
      out.thp_eligible = std::stoi(line.substr(12));
      break;
    }
  }
  return out;
}

bool huge_pages_disabled() {
  std::ifstream enabled("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string text;
  std::getline(enabled, text);
  return text.empty() || text.find("[never]") != std::string::npos;
}

#endif

int fail(const char* why) {
  std::printf("huge_heap_probe: FAILED: %s\n", why);
  return 1;
}

}  // namespace

int main() {
  const bool advised = kvplan::back_heap_with_huge_pages();
#if KVPLAN_HUGE_HEAP
  if (huge_pages_disabled()) {
    std::printf("huge_heap_probe: transparent huge pages are off on this kernel: nothing to check\n");
    return 0;
  }
  if (!advised) return fail("back_heap_with_huge_pages() returned false");
  std::vector<char> block(std::size_t{1} << 20, 1);  // 1 MiB, from the heap's new top
  const Mapping mapping = mapping_holding(reinterpret_cast<std::uintptr_t>(block.data()));
  if (!mapping.found) return fail("no mapping holds the block");
  if (mapping.start % (std::uintptr_t{2} << 20) != 0) return fail("the block's mapping does not start on a 2 MiB boundary");
  if (mapping.thp_eligible != 1) return fail("the block's mapping is not eligible for huge pages (THPeligible)");
  std::printf("huge_heap_probe: the heap's new top is advised onto 2 MiB pages\n");
#else
  // A sanitizer's allocator, or not glibc on Linux: the call changes nothing.
  if (advised) return fail("back_heap_with_huge_pages() acted in a build where it must not");
  std::printf("huge_heap_probe: not a glibc build without sanitizers: the call does nothing, as it must\n");
#endif
  return 0;
}
