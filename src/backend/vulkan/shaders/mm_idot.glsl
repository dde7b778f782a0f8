// mul_mm.comp's weight tiles for integer dot products (INT_DOT): per type, the 32 values of
// block b (values 32b..) of the row at byte r as signed-byte levels, and their scales, so a
// tile's products are dots of levels with quantize_q8.comp's activation levels. Built on the
// decode kernel's level unpacking (quant_parts.glsl):
// - block_levels(r, b, q): words 2q and 2q + 1 of the 8 (values 8q..8q + 7);
// - block_scales(r, b): (d0, d1, m), the scale of values 0..15 and of 16..31 (apart for
//   16-value groups) and the weight of the activations' sum (a min or an offset): the
//   block's dot is xd (d0 s0 + d1 s1) + m xs for the level dots s0, s1 of the halves;
// - with Q2_K, block_mins(r, b): the weights of the halves' activation level sums (its
//   16-value groups' mins), added as xd (n0 h0 + n1 h1).
#include "idot.glsl"
DEFINE_WORD16(A)
#define W_U(i) A_u[i]
#define W_B(i) A_b[i]
#define W_H(i) A_h[i]
#define W_WORD2(at) A_word2(at)
#include "quant_parts.glsl"

#if defined(TYPE_Q4_K) || defined(TYPE_Q5_K)
// Sub-block s = b % 8 is pair s / 2's low (s even) or high levels; nibble words 2q, 2q + 1.
uvec2 block_levels(uint r, uint b, uint q) {
  const uint blk = r + (b >> 3) * BLOCK, s = b & 7;
  uint l0, h0, l1, h1;
  levels_k4(blk, 2 * q, s >> 1, false, l0, h0);
  levels_k4(blk, 2 * q + 1, s >> 1, false, l1, h1);
  return (s & 1) == 0 ? uvec2(l0, l1) : uvec2(h0, h1);
}
vec3 block_scales(uint r, uint b) {
  const uint blk = r + (b >> 3) * BLOCK, s = b & 7, g = s >> 1;
  const uint sw[3] = {A_u[(blk + 4) >> 2], A_u[(blk + 8) >> 2], A_u[(blk + 12) >> 2]};
  float sc[2], mn[2];
  scale_min_k4(sw, g & 1, g >> 1, sc, mn);
  const vec2 dm = unpackHalf2x16(A_u[blk >> 2]);
  const float d = dm.x * sc[s & 1];
  return vec3(d, d, -dm.y * mn[s & 1]);
}
#elif defined(TYPE_Q6_K)
// Quarter k = b % 4 of half n = (b / 4) % 2: q6_k_levels' quarter k of values 8q.. and
// 8q + 4.., less 32.
uvec2 block_levels(uint r, uint b, uint q) {
  const uint blk = r + (b >> 3) * BLOCK, n = (b >> 2) & 1, k = b & 3;
  uvec2 l;
  [[unroll]] for (uint i = 0; i < 2; ++i) {
    const uint l0 = 8 * q + 4 * i;
    const uint v[4] = q6_k_levels(A_word2(blk + 64 * n + l0), A_word2(blk + 64 * n + 32 + l0),
                                  A_word2(blk + 128 + 32 * n + l0));
    l[i] = less_bytes(v[k], 32);
  }
  return l;
}
vec3 block_scales(uint r, uint b) {
  const uint blk = r + (b >> 3) * BLOCK, sc = blk + 192 + 8 * ((b >> 2) & 1) + 2 * (b & 3);
  const float d = f16_at(A_h[(blk + 208) >> 1]);
  return vec3(d * float(int8_t(A_b[sc])), d * float(int8_t(A_b[sc + 1])), 0.0);
}
#elif defined(TYPE_Q2_K) || defined(TYPE_Q3_K)
// Block b % 8 of a 256-value block holds groups 2(b % 8) (values 0..15) and 2(b % 8) + 1.
uint first_group(uint b) { return 8 * ((b >> 2) & 1) + 2 * (b & 3); }
uvec2 block_levels(uint r, uint b, uint q) {
  const uint blk = r + (b >> 3) * BLOCK, g = first_group(b) + (q >> 1), k = 2 * (q & 1);
  const uvec2 l = uvec2(group_levels(blk, g, k, false), group_levels(blk, g, k + 1, false));
#ifdef TYPE_Q3_K
  return uvec2(less_bytes(l.x, 4), less_bytes(l.y, 4));
#else
  return l;
#endif
}
vec3 block_scales(uint r, uint b) {
  const uint blk = r + (b >> 3) * BLOCK, g = first_group(b);
  return vec3(group_scale_min(blk, g, false).x, group_scale_min(blk, g + 1, false).x, 0.0);
}
#ifdef TYPE_Q2_K
vec2 block_mins(uint r, uint b) {
  const uint blk = r + (b >> 3) * BLOCK, g = first_group(b);
  return -vec2(group_scale_min(blk, g, false).y, group_scale_min(blk, g + 1, false).y);
}
#endif
#elif defined(TYPE_Q8_0)
uvec2 block_levels(uint r, uint b, uint q) {
  const uint at = r + b * BLOCK + 2 + 8 * q;
  return uvec2(A_word2(at), A_word2(at + 4));
}
vec3 block_scales(uint r, uint b) {
  const float d = f16_at(A_h[(r + b * BLOCK) >> 1]);
  return vec3(d, d, 0.0);
}
#elif defined(TYPE_IQ4_NL) || defined(TYPE_IQ4_XS) || defined(TYPE_MXFP4)
// Part p = 2(b % groups) + q % 2 (IQ4_XS: 8 groups of 32 a block; IQ4_NL, MXFP4: blocks of
// 32): its low (q < 2) or high nibbles, looked up as signed bytes.
const uint GROUPS = QK / 32;
uvec2 block_levels(uint r, uint b, uint q) {
  const uint at = part_at(r + (b / GROUPS) * BLOCK, 2 * (b % GROUPS) + (q & 1));
  const uvec2 n = uvec2(quad_bytes(at, false), quad_bytes(at + 4, false)) >> (4 * (q >> 1));
  return uvec2(level_bytes(n.x), level_bytes(n.y));
}
vec3 block_scales(uint r, uint b) {
  const float d = part_scale(r + (b / GROUPS) * BLOCK, 2 * (b % GROUPS), false);
  return vec3(d, d, 0.0);
}
#else  // Q4_0, Q4_1, Q5_0, Q5_1: part_levels' part q % 2, its low (q < 2) or high values
uvec2 block_levels(uint r, uint b, uint q) {
  const uint blk = r + b * BLOCK;
  const uint l[4] = part_levels(blk, q & 1, blk + QS + 8 * (q & 1), false);
  return q < 2 ? uvec2(l[0], l[1]) : uvec2(l[2], l[3]);
}
vec3 block_scales(uint r, uint b) {
  const vec2 dm = unpackHalf2x16(A_word2(r + b * BLOCK));  // Q4_0, Q5_0: d; Q4_1, Q5_1: d, m
#if defined(TYPE_Q4_0)
  return vec3(dm.x, dm.x, -8.0 * dm.x);
#elif defined(TYPE_Q5_0)
  return vec3(dm.x, dm.x, -16.0 * dm.x);
#else
  return vec3(dm.x, dm.x, dm.y);
#endif
}
#endif
