#version 450
// Each row / sqrt(mean(row^2) + eps); one workgroup per row. Op words: 0 = eps.
#include "common.glsl"
layout(local_size_x = 128) in;
shared float partial[128];

void main() {
  const uint row = group_index();
  const uint n = t_ne(T_SRC0, 0), n1 = t_ne(T_SRC0, 1), n2 = t_ne(T_SRC0, 2);
  if (row >= n1 * n2 * t_ne(T_SRC0, 3)) return;
  const uint i1 = row % n1, i2 = (row / n1) % n2, i3 = row / (n1 * n2);
  const uint x = t_at(T_SRC0, i1, i2, i3), xs = t_nb(T_SRC0, 0);
  const uint y = t_at(T_DST, i1, i2, i3), ys = t_nb(T_DST, 0);
  const uint tid = gl_LocalInvocationID.x;
  float sum = 0.0;
  for (uint i = tid; i < n; i += 128) {
    const float v = A_f[(x + i * xs) >> 2];
    sum += v * v;
  }
  partial[tid] = sum;
  barrier();
  for (uint s = 64; s > 0; s >>= 1) {
    if (tid < s) partial[tid] += partial[tid + s];
    barrier();
  }
  const float scale = 1.0 / sqrt(partial[0] / float(n) + pf(0));
  for (uint i = tid; i < n; i += 128) D_f[(y + i * ys) >> 2] = A_f[(x + i * xs) >> 2] * scale;
}
