// The interleaved-weight kernels (gemm.h over repack.h) against the quant table's reference
// vec_dot on the original rows: every repackable type, odd block counts, 1..kMaxCols columns,
// Gaussian data and the extreme quants that bound the kernels' int16 partial sums.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <vector>

#include "backend/cpu/dot.h"
#include "backend/cpu/gemm.h"
#include "backend/cpu/repack.h"
#include "backend/cpu/test_support.h"
#include "base/fp16.h"
#include "quant/quant.h"
#include "quant/test_data.h"

namespace paddock {
namespace {

using quant_test::gaussian_row;

constexpr DType kRepackable[] = {DType::kQ4_K, DType::kQ6_K, DType::kQ8_0};
constexpr int64_t kRows = 2 * cpu::kRepackRows;

struct Case {
  std::vector<uint8_t> w;  // kRows rows
  std::vector<uint8_t> y;  // kMaxCols columns of the vec_dot type
  int64_t n;
};

// sum |w_i * y_i| of the dequantized rows: the scale that float reordering errors follow.
double abs_dot(DType wt, const uint8_t* w, const uint8_t* y, int64_t n) {
  const DType yt = quant_ops(wt)->vec_dot_type;
  const std::vector<float> wf = dequantize(wt, std::span<const uint8_t>(w, dtype_row_bytes(wt, n)), n);
  const std::vector<float> yf = dequantize(yt, std::span<const uint8_t>(y, dtype_row_bytes(yt, n)), n);
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += std::fabs(static_cast<double>(wf[i]) * yf[i]);
  return s;
}

// Runs every group through the kernel and checks each (row, column) against vec_dot.
void check(CpuIsa isa, DType t, const Case& c, double rel_tol) {
  const QuantOps* ops = quant_ops(t);
  const cpu::GemmFn gemm = cpu::gemm_kernel(isa, t);
  ASSERT_NE(gemm, nullptr) << dtype_name(t);
  const size_t row = dtype_row_bytes(t, c.n);
  const size_t yb = dtype_row_bytes(ops->vec_dot_type, c.n);
  std::vector<uint8_t> packed(cpu::repacked_bytes(t, c.n, kRows));
  cpu::repack_rows(t, c.w.data(), c.n, 0, kRows, packed.data());
  const size_t group = row * cpu::kRepackRows;
  for (int ny = 1; ny <= cpu::kMaxCols; ++ny) {
    for (int64_t g = 0; g < kRows / cpu::kRepackRows; ++g) {
      float out[cpu::kMaxCols * cpu::kRepackRows];
      gemm(c.n, packed.data() + group * static_cast<size_t>(g), c.y.data(), yb, ny, out);
      for (int j = 0; j < ny; ++j) {
        for (int r = 0; r < cpu::kRepackRows; ++r) {
          const uint8_t* w_row = c.w.data() + row * static_cast<size_t>(g * cpu::kRepackRows + r);
          const uint8_t* col = c.y.data() + yb * static_cast<size_t>(j);
          float expected = 0;
          ops->vec_dot(c.n, &expected, w_row, col);
          EXPECT_NEAR(out[cpu::kRepackRows * j + r], expected, rel_tol * abs_dot(t, w_row, col, c.n) + 1e-30)
              << dtype_name(t) << " n " << c.n << " ny " << ny << " row " << g * cpu::kRepackRows + r
              << " column " << j;
        }
      }
    }
  }
}

Case gaussian_case(DType t, int64_t blocks, float sigma) {
  Case c;
  c.n = blocks * dtype_info(t).block_size;
  for (int64_t r = 0; r < kRows; ++r) {
    const std::vector<uint8_t> q =
        quantize(t, gaussian_row(static_cast<size_t>(c.n), 11 + static_cast<uint32_t>(r), sigma));
    c.w.insert(c.w.end(), q.begin(), q.end());
  }
  for (int j = 0; j < cpu::kMaxCols; ++j) {
    const std::vector<uint8_t> q = quantize(quant_ops(t)->vec_dot_type,
                                            gaussian_row(static_cast<size_t>(c.n), 100 + static_cast<uint32_t>(j), sigma));
    c.y.insert(c.y.end(), q.begin(), q.end());
  }
  return c;
}

// Every weight quant and scale at its largest magnitude, activations all +127 or all -127
// (alternating by column): the sums the kernels keep in int16 reach their bounds.
Case extreme_case(DType t, int64_t blocks) {
  Case c;
  c.n = blocks * dtype_info(t).block_size;
  c.w.assign(dtype_row_bytes(t, c.n) * kRows, 0);
  const int64_t nb = c.n / dtype_info(t).block_size;
  const uint16_t one = f32_to_fp16(1.0f);
  for (int64_t b = 0; b < nb * kRows; ++b) {
    if (t == DType::kQ4_K) {
      auto& blk = reinterpret_cast<BlockQ4_K*>(c.w.data())[b];
      blk.d = one;
      blk.dmin = one;
      std::memset(blk.scales, 0xFF, sizeof(blk.scales));  // scales and mins 63
      std::memset(blk.qs, 0xFF, sizeof(blk.qs));          // quants 15
    } else if (t == DType::kQ6_K) {
      auto& blk = reinterpret_cast<BlockQ6_K*>(c.w.data())[b];
      blk.d = one;
      std::memset(blk.ql, 0xFF, sizeof(blk.ql));  // quants 63
      std::memset(blk.qh, 0xFF, sizeof(blk.qh));
      for (int g = 0; g < 16; ++g) blk.scales[g] = static_cast<int8_t>(g % 2 ? -128 : 127);
    } else {
      auto& blk = reinterpret_cast<BlockQ8_0*>(c.w.data())[b];
      blk.d = one;
      for (int i = 0; i < kQK8_0; ++i) blk.qs[i] = static_cast<int8_t>(i % 3 == 0 ? -128 : 127);
    }
  }
  const DType yt = quant_ops(t)->vec_dot_type;
  for (int j = 0; j < cpu::kMaxCols; ++j) {
    const float v = j % 2 ? -1.0f : 1.0f;
    const std::vector<uint8_t> q = quantize(yt, std::vector<float>(static_cast<size_t>(c.n), v));
    c.y.insert(c.y.end(), q.begin(), q.end());
  }
  return c;
}

class GemmKernels : public ::testing::TestWithParam<CpuIsa> {};

TEST_P(GemmKernels, MatchReferenceVecDotOnGaussianRows) {
  PADDOCK_SKIP_WITHOUT_ISA(GetParam());
  if (GetParam() == CpuIsa::kScalar) {
    for (DType t : kRepackable) EXPECT_EQ(cpu::gemm_kernel(CpuIsa::kScalar, t), nullptr);
    return;
  }
  for (DType t : kRepackable) {
    for (int64_t blocks : {1, 7, 33}) {
      check(GetParam(), t, gaussian_case(t, blocks, 1.0f), 2e-5);
      check(GetParam(), t, gaussian_case(t, blocks, 300.0f), 2e-5);
    }
  }
}

TEST_P(GemmKernels, IntegerSumsStayExactAtTheExtremes) {
  PADDOCK_SKIP_WITHOUT_ISA(GetParam());
  if (GetParam() == CpuIsa::kScalar) GTEST_SKIP() << "the scalar path multiplies the original rows";
  for (DType t : kRepackable) {
    for (int64_t blocks : {1, 3}) check(GetParam(), t, extreme_case(t, blocks), 1e-6);
  }
}

INSTANTIATE_TEST_SUITE_P(AllIsas, GemmKernels, ::testing::ValuesIn(cpu_test::kAllIsas), cpu_test::isa_param_name);

TEST(Repack, KeepsTheMatrixSizeAndSplitsByGroups) {
  for (DType t : kRepackable) {
    EXPECT_TRUE(cpu::can_repack(t));
    EXPECT_EQ(cpu::repacked_bytes(t, 512, 16), dtype_row_bytes(t, 512) * 16);
    // Repacking groups one call at a time gives the same bytes as one call for all.
    const Case c = gaussian_case(t, 2, 1.0f);
    std::vector<uint8_t> whole(cpu::repacked_bytes(t, c.n, kRows)), parts(whole.size());
    cpu::repack_rows(t, c.w.data(), c.n, 0, kRows, whole.data());
    cpu::repack_rows(t, c.w.data(), c.n, 0, cpu::kRepackRows, parts.data());
    cpu::repack_rows(t, c.w.data(), c.n, cpu::kRepackRows, kRows, parts.data());
    EXPECT_EQ(whole, parts) << dtype_name(t);
  }
  EXPECT_FALSE(cpu::can_repack(DType::kQ5_K));
  EXPECT_FALSE(cpu::can_repack(DType::kF16));
}

}  // namespace
}  // namespace paddock
