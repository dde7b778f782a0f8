// AVX2 dot kernels for the less common types: Q4_1, Q5_0, Q5_1, IQ4_NL and MXFP4 (32-element
// blocks, sharing one loop) and IQ4_XS. Each weight block is unpacked once and dotted with NY
// activation columns.
// - Q4_1 / Q5_1: unsigned q (0..31) x signed activations with _mm256_maddubs_epi16; the min
//   term m * sum(y) comes from the Q8_1 block's s = d * sum(q).
// - Q5_0: q - 16 as signed bytes (the 5th bit from qh via bits_to_bytes); IQ4_NL / IQ4_XS /
//   MXFP4: nibbles mapped through the signed level table with _mm256_shuffle_epi8; all use dot_i8.
#include "backend/cpu/dot_avx2.h"

#include <array>
#include <cstring>

#include "quant/blocks.h"

namespace paddock::cpu {

#if defined(PADDOCK_X86)

namespace {

using detail::column;
using namespace dot_avx2;

PADDOCK_TARGET_AVX2 inline __m256i load32(const int8_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

PADDOCK_TARGET_AVX2 inline uint32_t load_qh(const uint8_t* qh) {
  uint32_t v;
  std::memcpy(&v, qh, sizeof v);
  return v;
}

// Eight int32 sums of four products each of unsigned bytes x (q <= 31, so no int16
// saturation) and signed bytes y.
PADDOCK_TARGET_AVX2 inline __m256i dot_u8(__m256i x, __m256i y) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(x, y), _mm256_set1_epi16(1));
}

// A 16-entry level table in both lanes, for _mm256_shuffle_epi8.
PADDOCK_TARGET_AVX2 inline __m256i level_table(const std::array<int8_t, 16>& levels) {
  return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(levels.data())));
}

PADDOCK_TARGET_AVX2 inline __m256i iq4_table() { return level_table(kIQ4NLValues); }

// The 32-element block types: the weight and activation blocks, the block's scale, its 32
// quants as bytes and their dot with 32 activations. kMin: value = d * q + m (the Q8_1
// activations' s is then needed). Table types map nibbles through levels().
struct Q4_1 {
  using X = BlockQ4_1;
  using Y = BlockQ8_1;
  static constexpr bool kMin = true;
  PADDOCK_TARGET_AVX2 static __m256i quants(const X& b, __m256i) { return nibbles_32(b.qs); }
  PADDOCK_TARGET_AVX2 static __m256i dot(__m256i q, __m256i y) { return dot_u8(q, y); }
};

struct Q5_1 {
  using X = BlockQ5_1;
  using Y = BlockQ8_1;
  static constexpr bool kMin = true;
  PADDOCK_TARGET_AVX2 static __m256i quants(const X& b, __m256i) {
    const __m256i hi = _mm256_and_si256(bits_to_bytes(load_qh(b.qh)), _mm256_set1_epi8(0x10));
    return _mm256_or_si256(nibbles_32(b.qs), hi);
  }
  PADDOCK_TARGET_AVX2 static __m256i dot(__m256i q, __m256i y) { return dot_u8(q, y); }
};

struct Q5_0 {
  using X = BlockQ5_0;
  using Y = BlockQ8_0;
  static constexpr bool kMin = false;
  // q - 16 without a subtraction: where the 5th bit is clear, nibble | 0xF0 is nibble - 16 as
  // a signed byte; where it is set, nibble + 16 - 16 is the nibble itself.
  PADDOCK_TARGET_AVX2 static __m256i quants(const X& b, __m256i) {
    const __m256i hi =
        _mm256_andnot_si256(bits_to_bytes(load_qh(b.qh)), _mm256_set1_epi8(static_cast<char>(0xF0)));
    return _mm256_or_si256(nibbles_32(b.qs), hi);
  }
  PADDOCK_TARGET_AVX2 static __m256i dot(__m256i q, __m256i y) { return dot_i8(q, y); }
};

struct IQ4_NL {
  using X = BlockIQ4_NL;
  using Y = BlockQ8_0;
  static constexpr bool kMin = false;
  PADDOCK_TARGET_AVX2 static __m256i levels() { return iq4_table(); }
  PADDOCK_TARGET_AVX2 static __m256i quants(const X& b, __m256i table) {
    return _mm256_shuffle_epi8(table, nibbles_32(b.qs));
  }
  PADDOCK_TARGET_AVX2 static __m256i dot(__m256i q, __m256i y) { return dot_i8(q, y); }
};

// The doubled E2M1 values are within +-12, so dot_i8's sign trick applies as for IQ4_NL.
struct MXFP4 {
  using X = BlockMXFP4;
  using Y = BlockQ8_0;
  static constexpr bool kMin = false;
  PADDOCK_TARGET_AVX2 static float scale(const X& b) { return e8m0_half(b.e); }
  PADDOCK_TARGET_AVX2 static __m256i levels() { return level_table(kMXFP4Values); }
  PADDOCK_TARGET_AVX2 static __m256i quants(const X& b, __m256i table) {
    return _mm256_shuffle_epi8(table, nibbles_32(b.qs));
  }
  PADDOCK_TARGET_AVX2 static __m256i dot(__m256i q, __m256i y) { return dot_i8(q, y); }
};

// The block's scale: the fp16 d, or the type's own scale() where it has one (MXFP4's E8M0).
template <typename K>
PADDOCK_TARGET_AVX2 inline float block_scale(const typename K::X& b) {
  if constexpr (requires { K::scale(b); }) {
    return K::scale(b);
  } else {
    return half(b.d);
  }
}

// The level table of table types; the others' quants() ignore it.
template <typename K>
PADDOCK_TARGET_AVX2 inline __m256i block_levels() {
  if constexpr (requires { K::levels(); }) {
    return K::levels();
  } else {
    return _mm256_setzero_si256();
  }
}

// value = (dx * dy) * sum(q * y) (+ mx * sy for kMin types). Even and odd blocks go to separate
// accumulators, as in q8_0_n: a block is only a few instructions, so one FMA chain would bound
// decode by its latency.
template <typename K, int NY>
PADDOCK_TARGET_AVX2 void blocks32_n(int64_t n, const void* x, const void* y, size_t ys, float* out) {
  using Y = typename K::Y;
  const typename K::X* xb = static_cast<const typename K::X*>(x);
  const Y* yb[NY];
  __m256 acc0[NY], acc1[NY];
  float mins[NY];
  for (int j = 0; j < NY; ++j) {
    yb[j] = reinterpret_cast<const Y*>(column(y, ys, j));
    acc0[j] = _mm256_setzero_ps();
    acc1[j] = _mm256_setzero_ps();
    mins[j] = 0.0f;
  }
  const __m256i table = block_levels<K>();
  const int64_t nb = n / 32;
  int64_t i = 0;
  for (; i + 1 < nb; i += 2) {
    const __m256i q0 = K::quants(xb[i], table);
    const __m256i q1 = K::quants(xb[i + 1], table);
    const float dx0 = block_scale<K>(xb[i]);
    const float dx1 = block_scale<K>(xb[i + 1]);
    for (int j = 0; j < NY; ++j) {
      const Y& y0 = yb[j][i];
      const Y& y1 = yb[j][i + 1];
      const __m256i p0 = K::dot(q0, load32(y0.qs));
      const __m256i p1 = K::dot(q1, load32(y1.qs));
      acc0[j] = _mm256_fmadd_ps(_mm256_set1_ps(dx0 * half(y0.d)), _mm256_cvtepi32_ps(p0), acc0[j]);
      acc1[j] = _mm256_fmadd_ps(_mm256_set1_ps(dx1 * half(y1.d)), _mm256_cvtepi32_ps(p1), acc1[j]);
      if constexpr (K::kMin) {
        // Both products first: one add on the chain per pair of blocks.
        mins[j] += half(xb[i].m) * half(y0.s) + half(xb[i + 1].m) * half(y1.s);
      }
    }
  }
  for (int j = 0; j < NY; ++j) out[j] = hsum(_mm256_add_ps(acc0[j], acc1[j])) + mins[j];
  if (i < nb) {  // an odd last block after the sum, as ggml's scalar tail (MXFP4's order)
    const __m256i q = K::quants(xb[i], table);
    const float dx = block_scale<K>(xb[i]);
    for (int j = 0; j < NY; ++j) {
      const Y& yj = yb[j][i];
      const __m256i p = K::dot(q, load32(yj.qs));
      out[j] += dx * half(yj.d) * static_cast<float>(hsum_i32(p));
      if constexpr (K::kMin) out[j] += half(xb[i].m) * half(yj.s);
    }
  }
}

// IQ4_XS: 8 groups of 32 with value d * (ls - 32) * level(q). The group scale multiplies the
// int16 pair sums in _mm256_madd_epi16 (in place of dot_i8's ones), so a super-block sums in
// int32 and ends in one float FMA per column.
template <int NY>
PADDOCK_TARGET_AVX2 void iq4_xs_n(int64_t n, const void* x, const void* y, size_t ys, float* out) {
  const BlockIQ4_XS* xb = static_cast<const BlockIQ4_XS*>(x);
  const BlockQ8_K* yb[NY];
  __m256 acc[NY];
  detail::start_columns(y, ys, yb, acc);
  const __m256i table = iq4_table();
  const int64_t nb = n / kQK_K;
  for (int64_t i = 0; i < nb; ++i) {
    const BlockIQ4_XS& b = xb[i];
    __m256i sumi[NY];
    for (int j = 0; j < NY; ++j) sumi[j] = _mm256_setzero_si256();
    for (int g = 0; g < kQK_K / 32; ++g) {
      const int ls = ((b.scales_l[g / 2] >> 4 * (g % 2)) & 0xF) | (((b.scales_h >> 2 * g) & 3) << 4);
      const __m256i scale = _mm256_set1_epi16(static_cast<int16_t>(ls - 32));
      const __m256i q = _mm256_shuffle_epi8(table, nibbles_32(b.qs + 16 * g));
      const __m256i aq = _mm256_sign_epi8(q, q);  // |q| <= 127: the signed x signed trick of dot_i8
      for (int j = 0; j < NY; ++j) {
        const __m256i sy = _mm256_sign_epi8(load32(yb[j][i].qs + 32 * g), q);
        sumi[j] = _mm256_add_epi32(sumi[j], _mm256_madd_epi16(_mm256_maddubs_epi16(aq, sy), scale));
      }
    }
    const float d = half(b.d);
    for (int j = 0; j < NY; ++j) {
      acc[j] = _mm256_fmadd_ps(_mm256_set1_ps(d * yb[j][i].d), _mm256_cvtepi32_ps(sumi[j]), acc[j]);
    }
  }
  for (int j = 0; j < NY; ++j) out[j] = hsum(acc[j]);
}

PADDOCK_DOT_DISPATCH_OF(PADDOCK_TARGET_AVX2, q4_1, blocks32_n, Q4_1)
PADDOCK_DOT_DISPATCH_OF(PADDOCK_TARGET_AVX2, q5_0, blocks32_n, Q5_0)
PADDOCK_DOT_DISPATCH_OF(PADDOCK_TARGET_AVX2, q5_1, blocks32_n, Q5_1)
PADDOCK_DOT_DISPATCH_OF(PADDOCK_TARGET_AVX2, iq4_nl, blocks32_n, IQ4_NL)
PADDOCK_DOT_DISPATCH_OF(PADDOCK_TARGET_AVX2, mxfp4, blocks32_n, MXFP4)
PADDOCK_DOT_DISPATCH(PADDOCK_TARGET_AVX2, iq4_xs)

}  // namespace

DotFn dot_kernel_avx2_legacy(DType t) {
  switch (t) {
    case DType::kQ4_1: return q4_1;
    case DType::kQ5_0: return q5_0;
    case DType::kQ5_1: return q5_1;
    case DType::kIQ4_NL: return iq4_nl;
    case DType::kIQ4_XS: return iq4_xs;
    case DType::kMXFP4: return mxfp4;
    default: return nullptr;
  }
}

#else

DotFn dot_kernel_avx2_legacy(DType) { return nullptr; }

#endif

}  // namespace paddock::cpu
