// The CUDA attention kernels (kernels/cuda/attention.h) against the CPU NaiveAttention on the same
// K/V: hand-built paged storage with shuffled block tables and NaN-filled spare blocks (a block read
// by mistake shows up as NaN), copied byte for byte to the device. Every kernel over head dims
// 64/128 (8 and 256 on a smaller grid), GQA 1..8, contexts 1..8192, block sizes 8/16/32 and a
// sliding window, NMSE <= 5e-4; split-K decode bitwise independent of the batch and of the number
// of query tokens. Tests that launch kernels skip, saying why, without a CUDA device; the planning
// checks (what is refused, scratch sizes) run everywhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/attention/naive_attention.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cuda/attention.h"
#include "kernels/cuda/cuda_check.h"
#include "tests/support/cuda_device.h"
#include "tests/support/hand_kv.h"

namespace inferscope {
namespace {

constexpr double kMaxNmse = 5e-4;

enum class Kernel { Naive, Flash, Decode, DecodeWide };

const char* kernel_name(Kernel kernel) {
  switch (kernel) {
    case Kernel::Naive: return "naive";
    case Kernel::Flash: return "flash";
    case Kernel::Decode: return "decode";
    case Kernel::DecodeWide: return "decode-wide";
  }
  return "?";
}

bool is_decode(Kernel kernel) { return kernel == Kernel::Decode || kernel == Kernel::DecodeWide; }

struct SeqSpec {
  int32_t n_q = 0, pos0 = 0;
  int32_t ctx() const { return pos0 + n_q; }
};

// One sequence on both sides: host queries and K/V (HandKv) and their device copies.
struct Seq {
  SeqSpec spec;
  std::vector<float> q;
  HandKv kv;
  test::DeviceBuffer<float> q_dev, out_dev;
  test::DeviceBuffer<uint8_t> k_dev, v_dev;
  test::DeviceBuffer<int32_t> table_dev;

  Seq(const AttentionShape& shape, DType dtype, int32_t block_size, SeqSpec s, std::mt19937& rng,
      const std::vector<float>& k, const std::vector<float>& v)
      : spec(s),
        q(random_values(static_cast<size_t>(s.n_q) * shape.n_heads * shape.head_dim, rng)),
        kv(shape, dtype, block_size, s.ctx(), k, v, rng),
        q_dev(q),
        out_dev(q.size()),
        k_dev(kv.k_storage()),
        v_dev(kv.v_storage()),
        table_dev(kv.block_table()) {}

  static std::vector<float> random_values(size_t n, std::mt19937& rng) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(n);
    for (float& e : x) e = normal(rng);
    return x;
  }

  gpu::DeviceAttentionSeq device() const {
    const KvView view = kv.view();
    return gpu::DeviceAttentionSeq{q_dev.get(), out_dev.get(), spec.n_q, spec.pos0,
                                    gpu::KvDeviceView{k_dev.get(), v_dev.get(), table_dev.get(),
                                                       view.length, view.block_size, view.block_stride, view.head_stride}};
  }
  std::vector<float> out() const {
    std::vector<float> host(q.size());
    INFERSCOPE_CUDA_CHECK(cudaMemcpy(host.data(), out_dev.get(), host.size() * sizeof(float), cudaMemcpyDeviceToHost));
    return host;
  }
};

// A sequence with fresh random K/V for its whole context.
std::unique_ptr<Seq> make_seq(const AttentionShape& shape, DType dtype, int32_t block_size, SeqSpec spec, std::mt19937& rng) {
  const size_t kv_floats = static_cast<size_t>(spec.ctx()) * shape.n_kv_heads * shape.head_dim;
  const std::vector<float> k = Seq::random_values(kv_floats, rng), v = Seq::random_values(kv_floats, rng);
  return std::make_unique<Seq>(shape, dtype, block_size, spec, rng, k, v);
}

gpu::DeviceAttentionShape device_shape(const AttentionShape& shape, DType dtype) {
  return gpu::DeviceAttentionShape{shape.n_heads, shape.n_kv_heads, shape.head_dim, shape.window, dtype};
}

// Runs `kernel` over the sequences (in this order) into their device outputs.
void run_cuda(Kernel kernel, const std::vector<const Seq*>& seqs, const AttentionShape& shape, DType dtype) {
  std::vector<gpu::DeviceAttentionSeq> batch;
  for (const Seq* s : seqs) batch.push_back(s->device());
  const gpu::DeviceAttentionShape dshape = device_shape(shape, dtype);
  using Scratch = size_t (*)(std::span<const gpu::DeviceAttentionSeq>, const gpu::DeviceAttentionShape&);
  using Run = void (*)(std::span<const gpu::DeviceAttentionSeq>, const gpu::DeviceAttentionShape&, void*, size_t, gpu::Stream);
  const Scratch scratch_bytes = kernel == Kernel::Naive   ? gpu::naive_attention_scratch_bytes
                                : kernel == Kernel::Flash ? gpu::flash_attention_scratch_bytes
                                                          : gpu::decode_attention_scratch_bytes;
  const Run run = kernel == Kernel::Naive    ? gpu::naive_attention
                  : kernel == Kernel::Flash  ? gpu::flash_attention
                  : kernel == Kernel::Decode ? gpu::decode_attention
                                             : gpu::decode_attention_wide;
  const size_t bytes = scratch_bytes(batch, dshape);
  test::DeviceBuffer<uint8_t> scratch(bytes);
  run(batch, dshape, scratch.get(), bytes, nullptr);
  INFERSCOPE_CUDA_CHECK(cudaDeviceSynchronize());
}

// The CPU NaiveAttention on the same host K/V.
std::vector<float> cpu_reference(const Seq& s, const AttentionShape& shape) {
  static ThreadPool pool(2);
  std::vector<float> out(s.q.size());
  const AttentionSeq seq{s.q.data(), out.data(), s.spec.n_q, s.spec.pos0, s.kv.view()};
  NaiveAttention().forward(std::span<const AttentionSeq>(&seq, 1), shape, pool);
  return out;
}

// sum (got - ref)^2 / sum ref^2; infinity for a NaN.
double nmse(const std::vector<float>& got, const std::vector<float>& ref) {
  double err = 0.0, norm = 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    err += (static_cast<double>(got[i]) - ref[i]) * (static_cast<double>(got[i]) - ref[i]);
    norm += static_cast<double>(ref[i]) * ref[i];
  }
  return std::isnan(err) ? INFINITY : err / norm;
}

bool same_bits(const float* a, const float* b, size_t n) { return std::memcmp(a, b, n * sizeof(float)) == 0; }

// Every kernel on one batch against the CPU: naive and flash on all of it, the two decode kernels on
// its sequences of 1..8 queries (in a batch of their own), the wide decode also bit for bit against
// the decode.
void expect_matches_cpu(const AttentionShape& shape, DType dtype, int32_t block_size, const std::vector<SeqSpec>& specs,
                        std::mt19937& rng) {
  std::vector<std::unique_ptr<Seq>> owned;
  std::vector<const Seq*> seqs, decodable;
  for (const SeqSpec& spec : specs) {
    owned.push_back(make_seq(shape, dtype, block_size, spec, rng));
    seqs.push_back(owned.back().get());
    if (spec.n_q >= 1 && spec.n_q <= gpu::kMaxDecodeQueries) decodable.push_back(owned.back().get());
  }
  std::map<const Seq*, std::vector<float>> want;  // the CPU's output of each sequence, computed once
  for (const Seq* s : seqs) want[s] = cpu_reference(*s, shape);
  std::vector<std::vector<float>> decoded;  // each decodable sequence's decode output
  for (Kernel kernel : {Kernel::Naive, Kernel::Flash, Kernel::Decode, Kernel::DecodeWide}) {
    const std::vector<const Seq*>& batch = is_decode(kernel) ? decodable : seqs;
    if (batch.empty()) continue;
    run_cuda(kernel, batch, shape, dtype);
    for (size_t i = 0; i < batch.size(); ++i) {
      const Seq* s = batch[i];
      const std::string what = std::string(kernel_name(kernel)) + " head_dim " + std::to_string(shape.head_dim) +
                               " heads " + std::to_string(shape.n_heads) + "/" + std::to_string(shape.n_kv_heads) +
                               " window " + std::to_string(shape.window) + " " + std::string(dtype_name(dtype)) + " block " +
                               std::to_string(block_size) + " n_q " + std::to_string(s->spec.n_q) + " pos0 " +
                               std::to_string(s->spec.pos0);
      if (kernel == Kernel::Decode) decoded.push_back(s->out());
      if (kernel == Kernel::DecodeWide) {
        EXPECT_TRUE(same_bits(s->out().data(), decoded[i].data(), decoded[i].size())) << what << ": not decode's bits";
      }
      EXPECT_LE(nmse(s->out(), want[s]), kMaxNmse) << what;
    }
  }
}

// GQA 3 as the demo model has it: 9 query heads over 3 KV heads.
AttentionShape gqa_shape(int32_t gqa, int32_t head_dim, int32_t window = 0) {
  const int32_t n_kv = gqa == 8 ? 1 : gqa == 3 ? 3 : 2;
  return AttentionShape{n_kv * gqa, n_kv, head_dim, window};
}

TEST(CudaAttention, MatchesCpuAcrossHeadDimsGqaBlockSizesAndContexts) {
  INFERSCOPE_SKIP_WITHOUT_CUDA_DEVICE();
  std::mt19937 rng(11);
  // decode at contexts 1 .. 8192 (one and several split chunks), verify-sized and prefill batches
  const std::vector<SeqSpec> specs = {{1, 0}, {1, 511}, {8, 1017}, {3, 4000}, {1, 8191}, {40, 0}, {70, 300}};
  for (int32_t head_dim : {64, 128}) {
    for (int32_t gqa : {1, 2, 3, 4, 8}) {
      for (int32_t block_size : {8, 16, 32}) {
        for (DType dtype : {DType::F16, DType::F32}) {
          expect_matches_cpu(gqa_shape(gqa, head_dim), dtype, block_size, specs, rng);
        }
      }
    }
  }
}

TEST(CudaAttention, MatchesCpuAtHeadDims8And256) {
  INFERSCOPE_SKIP_WITHOUT_CUDA_DEVICE();
  std::mt19937 rng(12);
  for (int32_t head_dim : {8, 256}) {
    for (int32_t gqa : {1, 4}) {
      expect_matches_cpu(gqa_shape(gqa, head_dim), DType::F16, 16, {{1, 0}, {2, 1500}, {33, 100}}, rng);
    }
  }
}

TEST(CudaAttention, SlidingWindowMatchesCpu) {
  INFERSCOPE_SKIP_WITHOUT_CUDA_DEVICE();
  std::mt19937 rng(13);
  for (int32_t window : {1, 100, 700}) {
    expect_matches_cpu(gqa_shape(2, 64, window), DType::F16, 16, {{1, 2000}, {8, 1300}, {50, 600}}, rng);
  }
}

// Decode: the same sequence alone and third in a batch of four, and its 8 query tokens at once against
// each of them alone: bitwise equal rows. The 8 tokens straddle the split boundary at 2048; at GQA 1
// they share one row tile (the early rows get an empty last split), at GQA 4 they fill two.
void expect_decode_rows_independent(const AttentionShape& shape, Kernel kernel, std::mt19937& rng) {
  const DType dtype = DType::F16;
  const SeqSpec verify{8, 2044};
  const size_t kv_floats = static_cast<size_t>(verify.ctx()) * shape.n_kv_heads * shape.head_dim;
  const std::vector<float> k = Seq::random_values(kv_floats, rng), v = Seq::random_values(kv_floats, rng);
  const Seq eight(shape, dtype, 16, verify, rng, k, v);
  run_cuda(kernel, {&eight}, shape, dtype);
  const std::vector<float> eight_out = eight.out();
  const size_t row = static_cast<size_t>(shape.n_heads) * shape.head_dim;
  std::unique_ptr<Seq> others[3] = {make_seq(shape, dtype, 8, {1, 9000}, rng), make_seq(shape, dtype, 32, {5, 30}, rng),
                                    make_seq(shape, dtype, 16, {2, 600}, rng)};
  for (int32_t i = 0; i < verify.n_q; ++i) {
    // token i alone, its cache up to its own position, in other (shuffled) blocks
    const Seq one(shape, dtype, 16, {1, verify.pos0 + i}, rng, k, v);
    run_cuda(kernel, {&one}, shape, dtype);
    const std::vector<float> alone = one.out();
    EXPECT_TRUE(same_bits(alone.data(), eight_out.data() + i * row, row))
        << kernel_name(kernel) << " GQA " << shape.n_heads / shape.n_kv_heads << " token " << i << ": 1 vs 8 queries";
    run_cuda(kernel, {others[0].get(), others[1].get(), &one, others[2].get()}, shape, dtype);
    EXPECT_TRUE(same_bits(alone.data(), one.out().data(), row))
        << kernel_name(kernel) << " GQA " << shape.n_heads / shape.n_kv_heads << " token " << i << ": alone vs in a batch of 4";
  }
}

TEST(CudaAttention, DecodeRowsAreBitwiseIndependentOfBatchAndQueryCount) {
  INFERSCOPE_SKIP_WITHOUT_CUDA_DEVICE();
  std::mt19937 rng(14);
  for (Kernel kernel : {Kernel::Decode, Kernel::DecodeWide}) {
    for (int32_t gqa : {1, 4}) expect_decode_rows_independent(gqa_shape(gqa, 128), kernel, rng);
  }
}

// K/V rows that are not 16-byte aligned (the pools two bytes into their allocations): the wide decode
// reads them element by element and still gives decode's bits.
TEST(CudaAttention, WideDecodeReadsUnalignedRowsAsDecodeDoes) {
  INFERSCOPE_SKIP_WITHOUT_CUDA_DEVICE();
  std::mt19937 rng(15);
  const AttentionShape shape = gqa_shape(4, 64);
  const DType dtype = DType::F16;
  const std::unique_ptr<Seq> seq = make_seq(shape, dtype, 16, {3, 700}, rng);
  run_cuda(Kernel::Decode, {seq.get()}, shape, dtype);
  const std::vector<float> want = seq->out();
  const auto shifted = [](std::span<const uint8_t> storage) {
    std::vector<uint8_t> bytes(storage.size() + 2);
    std::copy(storage.begin(), storage.end(), bytes.begin() + 2);
    return bytes;
  };
  const test::DeviceBuffer<uint8_t> k_dev(shifted(seq->kv.k_storage())), v_dev(shifted(seq->kv.v_storage()));
  gpu::DeviceAttentionSeq unaligned = seq->device();
  unaligned.kv.k_base = k_dev.get() + 2;
  unaligned.kv.v_base = v_dev.get() + 2;
  const gpu::DeviceAttentionShape dshape = device_shape(shape, dtype);
  const std::vector<gpu::DeviceAttentionSeq> batch = {unaligned};
  const size_t bytes = gpu::decode_attention_scratch_bytes(batch, dshape);
  test::DeviceBuffer<uint8_t> scratch(bytes);
  INFERSCOPE_CUDA_CHECK(cudaMemset(seq->out_dev.get(), 0, want.size() * sizeof(float)));
  gpu::decode_attention_wide(batch, dshape, scratch.get(), bytes, nullptr);
  INFERSCOPE_CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(same_bits(seq->out().data(), want.data(), want.size()));
}

// Planning runs on the host, so what is refused and how much scratch is needed are checked everywhere.
gpu::DeviceAttentionSeq host_only_seq(int32_t n_q, int32_t pos0, int32_t length) {
  return gpu::DeviceAttentionSeq{nullptr, nullptr, n_q, pos0, gpu::KvDeviceView{nullptr, nullptr, nullptr, length, 16, 0, 0}};
}

template <typename Call>
std::string error_of(Call call) {
  try {
    call();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(CudaAttentionPlan, RefusesWhatItCannotRunByName) {
  const std::vector<gpu::DeviceAttentionSeq> one = {host_only_seq(1, 10, 11)};
  EXPECT_NE(error_of([&] { gpu::flash_attention_scratch_bytes(one, {8, 2, 64, 0, DType::Q8_0}); }).find("q8_0"), std::string::npos);
  EXPECT_NE(error_of([&] { gpu::naive_attention_scratch_bytes(one, {8, 2, 96, 0, DType::F16}); }).find("head_dim 96"), std::string::npos);
  EXPECT_NE(error_of([&] { gpu::naive_attention_scratch_bytes(one, {6, 4, 64, 0, DType::F16}); }).find("n_kv_heads 4"), std::string::npos);
  const std::vector<gpu::DeviceAttentionSeq> nine = {host_only_seq(9, 0, 9)};
  EXPECT_NE(error_of([&] { gpu::decode_attention_scratch_bytes(nine, {8, 2, 64, 0, DType::F16}); }).find("9 queries"), std::string::npos);
  const std::vector<gpu::DeviceAttentionSeq> past = {host_only_seq(4, 10, 12)};
  EXPECT_NE(error_of([&] { gpu::flash_attention_scratch_bytes(past, {8, 2, 64, 0, DType::F16}); }).find("holds 12 tokens"), std::string::npos);
}

TEST(CudaAttentionPlan, NaiveScratchGrowsWithQueriesTimesContextFlashDoesNot) {
  const gpu::DeviceAttentionShape shape{8, 2, 64, 0, DType::F16};
  const std::vector<gpu::DeviceAttentionSeq> small = {host_only_seq(64, 0, 64)}, large = {host_only_seq(1024, 0, 1024)};
  const size_t naive_small = gpu::naive_attention_scratch_bytes(small, shape);
  const size_t naive_large = gpu::naive_attention_scratch_bytes(large, shape);
  // scores: n_q x n_heads x context floats
  EXPECT_GE(naive_large, size_t{1024} * 8 * 1024 * sizeof(float));
  EXPECT_GT(naive_large, 200 * naive_small);
  // flash holds work items only: linear in the queries, far below the score matrix
  EXPECT_LT(gpu::flash_attention_scratch_bytes(large, shape), naive_large / 100);
}

TEST(CudaAttentionPlan, DecodeScratchDependsOnEachSequenceAlone) {
  const gpu::DeviceAttentionShape shape{8, 2, 64, 0, DType::F16};
  const auto bytes = [&](std::vector<gpu::DeviceAttentionSeq> seqs) { return gpu::decode_attention_scratch_bytes(seqs, shape); };
  // a split chunk more every kDecodeSplitKeys positions
  EXPECT_EQ(bytes({host_only_seq(1, 511, 512)}), bytes({host_only_seq(1, 0, 1)}));
  EXPECT_GT(bytes({host_only_seq(1, 512, 513)}), bytes({host_only_seq(1, 511, 512)}));
}

}  // namespace
}  // namespace inferscope
