// The AVX2 e^x against std::exp: within 2 ulp wherever the result is a normal float, exactly
// 1 at 0, 0 (never NaN or negative) far below, -inf included, and clamped above.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "backend/cpu/test_support.h"
#include "backend/cpu/vec_exp.h"

namespace paddock {
namespace {

int64_t ulp_distance(float a, float b) {
  int32_t ia = 0, ib = 0;
  std::memcpy(&ia, &a, sizeof(a));
  std::memcpy(&ib, &b, sizeof(b));
  return std::abs(static_cast<int64_t>(ia) - static_cast<int64_t>(ib));  // both >= 0 here
}

std::vector<float> exp_avx2(const std::vector<float>& x) {
  std::vector<float> y(x.size(), -1.0f);
  cpu::exp_avx2_kernel()(x.data(), y.data(), static_cast<int64_t>(x.size()));
  return y;
}

TEST(VecExp, WithinTwoUlpOfStdExpOverTheNormalRange) {
  PADDOCK_SKIP_WITHOUT_ISA(CpuIsa::kAvx2);
  std::vector<float> x;
  for (float v = -87.3f; v <= 88.0f; v += 0.00731f) x.push_back(v);
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-7f, -1e-7f, 0.5f * std::log(2.0f), -0.5f * std::log(2.0f),
                  -87.336f, 88.0f})
    x.push_back(v);
  x.push_back(1.0f);  // an odd count: the last partial vector goes through the tail path
  const std::vector<float> y = exp_avx2(x);
  int64_t worst = 0;
  float worst_x = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const float want = std::exp(x[i]);
    ASSERT_TRUE(std::isfinite(y[i])) << "x " << x[i];
    const int64_t d = ulp_distance(y[i], want);
    if (d > worst) {
      worst = d;
      worst_x = x[i];
    }
  }
  EXPECT_LE(worst, 2) << "worst at x = " << worst_x;
}

TEST(VecExp, ZeroIsOneAndFarBelowIsZeroNeverNaN) {
  PADDOCK_SKIP_WITHOUT_ISA(CpuIsa::kAvx2);
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {0.0f,   -0.0f,    -87.34f, -88.0f,  -100.0f, -1e4f,
                                -1e30f, -FLT_MAX, -inf,    -104.0f, -90.5f};
  const std::vector<float> y = exp_avx2(x);
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[1], 1.0f);
  for (size_t i = 2; i < x.size(); ++i) {
    EXPECT_FALSE(std::isnan(y[i])) << "x " << x[i];
    EXPECT_GE(y[i], 0.0f) << "x " << x[i];
    EXPECT_LE(y[i], FLT_MIN) << "x " << x[i];  // e^x is below the smallest normal float here
  }
  EXPECT_EQ(y[x.size() - 3], 0.0f) << "e^-inf";
}

TEST(VecExp, LargeInputsAreClampedNotInfinite) {
  PADDOCK_SKIP_WITHOUT_ISA(CpuIsa::kAvx2);
  const std::vector<float> y = exp_avx2({88.0f, 89.0f, 1e6f, std::numeric_limits<float>::infinity()});
  for (float v : y) EXPECT_EQ(v, y[0]);
  EXPECT_LE(ulp_distance(y[0], std::exp(88.0f)), 2);
}

}  // namespace
}  // namespace paddock
