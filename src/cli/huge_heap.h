#pragma once
// The executable's heap on 2 MiB pages. On the virtual machine kvplan is measured on, the first
// touch of each fresh 4 KiB page costs about 10 microseconds (docs/performance.md, tenth step):
// `kvplan fit` touched about 500 of them, a quarter of its process time. One transparent huge
// page covers 512 of them for one fault.

#include <cstdlib>  // glibc's <features.h>, which defines __GLIBC__ read below

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) || __has_feature(thread_sanitizer)
#define KVPLAN_SANITIZED_ALLOCATOR 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define KVPLAN_SANITIZED_ALLOCATOR 1
#endif
/// 1 where back_heap_with_huge_pages can act: Linux with glibc's allocator.
#if defined(__linux__) && defined(__GLIBC__) && !defined(KVPLAN_SANITIZED_ALLOCATOR)
#define KVPLAN_HUGE_HEAP 1
#else
#define KVPLAN_HUGE_HEAP 0
#endif

namespace kvplan {

/// Moves glibc's heap top to a 2 MiB boundary, grows it by 8 MiB of address space, and asks the
/// kernel for huge pages there (madvise MADV_HUGEPAGE; the one block glibc has already written
/// to is collapsed into one with MADV_COLLAPSE). Only what is touched is memory; the pad is
/// address space. Allocations of up to 32 MiB stay on that heap instead of getting mappings of
/// their own. A no-op where it cannot help or would get in the way: outside Linux with glibc,
/// under a sanitizer (its allocator is not glibc's), or when any step is refused (the heap then
/// stays on 4 KiB pages, as without the call). Call once, early in main, before any thread.
/// True when the kernel took the advice.
bool back_heap_with_huge_pages();

}  // namespace kvplan
