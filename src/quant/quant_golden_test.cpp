// Golden cross-check against llama.cpp: the tiny-zoo fixtures hold the same random f32 weights
// quantized by llama-quantize (no importance matrix) to every type. Our quantizer must write the
// very same bytes, and our dequantizer must land within the type's budget of the f32 weights.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <span>
#include <string>
#include <vector>

#include "quant/gguf_peek.h"
#include "quant/quant.h"
#include "quant/test_budgets.h"
#include "quant/test_data.h"
#include "tests/support/fixtures.h"

namespace paddock {
namespace {

using quant_test::GgufPeek;
using quant_test::PeekTensor;

constexpr uint64_t kRowsChecked = 32;  // per tensor: enough to cover every block layout, fast under ASan

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

class ZooFile : public ::testing::TestWithParam<const char*> {};

TEST_P(ZooFile, QuantizerWritesLlamaCppBytesAndDequantizeIsWithinBudget) {
  PADDOCK_REQUIRE_FIXTURES();
  const std::string dir = testing::fixtures_dir() + "/models/";
  const std::vector<uint8_t> f32_bytes = read_bytes(dir + "tiny-zoo-f32.gguf");
  const std::vector<uint8_t> q_bytes = read_bytes(dir + "tiny-zoo-" + GetParam() + ".gguf");
  auto f32_tensors = GgufPeek(f32_bytes).tensors();
  const auto q_tensors = GgufPeek(q_bytes).tensors();
  ASSERT_FALSE(f32_tensors.empty());
  ASSERT_FALSE(q_tensors.empty());

  int quantized_tensors = 0;
  for (const auto& [name, qt] : q_tensors) {
    SCOPED_TRACE(name);
    const auto type = dtype_from_id(qt.type);
    ASSERT_TRUE(type.has_value());
    const QuantOps* ops = quant_ops(*type);
    ASSERT_NE(ops, nullptr) << "fixture uses " << dtype_name(*type) << ", which the table lacks";
    const PeekTensor& ft = f32_tensors.at(name);
    ASSERT_EQ(ft.type, 0u);
    ASSERT_EQ(ft.ne, qt.ne);
    const auto ne0 = static_cast<int64_t>(qt.ne[0]);
    const uint64_t rows = std::min<uint64_t>(kRowsChecked, qt.n_elements() / qt.ne[0]);
    const size_t row_bytes = dtype_row_bytes(*type, ne0);
    for (uint64_t r = 0; r < rows; ++r) {
      const float* f32_row = reinterpret_cast<const float*>(ft.data) + r * ne0;
      const uint8_t* q_row = qt.data + r * row_bytes;
      const std::vector<float> ref(f32_row, f32_row + ne0);

      const std::vector<uint8_t> ours = quantize(*type, ref);
      ASSERT_EQ(ours.size(), row_bytes);
      ASSERT_EQ(std::memcmp(ours.data(), q_row, row_bytes), 0) << dtype_name(*type) << " row " << r;

      const std::vector<float> deq = dequantize(*type, {q_row, row_bytes}, ne0);
      const quant_test::Budget* b = quant_test::budget_for(*type);
      ASSERT_NE(b, nullptr);
      // One 256-wide row is a small sample of the gaussian weights: 1.5x slack, as for one block.
      EXPECT_LE(quant_test::relative_rmse(ref, deq), b->gaussian * 1.5 + 1e-7)
          << dtype_name(*type) << " row " << r;
    }
    if (*type != DType::kF32) ++quantized_tensors;
  }
  EXPECT_GE(quantized_tensors, 14);  // 2 layers x 7 projections at least
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ZooFile,
                         ::testing::Values("f16", "bf16", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q2_k",
                                           "q3_k_m", "q4_k_m", "q5_k_m", "q6_k", "iq4_nl", "iq4_xs"),
                         [](const ::testing::TestParamInfo<const char*>& p) { return std::string(p.param); });

// tiny-gptoss-mxfp4 is llama-quantize's MXFP4_MOE mix: the expert tensors are MXFP4. Their
// values are exactly representable, so requantizing the dequantized rows must give the file's
// bytes back (same exponent, same indices); the dot must match the dequantized one.
TEST(GptOssFile, MXFP4ExpertsRequantizeToTheFileBytesAndDotsMatch) {
  PADDOCK_REQUIRE_FIXTURES();
  const std::vector<uint8_t> bytes = read_bytes(testing::fixtures_dir() + "/models/tiny-gptoss-mxfp4.gguf");
  const auto tensors = GgufPeek(bytes).tensors();
  ASSERT_FALSE(tensors.empty());
  int mxfp4_tensors = 0;
  for (const auto& [name, t] : tensors) {
    if (t.type != static_cast<uint32_t>(DType::kMXFP4)) continue;
    SCOPED_TRACE(name);
    EXPECT_NE(name.find("_exps.weight"), std::string::npos);
    ASSERT_EQ(t.ne.size(), 3u);  // [n_embd or n_ff, rows, experts]
    ++mxfp4_tensors;
    const auto ne0 = static_cast<int64_t>(t.ne[0]);
    const size_t row_bytes = dtype_row_bytes(DType::kMXFP4, ne0);
    const uint64_t n_rows = t.n_elements() / t.ne[0];
    const std::vector<float> act = quant_test::gaussian_row(static_cast<size_t>(ne0), 5);
    const std::vector<uint8_t> act_q = quantize(DType::kQ8_0, act);
    const std::vector<float> act_d = dequantize(DType::kQ8_0, act_q, ne0);
    // Rows spread over every expert.
    for (uint64_t r = 0; r < n_rows; r += std::max<uint64_t>(1, n_rows / kRowsChecked)) {
      const std::span<const uint8_t> row(t.data + r * row_bytes, row_bytes);
      const std::vector<float> deq = dequantize(DType::kMXFP4, row, ne0);
      const std::vector<uint8_t> again = quantize(DType::kMXFP4, deq);
      ASSERT_EQ(std::memcmp(again.data(), row.data(), row_bytes), 0) << "row " << r;

      float got = 0;
      quant_ops(DType::kMXFP4)->vec_dot(ne0, &got, row.data(), act_q.data());
      double exact = 0;
      double scale = 1e-30;
      for (int64_t i = 0; i < ne0; ++i) {
        exact += static_cast<double>(deq[static_cast<size_t>(i)]) * act_d[static_cast<size_t>(i)];
        scale += std::fabs(static_cast<double>(deq[static_cast<size_t>(i)]) * act_d[static_cast<size_t>(i)]);
      }
      EXPECT_LE(std::fabs(got - exact) / scale, 2e-6) << "row " << r;
    }
  }
  EXPECT_GE(mxfp4_tensors, 3);  // gate, up and down experts of at least one layer
}

}  // namespace
}  // namespace paddock
