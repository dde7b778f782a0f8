// AVX2 (+FMA, F16C) dot kernels for the types that dominate real models: F32, F16, BF16, Q4_0,
// Q8_0, Q4_K, Q5_K and Q6_K (Q2_K and Q3_K: dot_avx2_k.cpp; the other 32-blocks and IQ4:
// dot_avx2_legacy.cpp). Integer dots use _mm256_maddubs_epi16 (unsigned x signed bytes) the
// way llama.cpp's AVX2 path does: signed x signed becomes |x| x sign(y, x). Each weight block
// is loaded and unpacked once and dotted with NY activation columns.
#include "backend/cpu/dot_avx2.h"

#include <type_traits>

#include "base/fp16.h"
#include "quant/blocks.h"

namespace paddock::cpu {

#if defined(PADDOCK_X86)

namespace {

using namespace dot_avx2;

// Float rows dotted with activations of their own type, 16 elements a step as two vectors of
// 8 floats (any split of the 16 will do when x and y are split alike), the tail one by one.
struct F32 {
  using T = float;
  PADDOCK_TARGET_AVX2 static void load16(const T* p, __m256& lo, __m256& hi) {
    lo = _mm256_loadu_ps(p);
    hi = _mm256_loadu_ps(p + 8);
  }
  static float one(T v) { return v; }
};

struct F16 {
  using T = uint16_t;
  PADDOCK_TARGET_AVX2 static void load16(const T* p, __m256& lo, __m256& hi) {
    lo = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    hi = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 8)));
  }
  PADDOCK_TARGET_AVX2 static float one(T v) { return half(v); }
};

// A 32-bit lane holds elements 2k (low half) and 2k + 1 (high half): a 16-bit shift left makes
// the even element an f32, masking off the low half the odd one.
struct BF16 {
  using T = uint16_t;
  PADDOCK_TARGET_AVX2 static void load16(const T* p, __m256& even, __m256& odd) {
    const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    even = _mm256_castsi256_ps(_mm256_slli_epi32(raw, 16));
    odd = _mm256_castsi256_ps(_mm256_and_si256(raw, _mm256_set1_epi32(static_cast<int32_t>(0xFFFF0000u))));
  }
  static float one(T v) { return bf16_to_f32(v); }
};

template <typename E, int NY>
PADDOCK_TARGET_AVX2 void floats_n(int64_t n, const void* x, const void* y, size_t ys, float* out) {
  using T = typename E::T;
  const T* a = static_cast<const T*>(x);
  const T* b[NY];
  __m256 acc0[NY], acc1[NY];
  detail::start_columns(y, ys, b, acc0);
  for (int j = 0; j < NY; ++j) acc1[j] = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256 x0, x1;
    E::load16(a + i, x0, x1);
    for (int j = 0; j < NY; ++j) {
      __m256 y0, y1;
      E::load16(b[j] + i, y0, y1);
      acc0[j] = _mm256_fmadd_ps(x0, y0, acc0[j]);
      acc1[j] = _mm256_fmadd_ps(x1, y1, acc1[j]);
    }
  }
  for (int j = 0; j < NY; ++j) {
    float s = hsum(_mm256_add_ps(acc0[j], acc1[j]));
    for (int64_t k = i; k < n; ++k) s += E::one(a[k]) * E::one(b[j][k]);
    out[j] = s;
  }
}

// One FMA chain per column, as ggml's AVX2 vec_dot_q8_0_q8_0 sums (quant/lanes8.h): the quant
// table's order, bit for bit. Models multiply interleaved rows (gemm.h); this serves odd shapes.
template <int NY>
PADDOCK_TARGET_AVX2 void q8_0_n(int64_t n, const void* x, const void* y, size_t ys, float* out) {
  const BlockQ8_0* xb = static_cast<const BlockQ8_0*>(x);
  const BlockQ8_0* yb[NY];
  __m256 acc[NY];
  detail::start_columns(y, ys, yb, acc);
  for (int64_t i = 0; i < n / kQK8_0; ++i) {
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb[i].qs));
    const float dx = half(xb[i].d);
    for (int j = 0; j < NY; ++j) {
      const __m256i p = dot_i8(q, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(yb[j][i].qs)));
      acc[j] = _mm256_fmadd_ps(_mm256_set1_ps(dx * half(yb[j][i].d)), _mm256_cvtepi32_ps(p), acc[j]);
    }
  }
  for (int j = 0; j < NY; ++j) out[j] = hsum(acc[j]);
}

template <int NY>
PADDOCK_TARGET_AVX2 void q4_0_n(int64_t n, const void* x, const void* y, size_t ys, float* out) {
  const BlockQ4_0* xb = static_cast<const BlockQ4_0*>(x);
  const BlockQ8_0* yb[NY];
  __m256 acc[NY];
  detail::start_columns(y, ys, yb, acc);
  const int64_t nb = n / kQK4_0;
  for (int64_t i = 0; i < nb; ++i) {
    const __m256i q = _mm256_sub_epi8(nibbles_32(xb[i].qs), _mm256_set1_epi8(8));
    const float dx = half(xb[i].d);
    for (int j = 0; j < NY; ++j) {
      const __m256i p = dot_i8(q, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(yb[j][i].qs)));
      acc[j] = _mm256_fmadd_ps(_mm256_set1_ps(dx * half(yb[j][i].d)), _mm256_cvtepi32_ps(p), acc[j]);
    }
  }
  for (int j = 0; j < NY; ++j) out[j] = hsum(acc[j]);
}

// Q4_K and Q5_K: value = d * sc * q - dmin * mn per group of 32; the min term uses the
// activations' per-16 sums (bsums), so the inner loop is a pure unsigned x signed byte dot.
// Groups go in the outer loop and columns in the inner one, so the live registers stay few
// (one int32 sum and one float accumulator per column) and nothing spills with 4 columns.
// Q5_K adds bit 2c (low nibbles) and 2c + 1 (high nibbles) of qh as each 32-run's bit 4.
template <typename Block, int NY>
PADDOCK_TARGET_AVX2 void k4_n(int64_t n, const void* x, const void* y, size_t ys, float* out) {
  constexpr bool kFifthBit = std::is_same_v<Block, BlockQ5_K>;
  const Block* xb = static_cast<const Block*>(x);
  const BlockQ8_K* yb[NY];
  __m256 acc[NY];
  detail::start_columns(y, ys, yb, acc);
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  const int64_t nb = n / kQK_K;
  for (int64_t i = 0; i < nb; ++i) {
    const Block& b = xb[i];
    uint8_t sc[8], mn[8];
    detail::unpack_scales_k4(b.scales, sc, mn);
    const __m128i mins16 = _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(mn)));
    const __m256i sc16 =
        _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(sc))));
    const float d = half(b.d);
    const float dmin = half(b.dmin);
    __m256i sumi[NY];
    for (int j = 0; j < NY; ++j) sumi[j] = _mm256_setzero_si256();
    for (int c = 0; c < 4; ++c) {
      const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs + 32 * c));
      __m256i lo = _mm256_and_si256(raw, m4);
      __m256i hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), m4);
      if constexpr (kFifthBit) {
        const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qh));
        const __m256i bit4 = _mm256_set1_epi8(0x10);
        lo = _mm256_or_si256(lo, _mm256_and_si256(shift_left(qh, 4 - 2 * c), bit4));
        hi = _mm256_or_si256(hi, _mm256_and_si256(shift_left(qh, 3 - 2 * c), bit4));
      }
      const __m256i sl = detail::broadcast_i16_avx2(sc16, 2 * c);
      const __m256i sh = detail::broadcast_i16_avx2(sc16, 2 * c + 1);
      for (int j = 0; j < NY; ++j) {
        const __m256i yl = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(yb[j][i].qs + 64 * c));
        const __m256i yh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(yb[j][i].qs + 64 * c + 32));
        const __m256i pl = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, yl), sl);
        const __m256i ph = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, yh), sh);
        sumi[j] = _mm256_add_epi32(sumi[j], _mm256_add_epi32(pl, ph));
      }
    }
    for (int j = 0; j < NY; ++j) {
      const BlockQ8_K& a = yb[j][i];
      // Sums of 32 activations (adjacent bsums) times the group mins: 4 int32 lanes.
      const __m128i bs = _mm_hadd_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a.bsums)),
                                        _mm_loadu_si128(reinterpret_cast<const __m128i*>(a.bsums + 8)));
      const __m256i summ = _mm256_set_m128i(_mm_setzero_si128(), _mm_madd_epi16(mins16, bs));
      acc[j] = _mm256_fmadd_ps(_mm256_set1_ps(d * a.d), _mm256_cvtepi32_ps(sumi[j]), acc[j]);
      acc[j] = _mm256_fnmadd_ps(_mm256_set1_ps(dmin * a.d), _mm256_cvtepi32_ps(summ), acc[j]);
    }
  }
  for (int j = 0; j < NY; ++j) out[j] = hsum(acc[j]);
}

// Q6_K: q in 0..63 with value d * sc * (q - 32). Group g of 16 elements has scale sc[g]; the
// -32 is folded into the int32 sum as 32 * sc[g] * bsum[g] (the activations' per-16 sums),
// so each super-block ends in one float FMA.
template <int NY>
PADDOCK_TARGET_AVX2 void q6_K_n(int64_t n, const void* x, const void* y, size_t ys, float* out) {
  const BlockQ6_K* xb = static_cast<const BlockQ6_K*>(x);
  const BlockQ8_K* yb[NY];
  __m256 acc[NY];
  detail::start_columns(y, ys, yb, acc);
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  const __m256i m2 = _mm256_set1_epi8(0x30);
  const int64_t nb = n / kQK_K;
  for (int64_t i = 0; i < nb; ++i) {
    const BlockQ6_K& b = xb[i];
    const __m128i sc8 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales));
    const __m256i sc16 = _mm256_cvtepi8_epi16(sc8);
    __m256i sumi[NY];
    for (int j = 0; j < NY; ++j) {
      const __m256i bsums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(yb[j][i].bsums));
      sumi[j] =
          _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(_mm256_madd_epi16(sc16, bsums), 5));
    }
    // Each half of the block: 64 bytes of low nibbles and 32 of high bits give 4 runs of 32.
    for (int h = 0; h < 2; ++h) {
      const __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.ql + 64 * h));
      const __m256i l1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.ql + 64 * h + 32));
      const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qh + 32 * h));
      for (int k = 0; k < 4; ++k) {
        const __m256i low = k == 0   ? _mm256_and_si256(l0, m4)
                            : k == 1 ? _mm256_and_si256(l1, m4)
                            : k == 2 ? _mm256_and_si256(_mm256_srli_epi16(l0, 4), m4)
                                     : _mm256_and_si256(_mm256_srli_epi16(l1, 4), m4);
        const __m256i high = k == 0   ? _mm256_slli_epi16(qh, 4)
                             : k == 1 ? _mm256_slli_epi16(qh, 2)
                             : k == 2 ? qh
                                      : _mm256_srli_epi16(qh, 2);
        const __m256i q = _mm256_or_si256(low, _mm256_and_si256(high, m2));
        const __m256i scale = detail::run_scales_avx2(sc8, 4 * h + k);
        for (int j = 0; j < NY; ++j) {
          const __m256i ya =
              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(yb[j][i].qs + 128 * h + 32 * k));
          sumi[j] = _mm256_add_epi32(sumi[j], _mm256_madd_epi16(_mm256_maddubs_epi16(q, ya), scale));
        }
      }
    }
    const float d = half(b.d);
    for (int j = 0; j < NY; ++j) {
      acc[j] = _mm256_fmadd_ps(_mm256_set1_ps(d * yb[j][i].d), _mm256_cvtepi32_ps(sumi[j]), acc[j]);
    }
  }
  for (int j = 0; j < NY; ++j) out[j] = hsum(acc[j]);
}

PADDOCK_TARGET_AVX2 void half_to_float(const uint16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
  }
  for (; i < n; ++i) dst[i] = half(src[i]);
}

// vcvtps2ph rounds to nearest even like f32_to_fp16; NaNs get its 0x7E00 (with the sign)
// rather than a truncated payload.
PADDOCK_TARGET_AVX2 void float_to_half(const float* src, uint16_t* dst, int64_t n) {
  int64_t i = 0;
  const __m128i nan = _mm_set1_epi16(0x7E00);
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_loadu_ps(src + i);
    const __m128i h = _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m256i unord = _mm256_castps_si256(_mm256_cmp_ps(x, x, _CMP_UNORD_Q));
    const __m128i is_nan = _mm_packs_epi32(_mm256_castsi256_si128(unord), _mm256_extracti128_si256(unord, 1));
    const __m128i fixed = _mm_or_si128(_mm_and_si128(h, _mm_set1_epi16(static_cast<int16_t>(0x8000))), nan);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm_blendv_epi8(h, fixed, is_nan));
  }
  for (; i < n; ++i) dst[i] = f32_to_fp16(src[i]);
}

PADDOCK_DOT_DISPATCH_OF(PADDOCK_TARGET_AVX2, f32, floats_n, F32)
PADDOCK_DOT_DISPATCH_OF(PADDOCK_TARGET_AVX2, f16, floats_n, F16)
PADDOCK_DOT_DISPATCH_OF(PADDOCK_TARGET_AVX2, bf16, floats_n, BF16)
PADDOCK_DOT_DISPATCH(PADDOCK_TARGET_AVX2, q8_0)
PADDOCK_DOT_DISPATCH(PADDOCK_TARGET_AVX2, q4_0)
PADDOCK_DOT_DISPATCH_OF(PADDOCK_TARGET_AVX2, q4_K, k4_n, BlockQ4_K)
PADDOCK_DOT_DISPATCH_OF(PADDOCK_TARGET_AVX2, q5_K, k4_n, BlockQ5_K)
PADDOCK_DOT_DISPATCH(PADDOCK_TARGET_AVX2, q6_K)

}  // namespace

HalfToFloatFn half_to_float_avx2() { return half_to_float; }
FloatToHalfFn float_to_half_avx2() { return float_to_half; }

DotFn dot_kernel_avx2(DType t) {
  switch (t) {
    case DType::kF32: return f32;
    case DType::kF16: return f16;
    case DType::kBF16: return bf16;
    case DType::kQ8_0: return q8_0;
    case DType::kQ4_0: return q4_0;
    case DType::kQ4_K: return q4_K;
    case DType::kQ5_K: return q5_K;
    case DType::kQ6_K: return q6_K;
    default: break;
  }
  if (const DotFn f = dot_kernel_avx2_k(t)) return f;
  return dot_kernel_avx2_legacy(t);
}

#else

HalfToFloatFn half_to_float_avx2() { return nullptr; }
FloatToHalfFn float_to_half_avx2() { return nullptr; }
DotFn dot_kernel_avx2(DType) { return nullptr; }

#endif

}  // namespace paddock::cpu
