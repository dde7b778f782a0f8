// mul_mm.comp's weight tiles for integer dot products (INT_DOT): per type, the 32 values of
// block b (values 32b..) of the row at byte r as signed-byte levels, and their scales, so a
// tile's products are dots of levels with quantize_q8.comp's activation levels:
// - block_levels(r, b, q): words 2q and 2q + 1 of the 8 (values 8q..8q + 7);
// - block_scales(r, b): (d0, d1, m), the scale of values 0..15 and of 16..31 (apart for
//   Q6_K's 16-value scales) and the weight of the activations' sum (a min or an offset):
//   the block's dot is xd (d0 s0 + d1 s1) + m xs for the level dots s0, s1 of the halves;
// - with Q2_K, block_mins(r, b): the weights of the halves' activation level sums (its
//   16-value groups' mins), added as xd (n0 h0 + n1 h1).
#include "idot.glsl"
DEFINE_WORD16(A)

#if defined(TYPE_Q4_K) || defined(TYPE_Q5_K)
DEFINE_SCALE_MIN_K4(A)
#ifdef TYPE_Q4_K
const uint BLOCK = 144, QS = 16;
#else
const uint BLOCK = 176, QS = 48;
#endif
// Sub-block s = b % 8: nibbles (s odd: high ones) of bytes 32(s / 2) + 8q..; Q5_K's fifth
// bits are bit s of mask bytes 8q...
uvec2 block_levels(uint r, uint b, uint q) {
  const uint blk = r + (b >> 3) * BLOCK, s = b & 7, at = (blk + QS + 32 * (s >> 1) + 8 * q) >> 2;
  uvec2 l = (uvec2(A_u[at], A_u[at + 1]) >> (4 * (s & 1))) & 0x0F0F0F0Fu;
#ifdef TYPE_Q5_K
  const uint h = (blk + 16 + 8 * q) >> 2;
  l |= ((uvec2(A_u[h], A_u[h + 1]) >> s) & 0x01010101u) << 4;
#endif
  return l;
}
vec3 block_scales(uint r, uint b) {
  const uint blk = r + (b >> 3) * BLOCK;
  const vec2 dm = unpackHalf2x16(A_u[blk >> 2]), sm = A_scale_min_k4(blk + 4, b & 7);
  return vec3(dm.x * sm.x, dm.x * sm.x, -dm.y * sm.y);
}
#elif defined(TYPE_Q6_K)
const uint BLOCK = 210;
// Quarter k = b % 4 of half n = (b / 4) % 2: low (k < 2) or high nibbles of bytes 64n +
// 32(k & 1) + 8q.., two high bits 2k of bytes 128 + 32n + 8q..; levels less 32.
uvec2 block_levels(uint r, uint b, uint q) {
  const uint blk = r + (b >> 3) * BLOCK, n = (b >> 2) & 1, k = b & 3;
  const uint lo = blk + 64 * n + 32 * (k & 1) + 8 * q, hi = blk + 128 + 32 * n + 8 * q;
  const uvec2 l = (uvec2(A_word2(lo), A_word2(lo + 4)) >> (4 * (k >> 1))) & 0x0F0F0F0Fu;
  const uvec2 h = (uvec2(A_word2(hi), A_word2(hi + 4)) >> (2 * k)) & 0x03030303u;
  return uvec2(less_bytes(l.x | (h.x << 4), 32), less_bytes(l.y | (h.y << 4), 32));
}
vec3 block_scales(uint r, uint b) {
  const uint blk = r + (b >> 3) * BLOCK, sc = blk + 192 + 8 * ((b >> 2) & 1) + 2 * (b & 3);
  const float d = f16_at(A_h[(blk + 208) >> 1]);
  return vec3(d * float(int8_t(A_b[sc])), d * float(int8_t(A_b[sc + 1])), 0.0);
}
#elif defined(TYPE_Q2_K) || defined(TYPE_Q3_K)
#define W_WORD2(at) A_word2(at)
#define W_B(i) A_b[i]
#define W_H(i) A_h[i]
#include "q23_k.glsl"
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
  const uint at = r + b * 34 + 2 + 8 * q;
  return uvec2(A_word2(at), A_word2(at + 4));
}
vec3 block_scales(uint r, uint b) {
  const float d = f16_at(A_h[(r + b * 34) >> 1]);
  return vec3(d, d, 0.0);
}
#elif defined(TYPE_IQ4_NL) || defined(TYPE_IQ4_XS) || defined(TYPE_MXFP4)
// Nibbles indexing a table (idot.glsl level_bytes): per 32 values 16 bytes, values 16.. in
// the high nibbles. IQ4_XS: f16 d, 6-bit group scales (low 4 bits in bytes 4.., high 2 in
// the word at 2), 8 groups of 32; IQ4_NL: f16 d, one group; MXFP4: an E8M0 byte, one group,
// 17-byte blocks read a byte at a time.
#if defined(TYPE_IQ4_XS)
const uint BLOCK = 136, GROUPS = 8, QS = 8;
#elif defined(TYPE_IQ4_NL)
const uint BLOCK = 18, GROUPS = 1, QS = 2;
#else
const uint BLOCK = 17, GROUPS = 1, QS = 1;
#endif
uint group_word(uint at) {
#if defined(TYPE_MXFP4)
  return uint(A_b[at]) | (uint(A_b[at + 1]) << 8) | (uint(A_b[at + 2]) << 16) | (uint(A_b[at + 3]) << 24);
#else
  return A_word2(at);
#endif
}
uvec2 block_levels(uint r, uint b, uint q) {
  const uint g = b % GROUPS, at = r + (b / GROUPS) * BLOCK + QS + 16 * g + 8 * (q & 1);
  const uvec2 n = uvec2(group_word(at), group_word(at + 4)) >> (4 * (q >> 1));
  return uvec2(level_bytes(n.x), level_bytes(n.y));
}
vec3 block_scales(uint r, uint b) {
  const uint blk = r + (b / GROUPS) * BLOCK;
#if defined(TYPE_IQ4_XS)
  const uint g = b % GROUPS;
  const uint sc = ((uint(A_b[blk + 4 + (g >> 1)]) >> (4 * (g & 1))) & 15) | (((uint(A_h[(blk >> 1) + 1]) >> (2 * g)) & 3) << 4);
  const float d = f16_at(A_h[blk >> 1]) * float(int(sc) - 32);
#elif defined(TYPE_MXFP4)
  const float d = e8m0_half(uint(A_b[blk]));
#else
  const float d = f16_at(A_h[blk >> 1]);
#endif
  return vec3(d, d, 0.0);
}
#else  // Q4_0, Q4_1, Q5_0, Q5_1: f16 d (Q4_1, Q5_1: and m), Q5's fifth-bit mask, 16 bytes of nibbles
#if defined(TYPE_Q4_0)
const uint BLOCK = 18, QS = 2;
#elif defined(TYPE_Q4_1)
const uint BLOCK = 20, QS = 4;
#elif defined(TYPE_Q5_0)
const uint BLOCK = 22, QS = 6, QH = 2;
#else
const uint BLOCK = 24, QS = 8, QH = 4;
#endif
// Values 8q..: low (q < 2) or high nibbles of bytes 8(q % 2)..; fifth bits 8q.. of the mask.
uvec2 block_levels(uint r, uint b, uint q) {
  const uint blk = r + b * BLOCK, at = blk + QS + 8 * (q & 1);
  uvec2 l = (uvec2(A_word2(at), A_word2(at + 4)) >> (4 * (q >> 1))) & 0x0F0F0F0Fu;
#if defined(TYPE_Q5_0) || defined(TYPE_Q5_1)
  const uint qh = A_word2(blk + QH) >> (8 * q);
  l |= uvec2(fifth_bits(qh), fifth_bits(qh >> 4));
#endif
  return l;
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
