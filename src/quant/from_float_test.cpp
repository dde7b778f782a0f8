// from_float: the quantizers llama.cpp's CPU backend applies to activations.
#include <gtest/gtest.h>

#include <vector>

#include "base/fp16.h"
#include "quant/blocks.h"
#include "quant/quant.h"

namespace paddock {
namespace {

// As ggml-cpu's x86 quantize_row_q8_0: with amax 127 the scale is exactly 1, so x * scale is x
// and halves round to even (62.5 -> 62, 63.5 -> 64, -62.5 -> -62), where the reference
// quantizer rounds them away from zero. Q8_1 also stores d * sum(q).
TEST(ActQuant, Q8RoundsHalvesToEvenAsGgmlOnX86) {
  std::vector<float> x(32, 0.0f);
  x[0] = 127.0f;
  x[1] = 62.5f;
  x[2] = 63.5f;
  x[3] = -62.5f;
  x[4] = 0.5f;
  x[5] = 1.5f;
  BlockQ8_0 act{};
  from_float(DType::kQ8_0)(x.data(), &act, 32);
  EXPECT_EQ(act.qs[0], 127);
  EXPECT_EQ(act.qs[1], 62);
  EXPECT_EQ(act.qs[2], 64);
  EXPECT_EQ(act.qs[3], -62);
  EXPECT_EQ(act.qs[4], 0);
  EXPECT_EQ(act.qs[5], 2);
  EXPECT_EQ(fp16_to_f32(act.d), 1.0f);
  BlockQ8_0 ref{};
  quant_ops(DType::kQ8_0)->quantize_row(x.data(), &ref, 32);
  EXPECT_EQ(ref.qs[1], 63);
  EXPECT_EQ(ref.qs[4], 1);
  BlockQ8_1 act1{};
  from_float(DType::kQ8_1)(x.data(), &act1, 32);
  EXPECT_EQ(fp16_to_f32(act1.s), 127.0f + 62 + 64 - 62 + 0 + 2);
}

// The types without an x86 quantizer of their own use the reference one.
TEST(FromFloat, OtherTypesUseTheReferenceQuantizer) {
  for (DType t : {DType::kQ8_K, DType::kQ4_0, DType::kF16, DType::kBF16}) {
    EXPECT_EQ(from_float(t), quant_ops(t)->quantize_row) << dtype_name(t);
  }
}

}  // namespace
}  // namespace paddock
