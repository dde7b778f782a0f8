// AVX2 (+FMA, F16C) attention tile kernels. Scores: 4 cells x 16 query rows per step, a K
// element broadcast against 8 rows of the transposed queries (no horizontal sums). Softmax:
// 8 rows at a time down the cells, with the vectorised e^x of vec_exp_x86.h; masked cells are forced to -inf
// so they come out as exactly 0. P.V: 4 rows x 16 output lanes per step, the rescale by c folded into the
// accumulator load. Dequantizers give the reference functions' exact floats (q * d in float).
// Decode over an F16 cache runs the same dot and P.V loops on the cache rows (F16Rows).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "backend/cpu/attention_kernels.h"
#include "backend/cpu/simd_x86.h"
#include "backend/cpu/vec_exp_x86.h"
#include "base/fp16.h"
#include "quant/blocks.h"

namespace paddock::cpu {

#if defined(PADDOCK_X86)

namespace {

// Scores of 4 cells x W vectors of 8 query rows: k[c][i] broadcast, qt[i][rows] loaded.
template <int W>
PADDOCK_TARGET_AVX2 inline void scores_block(const float* qt, int64_t qs, const float* k, int64_t dk,
                                             int64_t rs, float scale, float* s) {
  __m256 acc[4][W];
#pragma GCC unroll 4
  for (int c = 0; c < 4; ++c) {
#pragma GCC unroll 4
    for (int w = 0; w < W; ++w) acc[c][w] = _mm256_setzero_ps();
  }
  for (int64_t i = 0; i < dk; ++i) {
    __m256 q[W];
#pragma GCC unroll 4
    for (int w = 0; w < W; ++w) q[w] = _mm256_loadu_ps(qt + i * qs + 8 * w);
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) {
      const __m256 kc = _mm256_broadcast_ss(k + c * dk + i);
#pragma GCC unroll 4
      for (int w = 0; w < W; ++w) acc[c][w] = _mm256_fmadd_ps(kc, q[w], acc[c][w]);
    }
  }
  const __m256 sc = _mm256_set1_ps(scale);
#pragma GCC unroll 4
  for (int c = 0; c < 4; ++c) {
#pragma GCC unroll 4
    for (int w = 0; w < W; ++w) _mm256_storeu_ps(s + c * rs + 8 * w, _mm256_mul_ps(acc[c][w], sc));
  }
}

// [sum(x0), ..., sum(x7)]: lanes 0-3 from x0..x3, lanes 4-7 from x4..x7.
PADDOCK_TARGET_AVX2 inline __m256 hsum8(const __m256* x) {
  const __m256 u0 = _mm256_hadd_ps(_mm256_hadd_ps(x[0], x[1]), _mm256_hadd_ps(x[2], x[3]));
  const __m256 u1 = _mm256_hadd_ps(_mm256_hadd_ps(x[4], x[5]), _mm256_hadd_ps(x[6], x[7]));
  return _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20), _mm256_permute2f128_ps(u0, u1, 0x31));
}

// Row j's 8 floats from element i: rows of an F32 tile, or F16 cache rows converted as they
// are loaded (decode reads the cache in place: no tile is written and read back).
struct F32Rows {
  const float* p;
  int64_t stride;  // floats
  PADDOCK_TARGET_AVX2 __m256 load(int64_t j, int64_t i) const { return _mm256_loadu_ps(p + j * stride + i); }
  void prefetch(int64_t, int64_t) const {}
  void prefetch_at(int64_t, int64_t) const {}
};
struct F16Rows {
  const uint8_t* p;
  size_t stride;  // bytes
  PADDOCK_TARGET_AVX2 __m256 load(int64_t j, int64_t i) const {
    const auto* row = reinterpret_cast<const uint16_t*>(p + static_cast<size_t>(j) * stride);
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + i)));
  }
  // Row j's n elements: the rows of one kv head are a cell (several heads) apart.
  void prefetch(int64_t j, int64_t n) const {
    const char* row = reinterpret_cast<const char*>(p + static_cast<size_t>(j) * stride);
    for (int64_t b = 0; b < n * 2; b += 64) _mm_prefetch(row + b, _MM_HINT_T0);
  }
  // The line of row j holding element i.
  void prefetch_at(int64_t j, int64_t i) const {
    _mm_prefetch(reinterpret_cast<const char*>(p + static_cast<size_t>(j) * stride) + 2 * i, _MM_HINT_T0);
  }
};

// Q8_0 cache rows dequantized as they are loaded, to q * d in float like q8_0_row.
struct Q8Rows {
  const uint8_t* p;
  size_t stride;  // bytes
  const BlockQ8_0* row(int64_t j) const {
    return reinterpret_cast<const BlockQ8_0*>(p + static_cast<size_t>(j) * stride);
  }
  PADDOCK_TARGET_AVX2 __m256 load(int64_t j, int64_t i) const {
    const BlockQ8_0& b = row(j)[i / kQK8_0];
    const __m128i q = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b.qs + i % kQK8_0));
    return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q)), _mm256_set1_ps(_cvtsh_ss(b.d)));
  }
  void prefetch(int64_t j, int64_t n) const {
    const char* r = reinterpret_cast<const char*>(row(j));
    for (size_t b = 0; b < static_cast<size_t>(n / kQK8_0) * sizeof(BlockQ8_0); b += 64)
      _mm_prefetch(r + b, _MM_HINT_T0);
  }
  void prefetch_at(int64_t j, int64_t i) const {
    _mm_prefetch(reinterpret_cast<const char*>(row(j) + i / kQK8_0), _MM_HINT_T0);
  }
};

// Scores of 4 query rows (row-major) x cells j0 and j1 as eight 8-lane dots reduced together:
// for decode, where broadcasting K against a vector of mostly padding rows would waste lanes.
template <typename Rows>
PADDOCK_TARGET_AVX2 inline void scores_dot_4x2(const float* q, const Rows& k, int64_t j0, int64_t j1,
                                               int64_t dk, int64_t rs, float scale, float* s) {
  __m256 acc[8];
#pragma GCC unroll 8
  for (__m256& a : acc) a = _mm256_setzero_ps();
  for (int64_t i = 0; i < dk; i += 8) {
    const __m256 k0 = k.load(j0, i), k1 = k.load(j1, i);
#pragma GCC unroll 4
    for (int r = 0; r < 4; ++r) {
      const __m256 qr = _mm256_loadu_ps(q + r * dk + i);
      acc[r] = _mm256_fmadd_ps(qr, k0, acc[r]);
      acc[4 + r] = _mm256_fmadd_ps(qr, k1, acc[4 + r]);
    }
  }
  const __m256 sums = _mm256_mul_ps(hsum8(acc), _mm256_set1_ps(scale));
  _mm_storeu_ps(s, _mm256_castps256_ps128(sums));
  _mm_storeu_ps(s + rs, _mm256_extractf128_ps(sums, 1));
}

// Cells in pairs; an odd last cell is paired with itself, so no row past nc is read.
template <typename Rows>
PADDOCK_TARGET_AVX2 void scores_dot(const float* q, const Rows& k, int64_t dk, int64_t rs, int nc,
                                    float scale, float* s) {
  for (int j = 0; j < nc; j += 2) {
    k.prefetch(j + 4, dk);
    k.prefetch(j + 5, dk);
    scores_dot_4x2(q, k, j, std::min(j + 1, nc - 1), dk, rs, scale, s + j * rs);
  }
}

PADDOCK_TARGET_AVX2 void scores(const float* q, const float* qt, const float* k, int64_t dk, int rows,
                                int64_t rs, int nc, float scale, float* s) {
  if (rows <= kAttnDotRows) {
    scores_dot(q, F32Rows{k, dk}, dk, rs, nc, scale, s);
    return;
  }
  const int64_t qs = (rows + 7) / 8 * 8;
  for (int j = 0; j < nc; j += 4) {
    int64_t r = 0;
    for (; r + 16 <= qs; r += 16) scores_block<2>(qt + r, qs, k + j * dk, dk, rs, scale, s + j * rs + r);
    if (r < qs) scores_block<1>(qt + r, qs, k + j * dk, dk, rs, scale, s + j * rs + r);
  }
}

template <typename Rows>
PADDOCK_TARGET_AVX2 void scores_direct(const float* q, const TileRows& k, int64_t rs, float scale, float* s) {
  scores_dot(q, Rows{k.src, k.cell_stride}, k.n, rs, k.cells, scale, s);
}

PADDOCK_TARGET_AVX2 void softmax(float* s, int64_t rs, int nc, const int32_t* lim, float* m, float* l,
                                 float* c) {
  const __m256 neg_inf = _mm256_set1_ps(-INFINITY);
  for (int64_t r = 0; r < rs; r += 8) {
    const __m256i lim8 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lim + r));
    const __m256 m_old = _mm256_loadu_ps(m + r);
    __m256 mx = m_old;
    for (int j = 0; j < nc; ++j) {
      // Visible iff j <= lim, i.e. lim > j - 1; the others become -inf and so exactly 0.
      const __m256 visible = _mm256_castsi256_ps(_mm256_cmpgt_epi32(lim8, _mm256_set1_epi32(j - 1)));
      const __m256 x = _mm256_blendv_ps(neg_inf, _mm256_loadu_ps(s + j * rs + r), visible);
      _mm256_storeu_ps(s + j * rs + r, x);
      mx = _mm256_max_ps(mx, x);
    }
    // Rows that have seen nothing yet subtract 0, so no -inf - -inf occurs.
    const __m256 base = _mm256_andnot_ps(_mm256_cmp_ps(mx, neg_inf, _CMP_EQ_OQ), mx);
    const __m256 cv = exp8(_mm256_sub_ps(m_old, base));
    __m256 sum = _mm256_setzero_ps();
    for (int j = 0; j < nc; ++j) {
      const __m256 p = exp8(_mm256_sub_ps(_mm256_loadu_ps(s + j * rs + r), base));
      _mm256_storeu_ps(s + j * rs + r, p);
      sum = _mm256_add_ps(sum, p);
    }
    _mm256_storeu_ps(m + r, mx);
    _mm256_storeu_ps(c + r, cv);
    _mm256_storeu_ps(l + r, _mm256_fmadd_ps(_mm256_loadu_ps(l + r), cv, sum));
  }
}

// R rows x W vectors of output lanes [i, i + 8W).
template <int R, int W, typename Rows>
PADDOCK_TARGET_AVX2 inline void pv_block(const float* p, int64_t rs, const Rows& v, int64_t i, int64_t dv,
                                         int nc, const float* c, float* acc) {
  __m256 a[R][W];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    const __m256 cr = _mm256_set1_ps(c[r]);
#pragma GCC unroll 4
    for (int w = 0; w < W; ++w) a[r][w] = _mm256_mul_ps(_mm256_loadu_ps(acc + r * dv + i + 8 * w), cr);
  }
  for (int j = 0; j < nc; ++j) {
    v.prefetch_at(j + 4, i);
    __m256 vv[W];
#pragma GCC unroll 4
    for (int w = 0; w < W; ++w) vv[w] = v.load(j, i + 8 * w);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const __m256 pr = _mm256_broadcast_ss(p + j * rs + r);
#pragma GCC unroll 4
      for (int w = 0; w < W; ++w) a[r][w] = _mm256_fmadd_ps(pr, vv[w], a[r][w]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int w = 0; w < W; ++w) _mm256_storeu_ps(acc + r * dv + i + 8 * w, a[r][w]);
  }
}

template <int R, typename Rows>
PADDOCK_TARGET_AVX2 inline void pv_rows(const float* p, int64_t rs, const Rows& v, int64_t dv, int nc,
                                        const float* c, float* acc) {
  int64_t i = 0;
  for (; i + 16 <= dv; i += 16) pv_block<R, 2>(p, rs, v, i, dv, nc, c, acc);
  if (i < dv) pv_block<R, 1>(p, rs, v, i, dv, nc, c, acc);
}

template <typename Rows>
PADDOCK_TARGET_AVX2 void pv_any(const float* p, int64_t rs, const Rows& v, int64_t dv, int rows, int nc,
                                const float* c, float* acc) {
  int r = 0;
  for (; r + 4 <= rows; r += 4) pv_rows<4>(p + r, rs, v, dv, nc, c + r, acc + r * dv);
  switch (rows - r) {
    case 3: pv_rows<3>(p + r, rs, v, dv, nc, c + r, acc + r * dv); break;
    case 2: pv_rows<2>(p + r, rs, v, dv, nc, c + r, acc + r * dv); break;
    case 1: pv_rows<1>(p + r, rs, v, dv, nc, c + r, acc + r * dv); break;
    default: break;
  }
}

PADDOCK_TARGET_AVX2 void pv(const float* p, int64_t rs, const float* v, int64_t dv, int rows, int nc,
                            const float* c, float* acc) {
  pv_any(p, rs, F32Rows{v, dv}, dv, rows, nc, c, acc);
}

template <typename Rows>
PADDOCK_TARGET_AVX2 void pv_direct(const float* p, int64_t rs, const TileRows& v, int rows, const float* c,
                                   float* acc) {
  pv_any(p, rs, Rows{v.src, v.cell_stride}, v.n, rows, v.cells, c, acc);
}

PADDOCK_TARGET_AVX2 inline void f16_row(const void* src, float* dst, int64_t n) {
  const auto* h = static_cast<const uint16_t*>(src);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i))));
  }
  for (; i < n; ++i) dst[i] = _cvtsh_ss(h[i]);
}

// Eight int8 lanes (the low 8 bytes of b) times d.
PADDOCK_TARGET_AVX2 inline __m256 scaled8(__m128i b, __m256 d) {
  return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b)), d);
}

PADDOCK_TARGET_AVX2 inline void q8_0_row(const void* src, float* dst, int64_t n) {
  const auto* b = static_cast<const BlockQ8_0*>(src);
  for (int64_t blk = 0; blk < n / kQK8_0; ++blk, dst += kQK8_0) {
    const __m256 d = _mm256_set1_ps(_cvtsh_ss(b[blk].d));
    const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b[blk].qs));
    const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b[blk].qs + 16));
    _mm256_storeu_ps(dst, scaled8(lo, d));
    _mm256_storeu_ps(dst + 8, scaled8(_mm_srli_si128(lo, 8), d));
    _mm256_storeu_ps(dst + 16, scaled8(hi, d));
    _mm256_storeu_ps(dst + 24, scaled8(_mm_srli_si128(hi, 8), d));
  }
}

PADDOCK_TARGET_AVX2 inline void q4_0_row(const void* src, float* dst, int64_t n) {
  const auto* b = static_cast<const BlockQ4_0*>(src);
  const __m128i mask = _mm_set1_epi8(0x0F), eight = _mm_set1_epi8(8);
  for (int64_t blk = 0; blk < n / kQK4_0; ++blk, dst += kQK4_0) {
    const __m256 d = _mm256_set1_ps(_cvtsh_ss(b[blk].d));
    const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b[blk].qs));
    const __m128i lo = _mm_sub_epi8(_mm_and_si128(raw, mask), eight);                     // elements 0..15
    const __m128i hi = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(raw, 4), mask), eight);  // 16..31
    _mm256_storeu_ps(dst, scaled8(lo, d));
    _mm256_storeu_ps(dst + 8, scaled8(_mm_srli_si128(lo, 8), d));
    _mm256_storeu_ps(dst + 16, scaled8(hi, d));
    _mm256_storeu_ps(dst + 24, scaled8(_mm_srli_si128(hi, 8), d));
  }
}

inline void f32_row(const void* src, float* dst, int64_t n) {
  std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

template <void (*Row)(const void*, float*, int64_t)>
PADDOCK_TARGET_AVX2 void tile_to_f32(const TileRows& t, float* dst, int64_t dst_row) {
  for (int j = 0; j < t.cells; ++j) {
    for (int h = 0; h < t.heads; ++h) {
      float* out = dst + (h * kAttnMaxTile + j) * dst_row;
      Row(t.src + static_cast<size_t>(j) * t.cell_stride + static_cast<size_t>(h) * t.head_stride, out, t.n);
      for (int64_t i = t.n; i < dst_row; ++i) out[i] = 0.0f;
    }
  }
}

PADDOCK_TARGET_AVX2 inline __m256 load_f16(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
PADDOCK_TARGET_AVX2 inline void store_f16(uint16_t* p, __m256 x) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
}

// ggml_vec_dot_f16 as ggml's AVX2 build sums it, over rows already converted to F32 (Load)
// or still F16: 4 accumulators of 8 lanes, folded 0+2, 1+3, 0+1, then lanes l + (l+4) and two
// horizontal adds; elements past the last 32 added in double.
template <typename T, __m256 (*Load)(const T*)>
PADDOCK_TARGET_AVX2 inline float ggml_dot(const T* q, const T* k, int64_t n, float (*scalar)(T)) {
  const int64_t n32 = n / 32 * 32;
  __m256 acc[4];
#pragma GCC unroll 4
  for (int w = 0; w < 4; ++w) acc[w] = _mm256_setzero_ps();
  for (int64_t i = 0; i < n32; i += 32) {
#pragma GCC unroll 4
    for (int w = 0; w < 4; ++w) acc[w] = _mm256_fmadd_ps(Load(q + i + 8 * w), Load(k + i + 8 * w), acc[w]);
  }
  const __m256 all = _mm256_add_ps(_mm256_add_ps(acc[0], acc[2]), _mm256_add_ps(acc[1], acc[3]));
  const __m128 t0 = _mm_add_ps(_mm256_castps256_ps128(all), _mm256_extractf128_ps(all, 1));
  const __m128 t1 = _mm_hadd_ps(t0, t0);
  double sum = _mm_cvtss_f32(_mm_hadd_ps(t1, t1));
  for (int64_t i = n32; i < n; ++i) sum += static_cast<double>(scalar(q[i]) * scalar(k[i]));
  return static_cast<float>(sum);
}

PADDOCK_TARGET_AVX2 inline __m256 load_f32(const float* p) { return _mm256_loadu_ps(p); }
inline float same(float x) { return x; }
PADDOCK_TARGET_AVX2 inline float half(uint16_t x) { return _cvtsh_ss(x); }

PADDOCK_TARGET_AVX2 float f16_dot(const uint16_t* q, const uint16_t* k, int64_t n) {
  return ggml_dot<uint16_t, load_f16>(q, k, n, half);
}

PADDOCK_TARGET_AVX2 inline __m256 round_f16(__m256 x) {
  return _mm256_cvtph_ps(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
}

// F16Ops::walk: each cell's K and V rows converted to F32 once for all the query rows of
// its kv head; the accumulators kept in F32 holding F16 values (rounded through vcvtps2ph
// after every step, which is what storing them as F16 does).
PADDOCK_TARGET_AVX2 void f16_walk(const uint16_t* q16, int rows, int64_t d_k, int64_t d_v, const F16Cells& c,
                                  float kq_scale, float softcap, float* m, float* l, uint16_t* acc16) {
  thread_local std::vector<float> buf;
  buf.resize(static_cast<size_t>(rows * d_k + d_k + d_v + rows * d_v));
  float* q = buf.data();
  float* k = q + rows * d_k;
  float* v = k + d_k;
  float* acc = v + d_v;
  for (int64_t i = 0; i < rows * d_k; i += 8) _mm256_storeu_ps(q + i, load_f16(q16 + i));
  for (int64_t i = 0; i < rows * d_v; i += 8) _mm256_storeu_ps(acc + i, load_f16(acc16 + i));
  for (int64_t j = 0; j < c.n; ++j) {
    for (int64_t i = 0; i < d_k; i += 8) _mm256_storeu_ps(k + i, load_f16(c.k[j] + i));
    for (int64_t i = 0; i < d_v; i += 8) _mm256_storeu_ps(v + i, load_f16(c.v[j] + i));
    // Every row's score first, then the scalar steps, then the vector updates: independent
    // chains the core can overlap, where row after row would wait on each one's latency.
    float x[64], ms[64], vs[64];
    for (int r = 0; r < rows; ++r) x[r] = ggml_dot<float, load_f32>(q + r * d_k, k, d_k, same) * kq_scale;
    for (int r = 0; r < rows; ++r) {
      if (softcap > 0) x[r] = softcap * std::tanh(x[r]);
      ms[r] = 1.0f;
      vs[r] = 1.0f;
      if (x[r] > m[r]) {
        ms[r] = std::exp(m[r] - x[r]);
        m[r] = x[r];
      } else {
        vs[r] = std::exp(x[r] - m[r]);
      }
      l[r] = std::fma(l[r], ms[r], vs[r]);
    }
    for (int r = 0; r < rows; ++r) {
      float* a = acc + r * d_v;
      const __m256 vv = _mm256_set1_ps(vs[r]);
      if (ms[r] != 1.0f) {
        const __m256 vm = _mm256_set1_ps(ms[r]);
        for (int64_t i = 0; i < d_v; i += 8) {
          const __m256 scaled = round_f16(_mm256_mul_ps(_mm256_loadu_ps(a + i), vm));
          _mm256_storeu_ps(a + i, round_f16(_mm256_fmadd_ps(_mm256_loadu_ps(v + i), vv, scaled)));
        }
      } else {
        for (int64_t i = 0; i < d_v; i += 8) {
          _mm256_storeu_ps(a + i, round_f16(_mm256_fmadd_ps(_mm256_loadu_ps(v + i), vv, _mm256_loadu_ps(a + i))));
        }
      }
    }
  }
  for (int64_t i = 0; i < rows * d_v; i += 8) store_f16(acc16 + i, _mm256_loadu_ps(acc + i));
}

PADDOCK_TARGET_AVX2 void f16_scale(uint16_t* acc, int64_t n, float s) {
  const __m256 vs = _mm256_set1_ps(s);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) store_f16(acc + i, _mm256_mul_ps(load_f16(acc + i), vs));
  for (; i < n; ++i) acc[i] = f32_to_fp16(_cvtsh_ss(acc[i]) * s);
}

PADDOCK_TARGET_AVX2 void f16_mad(uint16_t* acc, const uint16_t* v, int64_t n, float s) {
  const __m256 vs = _mm256_set1_ps(s);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) store_f16(acc + i, _mm256_fmadd_ps(load_f16(v + i), vs, load_f16(acc + i)));
  for (; i < n; ++i) acc[i] = f32_to_fp16(std::fma(_cvtsh_ss(v[i]), s, _cvtsh_ss(acc[i])));
}

constexpr F16Ops kF16Rows = {f16_dot, f16_scale, f16_mad, f16_walk};

constexpr AttentionKernels kAvx2 = {scores,
                                    softmax,
                                    pv,
                                    tile_to_f32<f32_row>,
                                    tile_to_f32<f16_row>,
                                    tile_to_f32<q8_0_row>,
                                    tile_to_f32<q4_0_row>,
                                    {scores_direct<F16Rows>, pv_direct<F16Rows>},
                                    {scores_direct<Q8Rows>, pv_direct<Q8Rows>},
                                    &kF16Rows};

}  // namespace

const AttentionKernels* attention_kernels_avx2() { return &kAvx2; }

#else

const AttentionKernels* attention_kernels_avx2() { return nullptr; }

#endif

}  // namespace paddock::cpu
