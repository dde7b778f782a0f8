// AVX2 Q8_K and Q8_0 activation quantizers, byte-identical to the scalar ones: Q8_K rounds
// iscale * x half-to-even (ggml's nearest_int; cvtps_epi32 under the default rounding mode)
// with the sign of the first element of largest magnitude; Q8_0 scales by 127 / amax and
// rounds half to even, as ggml-cpu's x86 quantize_row_q8_0 does.
#include <cstring>

#include "backend/cpu/act_quant.h"
#include "backend/cpu/simd_x86.h"
#include "base/fp16.h"
#include "quant/blocks.h"

namespace paddock::cpu {

#if defined(PADDOCK_X86)

namespace {

PADDOCK_TARGET_AVX2 inline float hmax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

// 32 int32 (four vectors, element order) -> 32 int8 in element order.
PADDOCK_TARGET_AVX2 inline __m256i pack_32(__m256i a, __m256i b, __m256i c, __m256i d) {
  const __m256i ab = _mm256_packs_epi32(a, b);  // lanes interleave per 128-bit half
  const __m256i cd = _mm256_packs_epi32(c, d);
  const __m256i abcd = _mm256_packs_epi16(ab, cd);
  return _mm256_permutevar8x32_epi32(abcd, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

PADDOCK_TARGET_AVX2 void q8_K(const float* src, void* dst, int64_t n) {
  auto* y = static_cast<BlockQ8_K*>(dst);
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const float* x = src + i * kQK_K;
    __m256 vmax = _mm256_setzero_ps();
    for (int j = 0; j < kQK_K; j += 8)
      vmax = _mm256_max_ps(vmax, _mm256_and_ps(_mm256_loadu_ps(x + j), abs_mask));
    const float amax = hmax(vmax);
    if (amax == 0.0f) {
      std::memset(&y[i], 0, sizeof y[i]);
      continue;
    }
    // The reference keeps the first element whose magnitude is the largest.
    float max = 0;
    const __m256 target = _mm256_set1_ps(amax);
    for (int j = 0; j < kQK_K; j += 8) {
      const int hit = _mm256_movemask_ps(
          _mm256_cmp_ps(_mm256_and_ps(_mm256_loadu_ps(x + j), abs_mask), target, _CMP_EQ_OQ));
      if (hit != 0) {
        max = x[j + __builtin_ctz(static_cast<unsigned>(hit))];
        break;
      }
    }
    const float iscale = -127.f / max;
    const __m256 vs = _mm256_set1_ps(iscale);
    const __m256i top = _mm256_set1_epi32(127);
    for (int j = 0; j < kQK_K; j += 32) {
      __m256i q[4];
      for (int k = 0; k < 4; ++k) {
        q[k] = _mm256_min_epi32(_mm256_cvtps_epi32(_mm256_mul_ps(vs, _mm256_loadu_ps(x + j + 8 * k))), top);
      }
      const __m256i q8 = pack_32(q[0], q[1], q[2], q[3]);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y[i].qs + j), q8);
      // Sums of 16 quants: bias to unsigned, sum bytes in 8s, remove the bias (16 * 128).
      const __m256i s8 = _mm256_sad_epu8(_mm256_xor_si256(q8, _mm256_set1_epi8(static_cast<char>(0x80))),
                                         _mm256_setzero_si256());
      alignas(32) int64_t s[4];
      _mm256_store_si256(reinterpret_cast<__m256i*>(s), s8);
      y[i].bsums[j / 16] = static_cast<int16_t>(s[0] + s[1] - 16 * 128);
      y[i].bsums[j / 16 + 1] = static_cast<int16_t>(s[2] + s[3] - 16 * 128);
    }
    y[i].d = 1 / iscale;
  }
}

PADDOCK_TARGET_AVX2 void q8_0(const float* src, void* dst, int64_t n) {
  auto* y = static_cast<BlockQ8_0*>(dst);
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  for (int64_t i = 0; i < n / kQK8_0; ++i) {
    const float* x = src + i * kQK8_0;
    __m256 v[4];
    __m256 vmax = _mm256_setzero_ps();
    for (int k = 0; k < 4; ++k) {
      v[k] = _mm256_loadu_ps(x + 8 * k);
      vmax = _mm256_max_ps(vmax, _mm256_and_ps(v[k], abs_mask));
    }
    const float amax = hmax(vmax);
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    y[i].d = f32_to_fp16(amax / 127.0f);
    const __m256 vid = _mm256_set1_ps(id);
    __m256i q[4];
    for (int k = 0; k < 4; ++k) {
      q[k] = _mm256_cvtps_epi32(
          _mm256_round_ps(_mm256_mul_ps(v[k], vid), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y[i].qs), pack_32(q[0], q[1], q[2], q[3]));
  }
}

}  // namespace

ActQuantFn act_quantizer_avx2(DType t) {
  switch (t) {
    case DType::kQ8_K: return q8_K;
    case DType::kQ8_0: return q8_0;
    default: return nullptr;
  }
}

#else

ActQuantFn act_quantizer_avx2(DType) { return nullptr; }

#endif

}  // namespace paddock::cpu
