// Every dot kernel of every ISA path against the quant table's reference vec_dot, for every
// compute type, odd block counts and 1..kMaxCols columns.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "backend/cpu/dot.h"
#include "backend/cpu/test_support.h"
#include "base/fp16.h"
#include "quant/quant.h"
#include "quant/test_data.h"

namespace paddock {
namespace {

using quant_test::gaussian_row;

constexpr DType kComputeTypes[] = {
    DType::kF32,  DType::kF16,    DType::kBF16,   DType::kQ4_0,  DType::kQ4_1, DType::kQ5_0,
    DType::kQ5_1, DType::kQ8_0,   DType::kQ2_K,   DType::kQ3_K,  DType::kQ4_K, DType::kQ5_K,
    DType::kQ6_K, DType::kIQ4_NL, DType::kIQ4_XS, DType::kMXFP4,
};

// sum |w_i * y_i| of the dequantized rows: the scale that float reordering errors follow.
double abs_dot(DType wt, const std::vector<uint8_t>& w, DType yt, const uint8_t* y, int64_t n) {
  const std::vector<float> wf = dequantize(wt, w, n);
  const size_t yb = dtype_row_bytes(yt, n);
  const std::vector<float> yf = dequantize(yt, std::span<const uint8_t>(y, yb), n);
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += std::fabs(static_cast<double>(wf[i]) * yf[i]);
  return s;
}

void check_type(CpuIsa isa, DType t, float sigma) {
  const QuantOps* ops = quant_ops(t);
  ASSERT_NE(ops, nullptr);
  const cpu::DotFn dot = cpu::dot_kernel(isa, t);
  ASSERT_NE(dot, nullptr) << dtype_name(t);
  const int64_t bs = dtype_info(t).block_size;
  for (int64_t blocks : {1, 2, 7, 33}) {
    const int64_t n = blocks * bs;
    const std::vector<uint8_t> w = quantize(t, gaussian_row(static_cast<size_t>(n), 11, sigma));
    const size_t yb = dtype_row_bytes(ops->vec_dot_type, n);
    std::vector<uint8_t> y;
    for (int j = 0; j < cpu::kMaxCols; ++j) {
      const std::vector<uint8_t> col = quantize(
          ops->vec_dot_type, gaussian_row(static_cast<size_t>(n), 100 + static_cast<uint32_t>(j), sigma));
      y.insert(y.end(), col.begin(), col.end());
    }
    for (int ny = 1; ny <= cpu::kMaxCols; ++ny) {
      float out[cpu::kMaxCols] = {};
      dot(n, w.data(), y.data(), yb, ny, out);
      for (int j = 0; j < ny; ++j) {
        const uint8_t* col = y.data() + yb * static_cast<size_t>(j);
        float expected = 0;
        ops->vec_dot(n, &expected, w.data(), col);
        // Q8_0 and MXFP4 sum in ggml's AVX2 order on every path (quant/lanes8.h): bit for bit.
        if (t == DType::kQ8_0 || t == DType::kMXFP4) {
          EXPECT_EQ(out[j], expected)
              << dtype_name(t) << " isa " << cpu_isa_name(isa) << " n " << n << " ny " << ny;
          continue;
        }
        const double tol = 2e-5 * abs_dot(t, w, ops->vec_dot_type, col, n) + 1e-30;
        EXPECT_NEAR(out[j], expected, tol)
            << dtype_name(t) << " isa " << cpu_isa_name(isa) << " n " << n << " ny " << ny << " column " << j;
      }
    }
  }
}

class DotKernels : public ::testing::TestWithParam<CpuIsa> {};

TEST_P(DotKernels, MatchReferenceVecDotForEveryType) {
  PADDOCK_SKIP_WITHOUT_ISA(GetParam());
  for (DType t : kComputeTypes) check_type(GetParam(), t, 1.0f);
}

TEST_P(DotKernels, MatchReferenceOnLargeMagnitudes) {
  PADDOCK_SKIP_WITHOUT_ISA(GetParam());
  for (DType t : kComputeTypes) check_type(GetParam(), t, 300.0f);
}

TEST_P(DotKernels, ZeroRowsGiveZero) {
  PADDOCK_SKIP_WITHOUT_ISA(GetParam());
  for (DType t : kComputeTypes) {
    const QuantOps* ops = quant_ops(t);
    const int64_t n = 2 * dtype_info(t).block_size;
    const std::vector<uint8_t> w = quantize(t, std::vector<float>(static_cast<size_t>(n), 0.0f));
    const std::vector<uint8_t> y = quantize(ops->vec_dot_type, gaussian_row(static_cast<size_t>(n), 5));
    float out = 1.0f;
    cpu::dot_kernel(GetParam(), t)(n, w.data(), y.data(), y.size(), 1, &out);
    EXPECT_EQ(out, 0.0f) << dtype_name(t);
  }
}

INSTANTIATE_TEST_SUITE_P(AllIsas, DotKernels, ::testing::ValuesIn(cpu_test::kAllIsas),
                         cpu_test::isa_param_name);

TEST(DotKernels, SimdPathsHaveTheirOwnKernelsForTheHotTypes) {
  for (DType t : {DType::kF32, DType::kF16, DType::kQ4_0, DType::kQ8_0, DType::kQ2_K, DType::kQ3_K,
                  DType::kQ4_K, DType::kQ5_K, DType::kQ6_K, DType::kQ4_1, DType::kQ5_0, DType::kQ5_1,
                  DType::kIQ4_NL, DType::kIQ4_XS, DType::kMXFP4, DType::kBF16}) {
#if defined(__x86_64__)
    EXPECT_NE(cpu::dot_kernel_avx2(t), nullptr) << dtype_name(t);
    EXPECT_NE(cpu::dot_kernel(CpuIsa::kAvx2, t), cpu::dot_kernel(CpuIsa::kScalar, t)) << dtype_name(t);
#endif
  }
}

TEST(HalfToFloat, EveryPathConvertsExactly) {
  std::vector<uint16_t> h;
  for (uint32_t v = 0; v < 65536; v += 37) {
    if (((v >> 10) & 0x1F) != 0x1F) h.push_back(static_cast<uint16_t>(v));  // finite halves
  }
  for (CpuIsa isa : cpu_test::kAllIsas) {
    if (!cpu_has_isa(isa)) continue;
    std::vector<float> out(h.size()), ref(h.size());
    cpu::half_to_float_kernel(isa)(h.data(), out.data(), static_cast<int64_t>(h.size()));
    cpu::half_to_float_kernel(CpuIsa::kScalar)(h.data(), ref.data(), static_cast<int64_t>(h.size()));
    EXPECT_EQ(out, ref) << cpu_isa_name(isa);
  }
}

// Every path rounds as f32_to_fp16 does: ties to even, subnormal halves, overflow to
// infinity, signed zeros, and NaNs (any payload) to 0x7E00 with their sign.
TEST(FloatToHalf, EveryPathConvertsExactly) {
  std::vector<float> f;
  for (uint64_t v = 0; v < (uint64_t{1} << 32); v += 65521)
    f.push_back(bits_to_f32(static_cast<uint32_t>(v)));
  for (uint32_t v : {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00001u,
                     0x7f800001u, 0x477ff000u, 0x477fefffu, 0x477ff001u, 0x33000000u, 0x33000001u,
                     0x387fc000u, 0x3f801000u, 0x3f803000u})
    f.push_back(bits_to_f32(v));  // max half, rounding into infinity, tiny ties, ties to even
  f.push_back(1.0f);              // an odd count: the tail goes element by element
  for (CpuIsa isa : cpu_test::kAllIsas) {
    if (!cpu_has_isa(isa)) continue;
    std::vector<uint16_t> out(f.size());
    cpu::float_to_half_kernel(isa)(f.data(), out.data(), static_cast<int64_t>(f.size()));
    for (size_t i = 0; i < f.size(); ++i) {
      ASSERT_EQ(out[i], f32_to_fp16(f[i]))
          << cpu_isa_name(isa) << " bits 0x" << std::hex << f32_to_bits(f[i]);
    }
  }
}

}  // namespace
}  // namespace paddock
