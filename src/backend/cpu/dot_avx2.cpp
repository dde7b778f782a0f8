// AVX2 (+FMA, F16C) dot kernels for the types that dominate real models: F32, F16, Q4_0,
// Q8_0, Q4_K and Q6_K. Integer dots use _mm256_maddubs_epi16 (unsigned x signed bytes) the
// way llama.cpp's AVX2 path does: signed x signed becomes |x| x sign(y, x). Each weight block
// is loaded and unpacked once and dotted with NY activation columns.
#include "backend/cpu/simd_x86.h"
#include "quant/blocks.h"

namespace paddock::cpu {

#if defined(PADDOCK_X86)

namespace {

using detail::column;

PADDOCK_TARGET_AVX2 inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
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

template <int NY>
PADDOCK_TARGET_AVX2 void f32_n(int64_t n, const void* x, const void* y, size_t ys, float* out) {
  const float* a = static_cast<const float*>(x);
  const float* b[NY];
  __m256 acc0[NY], acc1[NY];
  for (int j = 0; j < NY; ++j) {
    b[j] = reinterpret_cast<const float*>(column(y, ys, j));
    acc0[j] = _mm256_setzero_ps();
    acc1[j] = _mm256_setzero_ps();
  }
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 x0 = _mm256_loadu_ps(a + i);
    const __m256 x1 = _mm256_loadu_ps(a + i + 8);
    for (int j = 0; j < NY; ++j) {
      acc0[j] = _mm256_fmadd_ps(x0, _mm256_loadu_ps(b[j] + i), acc0[j]);
      acc1[j] = _mm256_fmadd_ps(x1, _mm256_loadu_ps(b[j] + i + 8), acc1[j]);
    }
  }
  for (int j = 0; j < NY; ++j) {
    float s = hsum(_mm256_add_ps(acc0[j], acc1[j]));
    for (int64_t k = i; k < n; ++k) s += a[k] * b[j][k];
    out[j] = s;
  }
}

template <int NY>
PADDOCK_TARGET_AVX2 void f16_n(int64_t n, const void* x, const void* y, size_t ys, float* out) {
  const uint16_t* a = static_cast<const uint16_t*>(x);
  const uint16_t* b[NY];
  __m256 acc0[NY], acc1[NY];
  for (int j = 0; j < NY; ++j) {
    b[j] = reinterpret_cast<const uint16_t*>(column(y, ys, j));
    acc0[j] = _mm256_setzero_ps();
    acc1[j] = _mm256_setzero_ps();
  }
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 x0 = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i)));
    const __m256 x1 = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i + 8)));
    for (int j = 0; j < NY; ++j) {
      const __m256 y0 = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b[j] + i)));
      const __m256 y1 = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b[j] + i + 8)));
      acc0[j] = _mm256_fmadd_ps(x0, y0, acc0[j]);
      acc1[j] = _mm256_fmadd_ps(x1, y1, acc1[j]);
    }
  }
  for (int j = 0; j < NY; ++j) {
    float s = hsum(_mm256_add_ps(acc0[j], acc1[j]));
    for (int64_t k = i; k < n; ++k) s += half(a[k]) * half(b[j][k]);
    out[j] = s;
  }
}

template <int NY>
PADDOCK_TARGET_AVX2 void q8_0_n(int64_t n, const void* x, const void* y, size_t ys, float* out) {
  const BlockQ8_0* xb = static_cast<const BlockQ8_0*>(x);
  const BlockQ8_0* yb[NY];
  __m256 acc[NY];
  for (int j = 0; j < NY; ++j) {
    yb[j] = reinterpret_cast<const BlockQ8_0*>(column(y, ys, j));
    acc[j] = _mm256_setzero_ps();
  }
  const int64_t nb = n / kQK8_0;
  for (int64_t i = 0; i < nb; ++i) {
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
  for (int j = 0; j < NY; ++j) {
    yb[j] = reinterpret_cast<const BlockQ8_0*>(column(y, ys, j));
    acc[j] = _mm256_setzero_ps();
  }
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

// Q4_K: value = d * sc * q - dmin * mn per group of 32; the min term uses the activations'
// per-16 sums (bsums), so the inner loop is a pure unsigned x signed byte dot.
template <int NY>
PADDOCK_TARGET_AVX2 void q4_K_n(int64_t n, const void* x, const void* y, size_t ys, float* out) {
  const BlockQ4_K* xb = static_cast<const BlockQ4_K*>(x);
  const BlockQ8_K* yb[NY];
  __m256 acc[NY];
  __m128 mins[NY];
  for (int j = 0; j < NY; ++j) {
    yb[j] = reinterpret_cast<const BlockQ8_K*>(column(y, ys, j));
    acc[j] = _mm256_setzero_ps();
    mins[j] = _mm_setzero_ps();
  }
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  const int64_t nb = n / kQK_K;
  for (int64_t i = 0; i < nb; ++i) {
    const BlockQ4_K& b = xb[i];
    uint8_t sc[8], mn[8];
    detail::unpack_scales_k4(b.scales, sc, mn);
    const __m128i mins16 = _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(mn)));
    __m256i lo[4], hi[4];
    for (int c = 0; c < 4; ++c) {
      const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs + 32 * c));
      lo[c] = _mm256_and_si256(raw, m4);
      hi[c] = _mm256_and_si256(_mm256_srli_epi16(raw, 4), m4);
    }
    const float d = half(b.d);
    const float dmin = half(b.dmin);
    for (int j = 0; j < NY; ++j) {
      const BlockQ8_K& a = yb[j][i];
      // Sums of 32 activations (adjacent bsums) times the group mins: 4 int32 lanes.
      const __m128i bs = _mm_hadd_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a.bsums)),
                                        _mm_loadu_si128(reinterpret_cast<const __m128i*>(a.bsums + 8)));
      const __m128i summ = _mm_madd_epi16(mins16, bs);
      __m256i sumi = _mm256_setzero_si256();
      for (int c = 0; c < 4; ++c) {
        const __m256i yl = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.qs + 64 * c));
        const __m256i yh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.qs + 64 * c + 32));
        const __m256i pl = _mm256_madd_epi16(_mm256_maddubs_epi16(lo[c], yl), _mm256_set1_epi16(sc[2 * c]));
        const __m256i ph =
            _mm256_madd_epi16(_mm256_maddubs_epi16(hi[c], yh), _mm256_set1_epi16(sc[2 * c + 1]));
        sumi = _mm256_add_epi32(sumi, _mm256_add_epi32(pl, ph));
      }
      acc[j] = _mm256_fmadd_ps(_mm256_set1_ps(d * a.d), _mm256_cvtepi32_ps(sumi), acc[j]);
      mins[j] = _mm_fmadd_ps(_mm_set1_ps(dmin * a.d), _mm_cvtepi32_ps(summ), mins[j]);
    }
  }
  for (int j = 0; j < NY; ++j) {
    __m128 m = _mm_add_ps(mins[j], _mm_movehl_ps(mins[j], mins[j]));
    m = _mm_add_ss(m, _mm_movehdup_ps(m));
    out[j] = hsum(acc[j]) - _mm_cvtss_f32(m);
  }
}

// Q6_K: q in 0..63 with value d * sc * (q - 32). The -32 is applied once per super-block
// through the activations' per-16 sums: group g of 16 elements has scale sc[g].
template <int NY>
PADDOCK_TARGET_AVX2 void q6_K_n(int64_t n, const void* x, const void* y, size_t ys, float* out) {
  const BlockQ6_K* xb = static_cast<const BlockQ6_K*>(x);
  const BlockQ8_K* yb[NY];
  __m256 acc[NY];
  float offsets[NY];
  for (int j = 0; j < NY; ++j) {
    yb[j] = reinterpret_cast<const BlockQ8_K*>(column(y, ys, j));
    acc[j] = _mm256_setzero_ps();
    offsets[j] = 0.0f;
  }
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  const __m256i m2 = _mm256_set1_epi8(0x30);
  const int64_t nb = n / kQK_K;
  for (int64_t i = 0; i < nb; ++i) {
    const BlockQ6_K& b = xb[i];
    __m256i q[8];    // 8 runs of 32 elements, in element order
    __m256i scv[8];  // the two scales of each run, as int16 (first 16 elements, next 16)
    for (int h = 0; h < 2; ++h) {
      const __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.ql + 64 * h));
      const __m256i l1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.ql + 64 * h + 32));
      const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qh + 32 * h));
      q[4 * h + 0] =
          _mm256_or_si256(_mm256_and_si256(l0, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 4), m2));
      q[4 * h + 1] =
          _mm256_or_si256(_mm256_and_si256(l1, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 2), m2));
      q[4 * h + 2] =
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4), _mm256_and_si256(qh, m2));
      q[4 * h + 3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4),
                                     _mm256_and_si256(_mm256_srli_epi16(qh, 2), m2));
    }
    for (int r = 0; r < 8; ++r) {
      scv[r] = _mm256_set_m128i(_mm_set1_epi16(b.scales[2 * r + 1]), _mm_set1_epi16(b.scales[2 * r]));
    }
    const float d = half(b.d);
    for (int j = 0; j < NY; ++j) {
      const BlockQ8_K& a = yb[j][i];
      int32_t offset = 0;
      for (int g = 0; g < 16; ++g) offset += b.scales[g] * a.bsums[g];
      __m256i sumi = _mm256_setzero_si256();
      for (int r = 0; r < 8; ++r) {
        const __m256i ya = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.qs + 32 * r));
        sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(_mm256_maddubs_epi16(q[r], ya), scv[r]));
      }
      acc[j] = _mm256_fmadd_ps(_mm256_set1_ps(d * a.d), _mm256_cvtepi32_ps(sumi), acc[j]);
      offsets[j] += d * a.d * static_cast<float>(32 * offset);
    }
  }
  for (int j = 0; j < NY; ++j) out[j] = hsum(acc[j]) - offsets[j];
}

PADDOCK_TARGET_AVX2 void half_to_float(const uint16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
  }
  for (; i < n; ++i) dst[i] = half(src[i]);
}

PADDOCK_DOT_DISPATCH(PADDOCK_TARGET_AVX2, f32)
PADDOCK_DOT_DISPATCH(PADDOCK_TARGET_AVX2, f16)
PADDOCK_DOT_DISPATCH(PADDOCK_TARGET_AVX2, q8_0)
PADDOCK_DOT_DISPATCH(PADDOCK_TARGET_AVX2, q4_0)
PADDOCK_DOT_DISPATCH(PADDOCK_TARGET_AVX2, q4_K)
PADDOCK_DOT_DISPATCH(PADDOCK_TARGET_AVX2, q6_K)

}  // namespace

HalfToFloatFn half_to_float_avx2() { return half_to_float; }

DotFn dot_kernel_avx2(DType t) {
  switch (t) {
    case DType::kF32: return f32;
    case DType::kF16: return f16;
    case DType::kQ8_0: return q8_0;
    case DType::kQ4_0: return q4_0;
    case DType::kQ4_K: return q4_K;
    case DType::kQ6_K: return q6_K;
    default: return nullptr;
  }
}

#else

HalfToFloatFn half_to_float_avx2() { return nullptr; }
DotFn dot_kernel_avx2(DType) { return nullptr; }

#endif

}  // namespace paddock::cpu
