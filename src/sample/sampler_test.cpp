// The whole chain: greedy, penalties over the window, logit_bias, seeds, logprobs, grammar.
#include "sample/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace paddock::sample {
namespace {

SamplerParams greedy() {
  SamplerParams p;
  p.temperature = 0;
  p.repeat_penalty = 1.0f;
  return p;
}

int32_t sample_one(Sampler& s, const std::vector<float>& logits) {
  auto r = s.sample(logits);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? *r : -1;
}

TEST(Sampler, DefaultsAreOllamas) {
  SamplerParams p;
  EXPECT_FLOAT_EQ(p.temperature, 0.8f);
  EXPECT_EQ(p.top_k, 40);
  EXPECT_FLOAT_EQ(p.top_p, 0.9f);
  EXPECT_FLOAT_EQ(p.min_p, 0.0f);
  EXPECT_FLOAT_EQ(p.typical_p, 1.0f);
  EXPECT_EQ(p.repeat_last_n, 64);
  EXPECT_FLOAT_EQ(p.repeat_penalty, 1.0f);
  EXPECT_EQ(p.seed, -1);
}

TEST(Sampler, GreedyTakesArgmaxTiesToLowestId) {
  auto s = Sampler::create(greedy(), 5);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(sample_one(*s, {0.1f, 2.0f, -1.0f, 2.0f, 1.9f}), 1);
  EXPECT_EQ(sample_one(*s, {0.1f, 0.0f, 3.0f, 2.0f, 1.9f}), 2);
}

TEST(Sampler, RepeatPenaltyDividesPositiveMultipliesNegative) {
  SamplerParams p = greedy();
  p.repeat_penalty = 2.0f;
  auto s = Sampler::create(p, 3);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(s->accept(0).is_ok());
  EXPECT_EQ(sample_one(*s, {3.0f, 2.5f, 1.0f}), 1);     // 3 / 2 = 1.5 < 2.5
  EXPECT_EQ(sample_one(*s, {-1.0f, -1.5f, -3.0f}), 1);  // -1 * 2 = -2 < -1.5
}

TEST(Sampler, RepeatWindowForgetsOldTokens) {
  SamplerParams p = greedy();
  p.repeat_penalty = 2.0f;
  p.repeat_last_n = 1;
  auto s = Sampler::create(p, 3);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(s->accept(0).is_ok());
  ASSERT_TRUE(s->accept(2).is_ok());  // pushes 0 out of the window
  EXPECT_EQ(sample_one(*s, {3.0f, 2.5f, 1.0f}), 0);
  p.repeat_last_n = 0;  // off
  auto off = Sampler::create(p, 3);
  ASSERT_TRUE(off.ok());
  ASSERT_TRUE(off->accept(0).is_ok());
  EXPECT_EQ(sample_one(*off, {3.0f, 2.5f, 1.0f}), 0);
}

TEST(Sampler, FrequencyAndPresencePenalties) {
  SamplerParams p = greedy();
  p.frequency_penalty = 0.15f;  // two occurrences: 1.0 - 0.3 = 0.7 < 0.8
  auto s = Sampler::create(p, 2);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(s->accept(0).is_ok());
  ASSERT_TRUE(s->accept(0).is_ok());
  EXPECT_EQ(sample_one(*s, {1.0f, 0.8f}), 1);
  p.frequency_penalty = 0.05f;  // 1.0 - 0.1 = 0.9 > 0.8
  auto s2 = Sampler::create(p, 2);
  ASSERT_TRUE(s2.ok());
  s2->accept_prompt(std::vector<int32_t>{0, 0});
  EXPECT_EQ(sample_one(*s2, {1.0f, 0.8f}), 0);
  p.frequency_penalty = 0;
  p.presence_penalty = 0.25f;  // once, regardless of count: 1.0 - 0.25 = 0.75 < 0.8
  auto s3 = Sampler::create(p, 2);
  ASSERT_TRUE(s3.ok());
  s3->accept_prompt(std::vector<int32_t>{0, 0, 0});
  EXPECT_EQ(sample_one(*s3, {1.0f, 0.8f}), 1);
}

TEST(Sampler, LogitBiasAddsAndBans) {
  SamplerParams p = greedy();
  p.logit_bias = {{2, 5.0f}};
  auto s = Sampler::create(p, 3);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(sample_one(*s, {3.0f, 1.0f, -1.0f}), 2);
  p.logit_bias = {{0, -INFINITY}};
  auto banned = Sampler::create(p, 3);
  ASSERT_TRUE(banned.ok());
  EXPECT_EQ(sample_one(*banned, {3.0f, 1.0f, -1.0f}), 1);
  p.logit_bias = {{0, -INFINITY}, {1, -INFINITY}, {2, -INFINITY}};
  auto all = Sampler::create(p, 3);
  ASSERT_TRUE(all.ok());
  EXPECT_FALSE(all->sample(std::vector<float>{1, 2, 3}).ok());
}

TEST(Sampler, ValidatesOptions) {
  SamplerParams p;
  p.top_logprobs = 21;
  EXPECT_FALSE(Sampler::create(p, 4).ok());
  p = SamplerParams{};
  p.logit_bias = {{4, 1.0f}};
  auto r = Sampler::create(p, 4);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("found 4"), std::string::npos);
  p = SamplerParams{};
  p.temperature = NAN;
  EXPECT_FALSE(Sampler::create(p, 4).ok());
  auto s = Sampler::create(SamplerParams{}, 4);
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->sample(std::vector<float>{1, 2}).ok());
  EXPECT_FALSE(s->accept(9).is_ok());
}

std::vector<float> random_logits(std::mt19937& g, int n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = static_cast<float>(g() % 1000) / 250.0f;
  return v;
}

std::vector<int32_t> run_seed(int64_t seed, int steps) {
  SamplerParams p;
  p.seed = seed;
  p.top_k = 0;
  p.top_p = 1.0f;
  auto s = Sampler::create(p, 16);
  EXPECT_TRUE(s.ok());
  std::mt19937 logits_rng(7);
  std::vector<int32_t> out;
  for (int i = 0; i < steps; ++i) {
    const int32_t t = sample_one(*s, random_logits(logits_rng, 16));
    EXPECT_TRUE(s->accept(t).is_ok());
    out.push_back(t);
  }
  return out;
}

TEST(Sampler, SameSeedSameTokens) {
  EXPECT_EQ(run_seed(42, 64), run_seed(42, 64));
  EXPECT_NE(run_seed(42, 64), run_seed(43, 64));
}

TEST(Sampler, DrawFollowsTheDistribution) {
  SamplerParams p;
  p.seed = 1;
  p.temperature = 1.0f;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.repeat_penalty = 1.0f;
  auto s = Sampler::create(p, 4);
  ASSERT_TRUE(s.ok());
  const std::vector<float> probs = {0.1f, 0.2f, 0.3f, 0.4f};
  std::vector<float> logits;
  for (float q : probs) logits.push_back(std::log(q));
  std::vector<int> hits(4, 0);
  const int n = 20000;
  for (int i = 0; i < n; ++i) ++hits[static_cast<size_t>(sample_one(*s, logits))];
  for (size_t i = 0; i < 4; ++i)
    EXPECT_NEAR(static_cast<double>(hits[i]) / n, probs[i], 0.015) << "token " << i;
}

TEST(Sampler, LogprobsAreLogSoftmaxOfRawLogits) {
  SamplerParams p = greedy();
  p.logprobs = true;
  p.top_logprobs = 2;
  p.logit_bias = {{0, 10.0f}};  // biases the choice, not the reported model logprobs
  auto s = Sampler::create(p, 4);
  ASSERT_TRUE(s.ok());
  const std::vector<float> logits = {std::log(0.1f), std::log(0.2f), std::log(0.3f), std::log(0.4f)};
  EXPECT_EQ(sample_one(*s, logits), 0);
  const Logprobs& lp = s->last_logprobs();
  EXPECT_EQ(lp.chosen.id, 0);
  EXPECT_NEAR(lp.chosen.logprob, std::log(0.1f), 1e-5);
  ASSERT_EQ(lp.top.size(), 2u);
  EXPECT_EQ(lp.top[0].id, 3);
  EXPECT_NEAR(lp.top[0].logprob, std::log(0.4f), 1e-5);
  EXPECT_EQ(lp.top[1].id, 2);
  EXPECT_NEAR(lp.top[1].logprob, std::log(0.3f), 1e-5);
}

TEST(Sampler, GrammarConstrainsAndAllowsEogOnlyWhenComplete) {
  auto g = parse_gbnf(R"(root ::= "b" "c"+)");
  ASSERT_TRUE(g.ok());
  auto vocab = std::make_shared<GrammarVocab>(std::vector<std::string>{"a", "b", "c", "", "bc"},
                                              std::vector<int32_t>{3});
  for (float temp : {0.0f, 0.8f}) {
    SamplerParams p;
    p.temperature = temp;
    p.seed = 3;
    auto s = Sampler::create(p, 5, GrammarConstraint{*g, vocab});
    ASSERT_TRUE(s.ok());
    // "a" and EOG are the favourites but never allowed before "b".
    EXPECT_EQ(sample_one(*s, {9.0f, 0.0f, 1.0f, 9.0f, -50.0f}), 1);
    ASSERT_TRUE(s->accept(1).is_ok());
    EXPECT_FALSE(s->grammar_complete());
    EXPECT_EQ(sample_one(*s, {9.0f, 8.0f, 0.0f, 9.0f, -50.0f}), 2);
    ASSERT_TRUE(s->accept(2).is_ok());
    EXPECT_TRUE(s->grammar_complete());
    EXPECT_EQ(sample_one(*s, {9.0f, 8.0f, 0.0f, 20.0f, 50.0f}), 3);
    EXPECT_FALSE(s->accept(0).is_ok());
  }
}

}  // namespace
}  // namespace paddock::sample
