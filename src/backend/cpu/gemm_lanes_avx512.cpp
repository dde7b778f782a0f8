// Q8_0 and MXFP4 on the AVX-512 path: lanes_n (gemm_x86.h) bit for bit, on 512-bit registers.
// A register holds two steps of the 8 rows (int32 lanes 0-7 step 2p, 8-15 step 2p + 1: pair p),
// so one vpdpbusd, one conversion and one FMA serve 16 lane sums, and the activations' two
// steps come from one in-register permute of the column's block. Every pair's sum starts at
// minus its offset (the activations come offset by 128, gemm.h), shared by the columns.
#include "backend/cpu/gemm_x86.h"

namespace paddock::cpu {

#if defined(PADDOCK_X86)

namespace {

#define PADDOCK_WIDE_INLINE PADDOCK_TARGET_AVX512 __attribute__((always_inline)) inline

using gemm_x86::block_scales;
using gemm_x86::kAhead;

// Pair h's quants (steps 2h, 2h+1) in lo and pair h + 2's (steps 2h+4, 2h+5) in hi, h = 0, 1:
// Q8_0's pairs are 64 consecutive bytes each; MXFP4's 64 bytes at group 2h hold pair h in the
// low nibbles and pair h + 2 in the high ones (repack.h).
template <typename Block8>
PADDOCK_WIDE_INLINE void pair_quants(const Block8& b, int h, __m512i levels, __m512i& lo, __m512i& hi) {
  if constexpr (std::is_same_v<Block8, BlockQ8_0x8>) {
    lo = _mm512_loadu_si512(b.qs + 64 * h);
    hi = _mm512_loadu_si512(b.qs + 64 * (h + 2));
  } else {
    const __m512i raw = _mm512_loadu_si512(b.qs + 64 * h);
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    lo = _mm512_shuffle_epi8(levels, _mm512_and_si512(raw, m4));
    hi = _mm512_shuffle_epi8(levels, _mm512_and_si512(_mm512_srli_epi16(raw, 4), m4));
  }
}

// Minus each row's 128 * sum(q) of the pair: where its dot with offset activations starts.
PADDOCK_WIDE_INLINE __m512i pair_start(__m512i q) {
  const __m512i zero = _mm512_setzero_si512();
  return _mm512_sub_epi32(zero, _mm512_dpbusd_epi32(zero, _mm512_set1_epi8(static_cast<char>(0x80)), q));
}

// The column block's 4-byte groups 2p (lanes 0-7) and 2p + 1 (lanes 8-15).
PADDOCK_WIDE_INLINE __m512i pair_activations(__m512i y, int p) {
  const __m512i idx =
      _mm512_set_epi32(2 * p + 1, 2 * p + 1, 2 * p + 1, 2 * p + 1, 2 * p + 1, 2 * p + 1, 2 * p + 1, 2 * p + 1,
                       2 * p, 2 * p, 2 * p, 2 * p, 2 * p, 2 * p, 2 * p, 2 * p);
  return _mm512_permutexvar_epi32(idx, y);
}

PADDOCK_WIDE_INLINE __m512i load_block(const BlockQ8_0& y) {
  return _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(y.qs)));
}

// 8 row scales in both halves, times the column's scale.
PADDOCK_WIDE_INLINE __m512 pair_scales(__m256 dw, const BlockQ8_0& y) {
  const __m512 both = _mm512_castsi512_ps(_mm512_broadcast_i64x4(_mm256_castps_si256(dw)));
  return _mm512_mul_ps(both, _mm512_set1_ps(_cvtsh_ss(y.d)));
}

PADDOCK_WIDE_INLINE __m256 halves_sum(__m512 v) {
  return _mm256_add_ps(_mm512_castps512_ps256(v),
                       _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}

// lanes_n's passes and sets with pairs for steps: kSets * 4 * NY pair sums, in one pass while
// they fit 16 of the 32 registers, else two (pairs 0 and 2, then 1 and 3).
template <typename Block8, int NY>
PADDOCK_WIDE_INLINE void lanes512_n(int64_t k, const void* w, const void* y, size_t ys, float* out) {
  constexpr int kSets = std::is_same_v<Block8, BlockMXFP4x8> ? 2 : 1;
  constexpr int kPasses = kSets * 4 * NY <= 16 ? 1 : 2;
  constexpr int kH = 2 / kPasses;  // values of h per pass
  const Block8* wb = static_cast<const Block8*>(w);
  const BlockQ8_0* yb[NY];
  for (int j = 0; j < NY; ++j) yb[j] = reinterpret_cast<const BlockQ8_0*>(detail::column(y, ys, j));
  const __m512i levels =
      _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kMXFP4Values.data())));
  const int64_t nb = k / kQK8_0;
  const int64_t paired = nb - nb % kSets;
  __m512 pair_sum[NY][4];
  for (int pass = 0; pass < kPasses; ++pass) {
    __m512 acc[kSets][NY][2 * kH];  // [.][.][2 * hh]: pair h = pass + hh; [2 * hh + 1]: pair h + 2
    for (int t = 0; t < kSets; ++t)
      for (int j = 0; j < NY; ++j)
        for (int a = 0; a < 2 * kH; ++a) acc[t][j][a] = _mm512_setzero_ps();
    for (int64_t i = 0; i < paired; i += kSets) {
#pragma GCC unroll 2
      for (int t = 0; t < kSets; ++t) {
        const Block8& b = wb[i + t];
        gemm_x86::prefetch(wb + i + t + (kSets == 2 ? 8 : 4) * kAhead);
        const __m256 dw = block_scales(b);
        __m512 dd[NY];
        __m512i ya[NY];
        for (int j = 0; j < NY; ++j) {
          dd[j] = pair_scales(dw, yb[j][i + t]);
          ya[j] = load_block(yb[j][i + t]);
        }
#pragma GCC unroll 2
        for (int hh = 0; hh < kH; ++hh) {
          const int h = pass + hh;
          __m512i q[2];
          pair_quants(b, h, levels, q[0], q[1]);
#pragma GCC unroll 2
          for (int u = 0; u < 2; ++u) {
            const __m512i start = pair_start(q[u]);
            for (int j = 0; j < NY; ++j) {
              const __m512i p = _mm512_dpbusd_epi32(start, pair_activations(ya[j], h + 2 * u), q[u]);
              acc[t][j][2 * hh + u] = _mm512_fmadd_ps(dd[j], _mm512_cvtepi32_ps(p), acc[t][j][2 * hh + u]);
            }
          }
        }
      }
    }
    for (int j = 0; j < NY; ++j) {
      for (int hh = 0; hh < kH; ++hh) {
        for (int u = 0; u < 2; ++u) {
          const __m512 a = acc[0][j][2 * hh + u];
          pair_sum[j][pass + hh + 2 * u] = kSets == 2 ? _mm512_add_ps(a, acc[kSets - 1][j][2 * hh + u]) : a;
        }
      }
    }
  }
  for (int j = 0; j < NY; ++j) {
    // Pairs (l0|l1), (l2|l3), (l4|l5), (l6|l7): ((l0+l4)+(l2+l6)) | ((l1+l5)+(l3+l7)), then the halves.
    const __m512(&z)[4] = pair_sum[j];
    __m256 sum = halves_sum(_mm512_add_ps(_mm512_add_ps(z[0], z[2]), _mm512_add_ps(z[1], z[3])));
    if (paired < nb) {  // MXFP4's odd last block: its whole integer sum, scaled, after the tree
      const Block8& b = wb[paired];
      const BlockQ8_0& yl = yb[j][paired];
      const __m512i ya = load_block(yl);
      __m512i sumi = _mm512_setzero_si512();
      for (int h = 0; h < 2; ++h) {
        __m512i q[2];
        pair_quants(b, h, levels, q[0], q[1]);
        for (int u = 0; u < 2; ++u) {
          sumi = _mm512_add_epi32(
              sumi, _mm512_dpbusd_epi32(pair_start(q[u]), pair_activations(ya, h + 2 * u), q[u]));
        }
      }
      const __m256i sum8 = _mm256_add_epi32(_mm512_castsi512_si256(sumi), _mm512_extracti64x4_epi64(sumi, 1));
      sum = _mm256_add_ps(sum, _mm256_mul_ps(_mm256_mul_ps(block_scales(b), _mm256_set1_ps(_cvtsh_ss(yl.d))),
                                             _mm256_cvtepi32_ps(sum8)));
    }
    _mm256_storeu_ps(out + 8 * j, sum);
  }
}

template <typename Block8>
PADDOCK_TARGET_AVX512 void lanes512(int64_t k, const void* w, const void* y, size_t ys, int ny, float* out) {
  switch (ny) {
    case 1: lanes512_n<Block8, 1>(k, w, y, ys, out); break;
    case 2: lanes512_n<Block8, 2>(k, w, y, ys, out); break;
    case 3: lanes512_n<Block8, 3>(k, w, y, ys, out); break;
    default: lanes512_n<Block8, 4>(k, w, y, ys, out); break;
  }
}

}  // namespace

GemmFn gemm_lanes_avx512(DType t) {
  switch (t) {
    case DType::kQ8_0: return lanes512<BlockQ8_0x8>;
    case DType::kMXFP4: return lanes512<BlockMXFP4x8>;
    default: return nullptr;
  }
}

#else

GemmFn gemm_lanes_avx512(DType) { return nullptr; }

#endif

}  // namespace paddock::cpu
