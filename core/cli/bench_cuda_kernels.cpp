#include "core/cli/bench_cuda_kernels.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "kernels/format/dtype.h"
#include "kernels/cpu/quantize.h"
#include "kernels/cuda/attention.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/gemm.h"
#include "kernels/cuda/ops.h"
#include "kernels/cuda/q8_dot_element.h"

namespace inferscope {
namespace {

using gpu::DeviceBuffer;

constexpr size_t kCopyBytes = size_t{1} << 30;
// GEMV shapes: square, and few rows (fewer than the warp-rows kernel needs blocks to fill an H100's 132
// SMs), both beyond any L2: 151 / 75 MiB at Q4_0, 1 GiB / 512 MiB at F32
constexpr int64_t kGemvShapes[][2] = {{16384, 16384}, {1024, 131072}};
constexpr int32_t kHeads = 32, kKvHeads = 8, kHeadDim = 128, kBlockSize = 16, kSequences = 8;
constexpr int32_t kPrefillTokens = 2048;
constexpr const char* kDp4aKernel = "dp4a (q8 activations)";  // gpu::gemv_q8, quantization included
constexpr int64_t kGemmTokens = 512, kGemmRows = 8192, kGemmCols = 2048;  // a 1B model's FFN up, one prompt

// The median of `reps` timings (seconds) of `run` on the default stream, after one warm-up call.
double median_seconds(int32_t reps, const std::function<void()>& run) {
  cudaEvent_t start, stop;
  INFERSCOPE_CUDA_CHECK(cudaEventCreate(&start));
  INFERSCOPE_CUDA_CHECK(cudaEventCreate(&stop));
  run();
  std::vector<double> seconds;
  for (int32_t i = 0; i < reps; ++i) {
    INFERSCOPE_CUDA_CHECK(cudaEventRecord(start));
    run();
    INFERSCOPE_CUDA_CHECK(cudaEventRecord(stop));
    INFERSCOPE_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    INFERSCOPE_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    seconds.push_back(ms / 1e3);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::nth_element(seconds.begin(), seconds.begin() + seconds.size() / 2, seconds.end());
  return seconds[seconds.size() / 2];
}

std::vector<float> random_floats(size_t n, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

// A (rows, cols) matrix of `type` whose rows repeat 16 distinct random rows (quantizing every row of
// a 16k x 16k matrix would take longer than the benchmark).
std::vector<uint8_t> tiled_matrix(DType type, int64_t rows, int64_t cols, std::mt19937& rng) {
  const size_t stride = row_bytes(type, cols);
  constexpr int64_t kDistinct = 16;
  std::vector<uint8_t> distinct(kDistinct * stride);
  for (int64_t r = 0; r < kDistinct; ++r) {
    const std::vector<float> values = random_floats(static_cast<size_t>(cols), rng);
    quantize_row(type, values.data(), distinct.data() + r * stride, cols);
  }
  std::vector<uint8_t> out(static_cast<size_t>(rows) * stride);
  for (int64_t r = 0; r < rows; ++r) std::copy_n(distinct.data() + (r % kDistinct) * stride, stride, out.data() + r * stride);
  return out;
}

double copy_bandwidth(int32_t reps) {
  DeviceBuffer<uint8_t> from(kCopyBytes), to(kCopyBytes);
  INFERSCOPE_CUDA_CHECK(cudaMemset(from.get(), 1, kCopyBytes));
  const double s = median_seconds(reps, [&] {
    INFERSCOPE_CUDA_CHECK(cudaMemcpyAsync(to.get(), from.get(), kCopyBytes, cudaMemcpyDeviceToDevice));
  });
  return 2.0 * static_cast<double>(kCopyBytes) / s;
}

std::vector<GemvBenchRow> gemv_rows(int32_t reps, std::mt19937& rng) {
  std::vector<GemvBenchRow> rows;
  for (const auto& [n_rows, n_cols] : kGemvShapes) {
    for (DType type : {DType::F32, DType::F16, DType::Q8_0, DType::Q4_0, DType::Q4_1}) {
      const std::vector<uint8_t> host = tiled_matrix(type, n_rows, n_cols, rng);
      const DeviceBuffer<uint8_t> weights{std::span<const uint8_t>(host)};
      const gpu::DeviceMatrix w{type, weights.get(), n_rows, n_cols, row_bytes(type, n_cols)};
      for (int32_t tokens : {int32_t{1}, static_cast<int32_t>(gpu::kGemvMaxTokens)}) {
        const DeviceBuffer<float> x{std::span<const float>(random_floats(static_cast<size_t>(tokens * n_cols), rng))};
        DeviceBuffer<float> y(static_cast<size_t>(tokens * n_rows));
        for (gpu::GemvKernel kernel : gpu::kGemvKernels) {
          const double s = median_seconds(reps, [&] { gpu::gemv(w, x.get(), tokens, y.get(), nullptr, kernel); });
          rows.push_back({std::string(dtype_name(type)), gpu::gemv_kernel_name(kernel), n_rows, n_cols, tokens,
                          host.size(), s});
        }
        if (gpu::gemv_q8_supported(type)) {
          // int8 activations: their quantization timed with the product, as a step pays both
          DeviceBuffer<uint8_t> xq(gpu::q8_activation_bytes(tokens, n_cols));
          const double s = median_seconds(reps, [&] {
            gpu::quantize_q8_activations(x.get(), tokens, n_cols, xq.get(), nullptr);
            gpu::gemv_q8(w, xq.get(), tokens, y.get(), nullptr);
          });
          rows.push_back({std::string(dtype_name(type)), kDp4aKernel, n_rows, n_cols, tokens, host.size(), s});
        }
      }
    }
  }
  return rows;
}

std::vector<GemmBenchRow> gemm_rows(int32_t reps, std::mt19937& rng) {
  const gpu::CublasHandle handle;
  const DeviceBuffer<float> x{std::span<const float>(random_floats(static_cast<size_t>(kGemmTokens * kGemmCols), rng))};
  DeviceBuffer<float> y(static_cast<size_t>(kGemmTokens * kGemmRows));
  std::vector<GemmBenchRow> rows;
  for (DType type : {DType::F32, DType::F16, DType::Q8_0, DType::Q4_0, DType::Q4_1}) {
    const std::vector<uint8_t> host = tiled_matrix(type, kGemmRows, kGemmCols, rng);
    const DeviceBuffer<uint8_t> weights{std::span<const uint8_t>(host)};
    const gpu::DeviceMatrix w{type, weights.get(), kGemmRows, kGemmCols, row_bytes(type, kGemmCols)};
    DeviceBuffer<uint8_t> scratch(gpu::gemm_scratch_bytes(w, kGemmTokens));
    const double s = median_seconds(reps, [&] {
      gpu::gemm(handle, w, x.get(), kGemmTokens, y.get(), scratch.get(), scratch.bytes(), nullptr);
    });
    rows.push_back({std::string(dtype_name(type)), static_cast<int32_t>(kGemmTokens), kGemmRows, kGemmCols, s});
  }
  return rows;
}

// FLOPs per second of a GEMM row: a multiply and an add per weight and token.
double gemm_flops_per_s(const GemmBenchRow& r) {
  return 2.0 * static_cast<double>(r.tokens) * static_cast<double>(r.rows) * static_cast<double>(r.cols) / r.seconds;
}

// kSequences sequences of `context` f16 K/V tokens in one paged pool, their blocks shuffled.
struct PagedBatch {
  PagedBatch(int32_t context, int32_t n_q, std::mt19937& rng)
      : blocks_per_seq((context + kBlockSize - 1) / kBlockSize),
        block_stride(static_cast<size_t>(kKvHeads) * kBlockSize * kHeadDim * sizeof(uint16_t)),
        k(static_cast<size_t>(kSequences) * blocks_per_seq * block_stride),
        v(k.size()),
        table(static_cast<size_t>(kSequences) * blocks_per_seq),
        q(static_cast<size_t>(kSequences) * n_q * kHeads * kHeadDim),
        out(q.size()) {
    INFERSCOPE_CUDA_CHECK(cudaMemset(k.get(), 0x3c, k.bytes()));  // f16 1.0 and its neighbours: finite
    INFERSCOPE_CUDA_CHECK(cudaMemset(v.get(), 0x3c, v.bytes()));
    std::vector<int32_t> ids(table.size());
    std::iota(ids.begin(), ids.end(), 0);
    std::shuffle(ids.begin(), ids.end(), rng);
    table.upload(ids);
    q.upload(random_floats(q.size(), rng));
    for (int32_t s = 0; s < kSequences; ++s) {
      const size_t q_offset = static_cast<size_t>(s) * n_q * kHeads * kHeadDim;
      const gpu::KvDeviceView view{k.get(), v.get(), table.get() + static_cast<size_t>(s) * blocks_per_seq, context,
                                   kBlockSize, block_stride, block_stride / kKvHeads};
      seqs.push_back({q.get() + q_offset, out.get() + q_offset, n_q, context - n_q, view});
    }
  }
  int32_t blocks_per_seq;
  size_t block_stride;
  DeviceBuffer<uint8_t> k, v;
  DeviceBuffer<int32_t> table;
  DeviceBuffer<float> q, out;
  std::vector<gpu::DeviceAttentionSeq> seqs;
};

const gpu::DeviceAttentionShape kShape{kHeads, kKvHeads, kHeadDim, 0, DType::F16};

using AttentionFn = void (*)(std::span<const gpu::DeviceAttentionSeq>, const gpu::DeviceAttentionShape&, void*, size_t,
                             gpu::Stream);
using ScratchFn = size_t (*)(std::span<const gpu::DeviceAttentionSeq>, const gpu::DeviceAttentionShape&);

// One attention call over `seqs` with its own scratch: (median seconds, scratch bytes).
std::pair<double, size_t> time_attention(int32_t reps, std::span<const gpu::DeviceAttentionSeq> seqs, AttentionFn run,
                                         ScratchFn scratch_bytes) {
  const size_t bytes = scratch_bytes(seqs, kShape);
  DeviceBuffer<uint8_t> scratch(bytes);
  const double s = median_seconds(reps, [&] { run(seqs, kShape, scratch.get(), bytes, nullptr); });
  return {s, bytes};
}

}  // namespace

CudaKernelBench run_cuda_kernel_bench(int32_t reps) {
  if (const std::string& reason = gpu::device_unavailable_reason(); !reason.empty()) {
    throw std::runtime_error("bench --cuda-kernels: " + reason);
  }
  INFERSCOPE_CUDA_CHECK(cudaSetDevice(0));
  cudaDeviceProp prop{};
  INFERSCOPE_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  CudaKernelBench bench;
  bench.device = std::string(prop.name) + " (compute " + std::to_string(prop.major) + "." + std::to_string(prop.minor) + ")";
  std::mt19937 rng(1);
  bench.copy_bytes_per_s = copy_bandwidth(reps);
  bench.gemv = gemv_rows(reps, rng);
  bench.gemm = gemm_rows(reps, rng);
  for (int32_t context : {1024, 4096, 16384}) {
    const PagedBatch batch(context, 1, rng);
    const size_t kv_bytes = 2 * batch.k.bytes();  // every block of the pool belongs to some sequence
    const std::pair<const char*, AttentionFn> kernels[] = {{"tiles", gpu::decode_attention}, {"wide", gpu::decode_attention_wide}};
    for (const auto& [kernel, run] : kernels) {
      const auto [s, scratch] = time_attention(reps, batch.seqs, run, gpu::decode_attention_scratch_bytes);
      bench.decode_attention.push_back({context, kSequences, kernel, kv_bytes, s});
    }
  }
  const PagedBatch prefill(kPrefillTokens, kPrefillTokens, rng);
  const std::span<const gpu::DeviceAttentionSeq> one(prefill.seqs.data(), 1);
  bench.prefill_tokens = kPrefillTokens;
  std::tie(bench.flash_seconds, bench.flash_scratch_bytes) =
      time_attention(reps, one, gpu::flash_attention, gpu::flash_attention_scratch_bytes);
  std::tie(bench.naive_seconds, bench.naive_scratch_bytes) =
      time_attention(reps, one, gpu::naive_attention, gpu::naive_attention_scratch_bytes);
  return bench;
}

nlohmann::json cuda_kernel_bench_json(const CudaKernelBench& b) {
  const auto fraction = [&](double bytes_per_s) { return bytes_per_s / b.copy_bytes_per_s; };
  nlohmann::json gemv = nlohmann::json::array(), gemm = nlohmann::json::array(), decode = nlohmann::json::array();
  for (const GemvBenchRow& r : b.gemv) {
    const double bw = static_cast<double>(r.weight_bytes) / r.seconds;
    gemv.push_back({{"type", r.type}, {"kernel", r.kernel}, {"rows", r.rows}, {"cols", r.cols}, {"tokens", r.tokens},
                    {"weight_bytes", r.weight_bytes}, {"seconds", r.seconds}, {"bytes_per_s", bw},
                    {"of_copy", fraction(bw)}});
  }
  for (const GemmBenchRow& r : b.gemm) {
    gemm.push_back({{"type", r.type}, {"tokens", r.tokens}, {"rows", r.rows}, {"cols", r.cols}, {"seconds", r.seconds},
                    {"flops_per_s", gemm_flops_per_s(r)}});
  }
  for (const DecodeAttentionBenchRow& r : b.decode_attention) {
    const double bw = static_cast<double>(r.kv_bytes) / r.seconds;
    decode.push_back({{"context", r.context}, {"sequences", r.sequences}, {"kernel", r.kernel}, {"kv_bytes", r.kv_bytes},
                      {"seconds", r.seconds},
                      {"bytes_per_s", bw}, {"of_copy", fraction(bw)}});
  }
  return {{"device", b.device},
          {"copy_bytes_per_s", b.copy_bytes_per_s},
          {"gemv", gemv},
          {"gemm", gemm},
          {"decode_attention", decode},
          {"prefill_attention",
           {{"tokens", b.prefill_tokens}, {"flash_seconds", b.flash_seconds}, {"naive_seconds", b.naive_seconds},
            {"flash_scratch_bytes", b.flash_scratch_bytes}, {"naive_scratch_bytes", b.naive_scratch_bytes}}}};
}

std::string cuda_kernel_bench_markdown(const CudaKernelBench& b) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(1);
  const auto gb_s = [](double bytes_per_s) { return bytes_per_s / 1e9; };
  out << "device: " << b.device << "; device-to-device copy " << gb_s(b.copy_bytes_per_s) << " GB/s (read + write)\n\n";
  out << "| GEMV weights | matrix | kernel | tokens | GB/s | of copy |\n| --- | ---: | --- | ---: | ---: | ---: |\n";
  for (const GemvBenchRow& r : b.gemv) {
    const double bw = static_cast<double>(r.weight_bytes) / r.seconds;
    out << "| " << r.type << " | " << r.rows << " x " << r.cols << " | " << r.kernel << " | " << r.tokens << " | "
        << gb_s(bw) << " | " << 100 * bw / b.copy_bytes_per_s << " % |\n";
  }
  out << "\n| prefill GEMM (cuBLAS) weights | tokens | matrix | TFLOP/s |\n| --- | ---: | ---: | ---: |\n";
  for (const GemmBenchRow& r : b.gemm) {
    out << "| " << r.type << " | " << r.tokens << " | " << r.cols << " -> " << r.rows << " | " << gemm_flops_per_s(r) / 1e12
        << " |\n";
  }
  out << "\n| paged decode attention | kernel | sequences | GB/s (K/V read) | of copy |\n| --- | --- | ---: | ---: | ---: |\n";
  for (const DecodeAttentionBenchRow& r : b.decode_attention) {
    const double bw = static_cast<double>(r.kv_bytes) / r.seconds;
    out << "| context " << r.context << " | " << r.kernel << " | " << r.sequences << " | " << gb_s(bw) << " | "
        << 100 * bw / b.copy_bytes_per_s << " % |\n";
  }
  out << "\n| prefill attention, " << b.prefill_tokens << " tokens | ms | scratch MiB |\n| --- | ---: | ---: |\n";
  out << "| flash | " << b.flash_seconds * 1e3 << " | " << static_cast<double>(b.flash_scratch_bytes) / (1 << 20) << " |\n";
  out << "| naive | " << b.naive_seconds * 1e3 << " | " << static_cast<double>(b.naive_scratch_bytes) / (1 << 20) << " |\n";
  return out.str();
}

}  // namespace inferscope
