#version 450
// dst = f(src0), one invocation per element: with SCALE src0 * op word 0, with GELU ggml's GELU,
// with TANH tanh.
#include "common.glsl"
layout(local_size_x = 256) in;

float f(float x) {
#if defined(SCALE)
  return x * pf(0);
#elif defined(TANH)
  return tanh(x);
#else
  return gelu_ggml(x);
#endif
}

void main() {
  const uint n0 = t_ne(T_DST, 0), n1 = t_ne(T_DST, 1), n2 = t_ne(T_DST, 2);
  const uint e = group_index() * 256 + gl_LocalInvocationID.x;
  if (e >= n0 * n1 * n2 * t_ne(T_DST, 3)) return;
  const uint i0 = e % n0, i1 = (e / n0) % n1, i2 = (e / (n0 * n1)) % n2, i3 = e / (n0 * n1 * n2);
  const float x = A_f[(t_at(T_SRC0, i1, i2, i3) + i0 * t_nb(T_SRC0, 0)) >> 2];
  D_f[(t_at(T_DST, i1, i2, i3) + i0 * t_nb(T_DST, 0)) >> 2] = f(x);
}
