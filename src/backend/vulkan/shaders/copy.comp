#version 450
// dst = src0 converted to dst's type. Float destinations: one invocation per element, any
// strides; block destinations (Q8_0, Q4_0: KV cache rows): one per block, quantized as
// quant/'s from_float does. SRC_TYPE, SRC_FLOAT and DST_<type> are build-time defines.
#include "common.glsl"
#include "types.glsl"
layout(local_size_x = 256) in;
DEFINE_ELEM(A, SRC_TYPE)

float src_at(uint i0, uint i1, uint i2, uint i3) {
  const uint row = t_at(T_SRC0, i1, i2, i3);
#if SRC_FLOAT
  return A_elem(row + i0 * t_nb(T_SRC0, 0), 0);
#else
  return A_elem(row, i0);
#endif
}

// a / b rounded to nearest, as the host divides: GPU division may be off by an ulp, which
// moves quantized values that sit on a rounding tie. One correction step with the residual
// a - q b computed exactly by Dekker's product (fma may be unfused, e.g. on lavapipe);
// `precise` keeps compilers from reassociating it.
void split(float a, out float hi, out float lo) {
  precise float c = 4097.0 * a;
  precise float h = c - (c - a);
  hi = h;
  lo = a - h;
}
float div_rn(float a, float b) {
  precise float y = 1.0 / b;
  precise float q = a * y;
  precise float p = q * b;
  float qh, ql, bh, bl;
  split(q, qh, ql);
  split(b, bh, bl);
  precise float err = ((qh * bh - p) + qh * bl + ql * bh) + ql * bl;  // q b = p + err exactly
  precise float r = (a - p) - err;
  precise float out_q = q + r * y;
  return out_q;
}

#if defined(DST_Q8_0) || defined(DST_Q4_0)
#if defined(DST_Q8_0)
const uint BLOCK_BYTES = 34;
#else
const uint BLOCK_BYTES = 18;
#endif
void main() {
  const uint n0 = t_ne(T_DST, 0), n1 = t_ne(T_DST, 1), n2 = t_ne(T_DST, 2);
  const uint blocks = n0 / 32;
  const uint e = group_index() * 256 + gl_LocalInvocationID.x;
  if (e >= blocks * n1 * n2 * t_ne(T_DST, 3)) return;
  const uint ib = e % blocks, i1 = (e / blocks) % n1, i2 = (e / (blocks * n1)) % n2, i3 = e / (blocks * n1 * n2);
  float v[32];
  for (uint j = 0; j < 32; ++j) v[j] = src_at(ib * 32 + j, i1, i2, i3);
  const uint at = t_at(T_DST, i1, i2, i3) + ib * BLOCK_BYTES;
#if defined(DST_Q8_0)
  float amax = 0.0;
  for (uint j = 0; j < 32; ++j) amax = max(amax, abs(v[j]));
  // As quant/'s from_float (ggml-cpu's x86 quantizer): scale 127 / amax, halves to even.
  const float d = div_rn(amax, 127.0);
  const float id = amax != 0.0 ? div_rn(127.0, amax) : 0.0;
  D_h[at >> 1] = to_f16(d);
  for (uint j = 0; j < 32; ++j) {
    precise float x = v[j] * id;
    D_b[at + 2 + j] = uint8_t(int8_t(roundEven(x)));
  }
#else
  float vmax = 0.0;
  for (uint j = 0; j < 32; ++j) {
    if (abs(v[j]) > abs(vmax)) vmax = v[j];
  }
  const float d = vmax / -8.0;  // exact: a power of two
  const float id = d != 0.0 ? div_rn(1.0, d) : 0.0;
  D_h[at >> 1] = to_f16(d);
  for (uint j = 0; j < 16; ++j) {
    // Rounded twice, as the host computes it: a fused multiply-add (NVIDIA's compiler
    // contracts one) moves values that sit on a tie.
    precise float x0 = v[j] * id + 8.5;
    precise float x1 = v[j + 16] * id + 8.5;
    const uint q0 = min(15u, uint(int(x0)));
    const uint q1 = min(15u, uint(int(x1)));
    D_b[at + 2 + j] = uint8_t(q0 | (q1 << 4));
  }
#endif
}
#else
void main() {
  const uint n0 = t_ne(T_DST, 0), n1 = t_ne(T_DST, 1), n2 = t_ne(T_DST, 2);
  const uint e = group_index() * 256 + gl_LocalInvocationID.x;
  if (e >= n0 * n1 * n2 * t_ne(T_DST, 3)) return;
  const uint i0 = e % n0, i1 = (e / n0) % n1, i2 = (e / (n0 * n1)) % n2, i3 = e / (n0 * n1 * n2);
  const float v = src_at(i0, i1, i2, i3);
  const uint at = t_at(T_DST, i1, i2, i3) + i0 * t_nb(T_DST, 0);
#if defined(DST_F32)
  D_f[at >> 2] = v;
#elif defined(DST_F16)
  D_h[at >> 1] = to_f16(v);
#else
  const uint u = floatBitsToUint(v);  // to nearest even, NaN kept quiet, as fp16.h does
  D_h[at >> 1] = uint16_t(isnan(v) ? (u >> 16) | 64u : (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
#endif
}
#endif
