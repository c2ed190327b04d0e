#include "kernels/cpu/large_pages.h"

#include <cstdlib>
#include <fstream>
#include <new>

#include "kernels/cpu/cpu_features.h"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace inferscope {
namespace {

constexpr std::align_val_t kSmallAlign{64};

}  // namespace

bool huge_pages_requested() {
  static const bool requested = !env_is_one("INFERSCOPE_NO_HUGE_PAGES");
  return requested;
}

void* allocate_large_page_bytes(size_t bytes) {
  if (bytes < kLargePageBytes) return ::operator new(bytes, kSmallAlign);
  // aligned_alloc wants a multiple of the alignment
  const size_t rounded = (bytes + kLargePageBytes - 1) / kLargePageBytes * kLargePageBytes;
  void* p = std::aligned_alloc(kLargePageBytes, rounded);
  if (p == nullptr) throw std::bad_alloc();
#if defined(__linux__)
  // advice only: a kernel without transparent huge pages (or with them off) leaves 4 KiB pages
  if (huge_pages_requested()) madvise(p, rounded, MADV_HUGEPAGE);
#endif
  return p;
}

void free_large_page_bytes(void* p, size_t bytes) {
  if (bytes < kLargePageBytes) ::operator delete(p, kSmallAlign);
  else std::free(p);
}

std::string transparent_huge_pages_mode() {
  std::ifstream file("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  std::getline(file, modes);
  const size_t open = modes.find('['), close = modes.find(']');
  return open == std::string::npos || close < open ? "" : modes.substr(open + 1, close - open - 1);
}

std::string describe_large_pages() {
  if (!huge_pages_requested()) return "4 KiB pages (INFERSCOPE_NO_HUGE_PAGES=1)";
  const std::string mode = transparent_huge_pages_mode();
  if (mode.empty()) return "4 KiB pages (this kernel has no transparent huge pages)";
  if (mode == "never") return "4 KiB pages (transparent huge pages are off: never)";
  return "2 MiB pages where the kernel has them free (transparent huge pages: " + mode + ")";
}

}  // namespace inferscope
