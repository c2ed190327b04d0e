// Packed weight rows lie in large pages: allocations of 2 MiB or more are 2 MiB-aligned and their
// mapping carries the huge-page advice (the "hg" flag of /proc/self/smaps) wherever the kernel has
// transparent huge pages; smaller ones are ordinary memory.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "kernels/cpu/large_pages.h"
#include "kernels/cpu/matmul/packed_rows.h"
#include "kernels/format/quant_blocks.h"

namespace inferscope {
namespace {

// The line of /proc/self/smaps that starts with `field` in the mapping that holds p ("" when none does).
std::string smaps_line_at(const void* p, const std::string& field) {
  std::ifstream smaps("/proc/self/smaps");
  const auto addr = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    uintptr_t start = 0, end = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> start >> dash >> end && dash == '-') {
      inside = start <= addr && addr < end;
    } else if (inside && line.rfind(field, 0) == 0) {
      return line;
    }
  }
  return "";
}

std::string vm_flags_at(const void* p) { return smaps_line_at(p, "VmFlags:"); }

// The resident kilobytes of the mapping that holds p.
int64_t resident_kib_at(const void* p) {
  std::istringstream line(smaps_line_at(p, "Rss:"));
  std::string field;
  int64_t kib = -1;
  line >> field >> kib;
  return kib;
}

bool kernel_has_transparent_huge_pages() {
  return std::filesystem::exists("/sys/kernel/mm/transparent_hugepage/enabled");
}

bool advised_huge(const void* p) { return (vm_flags_at(p) + " ").find(" hg ") != std::string::npos; }

TEST(LargePages, ABigAllocationIsAlignedToTwoMebibytesAndAdvisedHuge) {
  LargePageBytes bytes(3 * kLargePageBytes + 123, 7);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(bytes.data()) % kLargePageBytes, 0u);
  EXPECT_EQ(bytes.back(), 7);
  ASSERT_NE(vm_flags_at(bytes.data()), "") << "no mapping in /proc/self/smaps holds the allocation";
  EXPECT_EQ(advised_huge(bytes.data()), kernel_has_transparent_huge_pages()) << vm_flags_at(bytes.data());
}

// A sized allocation is not written before the packer writes it: its pages stay untouched.
TEST(LargePages, SizingLeavesTheBytesUntouched) {
  const size_t size = 32 * kLargePageBytes;
  LargePageBytes bytes(size);
  const int64_t resident = resident_kib_at(bytes.data());
  ASSERT_GE(resident, 0) << "no Rss line for the allocation in /proc/self/smaps";
  EXPECT_LT(resident, static_cast<int64_t>(size / 1024 / 4)) << "KiB resident of " << size / 1024;
}

TEST(LargePages, ASmallAllocationIsOrdinaryMemory) {
  LargePageBytes bytes(kLargePageBytes - 1, 3);
  EXPECT_EQ(bytes.front(), 3);
  EXPECT_FALSE(advised_huge(bytes.data())) << vm_flags_at(bytes.data());
}

TEST(LargePages, PackedRowsOfABigMatrixLieInLargePages) {
  // 1024 rows of 2048 Q8_0 weights: 2.1 MiB packed
  const int64_t rows = 1024, cols = 2048;
  const size_t row_bytes = static_cast<size_t>(cols) / QK8_0 * sizeof(BlockQ8_0);
  std::vector<uint8_t> file(rows * row_bytes, 0);
  const MatrixRef w{DType::Q8_0, file.data(), rows, cols, row_bytes};
  const LargePageBytes packed = pack_rows(w);
  ASSERT_GE(packed.size(), kLargePageBytes);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(packed.data()) % kLargePageBytes, 0u);
  EXPECT_EQ(advised_huge(packed.data()), kernel_has_transparent_huge_pages()) << vm_flags_at(packed.data());
}

// The description follows the kernel's mode: 2 MiB pages under always or madvise, 4 KiB otherwise.
TEST(LargePages, TheDescriptionNamesTheKernelsMode) {
  const std::string mode = transparent_huge_pages_mode();
  const std::string text = describe_large_pages();
  if (mode == "always" || mode == "madvise") {
    EXPECT_EQ(text, "2 MiB pages where the kernel has them free (transparent huge pages: " + mode + ")");
  } else {
    EXPECT_EQ(text.rfind("4 KiB pages (", 0), 0u) << text;
  }
  EXPECT_EQ(mode.empty(), !kernel_has_transparent_huge_pages());
}

}  // namespace
}  // namespace inferscope
