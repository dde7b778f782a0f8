// Q2_K's and Q3_K's 16-value groups for the product kernels (W_* accessors of the weights'
// binding defined by the includer; `second` picks GLU's up rows there). A 256-value block has
// 16 groups g = 8n + 2s + h: values 128n + 32s + 16h.., 2-bit levels in bits 2s of bytes
// 32n + 16h.. of the levels at QS (Q3_K: a third bit, bit 4n + s of high-bit bytes 16h..).
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
