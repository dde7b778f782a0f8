// What the product kernels share per weight type (mul_mat_vec.comp's float and integer parts,
// mm_idot.glsl's integer tiles): QK values in BLOCK bytes, split into PARTS parts, and the
// level unpacking. The includer defines the weights' accessors W_U, W_B, W_H and W_WORD2,
// where `second` may pick GLU's up rows.
#if defined(TYPE_Q4_K) || defined(TYPE_Q5_K)
const uint QK = 256, PARTS = 16;
#ifdef TYPE_Q4_K
const uint BLOCK = 144, QS = 16;
#else
const uint BLOCK = 176, QS = 48;
#endif
// get_scale_min_k4 of sub-blocks 2g (low nibbles) and 2g + 1 (high) for g = g0 + 2k, from the
// scale words sw: 6-bit scales and mins, of sub-blocks 4.. from the third word and the top
// bits of the first two.
void scale_min_k4(const uint sw[3], uint g0, uint k, out float sc[2], out float mn[2]) {
  [[unroll]] for (uint t = 0; t < 2; ++t) {
    const uint sh = 8 * (2 * g0 + t);  // the byte of sub-block 2g0 + t, or 2g0 + t + 4
    if (k == 0) {
      sc[t] = float((sw[0] >> sh) & 63u);
      mn[t] = float((sw[1] >> sh) & 63u);
    } else {
      sc[t] = float(((sw[2] >> sh) & 15u) | ((sw[0] >> sh >> 2) & 0x30u));
      mn[t] = float(((sw[2] >> sh >> 4) & 15u) | ((sw[1] >> sh >> 2) & 0x30u));
    }
  }
}
// Nibble word j of sub-block pair g: four levels each of sub-blocks 2g (l) and 2g + 1 (h);
// Q5_K's fifth bits from its mask (bit s of byte i: sub-block s, value i).
void levels_k4(uint blk, uint j, uint g, bool second, out uint l, out uint h) {
  const uint w = W_U((blk + QS + 32 * g + 4 * j) >> 2);
  l = w & 0x0F0F0F0Fu;
  h = (w >> 4) & 0x0F0F0F0Fu;
#ifdef TYPE_Q5_K
  const uint qh = W_U((blk + 16 + 4 * j) >> 2);
  l |= ((qh >> (2 * g)) & 0x01010101u) << 4;
  h |= ((qh >> (2 * g + 1)) & 0x01010101u) << 4;
#endif
}
#elif defined(TYPE_Q6_K)
const uint QK = 256, PARTS = 16, BLOCK = 210;
// The 6-bit levels of four values in each quarter of a half: low nibbles from qa (quarters 0
// and 2) and qb (1 and 3), two high bits each from qh.
uint[4] q6_k_levels(uint qa, uint qb, uint qh) {
  return uint[4]((qa & 0x0F0F0F0Fu) | ((qh & 0x03030303u) << 4),
                 (qb & 0x0F0F0F0Fu) | (((qh >> 2) & 0x03030303u) << 4),
                 ((qa >> 4) & 0x0F0F0F0Fu) | (((qh >> 4) & 0x03030303u) << 4),
                 ((qb >> 4) & 0x0F0F0F0Fu) | (((qh >> 6) & 0x03030303u) << 4));
}
#elif defined(TYPE_Q8_0)
const uint QK = 32, PARTS = 4, BLOCK = 34;
#elif defined(TYPE_Q4_0) || defined(TYPE_Q4_1) || defined(TYPE_Q5_0) || defined(TYPE_Q5_1)
const uint QK = 32, PARTS = 2;
#if defined(TYPE_Q4_0)
const uint BLOCK = 18, QS = 2;
#elif defined(TYPE_Q4_1)
const uint BLOCK = 20, QS = 4;
#elif defined(TYPE_Q5_0)
const uint BLOCK = 22, QS = 6, QH = 2;
#else
const uint BLOCK = 24, QS = 8, QH = 4;
#endif
// Part p's levels from the quant words at byte `at` of block blk (values 8p.. in the low
// nibbles, 16 + 8p.. in the high ones), with Q5_0 and Q5_1's fifth bits from the block's mask.
uint[4] part_levels(uint blk, uint p, uint at, bool second) {
  const uint w0 = W_WORD2(at), w1 = W_WORD2(at + 4);
  uint q[4] = {w0 & 0x0F0F0F0Fu, w1 & 0x0F0F0F0Fu, (w0 >> 4) & 0x0F0F0F0Fu, (w1 >> 4) & 0x0F0F0F0Fu};
#if defined(TYPE_Q5_0) || defined(TYPE_Q5_1)
  const uint qh = W_WORD2(blk + QH) >> (8 * p);
  q[0] |= fifth_bits(qh);
  q[1] |= fifth_bits(qh >> 4);
  q[2] |= fifth_bits(qh >> 16);
  q[3] |= fifth_bits(qh >> 20);
#endif
  return q;
}
#elif defined(TYPE_Q2_K) || defined(TYPE_Q3_K)
// 16 parts of a 256-value block, one per 16-value group g = 8n + 2s + h: values 128n + 32s +
// 16h.., 2-bit levels in bits 2s of bytes 32n + 16h.. of the levels at QS (Q3_K: a third bit,
// bit 4n + s of high-bit bytes 16h..).
const uint QK = 256, PARTS = 16;
#ifdef TYPE_Q2_K
const uint BLOCK = 84, QS = 16;
#else
const uint BLOCK = 110, QS = 32;
#endif
// Word k (values 4k..) of group g's levels: Q2_K 0..3, Q3_K 0..7 (its values are these less 4).
uint group_levels(uint blk, uint g, uint k, bool second) {
  const uint n = g >> 3, s = (g >> 1) & 3, h = g & 1;
  uint q = (W_WORD2(blk + QS + 32 * n + 16 * h + 4 * k) >> (2 * s)) & 0x03030303u;
#ifdef TYPE_Q3_K
  q |= ((W_WORD2(blk + 16 * h + 4 * k) >> (4 * n + s)) & 0x01010101u) << 2;
#endif
  return q;
}
// Group g's scale times d; for Q2_K its min times dmin (w = scale q - min).
vec2 group_scale_min(uint blk, uint g, bool second) {
#ifdef TYPE_Q2_K
  const uint sc = uint(W_B(blk + g));
  const vec2 dm = unpackHalf2x16(W_WORD2(blk + 80));
  return vec2(dm.x * float(sc & 15), dm.y * float(sc >> 4));
#else
  const uint sc = blk + 96;
  const uint low = g < 8 ? uint(W_B(sc + g)) & 15 : uint(W_B(sc + g - 8)) >> 4;
  const uint high = (uint(W_B(sc + 8 + (g & 3))) >> (2 * (g >> 2))) & 3;
  return vec2(f16_at(W_H((blk + 108) >> 1)) * float(int(low | (high << 4)) - 32), 0.0);
#endif
}
#elif defined(TYPE_IQ4_NL) || defined(TYPE_IQ4_XS) || defined(TYPE_MXFP4)
// Nibbles indexing 16 levels, 8 bytes (16 values: 8 in the low nibbles, the 8 values 16
// later in the high ones) per part: IQ4_NL and MXFP4 2 parts of a 32-value block, IQ4_XS 16
// of a 256-value block (part p: half p % 2 of 32-value group p / 2, with the group's scale).
#if defined(TYPE_MXFP4)
const uint QK = 32, PARTS = 2, BLOCK = 17;
// A byte at a time: 17-byte blocks leave words unaligned.
uint quad_bytes(uint at, bool second) {
  return uint(W_B(at)) | (uint(W_B(at + 1)) << 8) | (uint(W_B(at + 2)) << 16) | (uint(W_B(at + 3)) << 24);
}
#else
#ifdef TYPE_IQ4_NL
const uint QK = 32, PARTS = 2, BLOCK = 18;
#else
const uint QK = 256, PARTS = 16, BLOCK = 136;
#endif
uint quad_bytes(uint at, bool second) { return W_WORD2(at); }
#endif
// Part p's first byte and first value (from the block's), and for IQ4_XS its group's scale.
uint part_at(uint blk, uint p) {
#if defined(TYPE_IQ4_XS)
  return blk + 8 + 16 * (p >> 1) + 8 * (p & 1);
#else
  return blk + BLOCK - 16 + 8 * p;
#endif
}
uint part_value(uint p) {
#if defined(TYPE_IQ4_XS)
  return 32 * (p >> 1) + 8 * (p & 1);
#else
  return 8 * p;
#endif
}
float part_scale(uint blk, uint p, bool second) {
#if defined(TYPE_IQ4_XS)
  const uint g = p >> 1;
  const uint sc = ((uint(W_B(blk + 4 + (g >> 1))) >> (4 * (g & 1))) & 15) | (((uint(W_H((blk >> 1) + 1)) >> (2 * g)) & 3) << 4);
  return f16_at(W_H(blk >> 1)) * float(int(sc) - 32);
#elif defined(TYPE_MXFP4)
  return e8m0_half(uint(W_B(blk)));
#else
  return f16_at(W_H(blk >> 1));
#endif
}
#endif

