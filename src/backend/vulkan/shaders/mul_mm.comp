#version 450
// dst[m, j, b] = sum_k src0[k, m] * src1[k, j, b] for many columns (prompts): a workgroup
// computes a BM x BN tile of dst, walking k BK values at a time. Each step, the workgroup
// dequantizes a BM x BK tile of weights and loads a BK x BN tile of activations into shared
// memory (each weight read once per BN columns, where mul_mat.comp read it once per 8), then
// every invocation adds the products of its TM rows by its TN columns. Rows and columns past
// the end are read clamped and not written. Needs k a multiple of BK.
#include "common.glsl"
#include "types.glsl"

const uint BM = 64, BN = 64, BK = 32, TM = 4, TN = 4;
const uint WG = (BM / TM) * (BN / TN);
layout(local_size_x = WG) in;
layout(std430, binding = 3) readonly buffer BV { vec4 B_v4[]; };
DEFINE_ELEM(A, TYPE)
DEFINE_QUAD(A, TYPE)

// Transposed tiles: sa[k][r] is row r's value k, sb[k][c] column c's; a vec4 holds four
// adjacent rows (columns), what one invocation multiplies.
shared vec4 sa[BK][BM / 4];
shared vec4 sb[BK][BN / 4];

void main() {
  const uint k_len = t_ne(T_SRC0, 0), rows = t_ne(T_SRC0, 1);
  const uint cols = t_ne(T_SRC1, 1), batches = t_ne(T_SRC1, 2);
  const uint row_tiles = (rows + BM - 1) / BM, col_tiles = (cols + BN - 1) / BN;
  const uint g = group_index();
  if (g >= row_tiles * col_tiles * batches) return;
  const uint m0 = (g % row_tiles) * BM, n0 = ((g / row_tiles) % col_tiles) * BN;
  const uint b = g / (row_tiles * col_tiles);
  const uint tid = gl_LocalInvocationID.x;
  const uint tm = tid % (BM / TM), tn = tid / (BM / TM);  // this invocation's rows / columns

  // Loads: invocation tid dequantizes quads tid and tid + WG of the weight tile (row q / 8,
  // values 4(q % 8)..: a row's quads are adjacent invocations) and reads 8 activations of
  // column tid / 4 (values 8(tid % 4)..).
  const uint xs = t_nb(T_SRC1, 0);
  const uint lc = tid / 4, lk = 8 * (tid % 4);
  const uint x = t_at(T_SRC1, min(n0 + lc, cols - 1), b, 0);
  const bool x_dense = xs == 4 && (x & 15) == 0;

  vec4 acc[TN];
  for (uint j = 0; j < TN; ++j) acc[j] = vec4(0.0);
  for (uint k0 = 0; k0 < k_len; k0 += BK) {
    [[unroll]] for (uint h = 0; h < 2; ++h) {
      const uint q = tid + h * WG, r = q / (BK / 4), kq = q % (BK / 4);
      const vec4 v = A_quad(t_at(T_SRC0, min(m0 + r, rows - 1), 0, 0), (k0 >> 2) + kq);
      [[unroll]] for (uint e = 0; e < 4; ++e) sa[4 * kq + e][r >> 2][r & 3] = v[e];
    }
    const uint xa = x + (k0 + lk) * xs;
    [[unroll]] for (uint e = 0; e < 8; e += 4) {
      const vec4 v = x_dense ? B_v4[(xa >> 4) + e / 4]
                             : vec4(B_f[(xa + e * xs) >> 2], B_f[(xa + (e + 1) * xs) >> 2],
                                    B_f[(xa + (e + 2) * xs) >> 2], B_f[(xa + (e + 3) * xs) >> 2]);
      [[unroll]] for (uint i = 0; i < 4; ++i) sb[lk + e + i][lc >> 2][lc & 3] = v[i];
    }
    barrier();
    [[unroll]] for (uint k = 0; k < BK; ++k) {
      const vec4 a = sa[k][tm], c = sb[k][tn];
      [[unroll]] for (uint j = 0; j < TN; ++j) acc[j] += a * c[j];
    }
    barrier();
  }
  const uint nb0 = t_nb(T_DST, 0);
  for (uint j = 0; j < TN; ++j) {
    const uint n = n0 + TN * tn + j;
    if (n >= cols) break;
    const uint d = t_at(T_DST, n, b, 0);
    for (uint i = 0; i < TM; ++i) {
      const uint m = m0 + TM * tm + i;
      if (m < rows) D_f[(d + m * nb0) >> 2] = acc[j][i];
    }
  }
}
