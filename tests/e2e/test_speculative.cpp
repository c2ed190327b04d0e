// Speculative decoding through the engine: greedy output with speculation is token-for-token the
// target's alone, for every proposer, alone and in a batch of speculating and plain sequences, on
// paged and contiguous caches; the logits after a rejected tail are bit-identical to a run that never
// fed it (the KV cache forgot it exactly); a draft identical to the target is always accepted; bad
// drafts are refused with their reason; a seeded sampling run repeats exactly.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "core/attention/attention_factory.h"
#include "core/engine/engine_core.h"
#include "core/engine/sync_engine.h"
#include "core/executor/forward_factory.h"
#include "core/executor/model_executor.h"
#include "core/model/llama_model.h"
#include "core/spec/model_draft_proposer.h"
#include "core/spec/ngram_proposer.h"
#include "kernels/cpu/thread_pool.h"
#include "tests/support/engine_runs.h"
#include "tests/support/synthetic_model.h"
#include "tests/support/test_models.h"

namespace inferscope::test {
namespace {

constexpr int32_t kTokens = 96;

std::string stories() { return shared_model_path("stories260K.gguf"); }

// The proposers under test on stories260K (5 layers): the file itself as its draft (every draft is
// the target's own choice), a q8 self-draft, early exit after 2 layers, and n-gram lookup; k = 4,
// so that every step drafts whatever drafts cost on this machine (SpeculativeAuto tries k = auto).
std::vector<std::pair<std::string, SpecConfig>> proposers() {
  SpecConfig ngram;
  ngram.mode = SpecMode::Ngram;
  SpecConfig draft;
  draft.mode = SpecMode::Draft;
  draft.draft_model = stories();
  SpecConfig self_quant;
  self_quant.mode = SpecMode::SelfQuant;
  self_quant.draft_quant = WeightQuant::Q8;
  SpecConfig early_exit;
  early_exit.mode = SpecMode::EarlyExit;
  early_exit.draft_layers = 2;
  for (SpecConfig* s : {&ngram, &draft, &self_quant, &early_exit}) s->k = 4;
  return {{"ngram", ngram}, {"draft", draft}, {"self_quant", self_quant}, {"early_exit", early_exit}};
}

EngineConfig base_config(KvKind kind) {
  EngineConfig c;
  c.threads = 2;
  c.kv.kind = kind;
  c.kv.block_size = 8;
  c.budget_sequences = 4;
  return c;
}


// A paged f32 cache of `model` with room for 256 tokens in blocks of 8.
KvConfig small_paged_kv(const LlamaModel& model) {
  KvConfig kv;
  kv.block_size = 8;
  kv.budget_bytes = model.kv_geometry(DType::F32).bytes_per_token() * 256;
  return kv;
}

class SpeculativeGreedy : public ::testing::TestWithParam<std::tuple<size_t, KvKind>> {};

TEST_P(SpeculativeGreedy, OutputAndLogitsAreTheTargetsAlone) {
  INFERSCOPE_REQUIRE_FILE(path, stories());
  const auto model = LlamaModel::load(path);
  const auto [index, kind] = GetParam();
  const auto [name, spec] = proposers()[index];
  const EngineConfig plain = base_config(kind);
  EngineConfig speculating = plain;
  speculating.spec = spec;
  for (const std::vector<TokenId>& prompt : {std::vector<TokenId>{1}, std::vector<TokenId>{1, 403, 261, 378, 430}}) {
    const GreedyRun want = engine_greedy_with_logits(*model, plain, prompt, kTokens);
    const GreedyRun got = engine_greedy_with_logits(*model, speculating, prompt, kTokens);
    ASSERT_EQ(got.outcome.reason, want.outcome.reason) << name << ": " << got.outcome.error;
    EXPECT_EQ(got.outcome.tokens, want.outcome.tokens) << name;
    EXPECT_EQ(got.outcome.text, want.outcome.text) << name;
    // Every row, the ones after rejected drafts included, is the bits the target alone computes: the
    // cache holds exactly what it would hold had the rejected tokens never been fed.
    ASSERT_EQ(got.rows.size(), want.rows.size()) << name;
    for (size_t i = 0; i < want.rows.size(); ++i) ASSERT_TRUE(bit_identical(got.rows[i], want.rows[i])) << name << " row " << i;
    EXPECT_GT(got.outcome.metrics.spec.num_drafts, 0) << name << ": nothing was drafted";
    EXPECT_LE(got.outcome.metrics.spec.num_accepted_tokens, got.outcome.metrics.spec.num_draft_tokens);
  }
}

INSTANTIATE_TEST_SUITE_P(EveryProposer, SpeculativeGreedy,
                         ::testing::Combine(::testing::Values(0, 1, 2, 3), ::testing::Values(KvKind::Paged, KvKind::Contiguous)),
                         [](const auto& test_info) {
                           return proposers()[std::get<0>(test_info.param)].first +
                                  (std::get<1>(test_info.param) == KvKind::Paged ? "_paged" : "_contiguous");
                         });

// Several requests at once through one EngineCore: their greedy tokens, by request id.
std::map<RequestId, std::vector<TokenId>> batch_tokens(const LlamaModel& model, const EngineConfig& config,
                                                       const std::vector<std::vector<TokenId>>& prompts,
                                                       const std::vector<bool>& speculate) {
  std::map<RequestId, std::vector<TokenId>> tokens;
  std::map<RequestId, std::string> errors;
  EngineCallbacks cb;
  cb.on_token = [&](RequestId id, std::string_view, TokenId token, const TokenTiming&) {
    if (token >= 0) tokens[id].push_back(token);
  };
  cb.on_error = [&](RequestId id, const std::string& message) { errors[id] = message; };
  EngineCore core(model, config, cb);
  for (size_t i = 0; i < prompts.size(); ++i) {
    EngineRequest r;
    r.prompt_tokens = prompts[i];
    r.max_tokens = kTokens - static_cast<int32_t>(i) * 7;
    r.speculate = speculate[i];
    core.add(static_cast<RequestId>(i), std::move(r));
  }
  while (core.has_work()) core.step();
  EXPECT_TRUE(errors.empty()) << errors.begin()->second;
  return tokens;
}

TEST(SpeculativeBatch, MixedSpeculatingAndPlainSequencesGiveTheirAloneTokens) {
  INFERSCOPE_REQUIRE_FILE(path, stories());
  const auto model = LlamaModel::load(path);
  const std::vector<std::vector<TokenId>> prompts = {{1}, {1, 403, 261}, {1, 378, 430, 261, 403}, {1, 261}};
  const std::vector<bool> speculate = {true, false, true, true};
  for (KvKind kind : {KvKind::Paged, KvKind::Contiguous}) {
    const auto want = batch_tokens(*model, base_config(kind), prompts, {false, false, false, false});
    for (const auto& [name, spec] : proposers()) {
      EngineConfig c = base_config(kind);
      c.spec = spec;
      // A tight step budget: drafts compete with decodes and prompt chunks for it.
      c.scheduler.max_batch_tokens = 12;
      EXPECT_EQ(batch_tokens(*model, c, prompts, speculate), want) << name;
    }
  }
}

// Each decode step reports the most drafts it allowed and scores no more: k = auto chooses 0..8 per
// step from what it measures (so greedy output is still the target's own), a fixed k is always k.
// The prompt's step has no speculating decode.
TEST(SpeculativeAuto, EachStepSaysHowManyDraftsItAllowedAndTheOutputIsTheTargets) {
  INFERSCOPE_REQUIRE_FILE(path, stories());
  const auto model = LlamaModel::load(path);
  const std::vector<TokenId> prompt{1, 403, 261, 378, 430};
  const std::vector<TokenId> want = engine_greedy(*model, base_config(KvKind::Paged), prompt, kTokens).tokens;
  for (const auto& [name, fixed] : proposers()) {
    for (const int32_t k : {SpecConfig::kAutoK, fixed.k}) {
      EngineConfig c = base_config(KvKind::Paged);
      c.spec = fixed;
      c.spec.k = k;
      EngineCoreOptions options;
      options.step_window = SIZE_MAX;
      SyncEngine engine(*model, c, options);
      EngineRequest r;
      r.prompt_tokens = prompt;
      r.max_tokens = kTokens;
      EXPECT_EQ(engine.run(std::move(r)).tokens, want) << name << " k=" << spec_k_name(k);
      const std::vector<StepMetrics> steps = engine.core().metrics().snapshot(0).steps;
      ASSERT_GT(steps.size(), 1u);
      EXPECT_EQ(steps.front().spec_chosen_k, -1) << name;
      for (size_t i = 1; i < steps.size(); ++i) {
        if (k == SpecConfig::kAutoK) {
          EXPECT_GE(steps[i].spec_chosen_k, 0) << name << " step " << i;
          EXPECT_LE(steps[i].spec_chosen_k, SpecConfig::kAutoMaxK) << name << " step " << i;
        } else {
          EXPECT_EQ(steps[i].spec_chosen_k, k) << name << " step " << i;
        }
        EXPECT_LE(steps[i].spec_draft_tokens, steps[i].spec_chosen_k) << name << " step " << i;
      }
    }
  }
}

// A decode left without draft slots gets a shadow draft when drafts cost nothing (n-gram): its first
// token, what lookup proposes, comes back beside the sampled token, and nothing is scored.
TEST(SpeculativeShadow, ADecodeWithoutSlotsGetsAnUnscoredNgramDraft) {
  INFERSCOPE_REQUIRE_FILE(path, stories());
  const auto model = LlamaModel::load(path);
  const KvConfig kv_config = small_paged_kv(*model);
  const auto kv = make_kv_cache(model->kv_geometry(DType::F32), kv_config);
  ModelExecutorOptions options;
  options.threads = 2;
  ModelExecutor executor(*model, *kv, options);
  NgramProposer ngram(1, 8);
  executor.set_proposer(&ngram);
  Scheduler scheduler(*kv, request_limit(*kv, kv_config, 256), SchedulerConfig{{}, 0, 0, 4});
  Request r;
  r.tokens = {1, 403, 261, 403, 261, 403, 261};  // every token recurs: a one-token match is found
  r.prompt_tokens = static_cast<int32_t>(r.tokens.size());
  r.max_output_tokens = 32;
  ASSERT_TRUE(scheduler.add(r));
  StepPlan plan = scheduler.schedule();
  scheduler.complete(plan, executor.execute(plan).sampled);
  int shadows = 0;
  while (!scheduler.idle()) {
    scheduler.set_max_drafts(0, 0);
    plan = scheduler.schedule();
    ASSERT_TRUE(plan.seqs[0].shadow_draft);
    const std::vector<TokenId> lookup = ngram.lookup(plan.seqs[0].history, 1);
    const StepResult result = executor.execute(plan);
    EXPECT_EQ(result.sampled[0].shadow, lookup.empty() ? -1 : lookup[0]);
    EXPECT_EQ(result.sampled[0].drafted, 0);
    EXPECT_EQ(result.spec.verify_seconds, 0.0);
    shadows += lookup.empty() ? 0 : 1;
    scheduler.complete(plan, result.sampled);
  }
  EXPECT_GT(shadows, 0);
}

// A draft model's own cache lets go of a preempted request at once, and drafts it again from the
// same tokens to the same draft.
TEST(SpeculativeDraft, APreemptedRequestsDraftCacheIsFreedAndRebuiltToTheSameDraft) {
  INFERSCOPE_REQUIRE_FILE(path, stories());
  const auto model = LlamaModel::load(path);
  const KvConfig kv_config = small_paged_kv(*model);
  const auto target_kv = make_kv_cache(model->kv_geometry(DType::F32), kv_config);
  ModelDraftOptions options;
  options.name = "draft";
  ModelDraftProposer proposer(*model, make_forward(*model, model->weights(), {}, ComputeDevice{}),
                              make_kv_cache(model->kv_geometry(DType::F32), kv_config), options);
  ThreadPool pool(2);
  const std::unique_ptr<Attention> attention = make_attention("flash");
  Sampler greedy{SamplingParams{}};
  const std::vector<TokenId> history{1, 403, 407, 261, 378};
  proposer.on_added(7, 3);
  const auto draft = [&] {
    std::vector<Draft> drafts;
    proposer.propose(std::vector<DraftRequest>{{7, history, 4, &greedy}}, ProposeContext{*target_kv, pool, *attention},
                     drafts);
    return drafts.at(0).tokens;
  };
  const std::vector<TokenId> first = draft();
  ASSERT_EQ(first.size(), 4u);
  EXPECT_GT(proposer.kv_bytes(), 0u);
  proposer.on_removed(7, history, true);
  EXPECT_EQ(proposer.kv_bytes(), 0u);
  EXPECT_EQ(draft(), first);
  proposer.on_removed(7, history, false);
  EXPECT_EQ(proposer.kv_bytes(), 0u);
}

TEST(SpeculativeDraft, ADraftIdenticalToTheTargetIsAlwaysAccepted) {
  INFERSCOPE_REQUIRE_FILE(path, stories());
  const auto model = LlamaModel::load(path);
  EngineConfig c = base_config(KvKind::Paged);
  c.spec.mode = SpecMode::Draft;
  c.spec.draft_model = path;
  c.spec.k = 5;
  const GreedyRun run = engine_greedy_with_logits(*model, c, {1}, kTokens);
  const SpecDecodeCounters& spec = run.outcome.metrics.spec;
  ASSERT_GT(spec.num_drafts, 0);
  EXPECT_EQ(spec.num_accepted_tokens, spec.num_draft_tokens);
  EXPECT_DOUBLE_EQ(spec.acceptance_rate(), 1.0);
  // Every verify pass but the last emits k + 1 tokens.
  EXPECT_GE(spec.mean_acceptance_length(), 5.0);
  ASSERT_EQ(spec.num_accepted_tokens_per_pos.size(), 5u);
  EXPECT_EQ(spec.num_accepted_tokens_per_pos[0], spec.num_drafts);
}

TEST(SpeculativeVerify, EachVerifiedStepSaysHowItsStreamedTokensCame) {
  INFERSCOPE_REQUIRE_FILE(path, stories());
  const auto model = LlamaModel::load(path);
  EngineConfig c = base_config(KvKind::Paged);
  c.spec.mode = SpecMode::EarlyExit;  // often wrong: corrections and refusals
  c.spec.draft_layers = 3;
  std::vector<TokenId> streamed;
  std::vector<std::pair<size_t, Verification>> verified;  // at which streamed index each step starts
  EngineCallbacks cb;
  cb.on_token = [&](RequestId, std::string_view, TokenId token, const TokenTiming&) {
    if (token >= 0) streamed.push_back(token);
  };
  cb.on_verify = [&](RequestId, const Verification& v) { verified.emplace_back(streamed.size(), v); };
  EngineCore core(*model, c, cb);
  EngineRequest r;
  r.prompt_tokens = {1};
  r.max_tokens = kTokens;
  core.add(0, std::move(r));
  while (core.has_work()) core.step();
  ASSERT_FALSE(verified.empty());
  int corrections = 0;
  for (const auto& [at, v] : verified) {
    ASSERT_EQ(v.emitted.size(), static_cast<size_t>(v.accepted) + 1);
    for (size_t j = 0; j < v.emitted.size() && at + j < streamed.size(); ++j) {
      EXPECT_EQ(v.emitted[j].id, streamed[at + j]) << "step at token " << at;
      const TokenOrigin want = j + 1 < v.emitted.size() ? TokenOrigin::Accepted
                                                        : (v.rejected ? TokenOrigin::Corrected : TokenOrigin::Bonus);
      EXPECT_EQ(v.emitted[j].origin, want);
    }
    // Greedy: a refused draft is never the target's choice that replaced it.
    if (v.rejected) {
      ++corrections;
      EXPECT_NE(v.refused.id, v.emitted.back().id);
    }
  }
  EXPECT_GT(corrections, 0);
}

TEST(SpeculativeSampling, ASeededRunRepeatsExactlyAndStaysInTheVocabulary) {
  INFERSCOPE_REQUIRE_FILE(path, stories());
  const auto model = LlamaModel::load(path);
  for (const auto& [name, spec] : proposers()) {
    EngineConfig c = base_config(KvKind::Paged);
    c.spec = spec;
    std::vector<std::vector<TokenId>> outputs;
    for (int run = 0; run < 2; ++run) {
      SyncEngine engine(*model, c);
      EngineRequest r;
      r.prompt_tokens = {1};
      r.max_tokens = kTokens;
      r.sampling.temperature = 0.8f;
      r.sampling.top_p = 0.95f;
      r.sampling.seed = 42;
      const RequestOutcome out = engine.run(std::move(r));
      ASSERT_NE(out.reason, StopReason::Failed) << name << ": " << out.error;
      outputs.push_back(out.tokens);
    }
    EXPECT_EQ(outputs[0], outputs[1]) << name;
    EXPECT_FALSE(outputs[0].empty()) << name;
  }
}

TEST(SpeculativeConfig, ADraftWithAnotherVocabularyIsRefusedByTokenId) {
  INFERSCOPE_REQUIRE_FILE(path, stories());
  const auto model = LlamaModel::load(path);
  const std::string other = ::testing::TempDir() + "/spec-other-vocab.gguf";
  write_synthetic_model(SyntheticModelSpec{}, other);
  EngineConfig c = base_config(KvKind::Paged);
  c.spec.mode = SpecMode::Draft;
  c.spec.draft_model = other;
  try {
    SyncEngine engine(*model, c);
    FAIL() << "a draft with another vocabulary was accepted";
  } catch (const std::invalid_argument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("token id"), std::string::npos) << message;
    EXPECT_NE(message.find(other), std::string::npos) << message;
  }
}

TEST(SpeculativeConfig, ImpossibleDraftsAreRefusedWithTheirReason) {
  INFERSCOPE_REQUIRE_FILE(path, stories());
  const auto model = LlamaModel::load(path);
  const auto refused = [&](SpecConfig spec, WeightQuant target_level, const std::string& expected) {
    EngineConfig c = base_config(KvKind::Paged);
    c.spec = spec;
    c.quant = target_level;
    try {
      SyncEngine engine(*model, c);
      ADD_FAILURE() << "accepted: " << describe_spec(spec);
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  SpecConfig early;
  early.mode = SpecMode::EarlyExit;
  early.draft_layers = model->config().n_layers;
  refused(early, WeightQuant::Native, "draft-layers must be in 1..4");
  SpecConfig k;
  k.mode = SpecMode::Ngram;
  k.k = 17;
  refused(k, WeightQuant::Native, "spec k must be auto or in 1..16");
  // The target already runs at q4: a q4 self-draft reads as many bytes and saves nothing.
  SpecConfig self_quant;
  self_quant.mode = SpecMode::SelfQuant;
  self_quant.draft_quant = WeightQuant::Q4;
  refused(self_quant, WeightQuant::Q4, "no smaller than the target's weights");
}

// A switch from k = auto to a fixed k lifts auto's last choice: the file drafting for itself then
// drafts the full k (above auto's most) at once.
TEST(SpeculativeConfig, AFixedKAfterAutoDraftsItsWholeK) {
  INFERSCOPE_REQUIRE_FILE(path, stories());
  const auto model = LlamaModel::load(path);
  EngineConfig c = base_config(KvKind::Paged);
  c.spec.mode = SpecMode::Draft;
  c.spec.draft_model = stories();
  c.spec.k = SpecConfig::kAutoK;
  EngineCoreOptions options;
  options.step_window = SIZE_MAX;
  EngineCore core(*model, c, {}, options);
  EngineRequest r;
  r.prompt_tokens = {1};
  r.max_tokens = 200;
  r.sampling.ignore_eos = true;
  core.add(0, std::move(r));
  for (int i = 0; i < 10; ++i) core.step();
  c.spec.k = 16;
  core.apply_config(c);
  const size_t switched = static_cast<size_t>(core.metrics().snapshot(0).num_steps);
  for (int i = 0; i < 3; ++i) core.step();
  const std::vector<StepMetrics> steps = core.metrics().snapshot(0).steps;
  ASSERT_GE(steps.size(), switched + 3);
  for (size_t i = switched; i < switched + 3; ++i) {
    if (steps[i].prefill_tokens > 0) continue;  // the recompute after the new cache
    EXPECT_EQ(steps[i].spec_chosen_k, 16) << "step " << i;
    EXPECT_EQ(steps[i].spec_draft_tokens, 16) << "step " << i;
  }
}

TEST(SpeculativeConfig, TheEngineSwitchesSpeculationBetweenStepsAndKeepsItsOutput) {
  INFERSCOPE_REQUIRE_FILE(path, stories());
  const auto model = LlamaModel::load(path);
  const EngineConfig plain = base_config(KvKind::Paged);
  const GreedyRun want = engine_greedy_with_logits(*model, plain, {1}, kTokens);
  std::vector<TokenId> tokens;
  std::vector<std::string> notes;
  EngineCallbacks cb;
  cb.on_token = [&](RequestId, std::string_view, TokenId token, const TokenTiming&) {
    if (token >= 0) tokens.push_back(token);
  };
  cb.on_config = [&](bool applied, const std::string& note) { notes.push_back((applied ? "" : "rejected: ") + note); };
  EngineCore core(*model, plain, cb);
  EngineRequest r;
  r.prompt_tokens = {1};
  r.max_tokens = kTokens;
  core.add(0, std::move(r));
  // Every proposer in turn, a bad one among them (rejected, nothing changes), while the request runs.
  std::vector<SpecConfig> specs;
  for (const auto& [name, spec] : proposers()) specs.push_back(spec);
  SpecConfig bad;
  bad.mode = SpecMode::EarlyExit;
  bad.draft_layers = 99;
  specs.insert(specs.begin() + 1, bad);
  size_t next = 0;
  while (core.has_work()) {
    core.step();
    if (next < specs.size() && tokens.size() >= 10 * (next + 1)) {
      EngineConfig c = core.config();
      c.spec = specs[next++];
      core.apply_config(c);
    }
  }
  EXPECT_EQ(tokens, want.outcome.tokens);
  ASSERT_EQ(notes.size(), specs.size());
  EXPECT_NE(notes[1].find("rejected"), std::string::npos) << notes[1];
  EXPECT_EQ(core.config().spec.mode, SpecMode::EarlyExit);
}

}  // namespace
}  // namespace inferscope::test
