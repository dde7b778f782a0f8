// llama.cpp's flash attention over an F16 cache, query row by query row
// (ggml_compute_forward_flash_attn_ext_f16_one_chunk, which ggml runs for passes of fewer
// than 64 query rows), shared by the ref and cpu backends so that both round as it does:
// the query row rounded to F16; over the visible cells in cell order, the score (F16Ops::dot
// times the scale, a softcap as ggml applies it) and an online softmax whose weighted sum of
// V is an F16 vector, every update rounded (rescaled by exp(old max - new max) on a new max,
// then v * exp(s - max) added with a fused multiply-add); the sum of the weights updated as
// fma(sum, rescale, weight), as ggml's build with FMA contracts `S = S*ms + vs`; at the end
// the V sum in F32, a sink joined, divided by the sum of the weights. docs/engine.md says why we round so.
//   F16RowScratch s;
//   f16_attention_rows(f16_ops_scalar(), q_rows, group, d_k, d_v, 0, n, visible, k_row, v_row,
//                      scale, softcap, sinks_or_null, s, out_rows);
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "base/fp16.h"

namespace paddock {

// Whether a pass over an F16 cache of n_tokens query rows that looks at cells [0, n_cells)
// rounds as above. From 64 query rows on ggml runs its tiled kernel (GGML_FA_TILE_Q), all
// F32 over F16 K and V; a decode step over 512 cells or more it splits across threads
// (its split-KV path) and merges the partial sums in F32, so cell order no longer decides
// the roundings. Both go to the backends' blocked F32 paths, which are also much faster
// over long contexts than a row at a time.
inline constexpr int64_t kF16RowsMaxTokens = 64;
inline constexpr int64_t kF16RowsMaxCells = 512;
inline bool f16_rows_apply(bool f16_cache, int64_t n_tokens, int64_t n_cells) {
  return f16_cache && n_tokens < kF16RowsMaxTokens && n_cells < kF16RowsMaxCells;
}

// The cells a pass walks for query rows sharing one kv head: n K rows (F16, d_k) and the n V
// rows (F16, d_v) beside them, in cell order.
struct F16Cells {
  const uint16_t* const* k;
  const uint16_t* const* v;
  int64_t n;
};

// The steps whose rounding matters; q, k, v and acc are F16 (uint16_t) rows.
//   dot: q . k in F32, summed as ggml_vec_dot_f16 in ggml's AVX2 build (Debian's haswell
//        variant of llama.cpp, which reproduces the golden files bit for bit; its AVX-512
//        variants sum in another order and do not): 4 accumulators of 8 lanes with fused
//        multiply-adds, folded 0+2, 1+3, 0+1, then lanes l + (l+4) and two horizontal adds;
//        elements past the last 32 added in double;
//   scale: acc[i] = f16(f32(acc[i]) * s);  mad: acc[i] = f16(fma(f32(v[i]), s, f32(acc[i])));
//   walk (optional; nullptr: f16_walk's loop over the three above): the online softmax over
//        `cells` for `rows` query rows at once (q16 holds them d_k apart), each with its
//        running max m[r], sum l[r] and accumulator acc[r * d_v], with the same bits;
//        d_k and d_v multiples of 8, rows <= 64.
struct F16Ops {
  float (*dot)(const uint16_t* q, const uint16_t* k, int64_t n);
  void (*scale)(uint16_t* acc, int64_t n, float s);
  void (*mad)(uint16_t* acc, const uint16_t* v, int64_t n, float s);
  void (*walk)(const uint16_t* q16, int rows, int64_t d_k, int64_t d_v, const F16Cells& cells, float kq_scale,
               float softcap, float* m, float* l, uint16_t* acc);
};

// The portable ops; SIMD ones (the cpu backend's) must give their bits.
const F16Ops& f16_ops_scalar();

// The online softmax over `cells` for `rows` query rows (F16Ops::walk's contract): ops.walk
// where it applies, else the loop over dot, scale and mad. kq_scale is the score's scale
// (divided by the softcap when there is one, as ggml does).
void f16_walk(const F16Ops& ops, const uint16_t* q16, int rows, int64_t d_k, int64_t d_v, const F16Cells& cells,
              float kq_scale, float softcap, float* m, float* l, uint16_t* acc);

struct F16RowScratch {
  std::vector<uint16_t> q16, acc;
  std::vector<float> m, l;
  std::vector<const uint16_t*> k, v;
};

// `rows` query rows q[r] (F32, d_k) that share one kv head, over the cells j0 <= j < j1 for
// which visible(j); k_row(j) and v_row(j) give the cell's F16 rows; sinks (nullptr or one per
// row) join each row's softmax. Writes d_v floats to out[r].
template <class Visible, class KRow, class VRow>
void f16_attention_rows(const F16Ops& ops, const float* const* q, int rows, int64_t d_k, int64_t d_v, int64_t j0,
                        int64_t j1, Visible visible, KRow k_row, VRow v_row, float scale, float softcap,
                        const float* sinks, F16RowScratch& s, float* const* out) {
  s.k.clear();
  s.v.clear();
  for (int64_t j = j0; j < j1; ++j) {
    if (!visible(j)) continue;
    s.k.push_back(k_row(j));
    s.v.push_back(v_row(j));
  }
  s.q16.resize(static_cast<size_t>(rows * d_k));
  for (int r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < d_k; ++i) s.q16[static_cast<size_t>(r * d_k + i)] = f32_to_fp16(q[r][i]);
  }
  s.acc.assign(static_cast<size_t>(rows * d_v), uint16_t{0});
  s.m.assign(static_cast<size_t>(rows), -INFINITY);
  s.l.assign(static_cast<size_t>(rows), 0.0f);
  // ggml divides the scale by the softcap and multiplies tanh's result by it.
  const float kq_scale = softcap > 0 ? scale / softcap : scale;
  f16_walk(ops, s.q16.data(), rows, d_k, d_v, {s.k.data(), s.v.data(), static_cast<int64_t>(s.k.size())},
           kq_scale, softcap, s.m.data(), s.l.data(), s.acc.data());
  for (int r = 0; r < rows; ++r) {
    float m = s.m[static_cast<size_t>(r)], l = s.l[static_cast<size_t>(r)];
    float f = 1.0f;  // a sink's rescale of the output
    if (sinks != nullptr) {
      float ms = 1.0f, vs = 1.0f;
      if (sinks[r] > m) {
        ms = std::exp(m - sinks[r]);
        f = ms;
      } else {
        vs = std::exp(sinks[r] - m);
      }
      l = std::fma(l, ms, vs);
    }
    const float inv = l == 0.0f ? 0.0f : 1.0f / l;
    const uint16_t* acc = &s.acc[static_cast<size_t>(r * d_v)];
    for (int64_t i = 0; i < d_v; ++i) out[r][i] = fp16_to_f32(acc[i]) * f * inv;
  }
}

}  // namespace paddock
