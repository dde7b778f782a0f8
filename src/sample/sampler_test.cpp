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

// The whole chain in its documented order on p = (0.1, 0.2, 0.3, 0.4), checked against
// hand-computed distributions by drawing 20000 times (4 standard deviations ~ 0.014):
// penalties act on logits before top_k, top_p/min_p see untempered probabilities, and
// temperature comes last.
std::vector<double> frequencies(const SamplerParams& p, const std::vector<int32_t>& history) {
  auto s = Sampler::create(p, 4);
  EXPECT_TRUE(s.ok());
  s->accept_prompt(history);
  std::vector<float> logits;
  for (float q : {0.1f, 0.2f, 0.3f, 0.4f}) logits.push_back(std::log(q));
  std::vector<double> f(4, 0);
  const int n = 20000;
  for (int i = 0; i < n; ++i) f[static_cast<size_t>(sample_one(*s, logits))] += 1.0 / n;
  return f;
}

void expect_distribution(const std::vector<double>& got, const std::vector<double>& want) {
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 0.015) << "token " << i;
}

TEST(Sampler, ChainOrderGivesHandComputedDistributions) {
  SamplerParams p;
  p.seed = 11;
  p.repeat_penalty = 1.0f;
  // top_k 3 -> {.4,.3,.2}/.9; top_p .75 keeps .444 + .333 -> {.4,.3}; T = 2 -> sqrt(.4) : sqrt(.3).
  p.top_k = 3;
  p.top_p = 0.75f;
  p.temperature = 2.0f;
  const double a = std::sqrt(0.4), b = std::sqrt(0.3);
  expect_distribution(frequencies(p, {}), {0, 0, b / (a + b), a / (a + b)});
  // min_p .6 of the best (.4): threshold .24 keeps {.4, .3}; T = .5 -> .16 : .09.
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.6f;
  p.temperature = 0.5f;
  expect_distribution(frequencies(p, {}), {0, 0, 0.09 / 0.25, 0.16 / 0.25});
  // typical .45 on (.1,.2,.3,.4): H = 1.2799; |-log p - H| = 1.023, .330, .076, .364, so the
  // order is .3, .2, .4, .1 and the running sum first exceeds .45 at .3 + .2 -> {.3,.2}/.5.
  p.min_p = 0;
  p.typical_p = 0.45f;
  p.temperature = 1.0f;
  expect_distribution(frequencies(p, {}), {0, 0.4, 0.6, 0});
}

TEST(Sampler, PenaltiesGiveHandComputedDistributions) {
  SamplerParams p;
  p.seed = 12;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.temperature = 1.0f;
  // repeat 2 on token 3 (logit log .4 < 0, so multiplied): weight .4^2 = .16; others unchanged.
  p.repeat_penalty = 2.0f;
  const double z1 = 0.1 + 0.2 + 0.3 + 0.16;
  expect_distribution(frequencies(p, {3}), {0.1 / z1, 0.2 / z1, 0.3 / z1, 0.16 / z1});
  // frequency .5 x 2 occurrences + presence .25 on token 2: weight .3 * e^-1.25.
  p.repeat_penalty = 1.0f;
  p.frequency_penalty = 0.5f;
  p.presence_penalty = 0.25f;
  const double w2 = 0.3 * std::exp(-1.25);
  const double z2 = 0.1 + 0.2 + w2 + 0.4;
  expect_distribution(frequencies(p, {2, 2}), {0.1 / z2, 0.2 / z2, w2 / z2, 0.4 / z2});
}

// The lazy grammar (best candidates checked first, the trie walk only when they fall short)
// must choose exactly what masking the whole vocabulary first and sampling unconstrained
// would, with the same seed. The vocabulary is larger than the lazy window so both phases run.
TEST(Sampler, LazyGrammarEqualsMaskingFirst) {
  auto g = parse_gbnf(R"(root ::= "{" ws ( "\"" [a-z ]* "\"" ws ":" ws [0-9]+ ws )? "}"
ws ::= | " " | "\n")");
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  std::vector<std::string> pieces;
  for (char c = 0x20; c < 0x7F; ++c) pieces.emplace_back(1, c);
  const std::string parts = "{}\":, \nabcxyz0189";
  for (char x : parts)
    for (char y : parts) pieces.push_back(std::string{x, y});
  pieces.emplace_back("</s>");
  const auto eos = static_cast<int32_t>(pieces.size() - 1);
  auto vocab = std::make_shared<GrammarVocab>(pieces, std::vector<int32_t>{eos});
  const auto n = static_cast<int32_t>(pieces.size());
  ASSERT_GT(n, 256);
  for (int64_t seed = 0; seed < 20; ++seed) {
    SamplerParams p;
    p.seed = seed;
    p.top_k = 5;
    p.repeat_penalty = 1.0f;
    auto lazy = Sampler::create(p, n, GrammarConstraint{*g, vocab});
    auto plain = Sampler::create(p, n);
    ASSERT_TRUE(lazy.ok() && plain.ok());
    GrammarMatcher reference(*g);
    std::mt19937 rng(static_cast<uint32_t>(seed));
    std::vector<float> logits(static_cast<size_t>(n));
    std::vector<uint8_t> mask;
    for (int step = 0; step < 60; ++step) {
      for (float& l : logits) l = static_cast<float>(rng() % 1000) / 100.0f;
      reference.allowed_tokens(*vocab, &mask);
      std::vector<float> masked = logits;
      for (size_t i = 0; i < masked.size(); ++i) {
        if (!mask[i]) masked[i] = -INFINITY;
      }
      const int32_t a = sample_one(*lazy, logits);
      const int32_t b = sample_one(*plain, masked);
      ASSERT_EQ(a, b) << "seed " << seed << " step " << step;
      ASSERT_TRUE(lazy->accept(a).is_ok());
      ASSERT_TRUE(plain->accept(b).is_ok());
      if (a == eos) break;
      ASSERT_TRUE(reference.accept_token(*vocab, a).is_ok());
    }
  }
}

}  // namespace
}  // namespace paddock::sample
