// The x86 kernels over 8 interleaved rows (repack.h), written once over a byte-dot policy P:
//   Maddubs          AVX2: _mm256_maddubs_epi16 into int16 sums, scaled with _mm256_madd_epi16;
//   Vnni<Vpdpbusd>   AVX-512 VNNI: vpdpbusd into int32 sums (the broadcast folded into the
//                    instruction), scaled with _mm256_mullo_epi32.
// Every 32-bit lane of a register belongs to one row, so a broadcast of 4 activation bytes
// meets 4 quants of each of the 8 rows in one instruction and the 8 row sums come out in one
// register. A sub-block's integer sum is exact (bounds in each kernel) and scaled per row once.
// Included by gemm_x86.cpp and, with an exact AVX2 emulation of vpdpbusd, by gemm_test.cpp, so
// the VNNI kernels are checked on machines without VNNI too. Each includer makes its entry
// points with PADDOCK_GEMM_KERNELS (end of file):
//   PADDOCK_GEMM_KERNELS(gemm_kernel_avx2, gemm_x86::Maddubs, PADDOCK_TARGET_AVX2)
#pragma once

#include <cstring>
#include <type_traits>

#include "backend/cpu/gemm.h"
#include "backend/cpu/repack.h"
#include "backend/cpu/simd_x86.h"

#if defined(PADDOCK_X86)

namespace paddock::cpu::gemm_x86 {

#define PADDOCK_GEMM_INLINE PADDOCK_TARGET_AVX2 __attribute__((always_inline)) inline

// Decode streams weights from DRAM at a few bytes of work per byte: asking for the block-group
// two ahead keeps more lines in flight than the hardware prefetcher alone (measured +15-20%
// on the 128256-row LM head). Prefetches past the end are harmless hints.
constexpr int64_t kAhead = 2;  // K-quant block-groups of 1152-1680 bytes

template <typename Block>
PADDOCK_GEMM_INLINE void prefetch(const Block* b) {
  const char* p = reinterpret_cast<const char*>(b);
  for (size_t off = 0; off < sizeof(Block); off += 64) _mm_prefetch(p + off, _MM_HINT_T0);
}

// 4 activation bytes broadcast to every 32-bit lane.
PADDOCK_GEMM_INLINE __m256i bcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof(v));
  return _mm256_set1_epi32(v);
}

PADDOCK_GEMM_INLINE __m256i load256(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

PADDOCK_GEMM_INLINE __m256 load_halves(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// e8m0_half (quant/blocks.h) of 8 exponents: 2^(e - 128) as (e - 1) << 23, and for e < 2 the
// subnormals 0x00200000 << e.
PADDOCK_GEMM_INLINE __m256 e8m0_halves(const uint8_t* e) {
  int64_t bytes;
  std::memcpy(&bytes, e, sizeof(bytes));
  const __m256i v = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(bytes));
  const __m256i normal = _mm256_slli_epi32(_mm256_sub_epi32(v, _mm256_set1_epi32(1)), 23);
  const __m256i subnormal = _mm256_sllv_epi32(_mm256_set1_epi32(0x00200000), v);
  const __m256i small = _mm256_cmpgt_epi32(_mm256_set1_epi32(2), v);
  return _mm256_castsi256_ps(_mm256_blendv_epi8(normal, subnormal, small));
}

// From int16 lanes (2r, 2r+1) = (a_r, b_r): both lanes a_r (odd = false) or both b_r.
PADDOCK_GEMM_INLINE __m256i dup_pairs(__m256i v, bool odd) {
  const __m256i even_mask = _mm256_setr_epi8(0, 1, 0, 1, 4, 5, 4, 5, 8, 9, 8, 9, 12, 13, 12, 13,  //
                                             0, 1, 0, 1, 4, 5, 4, 5, 8, 9, 8, 9, 12, 13, 12, 13);
  const __m256i odd_mask = _mm256_setr_epi8(2, 3, 2, 3, 6, 7, 6, 7, 10, 11, 10, 11, 14, 15, 14, 15,  //
                                            2, 3, 2, 3, 6, 7, 6, 7, 10, 11, 10, 11, 14, 15, 14, 15);
  return _mm256_shuffle_epi8(v, odd ? odd_mask : even_mask);
}

// The policies. dot(acc, u, y): acc += unsigned bytes u times the 4 signed bytes at y (in every
// lane), in the policy's sub-block sum type. scaled(acc, s): a sub-block sum times each row's
// scale, as int32 lanes; s holds row r's scale in both int16 lanes 2r and 2r+1 (dup_pairs).
// join(a, b): two sub-block sums added, in the sum type. scaled2(a, b, s): scaled(a, s) +
// scaled(b, s). widened2(a, b): two sub-block sums as one int32 sum, unscaled. dot_i32(acc, u,
// s): int32 acc += 4 products of u and the signed bytes s per lane.
struct Maddubs {
  static constexpr int kChains = 1;           // see k4_nibble
  static constexpr bool kOffsetQ8_0 = false;  // see step_dot
  static constexpr int kSumRegisters = 8;     // see lanes_n: AVX2 has 16 vector registers
  PADDOCK_GEMM_INLINE static __m256i dot(__m256i acc, __m256i u, const int8_t* y) {
    return _mm256_add_epi16(acc, _mm256_maddubs_epi16(u, bcast4(y)));
  }
  PADDOCK_GEMM_INLINE static __m256i scaled(__m256i acc, __m256i s) { return _mm256_madd_epi16(acc, s); }
  PADDOCK_GEMM_INLINE static __m256i join(__m256i a, __m256i b) { return _mm256_add_epi16(a, b); }
  // Two int16 sums under one scale: each widened on its own, as together they could overflow.
  PADDOCK_GEMM_INLINE static __m256i scaled2(__m256i a, __m256i b, __m256i s) {
    return _mm256_add_epi32(scaled(a, s), scaled(b, s));
  }
  PADDOCK_GEMM_INLINE static __m256i widened2(__m256i a, __m256i b) {
    return scaled2(a, b, _mm256_set1_epi16(1));
  }
  PADDOCK_GEMM_INLINE static __m256i dot_i32(__m256i acc, __m256i u, __m256i s) {
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)));
  }
};

// D::dpbusd(acc, u, s) and D::dpbusd_bcast(acc, u, y) are vpdpbusd, the second with the 4 bytes
// at y broadcast.
template <typename D>
struct Vnni {
  static constexpr int kChains = 2;
  static constexpr bool kOffsetQ8_0 = true;
  static constexpr int kSumRegisters = 16;  // of AVX-512's 32
  PADDOCK_GEMM_INLINE static __m256i dot(__m256i acc, __m256i u, const int8_t* y) {
    return D::dpbusd_bcast(acc, u, y);
  }
  PADDOCK_GEMM_INLINE static __m256i scaled(__m256i acc, __m256i s) {
    return _mm256_mullo_epi32(acc, _mm256_srai_epi32(s, 16));
  }
  PADDOCK_GEMM_INLINE static __m256i join(__m256i a, __m256i b) { return _mm256_add_epi32(a, b); }
  // vpmulld is two uops on the ports vpdpbusd uses: one per pair of sums, not one per sum.
  PADDOCK_GEMM_INLINE static __m256i scaled2(__m256i a, __m256i b, __m256i s) {
    return scaled(join(a, b), s);
  }
  PADDOCK_GEMM_INLINE static __m256i widened2(__m256i a, __m256i b) { return join(a, b); }  // int32 already
  PADDOCK_GEMM_INLINE static __m256i dot_i32(__m256i acc, __m256i u, __m256i s) {
    return D::dpbusd(acc, u, s);
  }
};

// A sub-block's sum kept as kC partial sums (kC 1 or 2), times each row's scale.
template <typename P, int kC>
PADDOCK_GEMM_INLINE __m256i chains_scaled(__m256i first, __m256i second, __m256i scale) {
  static_assert(kC == 1 || kC == 2);
  if constexpr (kC == 1) return P::scaled(first, scale);
  return P::scaled2(first, second, scale);
}

// The 128 six-bit scales and mins of a Q4_K or Q5_K x 8 block (repack.h), one byte each: six[0]
// holds the scales of groups 0-3, six[1] those of groups 4-7, six[2] and six[3] the mins; row
// r's 4 values at bytes 16 * (r / 4) + 4 * (r % 4), so in-lane shuffles (pick) reach them.
template <typename Block8>
PADDOCK_GEMM_INLINE void k4_six_bit(const Block8& b, __m256i (&six)[4]) {
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  const __m256i m30 = _mm256_set1_epi8(0x30);
  const __m256i l0 = load256(b.lo4);
  const __m256i l1 = load256(b.lo4 + 32);
  const __m256i h = load256(b.hi2);
  six[0] = _mm256_or_si256(_mm256_and_si256(l0, m4), _mm256_and_si256(_mm256_slli_epi16(h, 4), m30));
  six[1] = _mm256_or_si256(_mm256_and_si256(l1, m4), _mm256_and_si256(_mm256_slli_epi16(h, 2), m30));
  six[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4), _mm256_and_si256(h, m30));
  six[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4),
                           _mm256_and_si256(_mm256_srli_epi16(h, 2), m30));
}

// vpshufb masks over k4_six_bit's registers, giving each row's int16 lanes (2r, 2r+1):
// kPickDup + t: (value t, value t), a group's scale in both lanes (Policy::scaled);
// kPickPair + u: (value 2u, value 2u + 1), the mins of two groups. Values zero-extended.
enum : int { kPickDup = 0, kPickPair = 4 };
alignas(32) inline constexpr int8_t kPickMasks[6][32] = {
#define PADDOCK_PICK_HALF(a, b) \
  a, -1, b, -1, 4 + (a), -1, 4 + (b), -1, 8 + (a), -1, 8 + (b), -1, 12 + (a), -1, 12 + (b), -1
#define PADDOCK_PICK(a, b) \
  { PADDOCK_PICK_HALF(a, b), PADDOCK_PICK_HALF(a, b) }
    PADDOCK_PICK(0, 0), PADDOCK_PICK(1, 1), PADDOCK_PICK(2, 2),
    PADDOCK_PICK(3, 3), PADDOCK_PICK(0, 1), PADDOCK_PICK(2, 3),
#undef PADDOCK_PICK
#undef PADDOCK_PICK_HALF
};

PADDOCK_GEMM_INLINE __m256i pick(__m256i six, int mask) {
  return _mm256_shuffle_epi8(six, load256(kPickMasks[mask]));
}

// Bit `bit` of each byte moved to bit 4 (a Q5_K quant's fifth bit), the others cleared.
PADDOCK_GEMM_INLINE __m256i fifth_bit(__m256i v, int bit) {
  const __m256i at = bit <= 4 ? _mm256_slli_epi16(v, 4 - bit) : _mm256_srli_epi16(v, bit - 4);
  return _mm256_and_si256(at, _mm256_set1_epi8(0x10));
}

// Step s of chunk c of a Q4_K or Q5_K x 8 block: the quants of one nibble (Shift 0: low, 4:
// high), with Q5_K's fifth bits.
template <typename Block8, int Shift>
PADDOCK_GEMM_INLINE __m256i k4_step(const Block8& b, int c, int s) {
  const __m256i q =
      _mm256_and_si256(_mm256_srli_epi16(load256(b.qs + 256 * c + 32 * s), Shift), _mm256_set1_epi8(0x0F));
  if constexpr (std::is_same_v<Block8, BlockQ5_Kx8>) {
    return _mm256_or_si256(q, fifth_bit(load256(b.qh + 32 * s), 2 * c + Shift / 4));
  } else {
    return q;
  }
}

// Partial sums a sub-block of Q4_K or Q5_K keeps: P::kChains, and two for Q5_K with Maddubs,
// whose int16 sums hold 4 steps of quants up to 31 (8 products of at most 31 * 128 = 31744)
// but not 8.
template <typename P, typename Block8>
inline constexpr int kK4Chains = std::is_same_v<Block8, BlockQ5_Kx8> ? 2 : P::kChains;

// The 8 steps of one nibble (Shift 0: low, 4: high) of chunk c for NY columns, each column's
// sum scaled once at the end. Several columns take the two nibbles in separate passes, so NY
// accumulators are live rather than 2 * NY: with both, GCC ran out of registers and the loop
// waited on a spilled accumulator (4 columns 1.6x slower measured).
// With 2 chains, even and odd steps go to separate sums: a vpdpbusd waits for its
// accumulator (about 5 cycles), so NY chains of 8 left the VNNI ports idle much of the time.
// Maddubs accumulates with a 1-cycle add and keeps one chain for Q4_K, leaving AVX2's 16
// registers to the rest.
template <typename P, typename Block8, int NY, int Shift>
PADDOCK_GEMM_INLINE void k4_nibble(const Block8& b, const BlockQ8_K* const* yb, int64_t i, int c,
                                   __m256i scale, __m256i* sumi) {
  constexpr int kC = kK4Chains<P, Block8>;
  const int at = 64 * c + 8 * Shift;
  __m256i a[kC][NY];
  for (int t = 0; t < kC; ++t)
    for (int j = 0; j < NY; ++j) a[t][j] = _mm256_setzero_si256();
#pragma GCC unroll 2
  for (int s0 = 0; s0 < 8; s0 += kC) {
#pragma GCC unroll 2
    for (int t = 0; t < kC; ++t) {  // constant indices into a: it stays in registers
      const int s = s0 + t;
      const __m256i q = k4_step<Block8, Shift>(b, c, s);
      for (int j = 0; j < NY; ++j) a[t][j] = P::dot(a[t][j], q, yb[j][i].qs + at + 4 * s);
    }
  }
  for (int j = 0; j < NY; ++j) {
    sumi[j] = _mm256_add_epi32(sumi[j], chains_scaled<P, kC>(a[0][j], a[kC - 1][j], scale));
  }
}

// Q4_K and Q5_K: per chunk c, sub-block 2c sits in the low nibbles and 2c+1 in the high ones.
// With Maddubs one step sums 2 products of at most 15 * 127 (Q4_K), so 8 steps (16 products)
// stay below 30480 in int16; Q5_K's partial sums take 4 steps each (kK4Chains).
template <typename P, typename Block8, int NY>
PADDOCK_GEMM_INLINE void k4_n(int64_t k, const void* w, const void* y, size_t ys, float* out) {
  const Block8* wb = static_cast<const Block8*>(w);
  const BlockQ8_K* yb[NY];
  __m256 acc[NY];
  detail::start_columns(y, ys, yb, acc);
  const int64_t nb = k / kQK_K;
  for (int64_t i = 0; i < nb; ++i) {
    const Block8& b = wb[i];
    prefetch(wb + i + kAhead);
    __m256i six[4], sumi[NY];
    k4_six_bit(b, six);
    for (int j = 0; j < NY; ++j) sumi[j] = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) {
      const __m256i scale_lo = pick(six[c / 2], kPickDup + 2 * (c % 2));
      const __m256i scale_hi = pick(six[c / 2], kPickDup + 2 * (c % 2) + 1);
      if constexpr (NY == 1) {  // decode: both nibbles at once, 8 steps unrolled
        constexpr int kC = kK4Chains<P, Block8>;
        const int8_t* ya = yb[0][i].qs + 64 * c;
        __m256i al[kC], ah[kC];
        for (int t = 0; t < kC; ++t) al[t] = ah[t] = _mm256_setzero_si256();
#pragma GCC unroll 8
        for (int s = 0; s < 8; ++s) {
          al[s % kC] = P::dot(al[s % kC], k4_step<Block8, 0>(b, c, s), ya + 4 * s);
          ah[s % kC] = P::dot(ah[s % kC], k4_step<Block8, 4>(b, c, s), ya + 32 + 4 * s);
        }
        sumi[0] =
            _mm256_add_epi32(sumi[0], _mm256_add_epi32(chains_scaled<P, kC>(al[0], al[kC - 1], scale_lo),
                                                       chains_scaled<P, kC>(ah[0], ah[kC - 1], scale_hi)));
      } else {
        k4_nibble<P, Block8, NY, 0>(b, yb, i, c, scale_lo, sumi);
        k4_nibble<P, Block8, NY, 4>(b, yb, i, c, scale_hi, sumi);
      }
    }
    // Mins (int16 pairs of groups 2p, 2p+1 of each row) against the activations' sums of 32.
    const __m256 d = load_halves(b.d);
    const __m256 dmin = load_halves(b.dmin);
    for (int j = 0; j < NY; ++j) {
      const BlockQ8_K& a = yb[j][i];
      const __m256i sums32 = _mm256_castsi128_si256(
          _mm_hadd_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a.bsums)),
                         _mm_loadu_si128(reinterpret_cast<const __m128i*>(a.bsums + 8))));
      __m256i summ = _mm256_setzero_si256();
#pragma GCC unroll 4
      for (int p = 0; p < 4; ++p) {
        const __m256i pair = _mm256_permutevar8x32_epi32(sums32, _mm256_set1_epi32(p));
        summ = _mm256_add_epi32(summ, _mm256_madd_epi16(pick(six[2 + p / 2], kPickPair + p % 2), pair));
      }
      const __m256 yd = _mm256_set1_ps(a.d);
      acc[j] = _mm256_fmadd_ps(_mm256_mul_ps(d, yd), _mm256_cvtepi32_ps(sumi[j]), acc[j]);
      acc[j] = _mm256_fnmadd_ps(_mm256_mul_ps(dmin, yd), _mm256_cvtepi32_ps(summ), acc[j]);
    }
  }
  for (int j = 0; j < NY; ++j) _mm256_storeu_ps(out + 8 * j, acc[j]);
}

// The K-quants of 16 groups of 16 (Q2_K, Q3_K, Q6_K x 8; repack.h). Group 2p + u's levels,
// four steps of 4 elements (v[t]), unsigned: Q2_K's 0..3; Q3_K's 0..7, whose -4 the kernel
// folds in; Q6_K's 0..63, whose -32 it folds in.
template <typename Block8>
PADDOCK_GEMM_INLINE void k16_steps(const Block8& b, int p, int u, __m256i (&v)[4]) {
  if constexpr (std::is_same_v<Block8, BlockQ6_Kx8>) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    const __m256i m30 = _mm256_set1_epi8(0x30);
    const uint8_t* q = b.q + 96 * (2 * p + u);
    const __m256i a = load256(q);
    const __m256i bq = load256(q + 32);
    const __m256i h = load256(q + 64);
    v[0] = _mm256_or_si256(_mm256_and_si256(a, m4), _mm256_and_si256(_mm256_slli_epi16(h, 4), m30));
    v[1] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(a, 4), m4),
                           _mm256_and_si256(_mm256_slli_epi16(h, 2), m30));
    v[2] = _mm256_or_si256(_mm256_and_si256(bq, m4), _mm256_and_si256(h, m30));
    v[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(bq, 4), m4),
                           _mm256_and_si256(_mm256_srli_epi16(h, 2), m30));
  } else {
    const __m256i low = load256(b.qs + 32 * (2 * p + u));
    [[maybe_unused]] __m256i third;  // Q3_K: the pair's third bits, bit t + 4u for step t
    if constexpr (std::is_same_v<Block8, BlockQ3_Kx8>) third = load256(b.hm + 32 * p);
    for (int t = 0; t < 4; ++t) {
      v[t] = _mm256_and_si256(_mm256_srli_epi16(low, 2 * t), _mm256_set1_epi8(3));
      if constexpr (std::is_same_v<Block8, BlockQ3_Kx8>) {
        const int bit = t + 4 * u;
        const __m256i at = bit >= 2 ? _mm256_srli_epi16(third, bit - 2) : _mm256_slli_epi16(third, 2 - bit);
        v[t] = _mm256_or_si256(v[t], _mm256_and_si256(at, _mm256_set1_epi8(4)));
      }
    }
  }
}

// Row r's scales of groups 2p and 2p + 1 as int16 lanes (2r, 2r+1), and what the groups'
// activation sums are weighed by: Q2_K's mins, the others' scales again. `six`: Q3_K's
// unpacked scales (k4_six_bit).
template <typename Block8>
PADDOCK_GEMM_INLINE void k16_scales(const Block8& b, int p, const __m256i (&six)[4], __m256i& scales,
                                    __m256i& weights) {
  if constexpr (std::is_same_v<Block8, BlockQ6_Kx8>) {
    scales = weights =
        _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales + 16 * p)));
  } else if constexpr (std::is_same_v<Block8, BlockQ3_Kx8>) {
    const __m128i half = p % 2 ? _mm256_extracti128_si256(six[p / 2], 1) : _mm256_castsi256_si128(six[p / 2]);
    scales = weights = _mm256_cvtepi8_epi16(_mm_sub_epi8(half, _mm_set1_epi8(32)));
  } else {
    const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.sc + 16 * p));
    const __m128i m4 = _mm_set1_epi8(0x0F);
    scales = _mm256_cvtepu8_epi16(_mm_and_si128(raw, m4));
    weights = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(raw, 4), m4));
  }
}

// Q2_K, Q3_K and Q6_K: each group's four steps summed under its scale. The levels' offsets
// (Q3_K's -4, Q6_K's -32) and Q2_K's mins weigh the activations' per-16 sums: offset * scale
// in the integer sum, or dmin * min subtracted in float. With Maddubs a group sums two pairs
// of steps apart (4 products of at most 63 x 127 stay below 32004).
template <typename P, typename Block8, int NY>
PADDOCK_GEMM_INLINE void k16_n(int64_t k, const void* w, const void* y, size_t ys, float* out) {
  constexpr bool kQ2 = std::is_same_v<Block8, BlockQ2_Kx8>;
  constexpr int kOffsetShift = std::is_same_v<Block8, BlockQ6_Kx8> ? 5 : 2;  // log2 of 32 or 4
  const Block8* wb = static_cast<const Block8*>(w);
  const BlockQ8_K* yb[NY];
  __m256 acc[NY];
  detail::start_columns(y, ys, yb, acc);
  const int64_t nb = k / kQK_K;
  for (int64_t i = 0; i < nb; ++i) {
    const Block8& b = wb[i];
    prefetch(wb + i + kAhead);
    __m256i sumi[NY], bias[NY];
    for (int j = 0; j < NY; ++j) sumi[j] = bias[j] = _mm256_setzero_si256();
    __m256i six[4] = {};
    if constexpr (std::is_same_v<Block8, BlockQ3_Kx8>) k4_six_bit(b, six);
    for (int p = 0; p < 8; ++p) {
      __m256i pairs, weights;
      k16_scales(b, p, six, pairs, weights);
      for (int u = 0; u < 2; ++u) {
        const __m256i scale = dup_pairs(pairs, u == 1);
        __m256i v[4];
        k16_steps(b, p, u, v);
        for (int j = 0; j < NY; ++j) {
          const int8_t* yq = yb[j][i].qs + 16 * (2 * p + u);
          const __m256i zero = _mm256_setzero_si256();
          const __m256i m01 = P::dot(P::dot(zero, v[0], yq), v[1], yq + 4);
          const __m256i m23 = P::dot(P::dot(zero, v[2], yq + 8), v[3], yq + 12);
          sumi[j] = _mm256_add_epi32(sumi[j], P::scaled2(m01, m23, scale));
        }
      }
      for (int j = 0; j < NY; ++j) {
        const __m256i bsums = bcast4(reinterpret_cast<const int8_t*>(yb[j][i].bsums + 2 * p));
        bias[j] = _mm256_add_epi32(bias[j], _mm256_madd_epi16(weights, bsums));
      }
    }
    const __m256 d = load_halves(b.d);
    for (int j = 0; j < NY; ++j) {
      const __m256 yd = _mm256_set1_ps(yb[j][i].d);
      if constexpr (!kQ2) sumi[j] = _mm256_sub_epi32(sumi[j], _mm256_slli_epi32(bias[j], kOffsetShift));
      acc[j] = _mm256_fmadd_ps(_mm256_mul_ps(d, yd), _mm256_cvtepi32_ps(sumi[j]), acc[j]);
      if constexpr (kQ2) {
        acc[j] =
            _mm256_fnmadd_ps(_mm256_mul_ps(load_halves(b.dmin), yd), _mm256_cvtepi32_ps(bias[j]), acc[j]);
      }
    }
  }
  for (int j = 0; j < NY; ++j) _mm256_storeu_ps(out + 8 * j, acc[j]);
}

// One step of a 32-element block of 8 interleaved rows against 4 broadcast activations: each
// row's exact int32 sum of 4 products, added to `start` (step_start). q holds the signed quants.
// Maddubs multiplies |q| by sign(y, q) (a pair can reach 32258, so it is widened to int32 at
// once); with P::kOffsetQ8_0 the activations come offset by 128 (gemm.h, offset_activations) as
// vpdpbusd's unsigned operand, and start holds minus the step's 128 * sum(q) per row.
template <typename P>
PADDOCK_GEMM_INLINE __m256i step_start(__m256i q, __m256i c80) {
  if constexpr (P::kOffsetQ8_0) {
    return _mm256_sub_epi32(_mm256_setzero_si256(), P::dot_i32(_mm256_setzero_si256(), c80, q));
  } else {
    return _mm256_setzero_si256();
  }
}

template <typename P>
PADDOCK_GEMM_INLINE __m256i step_dot(__m256i start, __m256i q, const int8_t* y) {
  if constexpr (P::kOffsetQ8_0) {
    return P::dot_i32(start, bcast4(y), q);
  } else {
    return P::dot_i32(start, _mm256_sign_epi8(q, q), _mm256_sign_epi8(bcast4(y), q));
  }
}

// Q5_0 and Q5_1 x 8: 0xFF in each byte of step s whose quant's fifth bit is set (bits 4s..4s+3
// of each row's qh, byte s / 2 of its lane, spread to the step's 4 bytes), else 0.
template <typename Block8>
PADDOCK_GEMM_INLINE __m256i fifth_bits_set(const Block8& b, int s) {
  const __m256i lane_bytes = _mm256_setr_epi8(0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12,  //
                                              0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12);
  const __m256i spread = _mm256_shuffle_epi8(
      load256(b.qh), _mm256_add_epi8(lane_bytes, _mm256_set1_epi8(static_cast<char>(s / 2))));
  const __m256i bit = _mm256_set1_epi32(s % 2 ? static_cast<int32_t>(0x80402010) : 0x08040201);
  return _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
}

// Step s (0..7) of a Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 or MXFP4 block of 8 rows: the signed quants of elements
// 4s..4s+3 of each row (the nibble types keep steps 0-3 in the low nibbles of qs groups 0-3 and
// steps 4-7 in the high ones; MXFP4's map through kMXFP4Values, |level| <= 12; Q5_0's fifth
// bits 4s..4s+3 of each row's qh, byte s / 2 of its lane, spread to the step's 4 bytes).
template <typename Block8>
PADDOCK_GEMM_INLINE __m256i step_quants(const Block8& b, int s, __m256i levels) {
  if constexpr (std::is_same_v<Block8, BlockQ8_0x8>) {
    return load256(b.qs + 32 * s);
  } else {
    const __m256i raw = load256(b.qs + 32 * (s % 4));
    const __m256i nib = _mm256_and_si256(s < 4 ? raw : _mm256_srli_epi16(raw, 4), _mm256_set1_epi8(0x0F));
    if constexpr (std::is_same_v<Block8, BlockMXFP4x8>) return _mm256_shuffle_epi8(levels, nib);
    if constexpr (std::is_same_v<Block8, BlockQ5_0x8>) {
      // q - 16 without a subtraction: nibble | 0xF0 is nibble - 16 where the bit is clear.
      return _mm256_or_si256(
          nib, _mm256_andnot_si256(fifth_bits_set(b, s), _mm256_set1_epi8(static_cast<char>(0xF0))));
    }
    if constexpr (std::is_same_v<Block8, BlockQ4_1x8>) return nib;
    if constexpr (std::is_same_v<Block8, BlockQ5_1x8>) {
      return _mm256_or_si256(nib, _mm256_and_si256(fifth_bits_set(b, s), _mm256_set1_epi8(0x10)));
    }
    return _mm256_sub_epi8(nib, _mm256_set1_epi8(8));
  }
}

// Each row's scale: fp16 d, or MXFP4's E8M0 exponents.
template <typename Block8>
PADDOCK_GEMM_INLINE __m256 block_scales(const Block8& b) {
  if constexpr (std::is_same_v<Block8, BlockMXFP4x8>) {
    return e8m0_halves(b.e);
  } else {
    return load_halves(b.d);
  }
}

PADDOCK_GEMM_INLINE __m256i mxfp4_levels() {
  return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kMXFP4Values.data())));
}

// Q4_0 and Q5_0: a block's 8 steps summed in int32 and scaled once per row, for NY columns at once.
template <typename P, typename Block8, int NY>
PADDOCK_GEMM_INLINE void nibbles_n(int64_t k, const void* w, const void* y, size_t ys, float* out) {
  const Block8* wb = static_cast<const Block8*>(w);
  const BlockQ8_0* yb[NY];
  __m256 acc[NY];
  detail::start_columns(y, ys, yb, acc);
  const __m256i c80 = _mm256_set1_epi8(static_cast<char>(0x80));
  const int64_t nb = k / kQK4_0;
  for (int64_t i = 0; i < nb; ++i) {
    const Block8& b = wb[i];
    prefetch(wb + i + 8 * kAhead);  // block-groups of 144 or 176 bytes: about the K-quants' distance
    constexpr int kC = P::kChains;  // as in k4_nibble
    __m256i sumi[kC][NY], offset = _mm256_setzero_si256();
    for (int c = 0; c < kC; ++c)
      for (int j = 0; j < NY; ++j) sumi[c][j] = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int s = 0; s < 8; ++s) {
      const __m256i q = step_quants(b, s, _mm256_setzero_si256());
      if constexpr (P::kOffsetQ8_0) offset = P::dot_i32(offset, c80, q);
      for (int j = 0; j < NY; ++j) sumi[s % kC][j] = step_dot<P>(sumi[s % kC][j], q, yb[j][i].qs + 4 * s);
    }
    const __m256 d = block_scales(b);
    for (int j = 0; j < NY; ++j) {
      __m256i sum = kC == 1 ? sumi[0][j] : _mm256_add_epi32(sumi[0][j], sumi[kC - 1][j]);
      if constexpr (P::kOffsetQ8_0) sum = _mm256_sub_epi32(sum, offset);
      acc[j] = _mm256_fmadd_ps(_mm256_mul_ps(d, _mm256_set1_ps(_cvtsh_ss(yb[j][i].d))),
                               _mm256_cvtepi32_ps(sum), acc[j]);
    }
  }
  for (int j = 0; j < NY; ++j) _mm256_storeu_ps(out + 8 * j, acc[j]);
}

// Q4_1 and Q5_1: unsigned quants (0..15, 0..31) against Q8_1 activations; value = d * q + m,
// so a row's dot is d * dy * sum(q * y) + m * s, the activations' s = dy * sum(y). Two partial
// sums of 4 steps each: with Maddubs, 8 products of at most 31 * 128 stay in int16.
template <typename P, typename Block8, int NY>
PADDOCK_GEMM_INLINE void minned_n(int64_t k, const void* w, const void* y, size_t ys, float* out) {
  const Block8* wb = static_cast<const Block8*>(w);
  const BlockQ8_1* yb[NY];
  __m256 acc[NY];
  detail::start_columns(y, ys, yb, acc);
  const int64_t nb = k / kQK4_1;
  for (int64_t i = 0; i < nb; ++i) {
    const Block8& b = wb[i];
    prefetch(wb + i + 8 * kAhead);
    __m256i sumi[2][NY];
    for (int c = 0; c < 2; ++c)
      for (int j = 0; j < NY; ++j) sumi[c][j] = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int s = 0; s < 8; ++s) {
      const __m256i q = step_quants(b, s, _mm256_setzero_si256());
      for (int j = 0; j < NY; ++j) sumi[s % 2][j] = P::dot(sumi[s % 2][j], q, yb[j][i].qs + 4 * s);
    }
    const __m256 d = load_halves(b.d);
    const __m256 m = load_halves(b.m);
    for (int j = 0; j < NY; ++j) {
      const __m256i sum = P::widened2(sumi[0][j], sumi[1][j]);
      acc[j] = _mm256_fmadd_ps(_mm256_mul_ps(d, _mm256_set1_ps(_cvtsh_ss(yb[j][i].d))),
                               _mm256_cvtepi32_ps(sum), acc[j]);
      acc[j] = _mm256_fmadd_ps(m, _mm256_set1_ps(_cvtsh_ss(yb[j][i].s)), acc[j]);
    }
  }
  for (int j = 0; j < NY; ++j) _mm256_storeu_ps(out + 8 * j, acc[j]);
}

// Q8_0 and MXFP4 in ggml's AVX2 order (quant/lanes8.h), bit for bit with the quant table's dot:
// step s is lane s of each row's block, and each lane keeps its own float sum per row across
// blocks, one FMA per block; the lanes end in hsum_float_8's tree, for 8 rows at once. MXFP4
// keeps even and odd blocks in two sets, added before the tree, and adds an odd last block
// after it. That is 8 (MXFP4: 16) live sums per column, so the columns' steps are taken KS at
// a time, each pass over the blocks keeping kSets * KS * NY sums within P::kSumRegisters.
// With P::kOffsetQ8_0 each step's sum starts at minus the step's offset (step_dot), shared by
// the columns.
template <typename P, typename Block8, int NY>
PADDOCK_GEMM_INLINE void lanes_n(int64_t k, const void* w, const void* y, size_t ys, float* out) {
  constexpr int kSets = std::is_same_v<Block8, BlockMXFP4x8> ? 2 : 1;
  constexpr int KS = kSets * 8 * NY <= P::kSumRegisters   ? 8
                     : kSets * 4 * NY <= P::kSumRegisters ? 4
                     : kSets * 2 * NY <= P::kSumRegisters ? 2
                                                          : 1;
  const Block8* wb = static_cast<const Block8*>(w);
  const BlockQ8_0* yb[NY];
  for (int j = 0; j < NY; ++j) yb[j] = reinterpret_cast<const BlockQ8_0*>(detail::column(y, ys, j));
  const __m256i levels = mxfp4_levels();
  const __m256i c80 = _mm256_set1_epi8(static_cast<char>(0x80));
  const int64_t nb = k / kQK8_0;
  const int64_t paired = nb - nb % kSets;
  __m256 lane[NY][8];  // each column's finished lane sums
  for (int s0 = 0; s0 < 8; s0 += KS) {
    __m256 acc[kSets][NY][KS];
    for (int t = 0; t < kSets; ++t)
      for (int j = 0; j < NY; ++j)
        for (int s = 0; s < KS; ++s) acc[t][j][s] = _mm256_setzero_ps();
    for (int64_t i = 0; i < paired; i += kSets) {
#pragma GCC unroll 2
      for (int t = 0; t < kSets; ++t) {
        const Block8& b = wb[i + t];
        prefetch(wb + i + t +
                 (kSets == 2 ? 8 : 4) * kAhead);  // 136- or 272-byte groups: the K-quants' distance
        const __m256 dw = block_scales(b);
        __m256 dd[NY];
        for (int j = 0; j < NY; ++j) dd[j] = _mm256_mul_ps(dw, _mm256_set1_ps(_cvtsh_ss(yb[j][i + t].d)));
#pragma GCC unroll 8
        for (int s = 0; s < KS; ++s) {
          const __m256i q = step_quants(b, s0 + s, levels);
          const __m256i start = step_start<P>(q, c80);
          for (int j = 0; j < NY; ++j) {
            const __m256i p = step_dot<P>(start, q, yb[j][i + t].qs + 4 * (s0 + s));
            acc[t][j][s] = _mm256_fmadd_ps(dd[j], _mm256_cvtepi32_ps(p), acc[t][j][s]);
          }
        }
      }
    }
    for (int j = 0; j < NY; ++j)
      for (int s = 0; s < KS; ++s)
        lane[j][s0 + s] = kSets == 2 ? _mm256_add_ps(acc[0][j][s], acc[kSets - 1][j][s]) : acc[0][j][s];
  }
  for (int j = 0; j < NY; ++j) {
    const __m256(&a)[8] = lane[j];
    __m256 sum = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a[0], a[4]), _mm256_add_ps(a[2], a[6])),
                               _mm256_add_ps(_mm256_add_ps(a[1], a[5]), _mm256_add_ps(a[3], a[7])));
    if (paired < nb) {  // MXFP4's odd last block: its whole integer sum, scaled, after the tree
      const Block8& b = wb[paired];
      const BlockQ8_0& yl = yb[j][paired];
      __m256i sumi = _mm256_setzero_si256();
      for (int s = 0; s < 8; ++s) {
        const __m256i q = step_quants(b, s, levels);
        sumi = _mm256_add_epi32(sumi, step_dot<P>(step_start<P>(q, c80), q, yl.qs + 4 * s));
      }
      sum = _mm256_add_ps(sum, _mm256_mul_ps(_mm256_mul_ps(block_scales(b), _mm256_set1_ps(_cvtsh_ss(yl.d))),
                                             _mm256_cvtepi32_ps(sumi)));
    }
    _mm256_storeu_ps(out + 8 * j, sum);
  }
}

}  // namespace paddock::cpu::gemm_x86

// PADDOCK_GEMM_KERNELS(fn, P, TARGET) defines `GemmFn fn(DType t)`: the kernel of type t under
// policy P (nullptr for types without an interleaved layout), compiled for TARGET, a function
// attribute. The kernels above are inlined into these entry points, so they are compiled for
// the path that runs them: under AVX-512 the compiler has 32 vector registers, and the
// several-column kernels keep their sums in registers where AVX2's 16 made them spill.
#define PADDOCK_GEMM_ENTRY(name, kernel, Block8, P, TARGET)                                  \
  TARGET void name(int64_t k, const void* w, const void* y, size_t ys, int ny, float* out) { \
    using ::paddock::cpu::gemm_x86::kernel;                                                  \
    using ::paddock::cpu::Block8;                                                            \
    switch (ny) {                                                                            \
      case 1: kernel<P, Block8, 1>(k, w, y, ys, out); break;                                 \
      case 2: kernel<P, Block8, 2>(k, w, y, ys, out); break;                                 \
      case 3: kernel<P, Block8, 3>(k, w, y, ys, out); break;                                 \
      default: kernel<P, Block8, 4>(k, w, y, ys, out); break;                                \
    }                                                                                        \
  }
#define PADDOCK_GEMM_KERNELS(fn, P, TARGET)                      \
  namespace fn##_entries {                                       \
    PADDOCK_GEMM_ENTRY(q2_K, k16_n, BlockQ2_Kx8, P, TARGET)      \
    PADDOCK_GEMM_ENTRY(q3_K, k16_n, BlockQ3_Kx8, P, TARGET)      \
    PADDOCK_GEMM_ENTRY(q4_K, k4_n, BlockQ4_Kx8, P, TARGET)       \
    PADDOCK_GEMM_ENTRY(q5_K, k4_n, BlockQ5_Kx8, P, TARGET)       \
    PADDOCK_GEMM_ENTRY(q6_K, k16_n, BlockQ6_Kx8, P, TARGET)      \
    PADDOCK_GEMM_ENTRY(q8_0, lanes_n, BlockQ8_0x8, P, TARGET)    \
    PADDOCK_GEMM_ENTRY(q4_0, nibbles_n, BlockQ4_0x8, P, TARGET)  \
    PADDOCK_GEMM_ENTRY(q5_0, nibbles_n, BlockQ5_0x8, P, TARGET)  \
    PADDOCK_GEMM_ENTRY(q4_1, minned_n, BlockQ4_1x8, P, TARGET)   \
    PADDOCK_GEMM_ENTRY(q5_1, minned_n, BlockQ5_1x8, P, TARGET)   \
    PADDOCK_GEMM_ENTRY(mxfp4, lanes_n, BlockMXFP4x8, P, TARGET)  \
  }                                                              \
  ::paddock::cpu::GemmFn fn(::paddock::DType t) {                \
    switch (t) {                                                 \
      case ::paddock::DType::kQ2_K: return fn##_entries::q2_K;   \
      case ::paddock::DType::kQ3_K: return fn##_entries::q3_K;   \
      case ::paddock::DType::kQ4_K: return fn##_entries::q4_K;   \
      case ::paddock::DType::kQ5_K: return fn##_entries::q5_K;   \
      case ::paddock::DType::kQ6_K: return fn##_entries::q6_K;   \
      case ::paddock::DType::kQ8_0: return fn##_entries::q8_0;   \
      case ::paddock::DType::kQ4_0: return fn##_entries::q4_0;   \
      case ::paddock::DType::kQ5_0: return fn##_entries::q5_0;   \
      case ::paddock::DType::kQ4_1: return fn##_entries::q4_1;   \
      case ::paddock::DType::kQ5_1: return fn##_entries::q5_1;   \
      case ::paddock::DType::kMXFP4: return fn##_entries::mxfp4; \
      default: return nullptr;                                   \
    }                                                            \
  }

#endif  // PADDOCK_X86
