// The executable's heap on 2 MiB pages (src/cli/huge_heap.cpp): after the call, a block from the
// heap lies in a mapping that starts on a 2 MiB boundary and that the kernel counts as eligible
// for transparent huge pages (/proc/self/smaps). Run in this process, as main() runs it.

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "cli/huge_heap.h"

using namespace kvplan;

namespace {

/// The smaps entry of the mapping holding `address`: its start and its THPeligible figure.
struct HeapMapping {
  bool found = false;
  std::uintptr_t start = 0;
  int thp_eligible = -1;
};

HeapMapping mapping_holding(std::uintptr_t address) {
  std::ifstream smaps("/proc/self/smaps");
  HeapMapping out;
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

}  // namespace

TEST_CASE("the heap is advised onto huge pages from a 2 MiB boundary", "[huge_heap]") {
#if KVPLAN_HUGE_HEAP
  if (huge_pages_disabled()) {
    WARN("transparent huge pages are off on this kernel: nothing to check");
    return;
  }
  REQUIRE(back_heap_with_huge_pages());
  // Larger than any block this process freed before the call, so it comes from the new top.
  std::vector<char> block(std::size_t{6} << 20, 1);
  const HeapMapping mapping = mapping_holding(reinterpret_cast<std::uintptr_t>(block.data()));
  REQUIRE(mapping.found);
  CHECK(mapping.start % (std::uintptr_t{2} << 20) == 0);
  CHECK(mapping.thp_eligible == 1);
#else
  // A sanitizer's allocator, or not glibc on Linux: the call changes nothing.
  CHECK_FALSE(back_heap_with_huge_pages());
#endif
}
