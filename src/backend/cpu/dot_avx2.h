// What the AVX2 dot-kernel files share: small register helpers, and each file's table of
// kernels (dot_kernel_avx2 in dot.h composes them). Only included by the dot_avx2*.cpp files.
#pragma once

#include "backend/cpu/dot.h"
#include "backend/cpu/simd_x86.h"

namespace paddock::cpu {

// Q2_K and Q3_K (dot_avx2_k.cpp), and Q4_1, Q5_0, Q5_1, IQ4_NL, IQ4_XS and MXFP4
// (dot_avx2_legacy.cpp); nullptr for other types and on non-x86 builds.
DotFn dot_kernel_avx2_k(DType t);
DotFn dot_kernel_avx2_legacy(DType t);

#if defined(PADDOCK_X86)
namespace dot_avx2 {

PADDOCK_TARGET_AVX2 inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

PADDOCK_TARGET_AVX2 inline int32_t hsum_i32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
  return _mm_cvtsi128_si32(_mm_add_epi32(s, _mm_shuffle_epi32(s, 1)));
}

PADDOCK_TARGET_AVX2 inline float half(uint16_t h) { return _cvtsh_ss(h); }

// Eight int32 sums of four products each of signed bytes x and y (|x| <= 127 or y != -128).
PADDOCK_TARGET_AVX2 inline __m256i dot_i8(__m256i x, __m256i y) {
  const __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(x, x), _mm256_sign_epi8(y, x));
  return _mm256_madd_epi16(p, _mm256_set1_epi16(1));
}

// 32 nibbles of 16 bytes: low nibbles first, then high nibbles (the Q4_0/Q4_1 order).
PADDOCK_TARGET_AVX2 inline __m256i nibbles_32(const uint8_t* q) {
  const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
  const __m128i m = _mm_set1_epi8(0x0F);
  return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(raw, 4), m), _mm_and_si128(raw, m));
}

// v's 16-bit lanes shifted left by s bits (right by -s when s < 0); callers mask away the
// bits that cross between a lane's two bytes.
PADDOCK_TARGET_AVX2 inline __m256i shift_left(__m256i v, int s) {
  return s >= 0 ? _mm256_slli_epi16(v, s) : _mm256_srli_epi16(v, -s);
}

// 32 bits of `bits` (little-endian) spread to 32 bytes: byte i is 0xFF where bit i is set.
PADDOCK_TARGET_AVX2 inline __m256i bits_to_bytes(uint32_t bits) {
  const __m256i shuf = _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0);
  const __m256i bytes = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int32_t>(bits)), shuf);
  const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201));
  return _mm256_cmpeq_epi8(_mm256_and_si256(bytes, bit), bit);
}

}  // namespace dot_avx2
#endif

}  // namespace paddock::cpu
