#version 450
// dst[m, j, b] = sum_k src0[k, m] * src1[k, j, b] for one column: decode's product, bound by
// reading the weights once (with INT_DOT, up to 8 columns: a workgroup per row and column).
// A workgroup takes one row; its invocations split each quant block
// into PARTS parts of whole words (adjacent invocations read adjacent words, so a subgroup
// reads whole cache lines) and walk the row's blocks WG / PARTS at a time. Each part
// dequantizes as integers, keeps the dot with the activations per sub-block scale and applies
// the scales once per part. The partial dots are summed by subgroup, then across subgroups.
// (Measured on an H100: the block loop unrolled two or four times was no faster.) With ID,
// MUL_MAT_ID's product on a GPU: a workgroup per (row, slot, token) of the slot's expert.
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "common.glsl"
#include "types.glsl"

const uint WG = 64;
layout(local_size_x = WG) in;
layout(std430, binding = 3) readonly buffer BV { vec4 B_v4[]; };

// The weights' words: from src0 (binding A), or with GLU, where `second` is set, the up
// rows from src2 (binding C). `second` is a constant at every call, so the choice folds away.
DEFINE_WORD16(A)
#ifdef GLU
DEFINE_WORD16(C)
#define W_U(i) (second ? C_u[i] : A_u[i])
#define W_B(i) (second ? C_b[i] : A_b[i])
#define W_H(i) (second ? C_h[i] : A_h[i])
#define W_WORD2(at) (second ? C_word2(at) : A_word2(at))
#else
#define W_U(i) A_u[i]
#define W_B(i) A_b[i]
#define W_H(i) A_h[i]
#define W_WORD2(at) A_word2(at)
#endif

#include "quant_parts.glsl"
#ifdef INT_DOT
#include "mat_vec_idot.glsl"
#else
// Four activations from byte x (consecutive elements): one 16-byte load where the column is
// dense and aligned.
uint xs;
bool x_dense;
vec4 x4(uint x) {
  if (x_dense) return B_v4[x >> 4];
  return vec4(B_f[x >> 2], B_f[(x + xs) >> 2], B_f[(x + 2 * xs) >> 2], B_f[(x + 3 * xs) >> 2]);
}
vec4 bytes4(uint w) { return vec4(unpack8(w)); }

// Per type: QK values in BLOCK bytes, split into PARTS parts; part_dot(blk, p, x, second) is the
// dot of part p of the weight block at byte blk with the activations from byte x.
#if defined(TYPE_Q4_K) || defined(TYPE_Q5_K)
// 16 parts of a 256-value block: part p takes nibble word j = p % 8 of sub-block pairs g =
// p / 8 and p / 8 + 2 (the pair's 32 bytes hold sub-block 2g in the low nibbles, 2g + 1 in the
// high ones), so eight adjacent invocations read 32 adjacent activations (whole cache lines;
// the H100 ran the Q6_K kernel, laid out so, at 1.3 TB/s against 0.8 for Q4_K laid out
// otherwise). The scales come as three words.
float part_dot(uint blk, uint p, uint x, bool second) {
  const uint j = p & 7, g0 = p >> 3;
  const uint sw[3] = {W_U((blk + 4) >> 2), W_U((blk + 8) >> 2), W_U((blk + 12) >> 2)};
  float dq = 0.0, dmin = 0.0;
  [[unroll]] for (uint k = 0; k < 2; ++k) {
    const uint g = g0 + 2 * k, xa = x + (64 * g + 4 * j) * xs;
    const vec4 xl = x4(xa), xh = x4(xa + 32 * xs);
    uint l, h;
    levels_k4(blk, j, g, second, l, h);
    float sc[2], mn[2];
    scale_min_k4(sw, g0, k, sc, mn);
    dq += sc[0] * dot(bytes4(l), xl) + sc[1] * dot(bytes4(h), xh);
    dmin += mn[0] * dot(xl, vec4(1.0)) + mn[1] * dot(xh, vec4(1.0));
  }
  const vec2 dm = unpackHalf2x16(W_U(blk >> 2));
  return dm.x * dq - dm.y * dmin;
}
#elif defined(TYPE_Q6_K)
// 16 parts of a 256-value block: part p takes values l0 = 4(p % 8).. of each quarter of half
// p / 8 (low bytes at l0 and 32 + l0, high bits at l0).
float part_dot(uint blk, uint p, uint x, bool second) {
  const uint n = p >> 3, l0 = 4 * (p & 7);
  const uint xa = x + (128 * n + l0) * xs;
  const uint qa = W_WORD2(blk + 64 * n + l0), qb = W_WORD2(blk + 64 * n + 32 + l0);
  const uint qh = W_WORD2(blk + 128 + 32 * n + l0);
  const uint q[4] = q6_k_levels(qa, qb, qh);
  const uint sc = blk + 192 + 8 * n + (l0 >> 4);
  float acc = 0.0;
  [[unroll]] for (uint k = 0; k < 4; ++k) {
    acc += float(int8_t(W_B(sc + 2 * k))) * dot(bytes4(q[k]) - 32.0, x4(xa + 32 * k * xs));
  }
  return f16_at(W_H((blk + 208) >> 1)) * acc;
}
#elif defined(TYPE_Q2_K) || defined(TYPE_Q3_K)
// 16 parts of a 256-value block, one per 16-value group (quant_parts.glsl).
float part_dot(uint blk, uint g, uint x, bool second) {
  const uint xa = x + (128 * (g >> 3) + 32 * ((g >> 1) & 3) + 16 * (g & 1)) * xs;
  float dq = 0.0, xsum = 0.0;
  [[unroll]] for (uint k = 0; k < 4; ++k) {
    const vec4 xv = x4(xa + 4 * k * xs);
    dq += dot(bytes4(group_levels(blk, g, k, second)), xv);
    xsum += dot(xv, vec4(1.0));
  }
  const vec2 sm = group_scale_min(blk, g, second);
#ifdef TYPE_Q2_K
  return sm.x * dq - sm.y * xsum;
#else
  return sm.x * (dq - 4.0 * xsum);
#endif
}
#elif defined(TYPE_IQ4_NL) || defined(TYPE_IQ4_XS) || defined(TYPE_MXFP4)
#if defined(TYPE_MXFP4)
#define LEVELS MXFP4_LEVELS
#else
#define LEVELS IQ4_NL_LEVELS
#endif
vec4 levels(uint w) { return vec4(LEVELS[w & 15], LEVELS[(w >> 8) & 15], LEVELS[(w >> 16) & 15], LEVELS[(w >> 24) & 15]); }
float part_dot(uint blk, uint p, uint x, bool second) {
  const uint at = part_at(blk, p), xa = x + part_value(p) * xs;
  const uint w0 = quad_bytes(at, second), w1 = quad_bytes(at + 4, second);
  const float dq = dot(levels(w0), x4(xa)) + dot(levels(w1), x4(xa + 4 * xs)) +
                   dot(levels(w0 >> 4), x4(xa + 16 * xs)) + dot(levels(w1 >> 4), x4(xa + 20 * xs));
  return part_scale(blk, p, second) * dq;
}
#elif defined(TYPE_Q8_0)
// 4 parts of a 32-value block: 8 values each.
float part_dot(uint blk, uint p, uint x, bool second) {
  const uint at = blk + 2 + 8 * p, xa = x + 8 * p * xs;
  return f16_at(W_H(blk >> 1)) * (dot(signed_bytes(W_WORD2(at)), x4(xa)) + dot(signed_bytes(W_WORD2(at + 4)), x4(xa + 4 * xs)));
}
#elif defined(TYPE_Q4_0) || defined(TYPE_Q4_1) || defined(TYPE_Q5_0) || defined(TYPE_Q5_1)
// 2 parts of a 32-value block: part p takes quant bytes 8p.. (values 8p.. in the low nibbles,
// 16 + 8p.. in the high ones) and, for Q5_0 and Q5_1, those values' fifth bits from the block's
// 32-bit mask at QH.
float part_dot(uint blk, uint p, uint x, bool second) {
  const uint at = blk + QS + 8 * p, xa = x + 8 * p * xs;
  const vec4 xv[4] = {x4(xa), x4(xa + 4 * xs), x4(xa + 16 * xs), x4(xa + 20 * xs)};
  const float xsum = dot(xv[0] + xv[1] + xv[2] + xv[3], vec4(1.0));
  const uint q[4] = part_levels(blk, p, at, second);
  const float dq = dot(bytes4(q[0]), xv[0]) + dot(bytes4(q[1]), xv[1]) + dot(bytes4(q[2]), xv[2]) + dot(bytes4(q[3]), xv[3]);
#if defined(TYPE_Q4_0)
  return f16_at(W_H(blk >> 1)) * (dq - 8.0 * xsum);
#elif defined(TYPE_Q5_0)
  return f16_at(W_H(blk >> 1)) * (dq - 16.0 * xsum);
#else
  const vec2 dm = unpackHalf2x16(W_WORD2(blk));  // d * q + m
  return dm.x * dq + dm.y * xsum;
#endif
}
#endif

#endif  // INT_DOT

// With GLU, each row's gate (src0) and up (src2) products, written as act(gate) * up
// (glu.comp's formula): the FFN's two products and its GLU in one dispatch, sharing each
// part's activation loads. With ADD, the product plus src2 (the residual add after it).
// (Measured on an H100: two or four rows per workgroup sharing the activation loads were
// slower, 8B Q4_K_M decode 79.5 and 68.0 tok/s against 83.7.)
#ifdef GLU
#include "glu.glsl"
const uint NW = 2;
#else
const uint NW = 1;
#endif
shared float by_subgroup[NW][WG];

#ifdef ID
// MUL_MAT_ID (mul_mat_id.comp's contract): the row of token t's slot s's expert; src1 has one
// column per slot or one shared by all; 0 for a slot without an expert.
#include "moe.glsl"
DEFINE_SLOTS(C, T_SRC2)
#endif

void main() {
  const uint rows = t_ne(T_SRC0, 1), cols = t_ne(T_DST, 1), batches = t_ne(T_DST, 2);
  const uint g = group_index();
  if (g >= rows * cols * batches) return;  // whole workgroups: barriers stay uniform
#ifdef ID
  const uint m = g % rows, j = (g / rows) % cols, b = g / (rows * cols);
#else  // a row's columns adjacent (several sequences' decode): its words come from cache after the first
  const uint j = g % cols, m = (g / cols) % rows, b = g / (rows * cols);
#endif
  const uint tid = gl_LocalInvocationID.x, p = tid % PARTS;
#ifndef INT_DOT
  xs = t_nb(T_SRC1, 0);
#endif
#ifdef ID
  find_slots(b, cols);
  const bool live = j < slot_count(cols);
  const uint w = live ? t_at(T_SRC0, m, uint(slot_expert[j]), 0) : 0;
  const uint xj = t_ne(T_SRC1, 1) == 1 ? 0 : j;
#else
  const bool live = true;
  const uint w = t_at(T_SRC0, m, 0, 0), xj = j;
#endif
  const uint x0 = t_at(T_SRC1, xj, b, 0);
#ifdef INT_DOT  // src1's columns quantized in order (quantize_q8.comp)
  const uint k = t_ne(T_SRC0, 0);
  set_column(xq_column(xj + t_ne(T_SRC1, 1) * b, k), k);
#else
  x_dense = xs == 4 && (x0 & 15) == 0;
#endif
  const uint blocks = live ? t_ne(T_SRC0, 0) / QK : 0;
#ifdef GLU
  const uint row_at[NW] = {w, t_at(T_SRC2, m, 0, 0)};
#else
  const uint row_at[NW] = {w};
#endif
  float acc[NW];
  [[unroll]] for (uint r = 0; r < NW; ++r) acc[r] = 0.0;
  for (uint i = tid / PARTS; i < blocks; i += WG / PARTS) {
#ifdef INT_DOT
    const uint x = i * QK;  // the value the block starts at
#else
    const uint x = x0 + i * QK * xs;
#endif
    [[unroll]] for (uint r = 0; r < NW; ++r) acc[r] += part_dot(row_at[r] + i * BLOCK, p, x, r == 1);
  }
  [[unroll]] for (uint r = 0; r < NW; ++r) {
    const float s = subgroupAdd(acc[r]);
    if (subgroupElect()) by_subgroup[r][gl_SubgroupID] = s;
  }
  barrier();
  if (tid == 0) {
    float sum[NW];
    [[unroll]] for (uint r = 0; r < NW; ++r) {
      sum[r] = by_subgroup[r][0];
      for (uint s = 1; s < gl_NumSubgroups; ++s) sum[r] += by_subgroup[r][s];
    }
    const uint at = (t_at(T_DST, j, b, 0) + m * t_nb(T_DST, 0)) >> 2;
#if defined(GLU)
    D_f[at] = glu(sum[0], sum[1]);
#elif defined(ADD)
    D_f[at] = C_f[(t_at(T_SRC2, j, b, 0) + m * t_nb(T_SRC2, 0)) >> 2] + sum[0];
#else
    D_f[at] = sum[0];
#endif
  }
}
