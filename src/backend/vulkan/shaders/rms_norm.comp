#version 450
// One workgroup per row, op word 0 = eps. RMS norm: row / sqrt(mean(row^2) + eps); with
// CENTER (LayerNorm's normalisation): (row - mean) / sqrt(mean((row - mean)^2) + eps). With
// MUL each output is then multiplied by element i of a weight row (src1 [n]): a norm and the
// multiply by its weight in one dispatch, rounded as the two apart. With QUANT each output row
// is also quantized (quantize_q8.glsl, as column `row`) for the integer-dot product that reads
// it: a dispatch and a barrier less than quantize_q8.comp after it. Each loop issues four
// independent loads a step: one workgroup per row leaves nothing else to hide memory latency
// (a decode norm took 20 us on an H100 with one load a step).
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "common.glsl"
const uint WG = 256;
layout(local_size_x = WG) in;
shared float by_subgroup[WG];

// The sum over the workgroup of each invocation's v.
float workgroup_sum(float v) {
  v = subgroupAdd(v);
  barrier();  // the previous sum's readers are done with by_subgroup[]
  if (subgroupElect()) by_subgroup[gl_SubgroupID] = v;
  barrier();
  float r = 0.0;
  for (uint s = 0; s < gl_NumSubgroups; ++s) r += by_subgroup[s];
  return r;
}

uint x, xs, n;
float mean = 0.0, scale;
float at(uint i) { return A_f[(x + i * xs) >> 2] - mean; }
#if defined(MUL)
uint w, ws;
float normed(uint i) { return (at(i) * scale) * B_f[(w + i * ws) >> 2]; }
#else
float normed(uint i) { return at(i) * scale; }
#endif
#if defined(QUANT)
// What the quantizing reads: each value as the output got it (the same expression again,
// not the output read back, which other invocations wrote).
#include "quantize_q8.glsl"
float q8_source(uint i) { return normed(i); }
#endif

// Over this invocation's elements: the sum of (x - mean) or with `squares` of its squares.
float own_sum(bool squares) {
  float s = 0.0;
  uint i = gl_LocalInvocationID.x;
  for (; i + 3 * WG < n; i += 4 * WG) {
    const vec4 v = vec4(at(i), at(i + WG), at(i + 2 * WG), at(i + 3 * WG));
    s += squares ? dot(v, v) : (v.x + v.y) + (v.z + v.w);
  }
  for (; i < n; i += WG) s += squares ? at(i) * at(i) : at(i);
  return s;
}

void main() {
  const uint row = group_index();
  n = t_ne(T_SRC0, 0);
  const uint n1 = t_ne(T_SRC0, 1), n2 = t_ne(T_SRC0, 2);
  if (row >= n1 * n2 * t_ne(T_SRC0, 3)) return;
  const uint i1 = row % n1, i2 = (row / n1) % n2, i3 = row / (n1 * n2);
  x = t_at(T_SRC0, i1, i2, i3);
  xs = t_nb(T_SRC0, 0);
  const uint y = t_at(T_DST, i1, i2, i3), ys = t_nb(T_DST, 0);
#if defined(CENTER)
  mean = workgroup_sum(own_sum(false)) / float(n);
#endif
  scale = 1.0 / sqrt(workgroup_sum(own_sum(true)) / float(n) + pf(0));
#if defined(MUL)
  w = t_off(T_SRC1);
  ws = t_nb(T_SRC1, 0);
#endif
  // Four elements a step: all loads before the stores, which may alias them for all the
  // compiler knows.
  for (uint i0 = gl_LocalInvocationID.x; i0 < n; i0 += 4 * WG) {
    float v[4];
    [[unroll]] for (uint k = 0; k < 4; ++k) v[k] = normed(min(i0 + k * WG, n - 1));
    [[unroll]] for (uint k = 0; k < 4; ++k) {
      if (i0 + k * WG < n) D_f[(y + (i0 + k * WG) * ys) >> 2] = v[k];
    }
  }
#if defined(QUANT)
  for (uint b0 = 0; b0 < n / 32; b0 += WG) {  // uniform: every invocation meets the barriers
    const uint blk = b0 + gl_LocalInvocationID.x;
    quantize_block(blk < n / 32, blk, n, xq_column(row, n));
  }
#endif
}
