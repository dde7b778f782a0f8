// The tile kernels of the CPU backend's blocked attention (attention.cpp drives them): a
// block of query rows against a tile of at most kAttnMaxTile KV cells converted to F32, with
// an online softmax carried in (max, sum, unnormalised output) per row. One table per path:
// a portable scalar one and an AVX2+FMA+F16C one (also used by the AVX-512 path).
// Layouts: scores/probabilities are cell-major (s[j * rs + r]), rs a multiple of 8, so a
// vector holds 8 query rows and the softmax runs across rows, one cell at a time; the
// driver packs the rows of several kv heads side by side in one tile (rs >= their total).
// Queries come row-major (q[r * dk + i], zero-padded to kAttnDotRows rows) when there are
// at most kAttnDotRows rows (decode), and scores dot rows of q with rows of K; otherwise
// transposed (qt[i * qs + r], qs = rows rounded up to 8, zero-padded), and scores broadcast
// a K element against 8 rows of qt (no horizontal sums).
// Invariants: k rows hold dk floats, dk % 8 == 0 (callers zero-pad); v and acc rows hold dv
// floats, dv % 8 == 0; rs % 8 == 0; `scores` writes s rows up to round_up(nc, 4) (tile
// buffers are kAttnMaxTile cells long) and, on the transposed path, reads k rows that far
// and writes s lanes up to round_up(rows, 8).
//   const AttentionKernels& k = attention_kernels(CpuIsa::kAvx2);
//   k.scores(q, qt, kt, dk, rows, rs, nc, scale, s);
#pragma once

#include "backend/f16_attention_row.h"
#include <cstddef>
#include <cstdint>

#include "backend/cpu/isa.h"

namespace paddock::cpu {

inline constexpr int kAttnMaxTile = 64;
inline constexpr int kAttnDotRows = 4;

// The cache rows of a tile: cell j < cells of kv head h < heads starts at
// src + j * cell_stride + h * head_stride and holds n elements of the cache type.
struct TileRows {
  const uint8_t* src;
  size_t cell_stride, head_stride;
  int heads, cells;
  int64_t n;
};
// Converts every row of t (cells outer, heads inner: the order the cache stores them) to
// dst + (h * kAttnMaxTile + j) * dst_row, zero-padded from n to dst_row floats.
using TileToF32 = void (*)(const TileRows& t, float* dst, int64_t dst_row);

// Decode straight from the cache: scores (rows <= kAttnDotRows) and pv as below over the
// cells of one kv head's rows in the cache (k.heads == v.heads == 1, nc = cells; k.n and v.n
// multiples of 8), converting rows in registers, with the same results as over the converted
// tile. Each K/V row serves only a few query rows, so writing and reloading an F32 tile cost
// more than the arithmetic.
struct DirectKernels {
  void (*scores)(const float* q, const TileRows& k, int64_t rs, float scale, float* s);
  void (*pv)(const float* p, int64_t rs, const TileRows& v, int rows, const float* c, float* acc);
};

struct AttentionKernels {
  // s[j * rs + r] = scale * dot(query row r, k row j) for r < rows, j < nc (s's padding
  // lanes are left undefined). Reads q if rows <= kAttnDotRows, else qt.
  void (*scores)(const float* q, const float* qt, const float* k, int64_t dk, int rows, int64_t rs, int nc,
                 float scale, float* s);
  // One online-softmax step for the rs rows: cell j is visible to row r iff j <= lim[r]
  // (whatever s holds for the others). m[r] becomes max(m[r], visible scores), c[r] the
  // factor exp(old m - new m) that rescales what was accumulated so far (1 when nothing new
  // is visible, 0 when nothing was seen before), l[r] = l[r] * c[r] + sum of p, and s is
  // replaced by p = exp(s - m[r]) for visible cells, 0 for the others (j < nc). A row that
  // has seen nothing yet keeps m = -inf and l = 0.
  void (*softmax)(float* s, int64_t rs, int nc, const int32_t* lim, float* m, float* l, float* c);
  // acc[r * dv + i] = acc[r * dv + i] * c[r] + sum over j < nc of p[j * rs + r] * v[j * dv + i],
  // for r < rows.
  void (*pv)(const float* p, int64_t rs, const float* v, int64_t dv, int rows, int nc, const float* c,
             float* acc);
  // A K or V tile to F32, one entry per cache type (F32, F16, Q8_0, Q4_0).
  TileToF32 f32_tile, f16_tile, q8_0_tile, q4_0_tile;
  // Decode straight from an F16 or a Q8_0 cache (DirectKernels); nulls where a path has none
  // (the driver then converts tiles).
  DirectKernels f16_direct, q8_0_direct;
  // llama.cpp's flash-attention roundings over an F16 cache (backend/f16_attention_row.h);
  // nullptr: the scalar ones.
  const F16Ops* f16_rows;
};

const AttentionKernels& attention_kernels_scalar();
// nullptr on non-x86 builds.
const AttentionKernels* attention_kernels_avx2();
// The table for a path: avx512 uses the AVX2 kernels.
const AttentionKernels& attention_kernels(CpuIsa isa);

}  // namespace paddock::cpu
