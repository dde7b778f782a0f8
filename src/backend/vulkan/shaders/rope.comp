#version 450
// Rotary embedding with the angles' cosines and sines computed on the host (as ref computes
// them, so results agree with ref to float rounding): one invocation per pair of a head.
// Op words: 0 = n_dims, 1 = neox (0/1), 2 = the table's word offset; the table holds
// (cos, sin) for each token t and pair i at 2 * (t * n_dims / 2 + i). With DST_F16 the
// output is rounded to half precision as copy.comp rounds it: the rope and the copy of its
// output into a K cache in one dispatch.
#include "common.glsl"
layout(local_size_x = 256) in;

// dst's element at byte y.
void put(uint y, float v) {
#if defined(DST_F16)
  D_h[y >> 1] = to_f16(v);
#else
  D_f[y >> 2] = v;
#endif
}

void main() {
  const uint n0 = t_ne(T_DST, 0), heads = t_ne(T_DST, 1), tokens = t_ne(T_DST, 2);
  const uint pairs = (n0 + 1) / 2;
  const uint e = group_index() * 256 + gl_LocalInvocationID.x;
  if (e >= pairs * heads * tokens) return;
  const uint p = e % pairs, h = (e / pairs) % heads, t = e / (pairs * heads);
  const uint n_dims = pu(0), half_dims = n_dims / 2;
  const uint x = t_at(T_SRC0, h, t, 0), xs = t_nb(T_SRC0, 0);
  const uint y = t_at(T_DST, h, t, 0), ys = t_nb(T_DST, 0);
  if (p >= half_dims) {  // dims past n_dims pass through
    const uint i = n_dims + 2 * (p - half_dims);
    for (uint k = i; k < min(i + 2, n0); ++k) put(y + k * ys, A_f[(x + k * xs) >> 2]);
    return;
  }
  const uint i0 = pu(1) != 0 ? p : 2 * p;
  const uint i1 = pu(1) != 0 ? p + half_dims : 2 * p + 1;
  const uint at = pu(2) + 2 * (t * half_dims + p);
  const float c = uintBitsToFloat(pw(at, 0)), s = uintBitsToFloat(pw(at, 1));
  const float x0 = A_f[(x + i0 * xs) >> 2], x1 = A_f[(x + i1 * xs) >> 2];
  put(y + i0 * ys, x0 * c - x1 * s);
  put(y + i1 * ys, x0 * s + x1 * c);
}
