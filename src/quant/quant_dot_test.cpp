// vec_dot of every weight type against (a) the dot of the dequantized rows computed in double,
// which it must match up to float rounding, and (b) the plain f32 dot, which it must approach
// within the combined quantization error of weights and activations.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "base/fp16.h"
#include "quant/blocks.h"
#include "quant/lanes8.h"
#include "quant/quant.h"
#include "quant/test_budgets.h"
#include "quant/test_data.h"

namespace paddock {
namespace {

using quant_test::gaussian_row;

std::vector<DType> weight_types() {
  std::vector<DType> out;
  for (uint32_t id = 0; id < kDTypeIdCount; ++id) {
    const auto t = dtype_from_id(id);
    if (t && quant_ops(*t) != nullptr && quant_ops(*t)->vec_dot != nullptr) out.push_back(*t);
  }
  return out;
}

double dot_f64(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

double abs_dot_f64(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += std::fabs(static_cast<double>(a[i]) * b[i]);
  return s;
}

// Q8_1 keeps s = d * sum(q) rounded to fp16, and Q4_1 / Q5_1 dots use that stored s for the
// min term: the exact reference must use it too. Returns the difference that makes.
double q8_1_sum_correction(DType t, const std::vector<uint8_t>& wq, const std::vector<uint8_t>& aq) {
  const auto* a = reinterpret_cast<const BlockQ8_1*>(aq.data());
  double correction = 0;
  for (size_t b = 0; b < aq.size() / sizeof(BlockQ8_1); ++b) {
    const uint16_t m_bits = t == DType::kQ4_1 ? reinterpret_cast<const BlockQ4_1*>(wq.data())[b].m
                                              : reinterpret_cast<const BlockQ5_1*>(wq.data())[b].m;
    int sum = 0;
    for (int8_t q : a[b].qs) sum += q;
    const double exact_s = static_cast<double>(fp16_to_f32(a[b].d)) * sum;
    correction += static_cast<double>(fp16_to_f32(m_bits)) * (fp16_to_f32(a[b].s) - exact_s);
  }
  return correction;
}

struct DotCase {
  std::vector<float> w;
  std::vector<float> act;
};

class VecDot : public ::testing::TestWithParam<DType> {
 protected:
  // Checks one (weights, activations) pair; returns |vec_dot - f32 dot| / sum |w * act|.
  double check(const DotCase& c) {
    const DType t = GetParam();
    const QuantOps* ops = quant_ops(t);
    const auto n = static_cast<int64_t>(c.w.size());
    const std::vector<uint8_t> wq = quantize(t, c.w);
    const std::vector<uint8_t> aq = quantize(ops->vec_dot_type, c.act);
    float got = 0;
    ops->vec_dot(n, &got, wq.data(), aq.data());

    // (a) Same quantized operands, exact arithmetic: only float accumulation differs.
    const std::vector<float> wd = dequantize(t, wq, n);
    const std::vector<float> ad = dequantize(ops->vec_dot_type, aq, n);
    double exact = dot_f64(wd, ad);
    if (ops->vec_dot_type == DType::kQ8_1) exact += q8_1_sum_correction(t, wq, aq);
    const double scale = abs_dot_f64(wd, ad) + 1e-30;
    EXPECT_LE(std::fabs(got - exact) / scale, 2e-6)
        << dtype_name(t) << " n=" << n << " got " << got << " exact " << exact;

    EXPECT_EQ(quantized_dot(t, wq.data(), c.act), got);
    return std::fabs(got - dot_f64(c.w, c.act)) / (abs_dot_f64(c.w, c.act) + 1e-30);
  }
};

TEST_P(VecDot, MatchesDequantizedDotAndApproachesF32) {
  const DType t = GetParam();
  const auto block = dtype_info(t).block_size == 1 ? 32u : dtype_info(t).block_size;
  const quant_test::Budget* wb = quant_test::budget_for(t);
  const quant_test::Budget* ab = quant_test::budget_for(quant_ops(t)->vec_dot_type);
  ASSERT_NE(wb, nullptr);
  ASSERT_NE(ab, nullptr);
  for (uint32_t blocks : {1u, 7u, 16u}) {
    DotCase c{gaussian_row(blocks * block, 100 + blocks), gaussian_row(blocks * block, 200 + blocks)};
    // Random-sign errors: the relative error of the sum over sum |w * a| is about the per-element
    // relative error over sqrt(n); 4 / sqrt(n) of the budgets leaves room for bad luck.
    const double bound =
        4.0 * (wb->gaussian + ab->gaussian) / std::sqrt(static_cast<double>(c.w.size())) + 1e-6;
    EXPECT_LE(check(c), bound) << dtype_name(t) << " blocks=" << blocks;
  }
}

TEST_P(VecDot, ExtremeRows) {
  const DType t = GetParam();
  const auto n = dtype_info(t).block_size == 1 ? 64u : 2 * dtype_info(t).block_size;
  DotCase zeros{std::vector<float>(n, 0.0f), gaussian_row(n, 1)};
  check(zeros);
  DotCase zero_act{gaussian_row(n, 2), std::vector<float>(n, 0.0f)};
  check(zero_act);
  DotCase outlier{gaussian_row(n, 3, 0.01f), gaussian_row(n, 4)};
  outlier.w[5] = 1000.0f;
  outlier.act[n - 1] = -500.0f;
  check(outlier);
  DotCase negative{gaussian_row(n, 5), gaussian_row(n, 6)};
  for (float& v : negative.w) v = -std::fabs(v);
  for (float& v : negative.act) v = -std::fabs(v);
  check(negative);
}

INSTANTIATE_TEST_SUITE_P(AllTypes, VecDot, ::testing::ValuesIn(weight_types()),
                         [](const ::testing::TestParamInfo<DType>& p) {
                           return std::string(dtype_name(p.param));
                         });

TEST(VecDotCoverage, AllSixteenComputeTypesHaveADot) { EXPECT_EQ(weight_types().size(), 16u); }

// hsum_float_8's tree: sequential addition would lose the ones against 2^24 and give 3.
TEST(Lanes8, SumsInGgmlsTree) {
  Lanes8 s;
  s.acc = {16777216.0f, 1.0f, 1.0f, 1.0f, -16777216.0f, 1.0f, 1.0f, 1.0f};
  EXPECT_EQ(s.sum(), 6.0f);
}

// Q8_0's dot rounds each lane's running sum on its own, as ggml's AVX2 kernel does: block 0
// puts 2^24 in lane 0, block 1 adds 1 to lane 0 (lost to rounding: ties to even) and 1 to
// lane 1 (lost in the final sum). A per-block sum would keep both and give 2^24 + 2.
TEST(VecDotQ8_0, RoundsEachLaneAsGgmlsAvx2Kernel) {
  BlockQ8_0 x[2] = {}, y[2] = {};
  x[0].d = x[1].d = y[1].d = f32_to_fp16(1.0f);
  y[0].d = f32_to_fp16(1024.0f);
  for (int i = 0; i < 4; ++i) x[0].qs[i] = y[0].qs[i] = 64;  // lane 0: 4 * 64 * 64 * 1024 = 2^24
  x[1].qs[0] = y[1].qs[0] = 1;                               // block 1, lane 0
  x[1].qs[4] = y[1].qs[4] = 1;                               // block 1, lane 1
  float out = 0;
  quant_ops(DType::kQ8_0)->vec_dot(64, &out, x, y);
  EXPECT_EQ(out, 16777216.0f);
}

}  // namespace
}  // namespace paddock
