#include "cli/huge_heap.h"

#if KVPLAN_HUGE_HEAP
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#endif

namespace kvplan {

#if KVPLAN_HUGE_HEAP

namespace {

constexpr std::uintptr_t kHugePage = std::uintptr_t{2} << 20;
/// The heap's room on huge pages: `kvplan fit` under Ollama peaks near 3.3 MiB. Past it the heap
/// grows on 4 KiB pages as before (a brk extension does not inherit the advice).
constexpr int kPad = 8 << 20;
/// Larger than anything kvplan allocates at once, so that its large vectors and strings come from
/// the heap too: above glibc's 128 KiB default each was a mapping of its own, faulted page by page.
constexpr int kMmapThreshold = 32 << 20;
/// glibc's default M_MMAP_MAX (DEFAULT_MMAP_MAX), restored after the growth.
constexpr int kGlibcMmapMax = 65536;
/// MADV_COLLAPSE (Linux 6.1), which older headers lack: an older kernel refuses it, harmlessly.
constexpr int kMadviseCollapse = 25;

}  // namespace

bool back_heap_with_huge_pages() {
  // The break on a 2 MiB boundary: glibc takes memory the program moved the break past as a
  // "foreign sbrk" and starts its next region at the new break, so the heap's top then begins
  // where a huge page can.
  const auto end = reinterpret_cast<std::uintptr_t>(sbrk(0));
  const std::uintptr_t aligned = (end + kHugePage - 1) & ~(kHugePage - 1);
  if (sbrk(static_cast<std::intptr_t>(aligned - end)) == reinterpret_cast<void*>(-1)) return false;
  if (mallopt(M_TOP_PAD, kPad) != 1 || mallopt(M_MMAP_THRESHOLD, kMmapThreshold) != 1) return false;
  // A request larger than all the free memory glibc holds (its bins and its top chunk) makes it
  // grow the heap now, by the pad; with mappings off for the call, whatever its size. (In a fresh
  // process that is a few pages; a long-running one, such as the test binary, holds more.)
  const std::size_t free_bytes = mallinfo2().fordblks;
  if (mallopt(M_MMAP_MAX, 0) != 1) return false;
  void* grow = std::malloc(free_bytes + 4096);
  (void)mallopt(M_MMAP_MAX, kGlibcMmapMax);
  if (!grow) return false;
  const auto grown = reinterpret_cast<std::uintptr_t>(sbrk(0));
  bool advised = false;
  if (grown > aligned + kHugePage) {
    const std::size_t span = (grown - aligned) & ~(kHugePage - 1);
    advised = madvise(reinterpret_cast<void*>(aligned), span, MADV_HUGEPAGE) == 0;
    // glibc wrote its headers into the first block before the advice: its few 4 KiB pages would
    // keep the whole block on 4 KiB pages.
    if (advised) (void)madvise(reinterpret_cast<void*>(aligned), kHugePage, kMadviseCollapse);
  }
  std::free(grow);
  return advised;
}

#else

bool back_heap_with_huge_pages() { return false; }

#endif

}  // namespace kvplan
