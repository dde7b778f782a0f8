// mul_mat_vec.comp's parts with integer dot products (INT_DOT): the activations come
// quantized by quantize_q8.comp, and each part dots its weights' integer levels with
// them four bytes at a time (OpSDot, SPV_KHR_integer_dot_product), applying the weight and
// activation scales once per 32 values. Reading a quarter of the activation bytes and doing
// a quarter of the arithmetic of the float parts is what lets a GPU stream the weights.
// The parts split blocks as the float parts do (the same words per invocation).
#include "idot.glsl"

// The column's quantized activations (idot.glsl), from scratch word xq.
uint xq, xq_scales;
uint x_word(uint v) { return XQ_u[xq + (v >> 2)]; }
float x_d(uint v) { return XQ_f[xq_scales + 2 * (v >> 5)]; }
float x_s(uint v) { return XQ_f[xq_scales + 2 * (v >> 5) + 1]; }
void set_column(uint first_word, uint k) {
  xq = first_word;
  xq_scales = first_word + k / 4;
}

// Per type: part_dot(blk, p, v, second), part p of the weight block at byte blk with the
// activations from value v. A sum over the block's values (a min or an offset times the
// activations' sum) is spread evenly over the parts that share it.
#if defined(TYPE_Q4_K) || defined(TYPE_Q5_K)
// As the float part: nibble word j = p % 8 of sub-block pairs g = p / 8 and p / 8 + 2.
float part_dot(uint blk, uint p, uint v, bool second) {
  const uint j = p & 7, g0 = p >> 3;
  const uint sw[3] = {W_U((blk + 4) >> 2), W_U((blk + 8) >> 2), W_U((blk + 12) >> 2)};
  float dq = 0.0, dmin = 0.0;
  [[unroll]] for (uint k = 0; k < 2; ++k) {
    const uint g = g0 + 2 * k, vl = v + 64 * g, vh = vl + 32;
    uint l, h;
    levels_k4(blk, j, g, second, l, h);
    float sc[2], mn[2];
    scale_min_k4(sw, g0, k, sc, mn);
    dq += sc[0] * x_d(vl) * float(sdot4(l, x_word(vl + 4 * j))) + sc[1] * x_d(vh) * float(sdot4(h, x_word(vh + 4 * j)));
    dmin += mn[0] * x_s(vl) + mn[1] * x_s(vh);
  }
  const vec2 dm = unpackHalf2x16(W_U(blk >> 2));
  return dm.x * dq - dm.y * dmin * 0.125;  // eight parts share each sub-block's min
}
#elif defined(TYPE_Q6_K)
// As the float part: values l0 = 4(p % 8).. of each quarter of half p / 8; a quarter is 32
// values, one activation scale.
float part_dot(uint blk, uint p, uint v, bool second) {
  const uint n = p >> 3, l0 = 4 * (p & 7);
  const uint qa = W_WORD2(blk + 64 * n + l0), qb = W_WORD2(blk + 64 * n + 32 + l0);
  const uint qh = W_WORD2(blk + 128 + 32 * n + l0);
  const uint q[4] = q6_k_levels(qa, qb, qh);
  const uint sc = blk + 192 + 8 * n + (l0 >> 4);
  float acc = 0.0;
  [[unroll]] for (uint k = 0; k < 4; ++k) {
    const uint vk = v + 128 * n + 32 * k;
    acc += x_d(vk) * float(int(int8_t(W_B(sc + 2 * k))) * sdot4(less_bytes(q[k], 32), x_word(vk + l0)));
  }
  return f16_at(W_H((blk + 208) >> 1)) * acc;
}
#elif defined(TYPE_Q2_K) || defined(TYPE_Q3_K)
// As the float part: one 16-value group; Q2_K's min through the activations' level sum
// (an integer dot with ones, as the CPU's per-16 sums).
float part_dot(uint blk, uint g, uint v, bool second) {
  const uint vg = v + 128 * (g >> 3) + 32 * ((g >> 1) & 3) + 16 * (g & 1);
  int dq = 0, xsum = 0;
  [[unroll]] for (uint k = 0; k < 4; ++k) {
    const uint xw = x_word(vg + 4 * k), q = group_levels(blk, g, k, second);
#ifdef TYPE_Q2_K
    dq += sdot4(q, xw);
    xsum += sdot4(0x01010101u, xw);
#else
    dq += sdot4(less_bytes(q, 4), xw);
#endif
  }
  const vec2 sm = group_scale_min(blk, g, second);
  return x_d(vg) * (sm.x * float(dq) - sm.y * float(xsum));
}
#elif defined(TYPE_Q8_0)
// 4 parts of a 32-value block: 8 values each.
float part_dot(uint blk, uint p, uint v, bool second) {
  const uint at = blk + 2 + 8 * p, vp = v + 8 * p;
  const int s = sdot4(W_WORD2(at), x_word(vp)) + sdot4(W_WORD2(at + 4), x_word(vp + 4));
  return f16_at(W_H(blk >> 1)) * x_d(v) * float(s);
}
#elif defined(TYPE_IQ4_NL) || defined(TYPE_IQ4_XS) || defined(TYPE_MXFP4)
// As the float part, the nibbles' table levels as signed bytes.
float part_dot(uint blk, uint p, uint v, bool second) {
  const uint at = part_at(blk, p), vp = v + part_value(p);
  const uint w0 = quad_bytes(at, second), w1 = quad_bytes(at + 4, second);
  const int s = sdot4(level_bytes(w0), x_word(vp)) + sdot4(level_bytes(w1), x_word(vp + 4)) +
                sdot4(level_bytes(w0 >> 4), x_word(vp + 16)) + sdot4(level_bytes(w1 >> 4), x_word(vp + 20));
  return part_scale(blk, p, second) * x_d(vp) * float(s);
}
#elif defined(TYPE_Q4_0) || defined(TYPE_Q4_1) || defined(TYPE_Q5_0) || defined(TYPE_Q5_1)
// As the float part: 2 parts of a 32-value block, part p the quant bytes 8p.. (values 8p..
// low, 16 + 8p.. high).
float part_dot(uint blk, uint p, uint v, bool second) {
  const uint vp = v + 8 * p;
  const uint q[4] = part_levels(blk, p, blk + QS + 8 * p, second);
  const int s = sdot4(q[0], x_word(vp)) + sdot4(q[1], x_word(vp + 4)) + sdot4(q[2], x_word(vp + 16)) +
                sdot4(q[3], x_word(vp + 20));
  const float dq = x_d(v) * float(s), xsum = 0.5 * x_s(v);  // two parts share the block's sum
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
