// Memory for bytes streamed at every token (the packed weight rows): an allocation of 2 MiB or more
// is 2 MiB-aligned and asked to be backed by transparent huge pages (Linux madvise MADV_HUGEPAGE), so
// the stream crosses a page 512 times less often: fewer TLB misses and page walks, and prefetchers
// that stop at page boundaries keep going. Where the kernel gives no huge pages it is ordinary memory.
#pragma once
#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <vector>

namespace inferscope {

constexpr size_t kLargePageBytes = size_t{2} << 20;

// Allocates `bytes` (>= kLargePageBytes) 2 MiB-aligned and advises huge pages; nullptr on failure.
void* allocate_large_pages(size_t bytes);
void free_large_pages(void* p);
// Whether large-page allocations ask for huge pages: not when INFERSCOPE_NO_HUGE_PAGES=1 (for
// before/after measurements).
bool huge_pages_requested();
// The kernel's transparent-huge-page mode (the bracketed word of
// /sys/kernel/mm/transparent_hugepage/enabled: always, madvise or never), "" without that file.
std::string transparent_huge_pages_mode();
// One line for `devices`: what pages the packed weight rows get here, and why.
std::string describe_large_pages();

template <class T>
struct LargePageAllocator {
  using value_type = T;
  LargePageAllocator() = default;
  template <class U>
  LargePageAllocator(const LargePageAllocator<U>&) {}

  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kLargePageBytes) return static_cast<T*>(::operator new(bytes));
    void* p = allocate_large_pages(bytes);
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) {
    if (n * sizeof(T) < kLargePageBytes) ::operator delete(p);
    else free_large_pages(p);
  }
  template <class U>
  bool operator==(const LargePageAllocator<U>&) const { return true; }
};

// Bytes in large pages where big enough (packed weight rows).
using LargePageBytes = std::vector<uint8_t, LargePageAllocator<uint8_t>>;

}  // namespace inferscope
