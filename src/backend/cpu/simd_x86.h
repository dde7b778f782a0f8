// Shared x86 helpers for the AVX2 and AVX-512 kernel files: function attributes that enable
// an ISA per function (the build never sets -mavx2/-mavx512f globally, so the binary runs on
// any x86-64 and CPUID picks the path), the per-column-count dispatch, and the unpacking of
// K-quant scales. Only included by the x86 kernel files (and gemm_x86.h) and bandwidth.cpp.
//   PADDOCK_TARGET_AVX2 void kernel(...);
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "backend/cpu/dot.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define PADDOCK_X86 1
#define PADDOCK_TARGET_AVX2 __attribute__((target("avx2,fma,f16c")))
#define PADDOCK_TARGET_AVX512 __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")))
#endif

namespace paddock::cpu::detail {

// Column `j` of the activations.
inline const uint8_t* column(const void* y, size_t y_stride, int j) {
  return static_cast<const uint8_t*>(y) + y_stride * static_cast<size_t>(j);
}

// Q4_K / Q5_K 6-bit scales and mins, all 8 at once (ggml's get_scale_min_k4 for j = 0..7),
// with word operations instead of per-byte shifts: sc and mn receive 8 bytes each.
inline void unpack_scales_k4(const uint8_t* q, uint8_t* sc, uint8_t* mn) {
  constexpr uint32_t kLow6 = 0x3f3f3f3f, kLow4 = 0x0f0f0f0f, kLow2 = 0x03030303;
  uint32_t w[3];
  std::memcpy(w, q, sizeof(w));
  const uint32_t s[2] = {w[0] & kLow6, (w[2] & kLow4) | (((w[0] >> 6) & kLow2) << 4)};
  const uint32_t m[2] = {w[1] & kLow6, ((w[2] >> 4) & kLow4) | (((w[1] >> 6) & kLow2) << 4)};
  std::memcpy(sc, s, sizeof(s));
  std::memcpy(mn, m, sizeof(m));
}

#if defined(PADDOCK_X86)
// Q6_K: the int16 scale vector of run r (elements 32r..32r+31) from the 16 int8 scales: lanes
// 0-7 (elements 32r..32r+15) hold sc[2r], lanes 8-15 hold sc[2r+1].
PADDOCK_TARGET_AVX2 inline __m256i run_scales_avx2(__m128i sc8, int r) {
  const __m128i mask = _mm_set_epi64x(0x0101010101010101LL * (2 * r + 1), 0x0101010101010101LL * (2 * r));
  return _mm256_cvtepi8_epi16(_mm_shuffle_epi8(sc8, mask));
}

// Column j's activation blocks in yb[j], and its float accumulator zeroed: every kernel's start.
template <typename YBlock, int NY>
PADDOCK_TARGET_AVX2 __attribute__((always_inline)) inline void start_columns(const void* y, size_t ys,
                                                                             const YBlock* (&yb)[NY],
                                                                             __m256 (&acc)[NY]) {
  for (int j = 0; j < NY; ++j) {
    yb[j] = reinterpret_cast<const YBlock*>(column(y, ys, j));
    acc[j] = _mm256_setzero_ps();
  }
}

// Every int16 lane of the result = int16 lane g (0..7) of each 128-bit half of v.
PADDOCK_TARGET_AVX2 inline __m256i broadcast_i16_avx2(__m256i v, int g) {
  return _mm256_shuffle_epi8(v, _mm256_set1_epi16(static_cast<int16_t>((2 * g) | ((2 * g + 1) << 8))));
}
#endif

}  // namespace paddock::cpu::detail

// Defines `name(n, x, y, y_stride, ny, out)` (a DotFn) over `name##_n<NY>` for NY = 1..4, so
// each column count gets fully unrolled accumulators.
// Defines `name(...)` over `kernel<Arg, NY>`: one kernel template shared by several types.
#define PADDOCK_DOT_DISPATCH_OF(target, name, kernel, Arg)                                   \
  target void name(int64_t n, const void* x, const void* y, size_t ys, int ny, float* out) { \
    switch (ny) {                                                                            \
      case 1: kernel<Arg, 1>(n, x, y, ys, out); break;                                       \
      case 2: kernel<Arg, 2>(n, x, y, ys, out); break;                                       \
      case 3: kernel<Arg, 3>(n, x, y, ys, out); break;                                       \
      default: kernel<Arg, 4>(n, x, y, ys, out); break;                                      \
    }                                                                                        \
  }
#define PADDOCK_DOT_DISPATCH(target, name)                                                   \
  target void name(int64_t n, const void* x, const void* y, size_t ys, int ny, float* out) { \
    switch (ny) {                                                                            \
      case 1: name##_n<1>(n, x, y, ys, out); break;                                          \
      case 2: name##_n<2>(n, x, y, ys, out); break;                                          \
      case 3: name##_n<3>(n, x, y, ys, out); break;                                          \
      default: name##_n<4>(n, x, y, ys, out); break;                                         \
    }                                                                                        \
  }
