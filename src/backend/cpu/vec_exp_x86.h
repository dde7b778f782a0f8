// e^x on 8 floats for AVX2 kernels (attention's softmax, and exp_rows of vec_exp.h for swiglu):
// Cephes-style range reduction and a degree-5 polynomial, within 2 ulp of std::exp for x in
// [-87.33, 88]; 0 below (-inf included), e^88 above; never NaN for a non-NaN x.
//   const __m256 e = exp8(_mm256_loadu_ps(x));
#pragma once

#include "backend/cpu/simd_x86.h"

#if defined(PADDOCK_X86)

namespace paddock::cpu {

// Below ln(FLT_MIN) the result would be denormal: flushed to 0 (softmax weights that small
// are 0 against the row's maximum, whose weight is 1). Above 88, e^x is clamped to e^88.
constexpr float kExpLo = -87.33654475f;
constexpr float kExpHi = 88.0f;

PADDOCK_TARGET_AVX2 inline __m256 exp8(__m256 x) {
  const __m256 underflow = _mm256_cmp_ps(x, _mm256_set1_ps(kExpLo), _CMP_LT_OQ);
  x = _mm256_max_ps(_mm256_min_ps(x, _mm256_set1_ps(kExpHi)), _mm256_set1_ps(kExpLo));
  // x = n ln2 + r, |r| <= ln2 / 2; ln2 in two parts so n * ln2_hi is exact.
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  // e^r = 1 + r + r^2 P(r) (Cephes expf coefficients).
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  // 2^n built in the exponent field: n is in [-126, 127], so the power is a normal float.
  const __m256i pow2 = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_andnot_ps(underflow, _mm256_mul_ps(p, _mm256_castsi256_ps(pow2)));
}

}  // namespace paddock::cpu

#endif  // PADDOCK_X86
