// AVX-512 VNNI dot kernels (Zen 4, Ice Lake and later): the byte dots of Q8_0, Q4_K and Q6_K
// with _mm256_dpbusd_epi32, one instruction for what AVX2 needs maddubs + madd for. They use
// 256-bit vectors (AVX512VL): a Q8_0 block or a Q4_K group is 32 bytes, and Zen 4 splits
// 512-bit integer ops in two anyway. Other types fall back to the AVX2 kernels (dot.h).
#include "backend/cpu/simd_x86.h"
#include "quant/blocks.h"

namespace paddock::cpu {

#if defined(PADDOCK_X86)

namespace {

using detail::column;

PADDOCK_TARGET_AVX512 inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

PADDOCK_TARGET_AVX512 inline float half(uint16_t h) { return _cvtsh_ss(h); }

template <int NY>
PADDOCK_TARGET_AVX512 void q8_0_n(int64_t n, const void* x, const void* y, size_t ys, float* out) {
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
    const __m256i aq = _mm256_sign_epi8(q, q);
    const float dx = half(xb[i].d);
    for (int j = 0; j < NY; ++j) {
      const __m256i sy =
          _mm256_sign_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(yb[j][i].qs)), q);
      const __m256i p = _mm256_dpbusd_epi32(_mm256_setzero_si256(), aq, sy);
      acc[j] = _mm256_fmadd_ps(_mm256_set1_ps(dx * half(yb[j][i].d)), _mm256_cvtepi32_ps(p), acc[j]);
    }
  }
  for (int j = 0; j < NY; ++j) out[j] = hsum(acc[j]);
}

// Q4_K as in dot_avx2.cpp (groups outer, columns inner; mins through bsums), with dpbusd for
// the byte dots and the group scale applied to the int32 sums.
template <int NY>
PADDOCK_TARGET_AVX512 void q4_K_n(int64_t n, const void* x, const void* y, size_t ys, float* out) {
  const BlockQ4_K* xb = static_cast<const BlockQ4_K*>(x);
  const BlockQ8_K* yb[NY];
  __m256 acc[NY];
  for (int j = 0; j < NY; ++j) {
    yb[j] = reinterpret_cast<const BlockQ8_K*>(column(y, ys, j));
    acc[j] = _mm256_setzero_ps();
  }
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  const int64_t nb = n / kQK_K;
  for (int64_t i = 0; i < nb; ++i) {
    const BlockQ4_K& b = xb[i];
    uint8_t sc[8], mn[8];
    detail::unpack_scales_k4(b.scales, sc, mn);
    const __m128i mins16 = _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(mn)));
    const __m256i sc32 = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(sc)));
    const float d = half(b.d);
    const float dmin = half(b.dmin);
    __m256i sumi[NY];
    for (int j = 0; j < NY; ++j) sumi[j] = _mm256_setzero_si256();
    for (int c = 0; c < 4; ++c) {
      const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs + 32 * c));
      const __m256i lo = _mm256_and_si256(raw, m4);
      const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), m4);
      const __m256i sl = _mm256_permutevar8x32_epi32(sc32, _mm256_set1_epi32(2 * c));
      const __m256i sh = _mm256_permutevar8x32_epi32(sc32, _mm256_set1_epi32(2 * c + 1));
      for (int j = 0; j < NY; ++j) {
        const __m256i yl = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(yb[j][i].qs + 64 * c));
        const __m256i yh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(yb[j][i].qs + 64 * c + 32));
        const __m256i pl = _mm256_dpbusd_epi32(_mm256_setzero_si256(), lo, yl);
        const __m256i ph = _mm256_dpbusd_epi32(_mm256_setzero_si256(), hi, yh);
        sumi[j] = _mm256_add_epi32(sumi[j], _mm256_mullo_epi32(pl, sl));
        sumi[j] = _mm256_add_epi32(sumi[j], _mm256_mullo_epi32(ph, sh));
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

// Q6_K as in dot_avx2.cpp: the -32 is folded into the int32 sum as 32 * sc[g] * bsum[g].
template <int NY>
PADDOCK_TARGET_AVX512 void q6_K_n(int64_t n, const void* x, const void* y, size_t ys, float* out) {
  const BlockQ6_K* xb = static_cast<const BlockQ6_K*>(x);
  const BlockQ8_K* yb[NY];
  __m256 acc[NY];
  for (int j = 0; j < NY; ++j) {
    yb[j] = reinterpret_cast<const BlockQ8_K*>(column(y, ys, j));
    acc[j] = _mm256_setzero_ps();
  }
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  const __m256i m2 = _mm256_set1_epi8(0x30);
  const int64_t nb = n / kQK_K;
  for (int64_t i = 0; i < nb; ++i) {
    const BlockQ6_K& b = xb[i];
    __m256i q[8];
    __m256i scv[8];  // per int32 lane: lanes 0-3 cover the run's first 16 bytes, 4-7 the next
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
    const __m128i sc8 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales));
    const __m256i sc16 = _mm256_cvtepi8_epi16(sc8);
    for (int r = 0; r < 8; ++r) {
      const __m128i mask = _mm_set_epi32(0, 0, 0x01010101 * (2 * r + 1), 0x01010101 * (2 * r));
      scv[r] = _mm256_cvtepi8_epi32(_mm_shuffle_epi8(sc8, mask));
    }
    const float d = half(b.d);
    for (int j = 0; j < NY; ++j) {
      const BlockQ8_K& a = yb[j][i];
      const __m256i bsums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.bsums));
      __m256i sumi =
          _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(_mm256_madd_epi16(sc16, bsums), 5));
      for (int r = 0; r < 8; ++r) {
        const __m256i ya = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.qs + 32 * r));
        const __m256i p = _mm256_dpbusd_epi32(_mm256_setzero_si256(), q[r], ya);
        sumi = _mm256_add_epi32(sumi, _mm256_mullo_epi32(p, scv[r]));
      }
      acc[j] = _mm256_fmadd_ps(_mm256_set1_ps(d * a.d), _mm256_cvtepi32_ps(sumi), acc[j]);
    }
  }
  for (int j = 0; j < NY; ++j) out[j] = hsum(acc[j]);
}

PADDOCK_DOT_DISPATCH(PADDOCK_TARGET_AVX512, q8_0)
PADDOCK_DOT_DISPATCH(PADDOCK_TARGET_AVX512, q4_K)
PADDOCK_DOT_DISPATCH(PADDOCK_TARGET_AVX512, q6_K)

}  // namespace

DotFn dot_kernel_avx512(DType t) {
  switch (t) {
    case DType::kQ8_0: return q8_0;
    case DType::kQ4_K: return q4_K;
    case DType::kQ6_K: return q6_K;
    default: return nullptr;
  }
}

#else

DotFn dot_kernel_avx512(DType) { return nullptr; }

#endif

}  // namespace paddock::cpu
