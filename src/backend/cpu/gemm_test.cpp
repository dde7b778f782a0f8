// The interleaved-weight kernels (gemm.h over repack.h) against the quant table's reference
// vec_dot on the original rows: every repackable type, odd block counts, 1..kMaxCols columns,
// Gaussian data and the extreme quants that bound the kernels' int16 partial sums. The VNNI
// kernels are also run with an exact AVX2 emulation of vpdpbusd, so their logic is checked on
// CPUs without AVX-512 VNNI.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <vector>

#include "backend/cpu/dot.h"
#include "backend/cpu/gemm.h"
#include "backend/cpu/gemm_x86.h"
#include "backend/cpu/repack.h"
#include "backend/cpu/test_support.h"
#include "base/fp16.h"
#include "quant/quant.h"
#include "quant/test_data.h"

namespace paddock {
namespace {

using quant_test::gaussian_row;

constexpr DType kRepackable[] = {DType::kQ4_0, DType::kQ4_1, DType::kQ5_0, DType::kQ5_1,
                                 DType::kQ2_K, DType::kQ3_K, DType::kQ4_K, DType::kQ5_K,
                                 DType::kQ6_K, DType::kQ8_0, DType::kMXFP4};
constexpr int64_t kRows = 2 * cpu::kRepackRows;
// The types whose kernels sum in ggml's AVX2 order (quant/lanes8.h), as the reference does.
constexpr DType kGgmlOrder[] = {DType::kQ8_0, DType::kMXFP4};

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

// Runs every group through the kernel and checks each (row, column) against vec_dot (rel_tol 0:
// bit for bit). With
// offset, the kernel gets the activations through cpu::offset_activations, as mul_mat gives them.
void check(cpu::GemmFn gemm, DType t, const Case& c, double rel_tol, bool offset = false) {
  const QuantOps* ops = quant_ops(t);
  ASSERT_NE(gemm, nullptr) << dtype_name(t);
  const size_t row = dtype_row_bytes(t, c.n);
  const size_t yb = dtype_row_bytes(ops->vec_dot_type, c.n);
  std::vector<uint8_t> packed(cpu::repacked_bytes(t, c.n, kRows));
  cpu::repack_rows(t, c.w.data(), c.n, 0, kRows, packed.data());
  std::vector<uint8_t> y = c.y;
  if (offset) {
    for (size_t j = 0; j < y.size() / yb; ++j) cpu::offset_activations(y.data() + yb * j, c.n);
  }
  const size_t group = row * cpu::kRepackRows;
  for (int ny = 1; ny <= cpu::kMaxCols; ++ny) {
    for (int64_t g = 0; g < kRows / cpu::kRepackRows; ++g) {
      float out[cpu::kMaxCols * cpu::kRepackRows];
      gemm(c.n, packed.data() + group * static_cast<size_t>(g), y.data(), yb, ny, out);
      for (int j = 0; j < ny; ++j) {
        for (int r = 0; r < cpu::kRepackRows; ++r) {
          const uint8_t* w_row = c.w.data() + row * static_cast<size_t>(g * cpu::kRepackRows + r);
          const uint8_t* col = c.y.data() + yb * static_cast<size_t>(j);
          float expected = 0;
          ops->vec_dot(c.n, &expected, w_row, col);
          const float got = out[cpu::kRepackRows * j + r];
          if (rel_tol == 0) {
            EXPECT_EQ(got, expected) << dtype_name(t) << " n " << c.n << " ny " << ny << " row "
                                     << g * cpu::kRepackRows + r << " column " << j;
          } else {
            EXPECT_NEAR(got, expected, rel_tol * abs_dot(t, w_row, col, c.n) + 1e-30)
                << dtype_name(t) << " n " << c.n << " ny " << ny << " row " << g * cpu::kRepackRows + r
                << " column " << j;
          }
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
    const std::vector<uint8_t> q =
        quantize(quant_ops(t)->vec_dot_type,
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
    } else if (t == DType::kQ2_K) {
      auto& blk = reinterpret_cast<BlockQ2_K*>(c.w.data())[b];
      blk.d = one;
      blk.dmin = one;
      std::memset(blk.scales, 0xFF, sizeof(blk.scales));  // scales and mins 15
      std::memset(blk.qs, 0xFF, sizeof(blk.qs));          // levels 3
    } else if (t == DType::kQ3_K) {
      auto& blk = reinterpret_cast<BlockQ3_K*>(c.w.data())[b];
      blk.d = one;
      std::memset(blk.scales, 0, sizeof(blk.scales));  // scales -32
      std::memset(blk.hmask, 0, sizeof(blk.hmask));    // levels -4
      std::memset(blk.qs, 0, sizeof(blk.qs));
    } else if (t == DType::kQ5_K) {
      auto& blk = reinterpret_cast<BlockQ5_K*>(c.w.data())[b];
      blk.d = one;
      blk.dmin = one;
      std::memset(blk.scales, 0xFF, sizeof(blk.scales));  // scales and mins 63
      std::memset(blk.qh, 0xFF, sizeof(blk.qh));          // quants 31
      std::memset(blk.qs, 0xFF, sizeof(blk.qs));
    } else if (t == DType::kQ6_K) {
      auto& blk = reinterpret_cast<BlockQ6_K*>(c.w.data())[b];
      blk.d = one;
      std::memset(blk.ql, 0xFF, sizeof(blk.ql));  // quants 63
      std::memset(blk.qh, 0xFF, sizeof(blk.qh));
      for (int g = 0; g < 16; ++g) blk.scales[g] = static_cast<int8_t>(g % 2 ? -128 : 127);
    } else if (t == DType::kQ4_0) {
      auto& blk = reinterpret_cast<BlockQ4_0*>(c.w.data())[b];
      blk.d = one;
      for (int i = 0; i < kQK4_0 / 2; ++i) blk.qs[i] = i % 3 == 0 ? 0x00 : 0xF0;  // quants -8, and -8 / 7
    } else if (t == DType::kQ5_0) {
      auto& blk = reinterpret_cast<BlockQ5_0*>(c.w.data())[b];
      blk.d = one;
      for (int i = 0; i < kQK5_0 / 2; ++i) blk.qs[i] = i % 3 == 0 ? 0x00 : 0xF0;  // quants -16, and -16 / 15
      const uint32_t high = 0xAAAA0000u;  // the high nibbles' 5th bits
      std::memcpy(blk.qh, &high, 4);
    } else if (t == DType::kQ4_1) {
      auto& blk = reinterpret_cast<BlockQ4_1*>(c.w.data())[b];
      blk.d = one;
      blk.m = one;
      std::memset(blk.qs, 0xFF, sizeof(blk.qs));  // quants 15
    } else if (t == DType::kQ5_1) {
      auto& blk = reinterpret_cast<BlockQ5_1*>(c.w.data())[b];
      blk.d = one;
      blk.m = one;
      std::memset(blk.qh, 0xFF, sizeof(blk.qh));  // quants 31
      std::memset(blk.qs, 0xFF, sizeof(blk.qs));
    } else if (t == DType::kMXFP4) {
      auto& blk = reinterpret_cast<BlockMXFP4*>(c.w.data())[b];
      blk.e = 128;  // half scale 1
      for (int i = 0; i < kQKMXFP4 / 2; ++i)
        blk.qs[i] = i % 3 == 0 ? 0xFF : 0x7F;  // levels -12, and -12 / 12
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
    const bool offset = cpu::gemm_offsets_activations(GetParam(), t);
    for (int64_t blocks : {1, 7, 33}) {
      check(cpu::gemm_kernel(GetParam(), t), t, gaussian_case(t, blocks, 1.0f), 2e-5, offset);
      check(cpu::gemm_kernel(GetParam(), t), t, gaussian_case(t, blocks, 300.0f), 2e-5, offset);
    }
  }
}

TEST_P(GemmKernels, Q8_0AndMXFP4AreTheReferenceBitForBit) {
  PADDOCK_SKIP_WITHOUT_ISA(GetParam());
  if (GetParam() == CpuIsa::kScalar) GTEST_SKIP() << "the scalar path multiplies the original rows";
  for (DType t : kGgmlOrder) {
    const bool offset = cpu::gemm_offsets_activations(GetParam(), t);
    for (int64_t blocks : {1, 2, 7, 8, 33})
      check(cpu::gemm_kernel(GetParam(), t), t, gaussian_case(t, blocks, 1.0f), 0, offset);
  }
}

TEST_P(GemmKernels, IntegerSumsStayExactAtTheExtremes) {
  PADDOCK_SKIP_WITHOUT_ISA(GetParam());
  if (GetParam() == CpuIsa::kScalar) GTEST_SKIP() << "the scalar path multiplies the original rows";
  for (DType t : kRepackable) {
    const bool offset = cpu::gemm_offsets_activations(GetParam(), t);
    for (int64_t blocks : {1, 3})
      check(cpu::gemm_kernel(GetParam(), t), t, extreme_case(t, blocks), 1e-6, offset);
  }
}

INSTANTIATE_TEST_SUITE_P(AllIsas, GemmKernels, ::testing::ValuesIn(cpu_test::kAllIsas),
                         cpu_test::isa_param_name);

#if defined(PADDOCK_X86)

// vpdpbusd in AVX2, exactly: per 32-bit lane, acc + the 4 products of unsigned bytes of u and
// signed bytes of s, without the int16 saturation of maddubs (each product fits in int16).
struct EmulatedVpdpbusd {
  PADDOCK_GEMM_INLINE static __m256i dpbusd(__m256i acc, __m256i u, __m256i s) {
    const __m256i ones = _mm256_set1_epi16(1);
    const __m256i even = _mm256_mullo_epi16(_mm256_and_si256(u, _mm256_set1_epi16(0xFF)),
                                            _mm256_srai_epi16(_mm256_slli_epi16(s, 8), 8));
    const __m256i odd = _mm256_mullo_epi16(_mm256_srli_epi16(u, 8), _mm256_srai_epi16(s, 8));
    return _mm256_add_epi32(acc,
                            _mm256_add_epi32(_mm256_madd_epi16(even, ones), _mm256_madd_epi16(odd, ones)));
  }
  PADDOCK_GEMM_INLINE static __m256i dpbusd_bcast(__m256i acc, __m256i u, const int8_t* y) {
    return dpbusd(acc, u, cpu::gemm_x86::bcast4(y));
  }
};

PADDOCK_GEMM_KERNELS(vnni_emulated_kernel, cpu::gemm_x86::Vnni<EmulatedVpdpbusd>, PADDOCK_TARGET_AVX2)

PADDOCK_TARGET_AVX2 void emulated_dpbusd(const int32_t* acc, const uint8_t* u, const int8_t* s,
                                         int32_t* out) {
  const __m256i r = EmulatedVpdpbusd::dpbusd(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc)),
                                             _mm256_loadu_si256(reinterpret_cast<const __m256i*>(u)),
                                             _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s)));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), r);
}

// The emulation against the instruction's definition, extremes included (255 * -128 four times).
TEST(EmulatedVpdpbusd, SumsFourByteProductsPerLane) {
  PADDOCK_SKIP_WITHOUT_ISA(CpuIsa::kAvx2);
  uint32_t seed = 7;
  auto next = [&] { return seed = seed * 1664525u + 1013904223u; };
  for (int round = 0; round < 200; ++round) {
    int32_t acc[8], out[8];
    uint8_t u[32];
    int8_t s[32];
    for (int i = 0; i < 8; ++i) acc[i] = static_cast<int32_t>(next() >> 8) - (1 << 23);
    for (int i = 0; i < 32; ++i) {
      u[i] = round == 0 ? 255 : static_cast<uint8_t>(next() >> 24);
      s[i] = round == 0 ? -128 : static_cast<int8_t>(next() >> 24);
    }
    emulated_dpbusd(acc, u, s, out);
    for (int l = 0; l < 8; ++l) {
      int32_t expected = acc[l];
      for (int b = 0; b < 4; ++b) expected += u[4 * l + b] * s[4 * l + b];
      ASSERT_EQ(out[l], expected) << "round " << round << " lane " << l;
    }
  }
}

// The VNNI kernels' own logic (int32 sub-block sums, scales by mullo, Q8_0 through dot_i32)
// with the emulated instruction: the same cases as the native paths.
TEST(GemmKernelsVnniEmulated, MatchReferenceVecDot) {
  PADDOCK_SKIP_WITHOUT_ISA(CpuIsa::kAvx2);
  for (DType t : kRepackable) {
    const cpu::GemmFn gemm = vnni_emulated_kernel(t);
    const bool offset = cpu::gemm_offsets_activations(CpuIsa::kAvx512, t);  // the same policy
    for (int64_t blocks : {1, 7, 33}) {
      check(gemm, t, gaussian_case(t, blocks, 1.0f), 2e-5, offset);
      check(gemm, t, gaussian_case(t, blocks, 300.0f), 2e-5, offset);
    }
    for (int64_t blocks : {1, 3}) check(gemm, t, extreme_case(t, blocks), 1e-6, offset);
  }
  for (DType t : kGgmlOrder) {
    for (int64_t blocks : {1, 2, 7, 8, 33})
      check(vnni_emulated_kernel(t), t, gaussian_case(t, blocks, 1.0f), 0,
            cpu::gemm_offsets_activations(CpuIsa::kAvx512, t));
  }
}

#endif  // PADDOCK_X86

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
  EXPECT_FALSE(cpu::can_repack(DType::kIQ4_XS));
  EXPECT_FALSE(cpu::can_repack(DType::kF16));
}

}  // namespace
}  // namespace paddock
