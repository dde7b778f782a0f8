// Element readers for every type a tensor binding may hold: DEFINE_ELEM(X, TYPE) defines
// float X_elem(uint r, uint i), element i of the row whose first byte is r in binding X,
// dequantized as quant/ does (ggml's block layouts).
#define DEFINE_ELEM(X, T) DEFINE_ELEM_EXPANDED(X, T)  // expands T (a define) first
#define DEFINE_ELEM_EXPANDED(X, T) DEFINE_ELEM_##T(X)

#define DEFINE_ELEM_F32(X) \
  float X##_elem(uint r, uint i) { return X##_f[(r >> 2) + i]; }
#define DEFINE_ELEM_F16(X) \
  float X##_elem(uint r, uint i) { return f16_at(X##_h[(r >> 1) + i]); }
#define DEFINE_ELEM_BF16(X) \
  float X##_elem(uint r, uint i) { return bf16_at(X##_h[(r >> 1) + i]); }

// 32 values: f16 d, 16 bytes of nibbles (low halves first), q - 8.
#define DEFINE_ELEM_Q4_0(X) \
  float X##_elem(uint r, uint i) { \
    const uint blk = r + (i >> 5) * 18, j = i & 31; \
    const uint q = uint(X##_b[blk + 2 + (j & 15)]); \
    return f16_at(X##_h[blk >> 1]) * (float(j < 16 ? q & 15 : q >> 4) - 8.0); \
  }
// 32 values: f16 d, 32 signed bytes.
#define DEFINE_ELEM_Q8_0(X) \
  float X##_elem(uint r, uint i) { \
    const uint blk = r + (i >> 5) * 34; \
    return f16_at(X##_h[blk >> 1]) * float(int8_t(X##_b[blk + 2 + (i & 31)])); \
  }

// 32 values: f16 d, f16 m, 16 bytes of nibbles; d * q + m.
#define DEFINE_ELEM_Q4_1(X) \
  float X##_elem(uint r, uint i) { \
    const uint blk = r + (i >> 5) * 20, j = i & 31; \
    const uint q = uint(X##_b[blk + 4 + (j & 15)]); \
    return f16_at(X##_h[blk >> 1]) * float(j < 16 ? q & 15 : q >> 4) + f16_at(X##_h[(blk >> 1) + 1]); \
  }
// Value j's fifth bit: bit j of the 4 bytes at qh (little-endian).
#define DEFINE_FIFTH_BIT(X) \
  uint X##_fifth(uint qh, uint j) { return (uint(X##_b[qh + (j >> 3)]) >> (j & 7)) & 1; }
// 32 values: f16 d, 4 bytes of fifth bits, 16 bytes of nibbles; d * (q - 16).
#define DEFINE_ELEM_Q5_0(X) \
  DEFINE_FIFTH_BIT(X) \
  float X##_elem(uint r, uint i) { \
    const uint blk = r + (i >> 5) * 22, j = i & 31; \
    const uint q = uint(X##_b[blk + 6 + (j & 15)]); \
    const uint v = (j < 16 ? q & 15 : q >> 4) | (X##_fifth(blk + 2, j) << 4); \
    return f16_at(X##_h[blk >> 1]) * (float(v) - 16.0); \
  }
// 32 values: f16 d, f16 m, 4 bytes of fifth bits, 16 bytes of nibbles; d * q + m.
#define DEFINE_ELEM_Q5_1(X) \
  DEFINE_FIFTH_BIT(X) \
  float X##_elem(uint r, uint i) { \
    const uint blk = r + (i >> 5) * 24, j = i & 31; \
    const uint q = uint(X##_b[blk + 8 + (j & 15)]); \
    const uint v = (j < 16 ? q & 15 : q >> 4) | (X##_fifth(blk + 4, j) << 4); \
    return f16_at(X##_h[blk >> 1]) * float(v) + f16_at(X##_h[(blk >> 1) + 1]); \
  }
// 32 values: f16 d, 16 bytes of nibbles indexing IQ4_NL's 16 levels; d * level.
const float IQ4_NL_LEVELS[16] = float[16](-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113);
#define DEFINE_ELEM_IQ4_NL(X) \
  float X##_elem(uint r, uint i) { \
    const uint blk = r + (i >> 5) * 18, j = i & 31; \
    const uint q = uint(X##_b[blk + 2 + (j & 15)]); \
    return f16_at(X##_h[blk >> 1]) * IQ4_NL_LEVELS[j < 16 ? q & 15 : q >> 4]; \
  }
// 32 values: an E8M0 exponent byte, 16 bytes of nibbles indexing E2M1's levels (doubled,
// index 8 is -0); the level times 2^(e - 128) (subnormal for e < 2). Blocks are 17 bytes, so
// every read is a byte.
const float MXFP4_LEVELS[16] = float[16](0, 1, 2, 3, 4, 6, 8, 12, -0.0, -1, -2, -3, -4, -6, -8, -12);
float e8m0_half(uint e) { return uintBitsToFloat(e < 2 ? 0x00200000u << e : (e - 1) << 23); }
#define DEFINE_ELEM_MXFP4(X) \
  float X##_elem(uint r, uint i) { \
    const uint blk = r + (i >> 5) * 17, j = i & 31; \
    const uint q = uint(X##_b[blk + 1 + (j & 15)]); \
    return MXFP4_LEVELS[j < 16 ? q & 15 : q >> 4] * e8m0_half(uint(X##_b[blk])); \
  }

// K-quant sub-block s's 6-bit scale and min from a block's 12 packed bytes at `sc`.
#define DEFINE_SCALE_MIN_K4(X) \
  vec2 X##_scale_min_k4(uint sc, uint s) { \
    if (s < 4) return vec2(uint(X##_b[sc + s]) & 63, uint(X##_b[sc + s + 4]) & 63); \
    const uint a = uint(X##_b[sc + s + 4]), lo = uint(X##_b[sc + s - 4]), hi = uint(X##_b[sc + s]); \
    return vec2((a & 15) | ((lo >> 6) << 4), (a >> 4) | ((hi >> 6) << 4)); \
  }
// 256 values in 8 sub-blocks of 32: f16 d, f16 dmin, 12 scale bytes, 128 bytes of nibbles
// (sub-blocks 2g and 2g+1 share bytes 32g.., low then high nibbles).
#define DEFINE_ELEM_Q4_K(X) \
  DEFINE_SCALE_MIN_K4(X) \
  float X##_elem(uint r, uint i) { \
    const uint blk = r + (i >> 8) * 144, j = i & 255, s = j >> 5, l = j & 31; \
    const vec2 sm = X##_scale_min_k4(blk + 4, s); \
    const uint q = (uint(X##_b[blk + 16 + 32 * (s >> 1) + l]) >> (4 * (s & 1))) & 15; \
    return f16_at(X##_h[blk >> 1]) * sm.x * float(q) - f16_at(X##_h[(blk >> 1) + 1]) * sm.y; \
  }
// Q4_K's layout plus 32 bytes of fifth bits (bit s of byte l for sub-block s) before the nibbles.
#define DEFINE_ELEM_Q5_K(X) \
  DEFINE_SCALE_MIN_K4(X) \
  float X##_elem(uint r, uint i) { \
    const uint blk = r + (i >> 8) * 176, j = i & 255, s = j >> 5, l = j & 31; \
    const vec2 sm = X##_scale_min_k4(blk + 4, s); \
    const uint q = ((uint(X##_b[blk + 48 + 32 * (s >> 1) + l]) >> (4 * (s & 1))) & 15) | \
                   (((uint(X##_b[blk + 16 + l]) >> s) & 1) << 4); \
    return f16_at(X##_h[blk >> 1]) * sm.x * float(q) - f16_at(X##_h[(blk >> 1) + 1]) * sm.y; \
  }
// 256 values: 128 bytes of low nibbles, 64 of high bit pairs, 16 signed scales, f16 d. Each
// half of 128 values takes 64 low bytes, 32 high bytes, 8 scales; its quarter k (32 values)
// the low (k < 2) or high nibbles of bytes 32(k & 1).., bits 2k of the high bytes.
#define DEFINE_ELEM_Q6_K(X) \
  float X##_elem(uint r, uint i) { \
    const uint blk = r + (i >> 8) * 210, j = i & 255, n = j >> 7, k = (j >> 5) & 3, l = j & 31; \
    const uint lo = (uint(X##_b[blk + 64 * n + 32 * (k & 1) + l]) >> (k >= 2 ? 4 : 0)) & 15; \
    const uint hi = (uint(X##_b[blk + 128 + 32 * n + l]) >> (2 * k)) & 3; \
    const float sc = float(int8_t(X##_b[blk + 192 + 8 * n + (l >> 4) + 2 * k])); \
    return f16_at(X##_h[(blk + 208) >> 1]) * sc * (float(lo | (hi << 4)) - 32.0); \
  }

// Q2_K and Q3_K hold 2-bit levels four to a byte: in each 128-value half, byte l of 32 holds
// values l, l + 32, l + 64, l + 96; value j of a block is in 16-value group n * 8 + 2s + h
// (n = j / 128, s = (j / 32) % 4, h = (j / 16) % 2) and byte 32n + 16h + j % 16, bits 2s.
// 256 values: 16 bytes of group scales (4-bit scale | 4-bit min << 4), 64 bytes of levels,
// f16 d, f16 dmin; d * scale * q - dmin * min.
#define DEFINE_ELEM_Q2_K(X) \
  float X##_elem(uint r, uint i) { \
    const uint blk = r + (i >> 8) * 84, j = i & 255, n = j >> 7, s = (j >> 5) & 3, h = (j >> 4) & 1; \
    const uint sc = uint(X##_b[blk + 8 * n + 2 * s + h]); \
    const uint q = (uint(X##_b[blk + 16 + 32 * n + 16 * h + (j & 15)]) >> (2 * s)) & 3; \
    return f16_at(X##_h[(blk + 80) >> 1]) * float(sc & 15) * float(q) - f16_at(X##_h[(blk + 82) >> 1]) * float(sc >> 4); \
  }
// 256 values: 32 bytes of high bits (value j's in byte j % 32, bit 4n + s), 64 bytes of
// levels, 12 bytes of 6-bit group scales (offset 32), f16 d; d * (scale - 32) * (q - 4 when
// the high bit is clear).
#define DEFINE_ELEM_Q3_K(X) \
  float X##_elem(uint r, uint i) { \
    const uint blk = r + (i >> 8) * 110, j = i & 255, n = j >> 7, s = (j >> 5) & 3, h = (j >> 4) & 1; \
    const uint g = 8 * n + 2 * s + h, sc = blk + 96; \
    const uint low = g < 8 ? uint(X##_b[sc + g]) & 15 : uint(X##_b[sc + g - 8]) >> 4; \
    const uint high = (uint(X##_b[sc + 8 + (g & 3)]) >> (2 * (g >> 2))) & 3; \
    const int q = int((uint(X##_b[blk + 32 + 32 * n + 16 * h + (j & 15)]) >> (2 * s)) & 3) - \
                  (((uint(X##_b[blk + 16 * h + (j & 15)]) >> (4 * n + s)) & 1) != 0 ? 0 : 4); \
    return f16_at(X##_h[(blk + 108) >> 1]) * float(int(low | (high << 4)) - 32) * float(q); \
  }
// 256 values in 8 groups of 32: f16 d, 16 bits of scales' high pairs, 4 bytes of their low
// nibbles, 128 bytes of nibbles indexing IQ4_NL's levels; d * (scale - 32) * level.
#define DEFINE_ELEM_IQ4_XS(X) \
  float X##_elem(uint r, uint i) { \
    const uint blk = r + (i >> 8) * 136, j = i & 255, g = j >> 5, t = j & 31; \
    const uint sc = ((uint(X##_b[blk + 4 + (g >> 1)]) >> (4 * (g & 1))) & 15) | \
                    (((uint(X##_h[(blk >> 1) + 1]) >> (2 * g)) & 3) << 4); \
    const uint q = uint(X##_b[blk + 8 + 16 * g + (t & 15)]); \
    return f16_at(X##_h[blk >> 1]) * float(int(sc) - 32) * IQ4_NL_LEVELS[t < 16 ? q & 15 : q >> 4]; \
  }

// Quad readers: DEFINE_QUAD(X, TYPE) defines vec4 X_quad(uint r, uint q), values 4q .. 4q+3
// of the row at byte r. Consecutive q read consecutive bytes, so the invocations of a row that
// take consecutive quads read memory together (mul_mat's inner loop); whole quads only (float
// rows take their last, partial quad value by value).
#define DEFINE_QUAD(X, T) DEFINE_QUAD_EXPANDED(X, T)
#define DEFINE_QUAD_EXPANDED(X, T) DEFINE_QUAD_##T(X)
#define DEFINE_QUAD_BY_ELEM(X) \
  vec4 X##_quad(uint r, uint q) { \
    return vec4(X##_elem(r, 4 * q), X##_elem(r, 4 * q + 1), X##_elem(r, 4 * q + 2), X##_elem(r, 4 * q + 3)); \
  }
#define DEFINE_QUAD_F32(X) DEFINE_QUAD_BY_ELEM(X)
#define DEFINE_QUAD_F16(X) DEFINE_QUAD_BY_ELEM(X)
#define DEFINE_QUAD_BF16(X) DEFINE_QUAD_BY_ELEM(X)
#define DEFINE_QUAD_Q4_1(X) DEFINE_QUAD_BY_ELEM(X)
#define DEFINE_QUAD_Q5_0(X) DEFINE_QUAD_BY_ELEM(X)
#define DEFINE_QUAD_Q5_1(X) DEFINE_QUAD_BY_ELEM(X)
#define DEFINE_QUAD_IQ4_NL(X) DEFINE_QUAD_BY_ELEM(X)
#define DEFINE_QUAD_MXFP4(X) DEFINE_QUAD_BY_ELEM(X)
#define DEFINE_QUAD_Q2_K(X) DEFINE_QUAD_BY_ELEM(X)
#define DEFINE_QUAD_Q3_K(X) DEFINE_QUAD_BY_ELEM(X)
#define DEFINE_QUAD_IQ4_XS(X) DEFINE_QUAD_BY_ELEM(X)
// Four bytes at a 2-byte aligned address, little-endian in one word.
#define DEFINE_WORD16(X) \
  uint X##_word2(uint at) { return uint(X##_h[at >> 1]) | (uint(X##_h[(at >> 1) + 1]) << 16); }
vec4 nibbles(uint w, uint shift) {
  return vec4((w >> shift) & 15, (w >> (shift + 8)) & 15, (w >> (shift + 16)) & 15, (w >> (shift + 24)) & 15);
}
vec4 signed_bytes(uint w) {
  return vec4(int(w << 24) >> 24, int(w << 16) >> 24, int(w << 8) >> 24, int(w) >> 24);
}
// The low four bits of `bits` as bit 4 of four bytes (Q5_0 and Q5_1's fifth bits).
uint fifth_bits(uint bits) { return ((bits & 1u) | ((bits & 2u) << 7) | ((bits & 4u) << 14) | ((bits & 8u) << 21)) << 4; }
#define DEFINE_QUAD_Q4_0(X) \
  DEFINE_WORD16(X) \
  vec4 X##_quad(uint r, uint q) { \
    const uint blk = r + (q >> 3) * 18, j = (q & 7) * 4; \
    const uint w = X##_word2(blk + 2 + (j & 15)); \
    return f16_at(X##_h[blk >> 1]) * (nibbles(w, j < 16 ? 0 : 4) - 8.0); \
  }
#define DEFINE_QUAD_Q8_0(X) \
  DEFINE_WORD16(X) \
  vec4 X##_quad(uint r, uint q) { \
    const uint blk = r + (q >> 3) * 34; \
    return f16_at(X##_h[blk >> 1]) * signed_bytes(X##_word2(blk + 2 + (q & 7) * 4)); \
  }
#define DEFINE_QUAD_Q4_K(X) \
  vec4 X##_quad(uint r, uint q) { \
    const uint blk = r + (q >> 6) * 144, j = (q & 63) * 4, s = j >> 5, l = j & 31; \
    const vec2 sm = X##_scale_min_k4(blk + 4, s); \
    const uint w = X##_u[(blk + 16 + 32 * (s >> 1) + l) >> 2]; \
    return f16_at(X##_h[blk >> 1]) * sm.x * nibbles(w, 4 * (s & 1)) - f16_at(X##_h[(blk >> 1) + 1]) * sm.y; \
  }
#define DEFINE_QUAD_Q5_K(X) \
  vec4 X##_quad(uint r, uint q) { \
    const uint blk = r + (q >> 6) * 176, j = (q & 63) * 4, s = j >> 5, l = j & 31; \
    const vec2 sm = X##_scale_min_k4(blk + 4, s); \
    const uint w = X##_u[(blk + 48 + 32 * (s >> 1) + l) >> 2]; \
    const uint h = X##_u[(blk + 16 + l) >> 2] >> s; \
    const vec4 hi = vec4(h & 1, (h >> 8) & 1, (h >> 16) & 1, (h >> 24) & 1) * 16.0; \
    return f16_at(X##_h[blk >> 1]) * sm.x * (nibbles(w, 4 * (s & 1)) + hi) - f16_at(X##_h[(blk >> 1) + 1]) * sm.y; \
  }
#define DEFINE_QUAD_Q6_K(X) \
  DEFINE_WORD16(X) \
  vec4 X##_quad(uint r, uint q) { \
    const uint blk = r + (q >> 6) * 210, j = (q & 63) * 4, n = j >> 7, k = (j >> 5) & 3, l = j & 31; \
    const uint lo = X##_word2(blk + 64 * n + 32 * (k & 1) + l) >> (k >= 2 ? 4 : 0); \
    const uint hi = X##_word2(blk + 128 + 32 * n + l) >> (2 * k); \
    const vec4 v = vec4((lo & 15) | ((hi & 3) << 4), ((lo >> 8) & 15) | (((hi >> 8) & 3) << 4), \
                        ((lo >> 16) & 15) | (((hi >> 16) & 3) << 4), ((lo >> 24) & 15) | (((hi >> 24) & 3) << 4)); \
    const float sc = float(int8_t(X##_b[blk + 192 + 8 * n + (l >> 4) + 2 * k])); \
    return f16_at(X##_h[(blk + 208) >> 1]) * sc * (v - 32.0); \
  }
