// Memory for bytes streamed at every token (the packed weight rows): an allocation of 2 MiB or more
// is 2 MiB-aligned and asked to be backed by transparent huge pages (Linux madvise MADV_HUGEPAGE), so
// the stream crosses a page 512 times less often: fewer TLB misses and page walks, and prefetchers
// that stop at page boundaries keep going. Where the kernel gives no huge pages it is ordinary
// memory. Smaller allocations are ordinary, 64-byte aligned.
#pragma once
#include <cstddef>
#include <new>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace inferscope {

constexpr size_t kLargePageBytes = size_t{2} << 20;

// `bytes` of uninitialised memory as above (throws std::bad_alloc); free_large_page_bytes takes the
// same size back.
void* allocate_large_page_bytes(size_t bytes);
void free_large_page_bytes(void* p, size_t bytes);
// Whether large allocations ask for huge pages: not when INFERSCOPE_NO_HUGE_PAGES=1 (for
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
  T* allocate(size_t n) { return static_cast<T*>(allocate_large_page_bytes(n * sizeof(T))); }
  void deallocate(T* p, size_t n) { free_large_page_bytes(p, n * sizeof(T)); }
  // A sized vector's elements are default-initialised, so left as they are: its bytes are written
  // over at once (packed), and zeroing them first would write them twice.
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  template <class U>
  bool operator==(const LargePageAllocator<U>&) const { return true; }
};

// Bytes in large pages where big enough, uninitialised until written (packed weight rows).
using LargePageBytes = std::vector<uint8_t, LargePageAllocator<uint8_t>>;

}  // namespace inferscope
