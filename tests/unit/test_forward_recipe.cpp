// Each architecture's forward pass as data (core/model/forward_recipe.h): the steps its layers take
// in order, and those around the layers. tests/unit/test_forward_reference.cpp runs LlamaForward,
// which walks these steps, against the plain reference for every architecture.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/model/architecture.h"
#include "core/model/forward_recipe.h"
#include "core/model/model_config.h"

namespace inferscope {
namespace {

using S = ForwardStep;

LlamaConfig config_of(const std::string& architecture) {
  LlamaConfig c;
  c.architecture = architecture;
  c.traits = *find_architecture(architecture);
  return c;
}

// Plain Llama's layer, with `extra` inserted before the step that follows each in Llama's order.
const std::vector<S> kLlamaLayer = {S::AttentionNorm, S::QkvProjection,     S::Rope,    S::KvStore,
                                    S::Attention,     S::OutputProjection,  S::AttentionResidual,
                                    S::FfnNorm,       S::GateUpProjection,  S::SwiGlu,  S::DownProjection,
                                    S::FfnResidual};

TEST(ForwardRecipe, LlamaAndPhi3TakePlainLlamaSteps) {
  for (const char* name : {"llama", "phi3"}) {
    const ForwardRecipe r = forward_recipe(config_of(name));
    EXPECT_TRUE(r.before.empty()) << name;
    EXPECT_EQ(r.layer, kLlamaLayer) << name;
    EXPECT_TRUE(r.after.empty()) << name;
  }
}

TEST(ForwardRecipe, QwenAddsBiasesOrHeadNormsBeforeRope) {
  std::vector<S> qwen2 = kLlamaLayer, qwen3 = kLlamaLayer;
  qwen2.insert(qwen2.begin() + 2, S::QkvBias);
  qwen3.insert(qwen3.begin() + 2, S::QkNorm);
  EXPECT_EQ(forward_recipe(config_of("qwen2")).layer, qwen2);
  EXPECT_EQ(forward_recipe(config_of("qwen3")).layer, qwen3);
}

TEST(ForwardRecipe, Gemma3ScalesNormsTwiceGatesWithGeluAndCapsItsLogits) {
  LlamaConfig c = config_of("gemma3");
  c.local_layers = {true, true, false};
  c.final_logit_softcap = 30.0f;
  c.query_scale = 0.5f;
  const ForwardRecipe r = forward_recipe(c);
  EXPECT_EQ(r.before, std::vector<S>{S::ScaledEmbedding});
  EXPECT_EQ(r.layer, (std::vector<S>{S::AttentionNorm, S::QkvProjection, S::QkNorm, S::LocalGlobalRope, S::QueryScale,
                                     S::KvStore, S::Attention, S::OutputProjection, S::AttentionPostNorm,
                                     S::AttentionResidual, S::FfnNorm, S::GateUpProjection, S::GeluGate,
                                     S::DownProjection, S::FfnPostNorm, S::FfnResidual}));
  EXPECT_EQ(r.after, std::vector<S>{S::LogitSoftcap});
  // Without local layers, one RoPE serves every layer; without a cap, nothing follows the head.
  c.local_layers.clear();
  c.final_logit_softcap = 0.0f;
  const ForwardRecipe global = forward_recipe(c);
  EXPECT_NE(std::find(global.layer.begin(), global.layer.end(), S::Rope), global.layer.end());
  EXPECT_TRUE(global.after.empty());
}

TEST(ForwardRecipe, EveryStepHasAName) {
  LlamaConfig c = config_of("gemma3");
  c.local_layers = {true, false};
  c.final_logit_softcap = 30.0f;
  c.query_scale = 0.5f;
  for (S step : forward_recipe(c).all()) EXPECT_NE(forward_step_name(step), "an unknown step");
  EXPECT_EQ(forward_step_name(S::GeluGate), "the GELU feed-forward gate");
}

}  // namespace
}  // namespace inferscope
