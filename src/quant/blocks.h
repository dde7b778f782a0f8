// Block layouts of the quantized types, byte-for-byte those of ggml's ggml-common.h, so GGUF
// tensor data is used in place. fp16 fields are stored as raw uint16_t (convert with
// base/fp16.h). Invariant: every struct has no padding; its size is the DType table's type_size.
//   const auto* b = static_cast<const BlockQ4_0*>(row); float d = fp16_to_f32(b[i].d);
#pragma once

#include <array>
#include <bit>
#include <cstdint>

namespace paddock {

// GGUF data and these layouts are little-endian (multi-byte fields are read in place).
static_assert(std::endian::native == std::endian::little);

inline constexpr int kQK4_0 = 32;
inline constexpr int kQK4_1 = 32;
inline constexpr int kQK5_0 = 32;
inline constexpr int kQK5_1 = 32;
inline constexpr int kQK8_0 = 32;
inline constexpr int kQK8_1 = 32;
inline constexpr int kQK4_NL = 32;
inline constexpr int kQKMXFP4 = 32;
inline constexpr int kQK_K = 256;        // super-block size of the K-quants and IQ4_XS
inline constexpr int kKScaleBytes = 12;  // packed 6-bit scales/mins of Q4_K and Q5_K

// value = d * (q - 8)
struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[kQK4_0 / 2];  // element j in the low nibble of qs[j], j + 16 in the high nibble
};
static_assert(sizeof(BlockQ4_0) == 18);

// value = d * q + m
struct BlockQ4_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qs[kQK4_1 / 2];
};
static_assert(sizeof(BlockQ4_1) == 20);

// value = d * (q - 16); bit 4 of element j is bit j of qh (little-endian uint32)
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[kQK5_0 / 2];
};
static_assert(sizeof(BlockQ5_0) == 22);

// value = d * q + m
struct BlockQ5_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qh[4];
  uint8_t qs[kQK5_1 / 2];
};
static_assert(sizeof(BlockQ5_1) == 24);

// value = d * q
struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[kQK8_0];
};
static_assert(sizeof(BlockQ8_0) == 34);

// value = d * q; s = d * sum(q), so dots with min-offset types need no second pass
struct BlockQ8_1 {
  uint16_t d;
  uint16_t s;
  int8_t qs[kQK8_1];
};
static_assert(sizeof(BlockQ8_1) == 36);

// 16 groups of 16; scales[g] = scale (low nibble) | min (high nibble), 4 bits each.
// value = d * scale * q - dmin * min
struct BlockQ2_K {
  uint8_t scales[kQK_K / 16];
  uint8_t qs[kQK_K / 4];  // 2 bits each
  uint16_t d;
  uint16_t dmin;
};
static_assert(sizeof(BlockQ2_K) == 84);

// 16 groups of 16; 6-bit signed scales (offset 32) packed into 12 bytes.
// value = d * (scale - 32) * (q - (hmask bit set ? 0 : 4))
struct BlockQ3_K {
  uint8_t hmask[kQK_K / 8];  // high bit of each quant
  uint8_t qs[kQK_K / 4];     // low 2 bits
  uint8_t scales[12];
  uint16_t d;
};
static_assert(sizeof(BlockQ3_K) == 110);

// BlockQ3_K's 16 six-bit scales (still offset by 32): low 4 bits in bytes 0-7 (two per byte),
// high 2 bits in bytes 8-11 (four per byte).
inline void unpack_q3_k_scales(const uint8_t* packed, int8_t out[16]) {
  for (int j = 0; j < 16; ++j) {
    const int low = j < 8 ? packed[j] & 0xF : packed[j - 8] >> 4;
    const int high = (packed[8 + j % 4] >> (2 * (j / 4))) & 3;
    out[j] = static_cast<int8_t>(low | (high << 4));
  }
}

// 8 groups of 32; 6-bit scales and mins packed into 12 bytes (see get_scale_min_k4).
// value = d * scale * q - dmin * min
struct BlockQ4_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[kKScaleBytes];
  uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockQ4_K) == 144);

struct BlockQ5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[kKScaleBytes];
  uint8_t qh[kQK_K / 8];  // 5th bit
  uint8_t qs[kQK_K / 2];  // low 4 bits
};
static_assert(sizeof(BlockQ5_K) == 176);

// 16 groups of 16; value = d * scale * (q - 32) with q 6 bits
struct BlockQ6_K {
  uint8_t ql[kQK_K / 2];  // low 4 bits
  uint8_t qh[kQK_K / 4];  // high 2 bits
  int8_t scales[kQK_K / 16];
  uint16_t d;
};
static_assert(sizeof(BlockQ6_K) == 210);

// The activation type of K-quant dots: an f32 scale and per-16 sums of the quants.
struct BlockQ8_K {
  float d;
  int8_t qs[kQK_K];
  int16_t bsums[kQK_K / 16];
};
static_assert(sizeof(BlockQ8_K) == 292);

// value = d * kIQ4NLValues[q]
struct BlockIQ4_NL {
  uint16_t d;
  uint8_t qs[kQK4_NL / 2];
};
static_assert(sizeof(BlockIQ4_NL) == 18);

// 8 groups of 32 with 6-bit scales (offset 32): low 4 bits in scales_l, high 2 in scales_h.
struct BlockIQ4_XS {
  uint16_t d;
  uint16_t scales_h;
  uint8_t scales_l[kQK_K / 64];
  uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockIQ4_XS) == 136);

// value = e8m0_half(e) * kMXFP4Values[q]: OCP MX FP4 (E2M1 elements, one power-of-two scale).
struct BlockMXFP4 {
  uint8_t e;                 // E8M0 exponent
  uint8_t qs[kQKMXFP4 / 2];  // element j in the low nibble of qs[j], j + 16 in the high nibble
};
static_assert(sizeof(BlockMXFP4) == 17);

// The E2M1 values doubled so they are integers (ggml's kvalues_mxfp4): index 8 is -0.
inline constexpr std::array<int8_t, 16> kMXFP4Values = {0, 1,  2,  3,  4,  6,  8,  12,
                                                        0, -1, -2, -3, -4, -6, -8, -12};

// Half the E8M0 scale, 2^(e - 128), to undo the doubled values (ggml's GGML_E8M0_TO_FP32_HALF).
// e 0 and 1 give the subnormals 2^-128 and 2^-127; 255 (the spec's NaN) gives 2^127, as in ggml.
inline float e8m0_half(uint8_t e) {
  const uint32_t bits = e < 2 ? 0x00200000u << e : static_cast<uint32_t>(e - 1) << 23;
  return std::bit_cast<float>(bits);
}

// The 16 non-linear levels of IQ4_NL / IQ4_XS (ggml's kvalues_iq4nl), sorted ascending.
inline constexpr std::array<int8_t, 16> kIQ4NLValues = {-127, -104, -83, -65, -49, -35, -22, -10,
                                                        1,    13,   25,  38,  53,  69,  89,  113};

}  // namespace paddock
