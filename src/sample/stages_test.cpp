// Each stage on four-element distributions with hand-computed results (llama.cpp
// test-sampling style): candidates are given as probabilities, logits = log(p).
#include "sample/stages.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace paddock::sample {
namespace {

Candidates from_probs(const std::vector<float>& probs) {
  Candidates c;
  for (size_t i = 0; i < probs.size(); ++i)
    c.items.push_back({static_cast<int32_t>(i), std::log(probs[i]), 0});
  return c;
}

void expect_probs(Candidates c, const std::vector<float>& expected) {
  softmax(c);
  ASSERT_EQ(c.items.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(c.items[i].p, expected[i], 1e-5) << "index " << i;
}

TEST(Stages, SoftmaxSortsAndNormalises) {
  Candidates c = from_probs({0.1f, 0.2f, 0.3f, 0.4f});
  softmax(c);
  EXPECT_EQ(c.items[0].id, 3);
  EXPECT_EQ(c.items[3].id, 0);
  expect_probs(c, {0.4f, 0.3f, 0.2f, 0.1f});
}

// best_candidates against every token's candidate sorted whole, then cut to `keep`: a
// vocabulary of 5 000 logits from 40 values (ties decided by id), with NaN and -inf ones,
// ids whose logit is replaced (raised into the best, lowered out of them, banned), and
// `keep` from 1 to more than there are usable tokens.
TEST(Stages, BestCandidatesAreTopKOfEveryTokenSorted) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> value(0, 39);
  std::vector<float> logits(5000);
  for (float& l : logits) l = static_cast<float>(value(rng)) * 0.25f;
  logits[17] = NAN;
  logits[4000] = -INFINITY;
  logits[4999] = 100.0f;  // the best, in the last, partial block
  const std::vector<std::pair<int32_t, float>> changed = {
      {3, 50.0f}, {4999, -1.0f}, {64, -INFINITY}, {128, NAN}};
  std::vector<TokenData> every;
  for (int32_t i = 0; i < 5000; ++i) {
    float l = logits[static_cast<size_t>(i)];
    for (const auto& [id, v] : changed) l = id == i ? v : l;
    if (usable(l)) every.push_back({i, l, 0});
  }
  std::sort(every.begin(), every.end(), better);
  std::vector<uint8_t> mask;
  std::vector<TokenData> got;
  for (size_t keep : {size_t{1}, size_t{2}, size_t{40}, size_t{300}, every.size(), every.size() + 10}) {
    best_candidates(logits, changed, keep, mask, got);
    ASSERT_EQ(got.size(), std::min(keep, every.size())) << "keep " << keep;
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].id, every[i].id) << "keep " << keep << ", place " << i;
      EXPECT_EQ(got[i].logit, every[i].logit) << "keep " << keep << ", place " << i;
    }
    EXPECT_EQ(std::count(mask.begin(), mask.end(), 1), 0);  // left clean for the next call
  }
  EXPECT_EQ(got.front().id, 3);
}

TEST(Stages, TopK) {
  Candidates c = from_probs({0.1f, 0.2f, 0.3f, 0.4f});
  top_k(c, 1);
  expect_probs(c, {1.0f});
  EXPECT_EQ(c.items[0].id, 3);
  c = from_probs({0.1f, 0.2f, 0.3f, 0.4f});
  top_k(c, 3);
  expect_probs(c, {0.4f / 0.9f, 0.3f / 0.9f, 0.2f / 0.9f});
  c = from_probs({0.1f, 0.2f, 0.3f, 0.4f});
  top_k(c, 0);
  EXPECT_EQ(c.items.size(), 4u);
}

TEST(Stages, TopKTiesPreferLowestId) {
  Candidates c;
  c.items = {{5, 1.0f, 0}, {2, 1.0f, 0}, {7, 1.0f, 0}};
  top_k(c, 2);
  ASSERT_EQ(c.items.size(), 2u);
  EXPECT_EQ(c.items[0].id, 2);
  EXPECT_EQ(c.items[1].id, 5);
}

TEST(Stages, TopP) {
  Candidates c = from_probs({0.1f, 0.2f, 0.3f, 0.4f});
  top_p(c, 0.65f);
  expect_probs(c, {4.0f / 7, 3.0f / 7});
  c = from_probs({0.1f, 0.2f, 0.3f, 0.4f});
  top_p(c, 0.75f);
  expect_probs(c, {4.0f / 9, 3.0f / 9, 2.0f / 9});
  c = from_probs({0.1f, 0.2f, 0.3f, 0.4f});
  top_p(c, 0.0f);
  expect_probs(c, {1.0f});
  c = from_probs({0.1f, 0.2f, 0.3f, 0.4f});
  top_p(c, 1.0f);
  EXPECT_EQ(c.items.size(), 4u);
}

TEST(Stages, MinP) {
  Candidates c = from_probs({0.1f, 0.2f, 0.3f, 0.4f});
  min_p(c, 0.55f);  // threshold 0.22
  expect_probs(c, {4.0f / 7, 3.0f / 7});
  c = from_probs({0.1f, 0.2f, 0.3f, 0.4f});
  min_p(c, 0.76f);  // threshold 0.304
  expect_probs(c, {1.0f});
  c = from_probs({0.1f, 0.2f, 0.3f, 0.4f});
  min_p(c, 0.2f);  // threshold 0.08
  EXPECT_EQ(c.items.size(), 4u);
  c = from_probs({0.1f, 0.2f, 0.3f, 0.4f});
  min_p(c, 5.0f);  // above 1: only the best survives
  expect_probs(c, {1.0f});
}

TEST(Stages, Typical) {
  // Entropy 1.332; |-log p - H|: 0.4 -> 0.416, 0.2 -> 0.277: the three 0.2s come first.
  Candidates c = from_probs({0.4f, 0.2f, 0.2f, 0.2f});
  typical(c, 0.5f);
  expect_probs(c, {1.0f / 3, 1.0f / 3, 1.0f / 3});
  for (const TokenData& t : c.items) EXPECT_NE(t.id, 0);
  c = from_probs({0.97f, 0.01f, 0.01f, 0.01f});
  typical(c, 0.5f);
  expect_probs(c, {1.0f});
  EXPECT_EQ(c.items[0].id, 0);
  c = from_probs({0.97f, 0.01f, 0.01f, 0.01f});
  typical(c, 1.0f);
  EXPECT_EQ(c.items.size(), 4u);
}

TEST(Stages, Temperature) {
  Candidates c;
  c.items = {{0, 1.0f, 0}, {1, 2.0f, 0}, {2, -4.0f, 0}};
  temperature(c, 0.5f);
  EXPECT_FLOAT_EQ(c.items[0].logit, 2.0f);
  EXPECT_FLOAT_EQ(c.items[1].logit, 4.0f);
  EXPECT_FLOAT_EQ(c.items[2].logit, -8.0f);
  // exp(2/T) / (exp(2/T) + exp(1/T)) at T = 2: 1 / (1 + e^-0.5)
  c.items = {{0, 1.0f, 0}, {1, 2.0f, 0}};
  temperature(c, 2.0f);
  expect_probs(c, {1.0f / (1.0f + std::exp(-0.5f)), 1.0f - 1.0f / (1.0f + std::exp(-0.5f))});
}

TEST(Stages, Penalize) {
  EXPECT_FLOAT_EQ(penalize(2.0f, 2, 2.0f, 0.5f, 0.25f), 2.0f / 2 - 2 * 0.5f - 0.25f);
  EXPECT_FLOAT_EQ(penalize(-1.0f, 1, 2.0f, 0.0f, 0.0f), -2.0f);
  EXPECT_FLOAT_EQ(penalize(0.0f, 3, 1.5f, 0.1f, 0.0f), -0.3f);
  EXPECT_FLOAT_EQ(penalize(3.0f, 1, 1.0f, 0.0f, 1.0f), 2.0f);
}

TEST(Stages, DrawWalksTheCumulativeDistribution) {
  // Sorted: id3 0.4 | id2 0.3 | id1 0.2 | id0 0.1; cumulative 0.4, 0.7, 0.9, 1.0.
  const std::vector<std::pair<double, int32_t>> cases = {{0.0, 3},  {0.39, 3}, {0.41, 2}, {0.69, 2},
                                                         {0.71, 1}, {0.89, 1}, {0.91, 0}, {0.999, 0}};
  for (auto [u, id] : cases) {
    Candidates c = from_probs({0.1f, 0.2f, 0.3f, 0.4f});
    EXPECT_EQ(c.items[draw(c, u)].id, id) << "u=" << u;
  }
}

}  // namespace
}  // namespace paddock::sample
