#include "core/quant/matrix_conversion.h"

#include <algorithm>

#include "kernels/cpu/quantize.h"
#include "kernels/cpu/thread_pool.h"

namespace inferscope {
namespace {

constexpr int64_t kSliceElements = int64_t{1} << 20;  // progress and cancel are checked this often
constexpr int64_t kChunkElements = int64_t{1} << 14;  // at least this much work per parallel chunk

void check_convertible(const MatrixConversion& c) {
  const auto bad = [&](const std::string& problem) {
    throw std::invalid_argument("tensor '" + c.name + "': " + problem);
  };
  const DTypeInfo& src = dtype_info(c.source.type);
  if (!src.can_load) bad("type " + std::string(src.name) + " cannot be dequantized");
  if (!can_quantize(c.target)) bad("type " + std::string(dtype_name(c.target)) + " cannot be written");
  if (c.source.cols % src.block_size != 0 || c.source.cols % dtype_info(c.target).block_size != 0) {
    bad("rows of " + std::to_string(c.source.cols) + " elements are not whole blocks of " +
        std::string(src.name) + " and " + std::string(dtype_name(c.target)));
  }
}

}  // namespace

std::vector<std::vector<uint8_t>> convert_matrices(std::span<const MatrixConversion> conversions, ThreadPool& pool,
                                                   const ConversionControl& control) {
  int64_t total = 0;
  for (const MatrixConversion& c : conversions) {
    check_convertible(c);
    total += c.source.rows * c.source.cols;
  }
  const auto cancelled = [&] { return control.cancel != nullptr && control.cancel->load(); };
  const auto report = [&](int64_t done, const std::string& tensor) {
    if (control.on_progress) control.on_progress(total > 0 ? static_cast<double>(done) / total : 1.0, tensor);
  };

  std::vector<std::vector<uint8_t>> out;
  int64_t done = 0;
  for (const MatrixConversion& c : conversions) {
    const MatrixRef& src = c.source;
    const size_t dst_stride = row_bytes(c.target, src.cols);
    out.emplace_back(dst_stride * static_cast<size_t>(src.rows));
    uint8_t* dst = out.back().data();
    // Slices of rows between progress reports; inside a slice, rows run in parallel.
    const int64_t slice_rows = std::max<int64_t>(1, kSliceElements / std::max<int64_t>(1, src.cols));
    const int64_t grain = std::max<int64_t>(1, kChunkElements / std::max<int64_t>(1, src.cols));
    for (int64_t r0 = 0; r0 < src.rows; r0 += slice_rows) {
      if (cancelled()) throw ConversionCancelled();
      const int64_t n = std::min(slice_rows, src.rows - r0);
      pool.parallel_for(n, grain, [&](int64_t begin, int64_t end) {
        std::vector<float> row(static_cast<size_t>(src.cols));
        for (int64_t r = r0 + begin; r < r0 + end; ++r) {
          dequantize_row(src.type, static_cast<const uint8_t*>(src.data) + src.row_stride * r, row.data(), src.cols);
          quantize_row(c.target, row.data(), dst + dst_stride * r, src.cols);
        }
      });
      done += n * src.cols;
      report(done, c.name);
    }
  }
  if (cancelled()) throw ConversionCancelled();
  if (total == 0) report(0, "");
  return out;
}

}  // namespace inferscope
