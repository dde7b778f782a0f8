// AVX2 dot kernels for Q2_K and Q3_K. Both store 2-bit levels four to a byte (byte l of each
// 32-byte chunk holds elements l, l + 32, l + 64, l + 96 of its 128) and scale groups of 16, so
// they share one loop: 32-element runs r = 4h + k (chunk h, shift 2k), each one unsigned x
// signed byte dot with the activations and one int16 scale vector (run_scales_avx2).
// - Q2_K: value = d * (sc & 15) * q - dmin * (sc >> 4); the min term uses the bsums.
// - Q3_K: value = d * (sc - 32) * (q + 4 * high - 4) with high from hmask bit 4h + k; the dot
//   takes q + 4 * high (0..7) and the -4 is folded into the int32 sum as -4 * sc * bsum, as
//   the Q6_K kernel folds its -32.
#include "backend/cpu/dot_avx2.h"

#include <cstring>
#include <type_traits>

#include "quant/blocks.h"

namespace paddock::cpu {

#if defined(PADDOCK_X86)

namespace {

using namespace dot_avx2;

// The 16 6-bit Q3_K scales (low 4 bits in bytes 0-7, two nibbles each; high 2 bits in bytes
// 8-11, four to a byte) as int8 sc - 32, with word operations instead of per-byte shifts.
PADDOCK_TARGET_AVX2 inline __m128i q3_K_scales(const uint8_t* packed) {
  uint32_t w[3];
  std::memcpy(w, packed, sizeof w);
  constexpr uint32_t kLow = 0x0F0F0F0F;
  constexpr uint32_t kHigh = 0x03030303;
  const __m128i sc = _mm_set_epi32(static_cast<int32_t>(((w[1] >> 4) & kLow) | (((w[2] >> 6) & kHigh) << 4)),
                                   static_cast<int32_t>(((w[0] >> 4) & kLow) | (((w[2] >> 4) & kHigh) << 4)),
                                   static_cast<int32_t>((w[1] & kLow) | (((w[2] >> 2) & kHigh) << 4)),
                                   static_cast<int32_t>((w[0] & kLow) | ((w[2] & kHigh) << 4)));
  return _mm_sub_epi8(sc, _mm_set1_epi8(32));
}

// The vpshufb control that picks int16 lane 2k in the low half and lane 2k + 1 in the high one.
PADDOCK_TARGET_AVX2 inline __m256i run_pick(int k) {
  return _mm256_set_m128i(_mm_set1_epi16(static_cast<int16_t>((4 * k + 2) | ((4 * k + 3) << 8))),
                          _mm_set1_epi16(static_cast<int16_t>((4 * k) | ((4 * k + 1) << 8))));
}

template <typename Block, int NY>
PADDOCK_TARGET_AVX2 void k2_n(int64_t n, const void* x, const void* y, size_t ys, float* out) {
  constexpr bool kQ3 = std::is_same_v<Block, BlockQ3_K>;
  const Block* xb = static_cast<const Block*>(x);
  const BlockQ8_K* yb[NY];
  __m256 acc[NY];
  detail::start_columns(y, ys, yb, acc);
  const __m256i m2 = _mm256_set1_epi8(3);
  const int64_t nb = n / kQK_K;
  for (int64_t i = 0; i < nb; ++i) {
    const Block& b = xb[i];
    __m128i sc8;
    __m256i sumi[NY];
    if constexpr (kQ3) {
      sc8 = q3_K_scales(b.scales);
      const __m256i sc16 = _mm256_cvtepi8_epi16(sc8);
      for (int j = 0; j < NY; ++j) {
        const __m256i bsums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(yb[j][i].bsums));
        sumi[j] =
            _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(_mm256_madd_epi16(sc16, bsums), 2));
      }
    } else {
      sc8 = _mm_and_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales)), _mm_set1_epi8(0x0F));
      for (int j = 0; j < NY; ++j) sumi[j] = _mm256_setzero_si256();
    }
    // Both 128-bit halves of scales[h] hold the int16 scales of groups 8h..8h+7, so each run's
    // scale vector (group 2k in the low half, 2k + 1 in the high half) is one in-lane shuffle.
    const __m256i scales[2] = {_mm256_broadcastsi128_si256(_mm_cvtepi8_epi16(sc8)),
                               _mm256_broadcastsi128_si256(_mm_cvtepi8_epi16(_mm_srli_si128(sc8, 8)))};
    for (int h = 0; h < 2; ++h) {
      const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs + 32 * h));
      for (int k = 0; k < 4; ++k) {
        __m256i q = _mm256_and_si256(shift_left(raw, -2 * k), m2);
        if constexpr (kQ3) {
          const __m256i hm = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.hmask));
          q = _mm256_or_si256(q, _mm256_and_si256(shift_left(hm, 2 - 4 * h - k), _mm256_set1_epi8(4)));
        }
        const __m256i scale = _mm256_shuffle_epi8(scales[h], run_pick(k));
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
    if constexpr (!kQ3) {
      // Group mins times the activations' per-16 sums: 8 int32 lanes of two products each.
      const __m256i mins = _mm256_cvtepu8_epi16(_mm_srli_epi16(
          _mm_andnot_si128(_mm_set1_epi8(0x0F), _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales))),
          4));
      const float dmin = half(b.dmin);
      for (int j = 0; j < NY; ++j) {
        const __m256i bsums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(yb[j][i].bsums));
        acc[j] = _mm256_fnmadd_ps(_mm256_set1_ps(dmin * yb[j][i].d),
                                  _mm256_cvtepi32_ps(_mm256_madd_epi16(mins, bsums)), acc[j]);
      }
    }
  }
  for (int j = 0; j < NY; ++j) out[j] = hsum(acc[j]);
}

PADDOCK_DOT_DISPATCH_OF(PADDOCK_TARGET_AVX2, q2_K, k2_n, BlockQ2_K)
PADDOCK_DOT_DISPATCH_OF(PADDOCK_TARGET_AVX2, q3_K, k2_n, BlockQ3_K)

}  // namespace

DotFn dot_kernel_avx2_k(DType t) {
  switch (t) {
    case DType::kQ2_K: return q2_K;
    case DType::kQ3_K: return q3_K;
    default: return nullptr;
  }
}

#else

DotFn dot_kernel_avx2_k(DType) { return nullptr; }

#endif

}  // namespace paddock::cpu
