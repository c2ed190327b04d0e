// Batch invariance (docs/ARCHITECTURE.md §3): a sequence's logits are bit-identical whichever other
// sequences share the step, however many threads run it, and however its prompt is chunked.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "core/attention/naive_attention.h"
#include "core/kv/kv_config.h"
#include "core/model/llama_forward.h"
#include "core/model/llama_model.h"
#include "kernels/cpu/thread_pool.h"
#include "tests/support/engine_runs.h"
#include "tests/support/synthetic_model.h"

namespace inferscope::test {
namespace {

constexpr int32_t kMaxSeqLen = 48;

// Ids 3.. of the synthetic vocabulary, varied by `salt` so sequences differ.
std::vector<TokenId> tokens(int n, int salt, int32_t vocab) {
  std::vector<TokenId> ids;
  for (int i = 0; i < n; ++i) ids.push_back(3 + (i * 7 + salt * 13) % (vocab - 3));
  return ids;
}

// One sequence of the mixed step: what it already holds, then what it brings to the step.
struct SeqPlan {
  SeqId seq;
  std::vector<TokenId> history;
  std::vector<TokenId> step;
  int64_t logits_rows;
};

// The three sequences of the mixed step: a fresh 7-token prefill, a decode after 5 tokens, and a
// 4-token prefill chunk after 3 tokens that asks for its last three positions' logits.
std::vector<SeqPlan> mixed_plans(int32_t vocab) {
  return {{10, {}, tokens(7, 1, vocab), 1},
          {11, tokens(5, 2, vocab), tokens(1, 3, vocab), 1},
          {12, tokens(3, 4, vocab), tokens(4, 5, vocab), 3}};
}

// The contiguous cache with room for every plan; the KV layout tests swap in paged ones.
KvConfig contiguous_room() { return KvConfig{.kind = KvKind::Contiguous, .max_seq_len = kMaxSeqLen}; }

// A model, a cache with room for every plan, and the forward pass over them.
class Harness {
 public:
  Harness(const LlamaModel& model, int threads, KvConfig kv = contiguous_room())
      : kv_(make_kv_cache(model.kv_geometry(DType::F16),
                          with_budget(kv, model.kv_geometry(DType::F16).bytes_per_token() * kMaxSeqLen * 4))),
        pool_(threads),
        forward_(model) {}

  // Runs one step of `batch` (allocating its cache room first); returns the logits.
  std::vector<float> run(const std::vector<BatchSeq>& batch) {
    for (const BatchSeq& b : batch) EXPECT_TRUE(kv_->allocate(b.seq, static_cast<int32_t>(b.tokens.size())));
    std::vector<float> logits;
    forward_.run(batch, *kv_, attention_, pool_, logits);
    return logits;
  }
  int32_t length(SeqId seq) const { return kv_->length(seq); }

 private:
  static KvConfig with_budget(KvConfig kv, size_t bytes) {
    kv.budget_bytes = bytes;
    return kv;
  }
  std::unique_ptr<KvCache> kv_;
  NaiveAttention attention_;
  ThreadPool pool_;
  LlamaForward forward_;
};

// Each plan on its own: its history in one step, then its step alone. Logits in plan order.
std::vector<float> run_alone(const LlamaModel& model, const std::vector<SeqPlan>& plans, int threads) {
  Harness h(model, threads);
  std::vector<float> out;
  for (const SeqPlan& p : plans) {
    if (!p.history.empty()) h.run({BatchSeq{p.seq, p.history, 0}});
    const std::vector<float> logits = h.run({BatchSeq{p.seq, p.step, h.length(p.seq), p.logits_rows}});
    out.insert(out.end(), logits.begin(), logits.end());
  }
  return out;
}

// Every history in one step, then every step in one mixed step. Logits in plan order.
std::vector<float> run_mixed(const LlamaModel& model, const std::vector<SeqPlan>& plans, int threads,
                             KvConfig kv = contiguous_room()) {
  Harness h(model, threads, kv);
  std::vector<BatchSeq> histories, steps;
  for (const SeqPlan& p : plans) {
    if (!p.history.empty()) histories.push_back(BatchSeq{p.seq, p.history, 0});
  }
  h.run(histories);
  for (const SeqPlan& p : plans) steps.push_back(BatchSeq{p.seq, p.step, h.length(p.seq), p.logits_rows});
  return h.run(steps);
}

class BatchInvarianceTest : public ::testing::TestWithParam<DType> {
 protected:
  void SetUp() override {
    spec_.dim = 64, spec_.n_heads = 4, spec_.n_kv_heads = 2, spec_.ffn_dim = 96, spec_.vocab = 40;
    spec_.context_length = kMaxSeqLen, spec_.weight_dtype = GetParam(), spec_.seed = 21;
    model_ = load_synthetic_model(spec_);
  }
  SyntheticModelSpec spec_;
  std::unique_ptr<LlamaModel> model_;
};

TEST_P(BatchInvarianceTest, MixedStepEqualsEachSequenceAlone) {
  const auto plans = mixed_plans(spec_.vocab);
  const std::vector<float> alone = run_alone(*model_, plans, 2);
  const std::vector<float> mixed = run_mixed(*model_, plans, 2);
  ASSERT_EQ(alone.size(), static_cast<size_t>(spec_.vocab) * (1 + 1 + 3));
  EXPECT_TRUE(bit_identical(mixed, alone));
  // the sequences' rows really differ, so equality above is not trivial
  const std::span<const float> all(alone);
  EXPECT_FALSE(bit_identical(all.first(spec_.vocab), all.subspan(spec_.vocab, spec_.vocab)));
}

// Asking for a sequence's last rows gives the last rows of asking for every one, bit for bit.
TEST_P(BatchInvarianceTest, LastRowsAreTheLastOfEveryRow) {
  std::vector<SeqPlan> plans = mixed_plans(spec_.vocab);
  const std::vector<float> some = run_mixed(*model_, plans, 2);
  plans.back().logits_rows = static_cast<int64_t>(plans.back().step.size());
  const std::vector<float> every = run_mixed(*model_, plans, 2);
  const size_t vocab = static_cast<size_t>(spec_.vocab);
  ASSERT_EQ(every.size(), some.size() + vocab);
  EXPECT_TRUE(bit_identical(std::span<const float>(some).first(2 * vocab), std::span<const float>(every).first(2 * vocab)));
  EXPECT_TRUE(bit_identical(std::span<const float>(some).subspan(2 * vocab), std::span<const float>(every).subspan(3 * vocab)));
}

TEST_P(BatchInvarianceTest, ThreadCountDoesNotChangeLogits) {
  const auto plans = mixed_plans(spec_.vocab);
  const std::vector<float> one = run_mixed(*model_, plans, 1);
  for (int threads : {2, 3}) EXPECT_TRUE(bit_identical(run_mixed(*model_, plans, threads), one)) << threads << " threads";
}

TEST_P(BatchInvarianceTest, KvLayoutDoesNotChangeLogits) {
  const auto plans = mixed_plans(spec_.vocab);
  const std::vector<float> contiguous = run_mixed(*model_, plans, 2);
  for (int32_t block : {8, 16, 32}) {
    const KvConfig paged{.kind = KvKind::Paged, .block_size = block};
    EXPECT_TRUE(bit_identical(run_mixed(*model_, plans, 2, paged), contiguous)) << "paged, block size " << block;
  }
}

TEST_P(BatchInvarianceTest, PrefillChunkingDoesNotChangeLogits) {
  const std::vector<TokenId> prompt = tokens(20, 6, spec_.vocab);
  // every position's logits through the engine, the prompt in steps of at most `chunk` tokens
  auto run = [&](int32_t chunk) {
    EngineConfig config;
    config.threads = 2;
    config.scheduler.max_batch_tokens = chunk;
    return engine_logits(*model_, config, prompt);
  };
  const std::vector<float> whole = run(0);
  ASSERT_EQ(whole.size(), prompt.size() * spec_.vocab);
  for (int32_t chunk : {1, 3, 7}) EXPECT_TRUE(bit_identical(run(chunk), whole)) << "chunks of " << chunk;
}

INSTANTIATE_TEST_SUITE_P(WeightTypes, BatchInvarianceTest,
                         ::testing::Values(DType::F32, DType::F16, DType::Q8_0, DType::Q4_0, DType::Q4_1, DType::Q5_0,
                                           DType::Q5_1),
                         [](const ::testing::TestParamInfo<DType>& param) { return std::string(dtype_name(param.param)); });

// With a sliding window of 4 tokens (a gemma3 with local and global layers), shorter than the
// histories and steps: the mixed step still equals each sequence alone, and a prompt five windows
// long gives the same bits in one prefill, token by token (decode) and in chunks, with either attention.
TEST(BatchInvariance, WindowedLayersStayInvariant) {
  SyntheticModelSpec spec;
  spec.architecture = "gemma3", spec.key_length = 32, spec.sliding_window = 4, spec.swa_pattern = 2;
  spec.context_length = kMaxSeqLen, spec.seed = 22;
  const auto model = load_synthetic_model(spec);
  ASSERT_EQ(model->config().windowed_layers(), 1);
  const auto plans = mixed_plans(spec.vocab);
  EXPECT_TRUE(bit_identical(run_mixed(*model, plans, 2), run_alone(*model, plans, 2)));
  const std::vector<TokenId> prompt = tokens(5 * spec.sliding_window, 7, spec.vocab);
  for (const char* attention : {"flash", "naive"}) {
    auto run = [&](int32_t chunk) {
      EngineConfig config;
      config.threads = 2;
      config.attention = attention;
      config.scheduler.max_batch_tokens = chunk;
      return engine_logits(*model, config, prompt);
    };
    const std::vector<float> whole = run(0);
    for (int32_t chunk : {1, 3, 7}) EXPECT_TRUE(bit_identical(run(chunk), whole)) << attention << " chunks of " << chunk;
  }
}

// A sequence that brings no new tokens to a step (run() counts no logits for it) must leave the
// others' logits alone.
TEST(BatchInvariance, SequenceWithNoNewTokensIsIgnored) {
  SyntheticModelSpec spec;
  spec.context_length = kMaxSeqLen;
  const auto model = load_synthetic_model(spec);
  const std::vector<TokenId> held = tokens(3, 8, spec.vocab), step = tokens(4, 9, spec.vocab);
  Harness alone(*model, 2);
  const std::vector<float> want = alone.run({BatchSeq{1, step, 0}});
  Harness h(*model, 2);
  h.run({BatchSeq{0, held, 0}});
  const std::vector<float> got = h.run({BatchSeq{0, {}, 3}, BatchSeq{1, step, 0}});
  EXPECT_TRUE(bit_identical(got, want));
}

}  // namespace
}  // namespace inferscope::test
