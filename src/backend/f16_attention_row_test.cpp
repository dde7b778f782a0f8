// f16_attention_row rounds as llama.cpp's flash attention over an F16 cache: values worked
// out by hand with the same float steps.
#include "backend/f16_attention_row.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace paddock {
namespace {

uint16_t h(float x) { return f32_to_fp16(x); }

// Two cells, the second scoring higher: the accumulator holds v0 (weight 1), is rescaled by
// exp(s0 - s1) and rounded to F16, then gets v1 (weight 1) added and rounded again; a sink
// below the max adds exp(sink - max) to the sum. The query is rounded to F16 first.
TEST(F16AttentionRow, RoundsTheAccumulatorAtEveryStep) {
  const std::vector<float> q = {1.0009765625f + 1e-4f, 0.0f};  // rounds to 1 + 2^-10
  const std::vector<uint16_t> k0 = {h(0.5f), h(0.0f)}, k1 = {h(2.0f), h(0.0f)};
  const std::vector<uint16_t> v0 = {h(0.3f), h(-1.7f)}, v1 = {h(0.1f), h(2.5f)};
  const float q0 = fp16_to_f32(h(q[0]));
  const float s0 = q0 * 0.5f * 0.125f, s1 = q0 * 2.0f * 0.125f;
  const float sink = -1.0f;
  float out[2];
  const float* q_row = q.data();
  float* out_row = out;
  F16RowScratch scratch;
  f16_attention_rows(
      f16_ops_scalar(), &q_row, 1, 2, 2, 0, 2, [](int64_t) { return true; },
      [&](int64_t j) { return (j == 0 ? k0 : k1).data(); }, [&](int64_t j) { return (j == 0 ? v0 : v1).data(); },
      0.125f, 0.0f, &sink, scratch, &out_row);
  const float ms = std::exp(s0 - s1);
  const float l = (1.0f * ms + 1.0f) * 1.0f + std::exp(sink - s1);
  for (int i = 0; i < 2; ++i) {
    const float rescaled = fp16_to_f32(h(fp16_to_f32(v0[static_cast<size_t>(i)]) * ms));
    const float acc = fp16_to_f32(h(std::fma(fp16_to_f32(v1[static_cast<size_t>(i)]), 1.0f, rescaled)));
    EXPECT_EQ(out[i], acc * 1.0f * (1.0f / l)) << i;
  }
}

// Cells the predicate hides are skipped; none visible and no sink gives zeros.
TEST(F16AttentionRow, SkipsHiddenCellsAndEmptyRowsGiveZero) {
  const std::vector<float> q = {1.0f, 1.0f};
  const std::vector<uint16_t> k = {h(1.0f), h(1.0f)}, v = {h(4.0f), h(-2.0f)};
  float out[2] = {7, 7};
  const float* q_row = q.data();
  float* out_row = out;
  F16RowScratch scratch;
  f16_attention_rows(
      f16_ops_scalar(), &q_row, 1, 2, 2, 0, 3, [](int64_t) { return false; }, [&](int64_t) { return k.data(); },
      [&](int64_t) { return v.data(); }, 1.0f, 0.0f, nullptr, scratch, &out_row);
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_EQ(out[1], 0.0f);
  f16_attention_rows(
      f16_ops_scalar(), &q_row, 1, 2, 2, 0, 3, [](int64_t j) { return j == 1; }, [&](int64_t) { return k.data(); },
      [&](int64_t) { return v.data(); }, 1.0f, 0.0f, nullptr, scratch, &out_row);
  EXPECT_EQ(out[0], 4.0f);
  EXPECT_EQ(out[1], -2.0f);
}

}  // namespace
}  // namespace paddock
