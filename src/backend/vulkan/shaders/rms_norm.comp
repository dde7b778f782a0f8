#version 450
// One workgroup per row, op word 0 = eps. RMS norm: row / sqrt(mean(row^2) + eps); with
// CENTER (LayerNorm's normalisation): (row - mean) / sqrt(mean((row - mean)^2) + eps). With
// MUL each output is then multiplied by element i of a weight row (src1 [n]): a norm and the
// multiply by its weight in one dispatch, rounded as the two apart.
#include "common.glsl"
layout(local_size_x = 128) in;
shared float partial[128];

// The sum over the workgroup of each invocation's v.
float workgroup_sum(float v) {
  const uint tid = gl_LocalInvocationID.x;
  barrier();  // the previous sum's readers are done with partial[]
  partial[tid] = v;
  barrier();
  for (uint s = 64; s > 0; s >>= 1) {
    if (tid < s) partial[tid] += partial[tid + s];
    barrier();
  }
  return partial[0];
}

void main() {
  const uint row = group_index();
  const uint n = t_ne(T_SRC0, 0), n1 = t_ne(T_SRC0, 1), n2 = t_ne(T_SRC0, 2);
  if (row >= n1 * n2 * t_ne(T_SRC0, 3)) return;
  const uint i1 = row % n1, i2 = (row / n1) % n2, i3 = row / (n1 * n2);
  const uint x = t_at(T_SRC0, i1, i2, i3), xs = t_nb(T_SRC0, 0);
  const uint y = t_at(T_DST, i1, i2, i3), ys = t_nb(T_DST, 0);
  const uint tid = gl_LocalInvocationID.x;
  float mean = 0.0;
#if defined(CENTER)
  float sum = 0.0;
  for (uint i = tid; i < n; i += 128) sum += A_f[(x + i * xs) >> 2];
  mean = workgroup_sum(sum) / float(n);
#endif
  float sum2 = 0.0;
  for (uint i = tid; i < n; i += 128) {
    const float v = A_f[(x + i * xs) >> 2] - mean;
    sum2 += v * v;
  }
  const float scale = 1.0 / sqrt(workgroup_sum(sum2) / float(n) + pf(0));
#if defined(MUL)
  const uint w = t_off(T_SRC1), ws = t_nb(T_SRC1, 0);
  for (uint i = tid; i < n; i += 128) {
    D_f[(y + i * ys) >> 2] = ((A_f[(x + i * xs) >> 2] - mean) * scale) * B_f[(w + i * ws) >> 2];
  }
#else
  for (uint i = tid; i < n; i += 128) D_f[(y + i * ys) >> 2] = (A_f[(x + i * xs) >> 2] - mean) * scale;
#endif
}
