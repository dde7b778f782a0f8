#version 450
// dst[m, j, b] = sum_k src0[k, m] * src1[k, j, b] for many columns (prompts): a workgroup
// computes a BM x BN tile of dst, walking k BK values at a time. Each step, the workgroup
// dequantizes a BM x BK tile of weights and loads a BK x BN tile of activations into shared
// memory (each weight read once per BN columns, where mul_mat.comp read it once per 8), then
// every invocation adds the products of its TM rows by its TN columns. Rows and columns past
// the end are read clamped and not written. Needs k a multiple of BK.
// With ID, MUL_MAT_ID's product for prompts, grouped by expert (mul_mat_id.comp's contract):
// a workgroup takes a BM-row tile of one expert's matrix and BN of the (slot, token) pairs
// routed to it, the BN after the first c * BN in token order, so each expert's rows are read
// once per BN of its tokens instead of once per token. Workgroups of expert n_expert write the
// zeros of slots past a token's last expert. Op word 0 = the column tiles per expert.
// With INT_DOT, the tiles hold integer levels: the weights' (mm_idot.glsl) and the
// activations' as quantize_q8.comp rounded them; each step dots them four bytes at a time and
// applies the scales once per 32 values (16 for Q6_K), as the CPU's quantized products do.
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "common.glsl"
#include "types.glsl"
#ifdef ID
#include "moe.glsl"
#endif

const uint BM = 64, BN = 64, BK = 32, TM = 4, TN = 4;
const uint WG = (BM / TM) * (BN / TN);
layout(local_size_x = WG) in;
layout(std430, binding = 3) readonly buffer BV { vec4 B_v4[]; };
#ifdef INT_DOT
#include "mm_idot.glsl"
// Transposed tiles: sa[w][r] is word w of row r's 32 levels, sb[w][c] of column c's; a
// uvec4 (vec4) holds four adjacent rows (columns), what one invocation multiplies. Rows'
// scales as block_scales gives them; columns' d and d x (sum of levels).
shared uvec4 sa[BK / 4][BM / 4];
shared uvec4 sb[BK / 4][BN / 4];
shared vec4 sa_d0[BM / 4], sa_d1[BM / 4], sa_m[BM / 4], sb_d[BN / 4], sb_s[BN / 4];
#ifdef TYPE_Q2_K
shared vec4 sa_n0[BM / 4], sa_n1[BM / 4];  // block_mins
#endif
#else
DEFINE_ELEM(A, TYPE)
DEFINE_QUAD(A, TYPE)
// Transposed tiles: sa[k][r] is row r's value k, sb[k][c] column c's; a vec4 holds four
// adjacent rows (columns), what one invocation multiplies.
shared vec4 sa[BK][BM / 4];
shared vec4 sb[BK][BN / 4];
#endif

#ifdef ID
const uint NO_SLOT = 0xFFFFFFFFu;
shared uint col_token[BN], col_slot[BN];  // the tile's (slot, token) pairs
shared uint by_subgroup[WG];

// Gate weight of expert e for token t.
float gate_at(uint e, uint t) { return C_f[(t_at(T_SRC2, t, 0, 0) + e * t_nb(T_SRC2, 0)) >> 2]; }

// Token t's slot for expert e (moe_slots' order: heavier first, ties to the lower expert), or
// NO_SLOT past the k slots.
uint slot_of(uint e, uint t, uint k) {
  const uint n = t_ne(T_SRC2, 0);
  const float w = gate_at(e, t);
  uint rank = 0;
  for (uint f = 0; f < n && rank < k; ++f) {
    const float v = gate_at(f, t);
    if (v != 0.0 && slot_before(v, f, w, e)) ++rank;
  }
  return rank < k ? rank : NO_SLOT;
}

// The tile's pairs: tokens routed to expert e (a nonzero gate weight), numbered in token order,
// those numbered [c * BN, c * BN + BN). Returns how many (uniform across the workgroup).
uint gather_columns(uint e, uint c, uint tokens, uint k) {
  const uint tid = gl_LocalInvocationID.x;
  uint seen = 0;
  for (uint base = 0; base < tokens && seen < (c + 1) * BN; base += WG) {
    const uint t = base + tid;
    const uint routed = t < tokens && gate_at(e, t) != 0.0 ? 1 : 0;
    const uint before = subgroupExclusiveAdd(routed);
    if (gl_SubgroupInvocationID == gl_SubgroupSize - 1) by_subgroup[gl_SubgroupID] = before + routed;
    barrier();
    uint at = seen + before, chunk = 0;
    for (uint i = 0; i < gl_NumSubgroups; ++i) {
      if (i < gl_SubgroupID) at += by_subgroup[i];
      chunk += by_subgroup[i];
    }
    if (routed == 1 && at >= c * BN && at < (c + 1) * BN) col_token[at - c * BN] = t;
    barrier();
    seen += chunk;
  }
  const uint count = seen > c * BN ? min(BN, seen - c * BN) : 0;
  if (tid < count) col_slot[tid] = slot_of(e, col_token[tid], k);
  barrier();
  return count;
}
#endif

void main() {
  const uint k_len = t_ne(T_SRC0, 0), rows = t_ne(T_SRC0, 1);
  const uint row_tiles = (rows + BM - 1) / BM;
  const uint g = group_index();
  const uint tid = gl_LocalInvocationID.x;
  const uint tm = tid % (BM / TM), tn = tid / (BM / TM);  // this invocation's rows / columns
  const uint lc = tid / 4;
#ifdef ID
  const uint n_expert = t_ne(T_SRC2, 0), slots = t_ne(T_DST, 1), tokens = t_ne(T_DST, 2);
  const uint col_tiles = pu(0);
  if (g >= row_tiles * col_tiles * (n_expert + 1)) return;  // whole workgroups
  const uint m0 = (g % row_tiles) * BM, c = (g / row_tiles) % col_tiles, e = g / (row_tiles * col_tiles);
  if (e == n_expert) {  // the zeros of slots past each of tokens [c * BN, c * BN + BN)'s last expert
    const uint t = c * BN + tid;
    if (tid < BN && t < tokens) {
      uint used = 0;
      for (uint f = 0; f < n_expert; ++f) used += gate_at(f, t) != 0.0 ? 1 : 0;
      col_slot[tid] = min(used, slots);
    }
    barrier();
    for (uint i = tid; i < BN * BM; i += WG) {
      const uint tt = c * BN + i / BM, m = m0 + i % BM;
      if (tt >= tokens || m >= rows) continue;
      for (uint s = col_slot[i / BM]; s < slots; ++s) D_f[(t_at(T_DST, s, tt, 0) + m * t_nb(T_DST, 0)) >> 2] = 0.0;
    }
    return;
  }
  const uint cols = gather_columns(e, c, tokens, slots);
  if (cols == 0) return;
  const uint xc = min(lc, cols - 1), xslot = col_slot[xc] == NO_SLOT ? 0 : col_slot[xc];
  const uint x1 = t_ne(T_SRC1, 1) == 1 ? 0 : xslot, x2 = col_token[xc];
  const uint w0 = t_at(T_SRC0, 0, e, 0);
#else
  const uint cols = t_ne(T_SRC1, 1), batches = t_ne(T_SRC1, 2);
  const uint col_tiles = (cols + BN - 1) / BN;
  if (g >= row_tiles * col_tiles * batches) return;
  const uint m0 = (g % row_tiles) * BM, n0 = ((g / row_tiles) % col_tiles) * BN;
  const uint b = g / (row_tiles * col_tiles);
  const uint x1 = min(n0 + lc, cols - 1), x2 = b;
  const uint w0 = t_off(T_SRC0);
#endif

  vec4 acc[TN];
  for (uint j = 0; j < TN; ++j) acc[j] = vec4(0.0);
#ifdef INT_DOT
  // Loads: invocation tid takes level words 2q, 2q + 1 (values 8q.., q = tid % 4) of weight
  // row tid / 4 and of column tid / 4; the first of each four their scales.
  const uint q = tid % 4, wr = w0 + min(m0 + lc, rows - 1) * t_nb(T_SRC0, 1);
  const uint xq = xq_column(x1 + t_ne(T_SRC1, 1) * x2, k_len), xq_scales = xq + k_len / 4;
  for (uint blk = 0; blk < k_len / BK; ++blk) {
    const uvec2 l = block_levels(wr, blk, q);
    sa[2 * q][lc >> 2][lc & 3] = l.x;
    sa[2 * q + 1][lc >> 2][lc & 3] = l.y;
    sb[2 * q][lc >> 2][lc & 3] = XQ_u[xq + 8 * blk + 2 * q];
    sb[2 * q + 1][lc >> 2][lc & 3] = XQ_u[xq + 8 * blk + 2 * q + 1];
    if (q == 0) {
      const vec3 s = block_scales(wr, blk);
      sa_d0[lc >> 2][lc & 3] = s.x;
      sa_d1[lc >> 2][lc & 3] = s.y;
      sa_m[lc >> 2][lc & 3] = s.z;
      sb_d[lc >> 2][lc & 3] = XQ_f[xq_scales + 2 * blk];
      sb_s[lc >> 2][lc & 3] = XQ_f[xq_scales + 2 * blk + 1];
#ifdef TYPE_Q2_K
      const vec2 n = block_mins(wr, blk);
      sa_n0[lc >> 2][lc & 3] = n.x;
      sa_n1[lc >> 2][lc & 3] = n.y;
#endif
    }
    barrier();
    ivec4 s0[TN], s1[TN];  // the level dots of values 0..15 and 16..31
    ivec2 h[TN];           // the columns' level sums of the halves (Q2_K)
    [[unroll]] for (uint j = 0; j < TN; ++j) {
      s0[j] = ivec4(0);
      s1[j] = ivec4(0);
      h[j] = ivec2(0);
    }
    [[unroll]] for (uint w = 0; w < BK / 4; ++w) {
      const uvec4 a = sa[w][tm], c = sb[w][tn];
#ifdef TYPE_Q2_K
      [[unroll]] for (uint j = 0; j < TN; ++j) h[j][w / (BK / 8)] += sdot4(0x01010101u, c[j]);
#endif
      [[unroll]] for (uint j = 0; j < TN; ++j) {
        [[unroll]] for (uint i = 0; i < TM; ++i) {
          if (w < BK / 8) s0[j][i] += sdot4(a[i], c[j]);
          else s1[j][i] += sdot4(a[i], c[j]);
        }
      }
    }
    const vec4 d0 = sa_d0[tm], d1 = sa_d1[tm], m = sa_m[tm], cd = sb_d[tn], cs = sb_s[tn];
#ifdef TYPE_Q2_K
    const vec4 n0 = sa_n0[tm], n1 = sa_n1[tm];
    [[unroll]] for (uint j = 0; j < TN; ++j) {
      acc[j] += cd[j] * (d0 * vec4(s0[j]) + d1 * vec4(s1[j]) + n0 * float(h[j].x) + n1 * float(h[j].y));
    }
#else
    [[unroll]] for (uint j = 0; j < TN; ++j) acc[j] += cd[j] * (d0 * vec4(s0[j]) + d1 * vec4(s1[j])) + m * cs[j];
#endif
    barrier();
  }
#else
  // Loads: invocation tid dequantizes quads tid and tid + WG of the weight tile (row q / 8,
  // values 4(q % 8)..: a row's quads are adjacent invocations) and reads 8 activations of
  // column tid / 4 (values 8(tid % 4)..).
  const uint x = t_at(T_SRC1, x1, x2, 0), xs = t_nb(T_SRC1, 0), lk = 8 * (tid % 4);
  const bool x_dense = xs == 4 && (x & 15) == 0;
  for (uint k0 = 0; k0 < k_len; k0 += BK) {
    [[unroll]] for (uint h = 0; h < 2; ++h) {
      const uint q = tid + h * WG, r = q / (BK / 4), kq = q % (BK / 4);
      const vec4 v = A_quad(w0 + min(m0 + r, rows - 1) * t_nb(T_SRC0, 1), (k0 >> 2) + kq);
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
#endif
  const uint nb0 = t_nb(T_DST, 0);
  for (uint j = 0; j < TN; ++j) {
#ifdef ID
    const uint n = TN * tn + j;
    if (n >= cols) break;
    if (col_slot[n] == NO_SLOT) continue;
    const uint d = t_at(T_DST, col_slot[n], col_token[n], 0);
#else
    const uint n = n0 + TN * tn + j;
    if (n >= cols) break;
    const uint d = t_at(T_DST, n, b, 0);
#endif
    for (uint i = 0; i < TM; ++i) {
      const uint m = m0 + TM * tm + i;
      if (m < rows) D_f[(d + m * nb0) >> 2] = acc[j][i];
    }
  }
}
