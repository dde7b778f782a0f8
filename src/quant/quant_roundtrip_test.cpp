// Quantize-then-dequantize error of every quantizable type in the table, against per-type
// budgets (relative RMSE), on random and structured rows, odd block counts and extreme rows.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "quant/quant.h"
#include "quant/test_budgets.h"
#include "quant/test_data.h"

namespace paddock {
namespace {

using quant_test::Budget;
using quant_test::gaussian_row;
using quant_test::kBudgets;
using quant_test::relative_rmse;

std::vector<float> round_trip(DType t, const std::vector<float>& x) {
  const std::vector<uint8_t> q = quantize(t, x);
  return dequantize(t, q, static_cast<int64_t>(x.size()));
}

std::vector<float> structured_row(size_t n) {
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) {
    const double t = static_cast<double>(i);
    x[i] = static_cast<float>(0.8 * std::sin(t * 0.05) + 0.3 * std::cos(t * 0.31) + 0.2 + 0.0005 * t);
  }
  return x;
}

class RoundTrip : public ::testing::TestWithParam<Budget> {};

TEST_P(RoundTrip, GaussianRowWithinBudget) {
  const Budget b = GetParam();
  const std::vector<float> x = gaussian_row(4096, 1);
  const double err = relative_rmse(x, round_trip(b.type, x));
  RecordProperty("rmse", std::to_string(err));
  EXPECT_LE(err, b.gaussian) << dtype_name(b.type);
}

TEST_P(RoundTrip, StructuredRowWithinBudget) {
  const Budget b = GetParam();
  const std::vector<float> x = structured_row(4096);
  const double err = relative_rmse(x, round_trip(b.type, x));
  EXPECT_LE(err, b.structured) << dtype_name(b.type);
}

TEST_P(RoundTrip, OneAndSevenBlocks) {
  const Budget b = GetParam();
  const auto block = dtype_info(b.type).block_size;
  for (size_t blocks : {size_t{1}, size_t{7}}) {
    const std::vector<float> x =
        gaussian_row(blocks * block * (block == 1 ? 32 : 1), 3 + static_cast<uint32_t>(blocks));
    // One block is a small sample: allow some slack over the 4096-element budget.
    EXPECT_LE(relative_rmse(x, round_trip(b.type, x)), b.gaussian * 1.5 + 1e-7)
        << dtype_name(b.type) << " " << blocks;
  }
}

TEST_P(RoundTrip, AllZeroStaysExactlyZero) {
  const Budget b = GetParam();
  const std::vector<float> x(512, 0.0f);
  for (float v : round_trip(b.type, x)) ASSERT_EQ(v, 0.0f) << dtype_name(b.type);
}

TEST_P(RoundTrip, NegativeOnlyRowWithinBudget) {
  const Budget b = GetParam();
  std::vector<float> x = gaussian_row(1024, 5);
  for (float& v : x) v = -std::fabs(v) - 0.1f;
  const std::vector<float> y = round_trip(b.type, x);
  EXPECT_LE(relative_rmse(x, y), b.gaussian) << dtype_name(b.type);
  // Nothing turns clearly positive: at most the type's error (RMS of this row is about 1).
  for (float v : y) ASSERT_LE(v, b.gaussian) << dtype_name(b.type);
}

TEST_P(RoundTrip, HugeOutlierIsKeptAndNeighboursStayFinite) {
  const Budget b = GetParam();
  std::vector<float> x = gaussian_row(512, 9, 0.01f);
  x[37] = 1000.0f;
  const std::vector<float> y = round_trip(b.type, x);
  for (float v : y) ASSERT_TRUE(std::isfinite(v)) << dtype_name(b.type);
  // The outlier dominates its block's scale; it must survive within the type's precision.
  // MXFP4's power-of-two scale saturates a block maximum in [1.5, 2) * 2^k to 1.5 * 2^k.
  const double max_error = b.type == DType::kMXFP4 ? 0.25 : b.gaussian;
  EXPECT_NEAR(y[37], 1000.0f, 1000.0f * max_error) << dtype_name(b.type);
  // Elements far from the outlier's block keep their own scales.
  std::vector<float> tail(x.begin() + 256, x.end());
  std::vector<float> tail_q(y.begin() + 256, y.end());
  EXPECT_LE(relative_rmse(tail, tail_q), b.gaussian * 1.5) << dtype_name(b.type);
}

INSTANTIATE_TEST_SUITE_P(AllTypes, RoundTrip, ::testing::ValuesIn(kBudgets),
                         [](const ::testing::TestParamInfo<Budget>& p) {
                           return std::string(dtype_name(p.param.type));
                         });

TEST(RoundTripCoverage, EveryQuantizableTableTypeHasABudget) {
  for (uint32_t id = 0; id < kDTypeIdCount; ++id) {
    const auto t = dtype_from_id(id);
    if (!t) continue;
    const QuantOps* ops = quant_ops(*t);
    if (ops == nullptr || ops->quantize_row == nullptr) continue;
    bool found = false;
    for (const Budget& b : kBudgets) found = found || b.type == *t;
    EXPECT_TRUE(found) << dtype_name(*t) << " has a quantizer but no round-trip budget";
  }
}

}  // namespace
}  // namespace paddock
