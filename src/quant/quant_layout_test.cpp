// Pins the bit layouts: hand-built blocks dequantize to values computed here from an
// independent, element-by-element reading of ggml's layouts (ggml-common.h). Scales are powers
// of two and levels small integers, so every expected value is exact.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "base/fp16.h"
#include "quant/blocks.h"
#include "quant/kernels.h"
#include "quant/quant.h"

namespace paddock {
namespace {

constexpr uint16_t kHalf = 0x3800;     // 0.5
constexpr uint16_t kQuarter = 0x3400;  // 0.25
constexpr uint16_t kOne = 0x3C00;      // 1.0
constexpr uint16_t kMinusOne = 0xBC00;

template <typename Block>
Block random_block(uint32_t seed) {
  Block b;
  std::mt19937 rng(seed);
  auto* bytes = reinterpret_cast<uint8_t*>(&b);
  for (size_t i = 0; i < sizeof b; ++i) bytes[i] = static_cast<uint8_t>(rng());
  return b;
}

TEST(Layout, Q4_0LiteralBlock) {
  BlockQ4_0 b;
  b.d = kHalf;
  for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  float y[32];
  dequantize_row_q4_0(&b, y, 32);
  EXPECT_EQ(y[0], -4.0f);   // (0 - 8) * 0.5
  EXPECT_EQ(y[8], 0.0f);    // (8 - 8) * 0.5
  EXPECT_EQ(y[15], 3.5f);   // (15 - 8) * 0.5
  EXPECT_EQ(y[16], 3.5f);   // high nibble of qs[0] is 15
  EXPECT_EQ(y[31], -4.0f);  // high nibble of qs[15] is 0
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], 0.5f * static_cast<float>(j - 8));
    EXPECT_EQ(y[j + 16], 0.5f * static_cast<float>(7 - j));
  }
}

TEST(Layout, Q4_1) {
  BlockQ4_1 b = random_block<BlockQ4_1>(1);
  b.d = kQuarter;
  b.m = kMinusOne;
  float y[32];
  dequantize_row_q4_1(&b, y, 32);
  for (int e = 0; e < 32; ++e) {
    const int q = e < 16 ? b.qs[e] & 15 : b.qs[e - 16] >> 4;
    EXPECT_EQ(y[e], 0.25f * static_cast<float>(q) - 1.0f) << e;
  }
}

TEST(Layout, Q5_0AndQ5_1) {
  BlockQ5_0 b0 = random_block<BlockQ5_0>(2);
  b0.d = kHalf;
  BlockQ5_1 b1 = random_block<BlockQ5_1>(3);
  b1.d = kHalf;
  b1.m = kOne;
  float y0[32];
  float y1[32];
  dequantize_row_q5_0(&b0, y0, 32);
  dequantize_row_q5_1(&b1, y1, 32);
  for (int e = 0; e < 32; ++e) {
    const int lo0 = e < 16 ? b0.qs[e] & 15 : b0.qs[e - 16] >> 4;
    const int hi0 = (b0.qh[e / 8] >> (e % 8)) & 1;  // bit e of the little-endian qh
    EXPECT_EQ(y0[e], 0.5f * static_cast<float>((lo0 | hi0 << 4) - 16)) << e;
    const int lo1 = e < 16 ? b1.qs[e] & 15 : b1.qs[e - 16] >> 4;
    const int hi1 = (b1.qh[e / 8] >> (e % 8)) & 1;
    EXPECT_EQ(y1[e], 0.5f * static_cast<float>(lo1 | hi1 << 4) + 1.0f) << e;
  }
}

TEST(Layout, Q8_0) {
  BlockQ8_0 b = random_block<BlockQ8_0>(4);
  b.d = 0x4000;  // 2.0
  float y[32];
  dequantize_row_q8_0(&b, y, 32);
  for (int e = 0; e < 32; ++e) EXPECT_EQ(y[e], 2.0f * static_cast<float>(b.qs[e])) << e;
}

// Q2_K and Q3_K: element e's 2 low bits sit in byte 32 * (e / 128) + e % 32 at shift
// 2 * ((e % 128) / 32).
int two_bits(const uint8_t* qs, int e) { return (qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3; }

TEST(Layout, Q2_K) {
  BlockQ2_K b = random_block<BlockQ2_K>(5);
  b.d = kHalf;
  b.dmin = kQuarter;
  std::vector<float> y(256);
  dequantize_row_q2_K(&b, y.data(), 256);
  for (int e = 0; e < 256; ++e) {
    const int sc = b.scales[e / 16] & 15;
    const int m = b.scales[e / 16] >> 4;
    EXPECT_EQ(y[e], 0.5f * static_cast<float>(sc * two_bits(b.qs, e)) - 0.25f * static_cast<float>(m)) << e;
  }
}

TEST(Layout, Q3_K) {
  BlockQ3_K b = random_block<BlockQ3_K>(6);
  b.d = kQuarter;
  // Group g's 6-bit scale: low nibble from byte g (g < 8) or the high nibble of byte g - 8,
  // top 2 bits from byte 8 + g % 4 at shift 2 * (g / 4).
  int scale[16];
  for (int g = 0; g < 16; ++g) {
    const int low = g < 8 ? b.scales[g] & 15 : b.scales[g - 8] >> 4;
    scale[g] = low | (((b.scales[8 + g % 4] >> (2 * (g / 4))) & 3) << 4);
  }
  std::vector<float> y(256);
  dequantize_row_q3_K(&b, y.data(), 256);
  for (int e = 0; e < 256; ++e) {
    const int high = (b.hmask[e % 32] >> (e / 32)) & 1;
    const int q = two_bits(b.qs, e) - (high ? 0 : 4);
    EXPECT_EQ(y[e], 0.25f * static_cast<float>((scale[e / 16] - 32) * q)) << e;
  }
}

// Q4_K / Q5_K: 6-bit scale and min of group g (of 32) from the 12 packed bytes.
void k4_scale_min(const uint8_t* s, int g, int* sc, int* m) {
  if (g < 4) {
    *sc = s[g] & 63;
    *m = s[g + 4] & 63;
  } else {
    *sc = (s[g + 4] & 15) | ((s[g - 4] >> 6) << 4);
    *m = (s[g + 4] >> 4) | ((s[g] >> 6) << 4);
  }
}

TEST(Layout, Q4_KLiteralScales) {
  BlockQ4_K b{};
  b.d = kHalf;
  b.dmin = kOne;
  b.scales[0] = 3;        // group 0: scale 3
  b.scales[4] = 2;        // group 0: min 2
  b.scales[8] = 0x15;     // group 4: scale 5, min 1 (low nibbles)
  b.scales[0] |= 1 << 6;  // group 4: scale += 16
  b.qs[0] = 0x97;         // element 0: 7, element 32: 9
  b.qs[64] = 0x02;        // element 128 (group 4): 2
  std::vector<float> y(256);
  dequantize_row_q4_K(&b, y.data(), 256);
  EXPECT_EQ(y[0], 0.5f * 3 * 7 - 2.0f);
  EXPECT_EQ(y[1], -2.0f);                   // level 0 of group 0
  EXPECT_EQ(y[32], 0.0f);                   // group 1 has scale 0 and min 0
  EXPECT_EQ(y[128], 0.5f * 21 * 2 - 1.0f);  // group 4: scale 5 + 16, min 1
}

TEST(Layout, Q4_KAndQ5_K) {
  BlockQ4_K b4 = random_block<BlockQ4_K>(7);
  b4.d = kHalf;
  b4.dmin = kQuarter;
  BlockQ5_K b5 = random_block<BlockQ5_K>(8);
  b5.d = kQuarter;
  b5.dmin = kHalf;
  std::vector<float> y4(256);
  std::vector<float> y5(256);
  dequantize_row_q4_K(&b4, y4.data(), 256);
  dequantize_row_q5_K(&b5, y5.data(), 256);
  for (int e = 0; e < 256; ++e) {
    // 64 elements per 32 bytes: the first 32 in the low nibbles, the next 32 in the high ones.
    const int byte = 32 * (e / 64) + e % 32;
    const int shift = 4 * ((e / 32) % 2);
    int sc;
    int m;
    k4_scale_min(b4.scales, e / 32, &sc, &m);
    const int q4 = (b4.qs[byte] >> shift) & 15;
    EXPECT_EQ(y4[e], 0.5f * static_cast<float>(sc * q4) - 0.25f * static_cast<float>(m)) << e;
    k4_scale_min(b5.scales, e / 32, &sc, &m);
    const int q5 = ((b5.qs[byte] >> shift) & 15) | (((b5.qh[e % 32] >> (e / 32)) & 1) << 4);
    EXPECT_EQ(y5[e], 0.25f * static_cast<float>(sc * q5) - 0.5f * static_cast<float>(m)) << e;
  }
}

TEST(Layout, Q6_K) {
  BlockQ6_K b = random_block<BlockQ6_K>(9);
  b.d = kQuarter;
  std::vector<float> y(256);
  dequantize_row_q6_K(&b, y.data(), 256);
  for (int e = 0; e < 256; ++e) {
    const int chunk = e / 128;
    const int quarter = (e % 128) / 32;
    const int l = e % 32;
    const uint8_t low_byte = b.ql[64 * chunk + l + 32 * (quarter % 2)];
    const int low = quarter < 2 ? low_byte & 15 : low_byte >> 4;
    const int high = (b.qh[32 * chunk + l] >> (2 * quarter)) & 3;
    const int q = (low | high << 4) - 32;
    EXPECT_EQ(y[e], 0.25f * static_cast<float>(b.scales[e / 16]) * static_cast<float>(q)) << e;
  }
}

TEST(Layout, IQ4_NLAndIQ4_XS) {
  BlockIQ4_NL bn = random_block<BlockIQ4_NL>(10);
  bn.d = kHalf;
  float yn[32];
  dequantize_row_iq4_nl(&bn, yn, 32);
  for (int e = 0; e < 32; ++e) {
    const int idx = e < 16 ? bn.qs[e] & 15 : bn.qs[e - 16] >> 4;
    EXPECT_EQ(yn[e], 0.5f * static_cast<float>(kIQ4NLValues[static_cast<size_t>(idx)])) << e;
  }
  BlockIQ4_XS bx = random_block<BlockIQ4_XS>(11);
  bx.d = kQuarter;
  std::vector<float> yx(256);
  dequantize_row_iq4_xs(&bx, yx.data(), 256);
  for (int e = 0; e < 256; ++e) {
    const int g = e / 32;
    const int ls = ((bx.scales_l[g / 2] >> (4 * (g % 2))) & 15) | (((bx.scales_h >> (2 * g)) & 3) << 4);
    const int r = e % 32;
    const int idx = r < 16 ? bx.qs[16 * g + r] & 15 : bx.qs[16 * g + r - 16] >> 4;
    EXPECT_EQ(yx[e], 0.25f * static_cast<float>(ls - 32) *
                         static_cast<float>(kIQ4NLValues[static_cast<size_t>(idx)]))
        << e;
  }
}

TEST(Layout, MXFP4) {
  // E2M1 as sign, 2 exponent bits, 1 mantissa bit; the table holds twice each value.
  const float e2m1[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  BlockMXFP4 b = random_block<BlockMXFP4>(12);
  b.e = 130;  // 2^(130 - 127) = 8
  float y[32];
  dequantize_row_mxfp4(&b, y, 32);
  for (int e = 0; e < 32; ++e) {
    const int idx = e < 16 ? b.qs[e] & 15 : b.qs[e - 16] >> 4;
    const float v = e2m1[idx & 7] * 8.0f;
    EXPECT_EQ(y[e], idx & 8 ? -v : v) << e;
  }
}

TEST(Layout, E8M0HalfScale) {
  EXPECT_EQ(e8m0_half(127), 0.5f);  // E8M0 127 is 1.0
  EXPECT_EQ(e8m0_half(128), 1.0f);
  EXPECT_EQ(e8m0_half(2), std::ldexp(1.0f, -126));
  EXPECT_EQ(e8m0_half(1), std::ldexp(1.0f, -127));  // subnormal
  EXPECT_EQ(e8m0_half(0), std::ldexp(1.0f, -128));  // subnormal
  EXPECT_EQ(e8m0_half(254), std::ldexp(1.0f, 126));
}

TEST(Layout, MXFP4QuantizerPinned) {
  // amax 6 gives e = floor(log2 6) + 125 = 127 (half scale 0.5), so 6 is level 12. Ties go to
  // the lower index, larger values saturate, and -0 is never written.
  float x[32] = {};
  x[0] = 6.0f;
  x[1] = -0.75f;
  x[2] = 5.0f;  // between 4 and 6: a tie, kept at 4 (index 6)
  x[3] = -0.1f;
  x[16] = 1.5f;
  BlockMXFP4 b;
  quantize_row_mxfp4(x, &b, 32);
  EXPECT_EQ(b.e, 127);
  EXPECT_EQ(b.qs[0] & 15, 7);  // 12 * 0.5
  EXPECT_EQ(b.qs[1] & 15, 9);  // -1 * 0.5 (ties with -2 * 0.5 go low)
  EXPECT_EQ(b.qs[2] & 15, 6);  // 8 * 0.5
  EXPECT_EQ(b.qs[3] & 15, 0);  // +0, not -0
  EXPECT_EQ(b.qs[0] >> 4, 3);  // 3 * 0.5
  BlockMXFP4 big;
  for (float& v : x) v = 0.0f;
  x[5] = 7.5f;  // 1.875 * 2^2: e 127, and 7.5 > 6 saturates to level 12
  quantize_row_mxfp4(x, &big, 32);
  EXPECT_EQ(big.e, 127);
  EXPECT_EQ(big.qs[5] & 15, 7);
}

TEST(Layout, FloatTypes) {
  const uint16_t halves[] = {kOne, kMinusOne, 0x7BFF, 0x0001};
  float y[4];
  dequantize_row_f16(halves, y, 4);
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[1], -1.0f);
  EXPECT_EQ(y[2], 65504.0f);                 // largest half
  EXPECT_EQ(y[3], 5.9604644775390625e-08f);  // smallest subnormal half
  const uint16_t bf[] = {0x3F80, 0xC000};
  dequantize_row_bf16(bf, y, 2);
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[1], -2.0f);
  uint16_t back[2];
  quantize_row_bf16(y, back, 2);
  EXPECT_EQ(back[0], 0x3F80);
  EXPECT_EQ(back[1], 0xC000);
}

TEST(Layout, Q8_0QuantizerPinned) {
  // amax 127 gives d = 1 exactly, so quants are the rounded inputs (ties away from zero).
  float x[32];
  for (int j = 0; j < 32; ++j) x[j] = static_cast<float>(j) - 16.5f;
  x[31] = 127.0f;
  BlockQ8_0 b;
  quantize_row_q8_0(x, &b, 32);
  EXPECT_EQ(b.d, kOne);
  EXPECT_EQ(b.qs[0], -17);  // round(-16.5)
  EXPECT_EQ(b.qs[16], -1);  // round(-0.5)
  EXPECT_EQ(b.qs[17], 1);   // round(0.5)
  EXPECT_EQ(b.qs[31], 127);
}

TEST(Table, EverySupportedDTypeHasARowOfTheRightShape) {
  int rows = 0;
  for (uint32_t id = 0; id < kDTypeIdCount; ++id) {
    const auto t = dtype_from_id(id);
    if (!t) continue;
    const QuantOps* ops = quant_ops(*t);
    if (dtype_info(*t).supported) {
      ASSERT_NE(ops, nullptr) << dtype_name(*t);
      EXPECT_NE(ops->vec_dot, nullptr) << dtype_name(*t);
    }
    if (ops == nullptr) continue;
    ++rows;
    EXPECT_EQ(ops->type, *t);
    EXPECT_NE(ops->dequantize_row, nullptr);
    const QuantOps* act = quant_ops(ops->vec_dot_type);
    ASSERT_NE(act, nullptr);
    EXPECT_NE(act->quantize_row, nullptr);
    if (ops->vec_dot != nullptr) {
      EXPECT_EQ(dtype_info(ops->vec_dot_type).block_size % dtype_info(*t).block_size == 0 ||
                    dtype_info(*t).block_size % dtype_info(ops->vec_dot_type).block_size == 0,
                true);
    }
  }
  EXPECT_EQ(rows, 18);  // the 16 compute types plus the activation types Q8_1 and Q8_K
  EXPECT_EQ(quant_ops(DType::kIQ2_XXS), nullptr);
  EXPECT_EQ(quant_ops(DType::kQ4_K)->vec_dot_type, DType::kQ8_K);
  EXPECT_EQ(quant_ops(DType::kQ4_1)->vec_dot_type, DType::kQ8_1);
  EXPECT_EQ(quant_ops(DType::kIQ4_NL)->vec_dot_type, DType::kQ8_0);
  EXPECT_EQ(quant_ops(DType::kIQ4_XS)->vec_dot_type, DType::kQ8_K);
  EXPECT_EQ(quant_ops(DType::kMXFP4)->vec_dot_type, DType::kQ8_0);
  EXPECT_EQ(quant_ops(DType::kF16)->vec_dot_type, DType::kF16);
}

TEST(Table, BlockStructSizesMatchTheDTypeTable) {
  EXPECT_EQ(sizeof(BlockQ4_0), dtype_info(DType::kQ4_0).type_size);
  EXPECT_EQ(sizeof(BlockQ4_1), dtype_info(DType::kQ4_1).type_size);
  EXPECT_EQ(sizeof(BlockQ5_0), dtype_info(DType::kQ5_0).type_size);
  EXPECT_EQ(sizeof(BlockQ5_1), dtype_info(DType::kQ5_1).type_size);
  EXPECT_EQ(sizeof(BlockQ8_0), dtype_info(DType::kQ8_0).type_size);
  EXPECT_EQ(sizeof(BlockQ8_1), dtype_info(DType::kQ8_1).type_size);
  EXPECT_EQ(sizeof(BlockQ2_K), dtype_info(DType::kQ2_K).type_size);
  EXPECT_EQ(sizeof(BlockQ3_K), dtype_info(DType::kQ3_K).type_size);
  EXPECT_EQ(sizeof(BlockQ4_K), dtype_info(DType::kQ4_K).type_size);
  EXPECT_EQ(sizeof(BlockQ5_K), dtype_info(DType::kQ5_K).type_size);
  EXPECT_EQ(sizeof(BlockQ6_K), dtype_info(DType::kQ6_K).type_size);
  EXPECT_EQ(sizeof(BlockQ8_K), dtype_info(DType::kQ8_K).type_size);
  EXPECT_EQ(sizeof(BlockIQ4_NL), dtype_info(DType::kIQ4_NL).type_size);
  EXPECT_EQ(sizeof(BlockIQ4_XS), dtype_info(DType::kIQ4_XS).type_size);
  EXPECT_EQ(sizeof(BlockMXFP4), dtype_info(DType::kMXFP4).type_size);
}

}  // namespace
}  // namespace paddock
