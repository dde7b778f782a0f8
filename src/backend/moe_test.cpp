// Mixture-of-experts routing against values worked by hand.
#include "backend/moe.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace paddock {
namespace {

// Logits log(1), log(2), log(4), log(1): softmax = 1/8, 2/8, 4/8, 1/8.
const std::vector<float> kLogits = {0.0f, std::log(2.0f), std::log(4.0f), 0.0f};

TEST(MoeGate, SoftmaxThenTopKKeepsTheHeaviestAndZeroesTheRest) {
  std::vector<float> gate(4);
  moe_gate_column(kLogits.data(), 4, {.k = 2, .gating = MoeGating::kSoftmaxTopK, .norm = false}, gate.data());
  EXPECT_FLOAT_EQ(gate[2], 0.5f);
  EXPECT_FLOAT_EQ(gate[1], 0.25f);
  EXPECT_EQ(gate[0], 0.0f);
  EXPECT_EQ(gate[3], 0.0f);
}

TEST(MoeGate, NormRescalesTheChosenToSumOne) {
  std::vector<float> gate(4);
  moe_gate_column(kLogits.data(), 4, {.k = 2, .gating = MoeGating::kSoftmaxTopK, .norm = true}, gate.data());
  EXPECT_FLOAT_EQ(gate[2], 2.0f / 3.0f);
  EXPECT_FLOAT_EQ(gate[1], 1.0f / 3.0f);
}

TEST(MoeGate, TopKThenSoftmaxIsASoftmaxOverTheChosenLogits) {
  std::vector<float> gate(4);
  moe_gate_column(kLogits.data(), 4, {.k = 2, .gating = MoeGating::kTopKSoftmax, .norm = false}, gate.data());
  EXPECT_FLOAT_EQ(gate[2], 2.0f / 3.0f);
  EXPECT_FLOAT_EQ(gate[1], 1.0f / 3.0f);
  EXPECT_EQ(gate[0] + gate[3], 0.0f);
}

TEST(MoeGate, TiesGoToTheLowerExpert) {
  std::vector<float> gate(4);
  std::vector<float> tied = {1.0f, 1.0f, 1.0f, 1.0f};
  moe_gate_column(tied.data(), 4, {.k = 2, .gating = MoeGating::kSoftmaxTopK, .norm = false}, gate.data());
  EXPECT_GT(gate[0], 0.0f);
  EXPECT_GT(gate[1], 0.0f);
  EXPECT_EQ(gate[2] + gate[3], 0.0f);
}

TEST(MoeSlots, HeaviestFirstAndOnlyNonzeroExperts) {
  const std::vector<float> gate = {0.0f, 0.2f, 0.0f, 0.7f, 0.1f};
  int32_t experts[3];
  ASSERT_EQ(moe_slots(gate.data(), 5, 3, experts), 3);
  EXPECT_EQ(experts[0], 3);
  EXPECT_EQ(experts[1], 1);
  EXPECT_EQ(experts[2], 4);
  const std::vector<float> sparse = {0.0f, 0.0f, 0.5f, 0.0f, 0.0f};
  EXPECT_EQ(moe_slots(sparse.data(), 5, 3, experts), 1);
  EXPECT_EQ(experts[0], 2);
}

TEST(ExpertMatrix, IsThePlaneOfThatExpert) {
  std::vector<float> w(2 * 3 * 4);
  const TensorView all = TensorView::contiguous(w.data(), DType::kF32, {2, 3, 4});
  const TensorView e2 = expert_matrix(all, 2);
  EXPECT_EQ(e2.data, w.data() + 2 * 2 * 3);
  EXPECT_EQ(e2.ne[1], 3);
  EXPECT_EQ(e2.ne[2], 1);
}

}  // namespace
}  // namespace paddock
