// The activation quantizers of every path produce exactly from_float's bytes (ggml-cpu's x86
// quantizers for Q8_0 and Q8_1, the reference ones for the others).
#include "backend/cpu/act_quant.h"

#include <gtest/gtest.h>

#include <vector>

#include "backend/cpu/test_support.h"
#include "quant/quant.h"
#include "quant/test_data.h"

namespace paddock {
namespace {

using quant_test::gaussian_row;

void expect_same_bytes(CpuIsa isa, DType t, const std::vector<float>& x) {
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<uint8_t> got(dtype_row_bytes(t, n), 0xAB);
  std::vector<uint8_t> want(got.size(), 0xCD);
  cpu::act_quantizer(isa, t)(x.data(), got.data(), n);
  from_float(t)(x.data(), want.data(), n);
  EXPECT_EQ(got, want) << dtype_name(t) << " isa " << cpu_isa_name(isa) << " n " << n;
}

class ActQuant : public ::testing::TestWithParam<CpuIsa> {};

TEST_P(ActQuant, MatchesTheReferenceQuantizerByteForByte) {
  PADDOCK_SKIP_WITHOUT_ISA(GetParam());
  for (DType t : {DType::kQ8_K, DType::kQ8_0, DType::kQ8_1, DType::kF16, DType::kBF16}) {
    const int64_t bs = dtype_info(t).block_size;
    for (int64_t blocks : {1, 7, 33}) {
      for (float sigma : {1.0f, 1e-3f, 300.0f}) {
        expect_same_bytes(GetParam(), t, gaussian_row(static_cast<size_t>(blocks * bs), 7, sigma));
      }
    }
  }
}

// Zero blocks, ties of magnitude with both signs, and values landing exactly on .5 after
// scaling exercise the scale choice and both rounding rules.
TEST_P(ActQuant, EdgeValuesMatchTheReference) {
  PADDOCK_SKIP_WITHOUT_ISA(GetParam());
  for (DType t : {DType::kQ8_K, DType::kQ8_0}) {
    const int64_t n = 2 * dtype_info(t).block_size;
    std::vector<float> zeros(static_cast<size_t>(n), 0.0f);
    expect_same_bytes(GetParam(), t, zeros);
    std::vector<float> ties(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) ties[static_cast<size_t>(i)] = static_cast<float>((i % 255) - 127) * 0.5f;
    ties[3] = -63.5f;
    ties[9] = 63.5f;
    expect_same_bytes(GetParam(), t, ties);
    std::vector<float> halves(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      halves[static_cast<size_t>(i)] = (i % 2 ? 1.0f : -1.0f) * (static_cast<float>(i % 64) + 0.5f);
    halves[0] = 127.0f;
    expect_same_bytes(GetParam(), t, halves);
  }
}

INSTANTIATE_TEST_SUITE_P(AllIsas, ActQuant, ::testing::ValuesIn(cpu_test::kAllIsas),
                         cpu_test::isa_param_name);

TEST(ActQuant, Avx2HasItsOwnQ8Quantizers) {
#if defined(__x86_64__)
  EXPECT_NE(cpu::act_quantizer_avx2(DType::kQ8_K), nullptr);
  EXPECT_NE(cpu::act_quantizer_avx2(DType::kQ8_0), nullptr);
#endif
  EXPECT_EQ(cpu::act_quantizer(CpuIsa::kScalar, DType::kQ8_K), quant_ops(DType::kQ8_K)->quantize_row);
}

}  // namespace
}  // namespace paddock
